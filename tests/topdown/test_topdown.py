"""TopDown-style post-processing: JASON's closed form against scipy, and JASON's bias results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.topdown import (
    bias_measure,
    consistency_constraints,
    constrained_wls,
    nonnegative_wls,
    round_keeping_total,
    scipy_wls,
    topdown,
    topdown_many,
    windowed_mean,
)
from adversary.topdown.counties import (
    COUNTIES,
    FAIRFAX,
    LANCASTER,
    TOTAL,
    state_runs,
    synthetic_counties,
)

#: A county, two tracts, five blocks: parents listed before children.
PARENTS = [-1, 0, 0, 1, 1, 1, 2, 2]


@pytest.mark.parametrize("seed", range(5))
def test_closed_form_equals_scipy_under_equality_constraints(seed):
    rng = np.random.default_rng(seed)
    noisy = rng.normal(20, 10, 8)
    variances = rng.uniform(1, 50, 8)
    # consistency of the three parents, and the county total an invariant
    constraints, totals = consistency_constraints(PARENTS, invariant=160)
    assert constraints.shape == (8, 4) and list(totals) == [0.0, 0.0, 0.0, 160.0]
    closed = constrained_wls(noisy, variances, constraints, totals)
    general = scipy_wls(noisy, variances, constraints, totals, nonnegative=False)
    np.testing.assert_allclose(closed, general, atol=1e-9)
    np.testing.assert_allclose(constraints.T @ closed, totals, atol=1e-9)
    # the minimiser: the gradient of the objective lies in the span of the constraints
    gradient = (closed - noisy) / variances
    coefficients = np.linalg.lstsq(constraints, gradient, rcond=None)[0]
    np.testing.assert_allclose(constraints @ coefficients, gradient, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-30, 60), min_size=2, max_size=25),
    st.floats(1, 400),
    st.integers(0, 300),
)
def test_nonnegative_closed_form_equals_scipy(noisy, variance, total):
    noisy = np.array(noisy)
    ones = np.ones((noisy.size, 1))
    closed = nonnegative_wls(noisy, variance, ones, [total])
    general = scipy_wls(noisy, variance, ones, [total])
    assert closed.min() >= 0 and closed.sum() == pytest.approx(total, abs=1e-9)
    np.testing.assert_allclose(closed, general, atol=1e-9 * max(1.0, total))


def test_nonnegativity_keeps_the_largest_counts_and_zeroes_the_rest():
    closed = nonnegative_wls([100.0, -40.0, 3.0], 1.0, np.ones((3, 1)), [90.0])
    # −40 is fixed at 0; then [100, 3] − 6.5 each gives 3 − 6.5 < 0, fixed too: [90, 0, 0]
    np.testing.assert_allclose(closed, [90.0, 0.0, 0.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e4), min_size=1, max_size=40))
def test_rounding_keeps_the_total(values):
    values = np.array(values)
    total = round(values.sum())
    values = values * (total / values.sum()) if values.sum() > 0 else values
    if values.sum() == 0 and total != 0:
        return
    rounded = round_keeping_total(values, total)
    assert rounded.sum() == total and rounded.min() >= 0
    assert np.all(np.abs(rounded - values) < 1 + 1e-9)


def test_topdown_is_consistent_nonnegative_integer_at_every_level():
    rng = np.random.default_rng(7)
    truth = np.zeros(8)
    truth[3:] = rng.integers(0, 6, 5)
    truth[1], truth[2] = truth[3:6].sum(), truth[6:].sum()
    truth[0] = truth[1] + truth[2]
    for _ in range(50):
        noisy = truth + rng.normal(0, 4, 8)
        published = topdown(noisy, 16.0, PARENTS, invariant=truth[0])
        assert published.dtype == np.int64 and published.min() >= 0
        assert published[0] == truth[0]
        assert published[1] + published[2] == published[0]
        assert published[3:6].sum() == published[1] and published[6:].sum() == published[2]


def test_topdown_of_a_cell_vector_processes_each_cell():
    noisy = np.array([[10.2, 3.1], [4.4, 2.2], [6.1, -0.7]])
    together = topdown(noisy, 1.0, [-1, 0, 0], invariant=[10, 2])
    for cell in range(2):
        alone = topdown(noisy[:, cell], 1.0, [-1, 0, 0], invariant=[(10, 2)[cell]])
        np.testing.assert_array_equal(together[:, cell], alone)


@pytest.fixture(scope="module")
def counties():
    return synthetic_counties()


def test_synthetic_counties_have_the_reports_totals(counties):
    assert counties.population.size == COUNTIES and counties.population.sum() == TOTAL
    assert counties.population[counties.fairfax] == FAIRFAX
    assert counties.population[counties.lancaster] == LANCASTER
    assert counties.state_totals().sum() == TOTAL


def test_jason_bias_small_counties_up_large_ones_slightly_down(counties):
    """Sec. 6.3.3, Figure 6-7 (σ = 200, N = 100): B > 0 below σ, slightly < 0 well above."""
    runs = state_runs(counties, 200.0, 100, seed=1)
    np.testing.assert_allclose(
        runs.sum(axis=1), np.full(100, float(TOTAL)), rtol=1e-12
    )  # the invariant holds
    bias = bias_measure(runs, counties.population)["B"]
    population = counties.population
    small, large = population < 100, population > 2_000
    assert np.nanmean(bias[small]) > 0.5
    assert -0.3 < np.nanmean(bias[large]) < 0
    # no bias measured without post-processing: B of raw noise is near 0 (Monte Carlo ± 0.1)
    raw = population + np.random.default_rng(2).normal(0, 200, (100, population.size))
    assert abs(np.mean(bias_measure(raw, population)["B"])) < 0.02


def test_jason_lancaster_spike_at_minus_its_population(counties):
    """Figure 6-10: Lancaster (67) cannot go below −67, so the mass of the noise below it piles
    up at −67; Fairfax (187,160) is symmetric."""
    runs = state_runs(counties.of_state(0), 200.0, 2_000, seed=3)
    lancaster = runs[:, counties.lancaster] - LANCASTER
    fairfax = runs[:, counties.fairfax] - FAIRFAX
    assert lancaster.min() >= -LANCASTER - 1e-9
    spike = np.mean(np.isclose(lancaster, -LANCASTER))
    assert 0.3 < spike < 0.45  # P[Z <= -67] = 0.37 for σ = 200, less the other counties' shift
    assert abs(np.mean(fairfax)) < 4 * 200 / np.sqrt(2_000)
    assert np.std(fairfax) == pytest.approx(200, rel=0.06)


def test_bias_measure_and_window_by_hand():
    published = np.array([[12.0, 5.0], [9.0, 5.0], [11.0, 5.0]])
    measure = bias_measure(published, [10.0, 5.0])
    # unit 0: errors +2, -1, +1: σ₊² = 5/3, σ₋² = 1/3, B = 4/6
    assert measure["sigma2_plus"][0] == pytest.approx(5 / 3)
    assert measure["sigma2_minus"][0] == pytest.approx(1 / 3)
    assert measure["B"][0] == pytest.approx(2 / 3)
    assert np.isnan(measure["B"][1])  # never wrong: nothing to measure
    key, mean = windowed_mean([1.0, 2.0, 3.0, 4.0], [40, 10, 30, 20], window=2)
    np.testing.assert_array_equal(key, [10, 20, 30, 40])
    np.testing.assert_allclose(mean, [2.0, 3.0, 3.5, 2.0])  # the point and the one before it


def test_closed_form_equals_scipy_on_a_state_of_counties(counties):
    """Sec. 6.3.5 at the experiment's scale: counts up to 187,160, σ = 200."""
    state = counties.of_state(0)
    rng = np.random.default_rng(5)
    ones, total = np.ones((state.population.size, 1)), [state.population.sum()]
    for _ in range(20):
        noisy = state.population + rng.normal(0, 200, state.population.size)
        closed = nonnegative_wls(noisy, 200.0**2, ones, total)
        general = scipy_wls(noisy, 200.0**2, ones, total)
        assert np.max(np.abs(closed - general)) <= 1e-9 * closed.max()


