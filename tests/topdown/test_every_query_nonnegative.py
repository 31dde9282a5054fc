"""The non-negative fit of children's cell vectors for any information matrix, against scipy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from adversary.topdown.every_query import nonnegative as module
from adversary.topdown.every_query import nonnegative_family_fit
from adversary.topdown.solver import nonnegative_sum_fit


def problem(seed: int, cells: int, families: int):
    """Random estimates, a non-diagonal information matrix (queries of random cells) and
    non-negative totals (some zero)."""
    rng = np.random.default_rng(seed)
    design = np.vstack([np.eye(cells), rng.integers(0, 2, size=(cells + 2, cells))])
    information = (design.T * rng.uniform(0.2, 5.0, design.shape[0])) @ design
    sizes = rng.integers(1, 5, size=families)
    estimates = rng.normal(1.0, 3.0, size=(sizes.sum(), cells))
    totals = rng.uniform(0.0, 6.0, size=(families, cells)) * (rng.random((families, cells)) < 0.8)
    return estimates, information, np.concatenate([[0], np.cumsum(sizes)]), totals


def objective(x, estimates, information):
    gap = x - estimates
    return 0.5 * np.einsum("ci,ij,cj->", gap, information, gap)


def scipy_optimum(estimates, information, starts, totals, constraint):
    """The same problem by SLSQP, every variable bounded below by 0."""
    n, d = estimates.shape
    cons = [
        {
            "type": "eq",
            "fun": lambda v, f=f: (
                v.reshape(n, d)[starts[f] : starts[f + 1]].sum(0) @ constraint - totals[f]
            ),
        }
        for f in range(len(starts) - 1)
    ]
    result = optimize.minimize(
        lambda v: objective(v.reshape(n, d), estimates, information),
        np.maximum(estimates, 0.0).ravel(),
        jac=lambda v: ((v.reshape(n, d) - estimates) @ information).ravel(),
        method="SLSQP",
        bounds=[(0.0, None)] * (n * d),
        constraints=cons,
        options={"ftol": 1e-14, "maxiter": 2000},
    )
    # SLSQP may stop at its precision ("positive directional derivative"): its point is
    # compared by its objective, our answer by its KKT conditions
    return result.x.reshape(n, d)


def assert_kkt(x, estimates, information, starts, totals, constraint, tol=1e-7):
    """x ≥ 0, the totals met, and multipliers λ_f, μ ≥ 0 with μ·x = 0 exist (found from x)."""
    assert x.min() >= 0.0
    sums = np.add.reduceat(x, starts[:-1], axis=0) @ constraint
    np.testing.assert_allclose(sums, totals, atol=tol)
    gradient = (x - estimates) @ information  # = Eλ_f + μ_c
    for f in range(len(starts) - 1):
        rows = gradient[starts[f] : starts[f + 1]]
        free = x[starts[f] : starts[f + 1]] > tol
        for i in range(constraint.shape[1]):
            cells = constraint[:, i] > 0
            values = rows[:, cells]
            on_free = values[free[:, cells]]
            lam = on_free.mean() if on_free.size else values.min()
            np.testing.assert_allclose(on_free, lam, atol=tol * 10)  # μ = 0 where x > 0
            assert values.min() >= lam - tol * 10  # μ ≥ 0 where x = 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cells=st.integers(1, 5), families=st.integers(1, 3))
def test_fit_is_scipys_optimum(seed, cells, families):
    estimates, information, starts, totals = problem(seed, cells, families)
    x = nonnegative_family_fit(estimates, information, starts, totals)
    identity = np.eye(cells)
    assert_kkt(x, estimates, information, starts, totals, identity)
    reference = scipy_optimum(estimates, information, starts, totals, identity)
    ours, theirs = (objective(v, estimates, information) for v in (x, reference))
    assert ours <= theirs + 1e-6 * (1.0 + abs(theirs))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cells=st.integers(1, 6), total=st.floats(0.0, 20.0))
def test_the_states_fit_to_its_total_is_scipys_optimum(seed, cells, total):
    estimates, information, _, _ = problem(seed, cells, 1)
    ones = np.ones((cells, 1))
    starts, totals = np.array([0, 1]), np.array([[total]])
    x = nonnegative_family_fit(estimates[:1], information, starts, totals, ones)
    assert_kkt(x, estimates[:1], information, starts, totals, ones)
    reference = scipy_optimum(estimates[:1], information, starts, totals, ones)
    ours, theirs = (objective(v, estimates[:1], information) for v in (x, reference))
    assert ours <= theirs + 1e-6 * (1.0 + abs(theirs))


def test_diagonal_information_gives_the_per_cell_sort_fit():
    rng = np.random.default_rng(3)
    sizes = np.array([3, 7, 1, 12])
    starts = np.concatenate([[0], np.cumsum(sizes)])
    estimates = rng.normal(0.5, 4.0, size=(sizes.sum(), 6))
    totals = rng.integers(0, 15, size=(4, 6)).astype(float)
    x = nonnegative_family_fit(estimates, np.diag(np.full(6, 0.25)), starts, totals)
    for f in range(4):
        rows = slice(starts[f], starts[f + 1])
        expected = nonnegative_sum_fit(estimates[rows].T, 4.0, totals[f]).T
        np.testing.assert_allclose(x[rows], expected, atol=1e-9)


def test_an_unconverged_fit_is_refused(monkeypatch):
    estimates, information, starts, totals = problem(1, 5, 3)
    monkeypatch.setattr(module, "MAX_ITERATIONS", module.CHECK_EVERY - 1)
    with pytest.raises(ValueError, match="KKT conditions did not hold to tolerance 1e-09"):
        nonnegative_family_fit(estimates, information, starts, totals)


def test_bad_input_is_refused_in_one_line():
    estimates, information, starts, totals = problem(2, 3, 2)
    with pytest.raises(ValueError, match=r"^totals must be >= 0"):
        nonnegative_family_fit(estimates, information, starts, -totals - 1)
    with pytest.raises(ValueError, match=r"^information must be positive definite"):
        nonnegative_family_fit(estimates, 0 * information, starts, totals)
    with pytest.raises(ValueError, match=r"^starts must rise"):
        nonnegative_family_fit(estimates, information, starts[::-1], totals)


def test_a_tiny_positive_total_on_cells_all_at_zero_is_met():
    # ADMM leaves both cells at 0; the polish must free one to meet the total (it ran out of
    # steps before: found by hypothesis)
    estimates, information, _, _ = problem(0, 2, 1)
    ones, total = np.ones((2, 1)), 2.0**-24
    x = nonnegative_family_fit(estimates[:1], information, [0, 1], [[total]], ones)
    assert_kkt(x, estimates[:1], information, np.array([0, 1]), np.array([[total]]), ones)
    assert x.sum() == pytest.approx(total, rel=1e-9)


def test_a_small_memory_budget_polishes_in_chunks_to_the_same_fit(monkeypatch):
    from adversary.memory import memory_budget

    estimates, information, starts, totals = problem(4, 4, 12)
    whole = nonnegative_family_fit(estimates, information, starts, totals)
    polished = []
    original = module._Families.polish
    monkeypatch.setattr(
        module._Families,
        "polish",
        lambda self, active: polished.append(self.b.shape[0]) or original(self, active),
    )
    with memory_budget(8 * module.POLISH_ARRAYS * 16 * 5):  # five children's matrices
        chunked = nonnegative_family_fit(estimates, information, starts, totals)
    np.testing.assert_allclose(chunked, whole, atol=1e-9)
    assert max(polished) <= 5 + 4  # at most one family (≤ 4 children) over the chunk
    with (
        memory_budget(8 * module.POLISH_ARRAYS * 16 * 3),
        pytest.raises(ValueError, match="the non-negative fit"),
    ):
        nonnegative_family_fit(estimates, information, starts, totals)  # a family of 4
