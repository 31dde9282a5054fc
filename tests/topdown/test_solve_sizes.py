"""Joint solves sized before they run: memory against the budget, work against MAX_WORK.

Issue 23 review: JASON's iteration over a tree's joint constraints
(consistency_constraints) ran one dense solve per estimate it fixed, unbounded — 1,000
units in a binary tree took minutes, 10⁴ units hours — and consistency_constraints built
``np.eye(units)`` (74.5 GiB at 10⁵ units) before any check."""

import numpy as np
import pytest

from adversary.memory import MemoryBudgetError, memory_budget
from adversary.topdown import (
    bias_measure,
    consistency_constraints,
    constrained_wls,
    jason_iteration,
    nonnegative_wls,
    scipy_wls,
    solver,
)


def _tree(units: int, branching: int) -> np.ndarray:
    return np.array([-1] + [(unit - 1) // branching for unit in range(1, units)])


def _problem(units: int, branching: int):
    rng = np.random.default_rng(1)
    constraints, totals = consistency_constraints(_tree(units, branching), invariant=100)
    return rng.normal(2.0, 3.0, units), 9.0, constraints, totals


# 40 units, 14 constraints: JASON's iteration at most 40 rounds of 40·14² + 14³ = 4.2e5
# operations; scipy_wls 30 rounds of (40 + 14)³ + 40·14² + 14³ = 5.04e6
@pytest.mark.parametrize(
    ("solve", "work"),
    [(nonnegative_wls, 4.2e5), (jason_iteration, 4.2e5), (scipy_wls, 5.04e6)],
)
def test_refused_past_max_work(monkeypatch, solve, work):
    monkeypatch.setattr(solver, "MAX_WORK", 0.99 * work)
    with pytest.raises(ValueError, match=r"^constraints: 40 measurements × 14 constraints"):
        solve(*_problem(40, 3))
    monkeypatch.setattr(solver, "MAX_WORK", 1.01 * work)
    assert solve(*_problem(40, 3)).min() >= 0.0


def test_default_work_refuses_ten_thousand_units_and_keeps_a_thousand():
    # 10⁴ units, 100 children each: 10⁴ rounds × (10⁴ · 101² + 101³) > 10¹¹
    with pytest.raises(ValueError, match=r"^constraints: 10000 measurements × 101 constraints"):
        nonnegative_wls(*_problem(10_000, 100))
    # 1,000 units, 10 children each: 1,000 × (1,000 · 101² + 101³) = 1.1e10, allowed
    units, columns = 1_000, 101
    assert units * (units * columns**2 + columns**3) < solver.MAX_WORK


def test_solves_sized_against_the_memory_budget():
    noisy, variances, constraints, totals = _problem(400, 2)  # 400 × 201, 1.9 MB per array
    for solve in (constrained_wls, nonnegative_wls, jason_iteration, scipy_wls):
        with memory_budget("1MB"), pytest.raises(MemoryBudgetError, match=r"^constraints \(400"):
            solve(noisy, variances, constraints, totals)


def test_consistency_constraints_sized_before_allocating():
    with memory_budget("500KB"), pytest.raises(MemoryBudgetError, match=r"^parents \(400 units"):
        consistency_constraints(_tree(400, 2), invariant=3)


def test_consistency_constraints_by_hand():
    constraints, totals = consistency_constraints([-1, 0, 0, 1], invariant=7)
    expected = [[1, 0, 1], [-1, 1, 0], [-1, 0, 0], [0, -1, 0]]
    np.testing.assert_array_equal(constraints, expected)
    np.testing.assert_array_equal(totals, [0, 0, 7])
    single, none = consistency_constraints([-1])
    assert single.shape == (1, 0) and none.shape == (0,)


def test_scipy_wls_nonnegative_must_be_a_bool():
    with pytest.raises(TypeError, match=r"^nonnegative must be True or False, got 'no'"):
        scipy_wls([1.0, 1.0], 1.0, [1.0, 1.0], 5.0, nonnegative="no")


def test_bias_measure_refuses_no_runs():
    with pytest.raises(ValueError, match=r"^published must be runs \(>= 1\)"):
        bias_measure(np.zeros((0, 2)), [2, 2])