def test_vectorised_topdown_equals_the_general_solver_row_by_row():
    """topdown_many (JASON's iteration vectorised) against nonnegative_wls and
    round_keeping_total applied parent by parent, on a county → tracts → blocks tree."""
    rng = np.random.default_rng(11)
    variances = np.array([1.0, 2.0, 2.0, 5.0, 5.0, 5.0, 5.0, 5.0])
    rows = rng.normal(3.0, 4.0, (300, 8))
    many = topdown_many(rows, variances, PARENTS)
    for row, got in zip(rows, many, strict=True):
        expected = np.zeros(8)
        expected[0] = round(max(row[0], 0.0))
        for parent, children in ((0, [1, 2]), (1, [3, 4, 5]), (2, [6, 7])):
            fitted = nonnegative_wls(
                row[children], variances[children], np.ones((len(children), 1)), [expected[parent]]
            )
            expected[children] = round_keeping_total(fitted, expected[parent])
        np.testing.assert_array_equal(got, expected)


def test_jason_iteration_is_the_optimum_of_the_joint_hierarchy_problem():
    """All levels at once (consistency of every parent, the county an invariant), every count
    >= 0: JASON's iteration reaches scipy's optimum on 100 random noisy trees."""
    constraints, totals = consistency_constraints(PARENTS, invariant=12)
    rng = np.random.default_rng(0)
    for _ in range(100):
        noisy, variances = rng.normal(1.5, 3.0, 8), rng.uniform(1.0, 10.0, 8)
        closed = nonnegative_wls(noisy, variances, constraints, totals)
        general = scipy_wls(noisy, variances, constraints, totals)
        assert closed.min() >= 0 and np.allclose(constraints.T @ closed, totals, atol=1e-9)
        np.testing.assert_allclose(closed, general, atol=1e-9)
