"""The non-negative fit of one sum by its KKT conditions: scipy's optimum, JASON's iteration's
answer, no rounds (issue 23, point 3; the speed is in benchmarks/topdown.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.topdown import jason_iteration, nonnegative_wls, scipy_wls, solver, topdown
from adversary.topdown.solver import nonnegative_sum_fit

measurements = st.lists(st.floats(-50, 80), min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(measurements, st.data(), st.integers(0, 400))
def test_the_sum_fit_is_scipys_optimum_with_unequal_variances(noisy, data, total):
    variances = data.draw(st.lists(st.floats(0.5, 300), min_size=len(noisy), max_size=len(noisy)))
    fit = nonnegative_sum_fit([noisy], variances, [total])[0]
    optimum = scipy_wls(noisy, variances, np.ones((len(noisy), 1)), [total])
    assert fit.min() >= 0 and fit.sum() == pytest.approx(total, abs=1e-9 * max(1, total))
    np.testing.assert_allclose(fit, optimum, atol=1e-9 * max(1.0, total))


@settings(max_examples=60, deadline=None)
@given(measurements, st.floats(0.5, 50), st.integers(0, 200))
def test_the_sum_fit_is_the_answer_of_jasons_iteration(noisy, variance, total):
    """The old algorithm (the most negative estimate fixed per round, solved again)."""
    ones = np.ones((len(noisy), 1))
    np.testing.assert_allclose(
        nonnegative_wls(noisy, variance, ones, [total]),
        jason_iteration(noisy, variance, ones, [total]),
        atol=1e-9 * max(1.0, total),
    )


def test_the_kkt_conditions_hold_with_ties_and_a_zero_total():
    """x = max(0, M + λ v): equal measurements get equal estimates; a total of 0 zeroes all."""
    noisy = np.array([[5.0, 5.0, -1.0, 5.0, 0.0], [3.0, 3.0, 3.0, 3.0, 3.0]])
    fit = nonnegative_sum_fit(noisy, 2.0, [6.0, 0.0])
    # row 0: λ = (6 − 15)/(3 · 2) = −1.5, 5 − 3 = 2 each, −1 − 3 and 0 − 3 below 0
    np.testing.assert_allclose(fit, [[2.0, 2.0, 0.0, 2.0, 0.0], [0.0] * 5])


def test_disjoint_sums_are_solved_sum_by_sum():
    """Two sums and a measurement in none (kept, made >= 0), against JASON's iteration."""
    rng = np.random.default_rng(3)
    constraints = np.zeros((9, 2))
    constraints[:4, 0] = constraints[4:8, 1] = 1.0
    for _ in range(30):
        noisy, variances = rng.normal(1.0, 4.0, 9), rng.uniform(1.0, 9.0, 9)
        totals = rng.integers(0, 12, 2).astype(float)
        fast = nonnegative_wls(noisy, variances, constraints, totals)
        np.testing.assert_allclose(
            fast, jason_iteration(noisy, variances, constraints, totals), atol=1e-9
        )
        assert fast[8] == max(noisy[8], 0.0)


def test_one_sum_is_fitted_without_rounds_of_solves(monkeypatch):
    """Issue 23: one negative fixed per round with a full re-solve made 10⁴ measurements take
    5 s (10⁵ children of one parent 95 s). The fit of one sum solves no system at all."""

    def refuse(*args):
        raise AssertionError("a round of JASON's iteration")

    monkeypatch.setattr(solver, "_closed_form", refuse)
    noisy = np.random.default_rng(0).normal(0.0, 3.0, 50_000)
    fit = nonnegative_wls(noisy, 9.0, np.ones(noisy.size), [10_000.0])
    assert fit.min() >= 0 and fit.sum() == pytest.approx(10_000.0)
    parents = np.zeros(noisy.size + 1, dtype=np.int64)
    parents[0] = -1
    published = topdown(np.concatenate([[9_999.6], noisy]), 9.0, parents)
    assert published[0] == 10_000 and published[1:].sum() == 10_000


def test_dependent_constraints_with_agreeing_totals_are_solved():
    """A sum stated twice (dependent columns) is one sum; contradicting totals are refused."""
    noisy, twice = np.array([4.0, -2.0, 7.0]), np.ones((3, 2))
    np.testing.assert_allclose(
        nonnegative_wls(noisy, 1.0, twice, [6.0, 6.0]),
        nonnegative_wls(noisy, 1.0, np.ones(3), [6.0]),
    )
    np.testing.assert_allclose(
        jason_iteration(noisy, 1.0, np.column_stack([np.ones(3), 2 * np.ones(3)]), [6.0, 12.0]),
        [1.5, 0.0, 4.5],  # −2 fixed at 0, then λ = (6 − 11)/2 on the other two
    )
    with pytest.raises(ValueError, match=r"^totals: no estimates meet these constraints"):
        jason_iteration(noisy, 1.0, np.column_stack([np.ones(3), 2 * np.ones(3)]), [6.0, 10.0])
