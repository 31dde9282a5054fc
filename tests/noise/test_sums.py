"""Exact sums of discrete Gaussians (block-group y1*, supplement S2)."""

import itertools

import numpy as np
import pytest

from adversary.noise import discrete_gaussian
from adversary.noise.finite_pmf import FinitePmf
from adversary.noise.sums import sum_of_discrete_gaussians


def test_one_term_is_the_discrete_gaussian():
    table = sum_of_discrete_gaussians(1, 0.8)
    np.testing.assert_allclose(table.probabilities, discrete_gaussian.pmf(table.support, 0.8))


@pytest.mark.parametrize(("d", "sigma2"), [(2, 0.5), (3, 1.3)])
def test_small_sums_match_an_explicit_sum_over_all_terms(d, sigma2):
    reach = 12
    values = np.arange(-reach, reach + 1)
    weights = discrete_gaussian.pmf(values, sigma2)
    brute = {}
    for combo in itertools.product(range(values.size), repeat=d):
        total = int(values[list(combo)].sum())
        brute[total] = brute.get(total, 0.0) + float(np.prod(weights[list(combo)]))
    table = sum_of_discrete_gaussians(d, sigma2)
    for total in range(-6, 7):
        assert table.pmf(total) == pytest.approx(brute[total], rel=1e-13)


# (d, ρ, bound on the omitted mass): truncation only, or truncation plus FFT rounding.
@pytest.mark.parametrize(
    ("d", "rho", "omitted"), [(27, 0.0992, 1e-14), (5, 1.0, 1e-14), (27, 1e-5, 1e-13)]
)
def test_mass_and_variance(d, rho, omitted):
    sigma2 = 1 / (2 * rho)
    table = sum_of_discrete_gaussians(d, sigma2, tail_mass=1e-14)
    assert table.omitted_mass <= omitted
    assert table.probabilities.sum() == pytest.approx(1.0, abs=1e-12)
    # Variances of independent terms add.
    assert table.variance == pytest.approx(d * float(discrete_gaussian.variance(sigma2)), rel=1e-11)


def test_approximation_3_7_is_tight_at_the_block_rho_and_loose_at_rho_one():
    """Prop. S2.1: the sum is close to DG(0, d/(2ρ)); how close depends on ρ."""
    for rho, bound in [(0.0992, 1e-13), (1.0, 2e-3)]:
        table = sum_of_discrete_gaussians(27, 1 / (2 * rho))
        approx = discrete_gaussian.pmf(table.support, 27 / (2 * rho))
        total_variation = 0.5 * np.abs(table.probabilities - approx).sum()
        assert total_variation < bound
    # At ρ = 1 the approximation is visibly off: the difference is real, not rounding.
    assert total_variation > 1e-4


def test_finite_pmf_is_zero_outside_its_run():
    table = FinitePmf(start=-1, probabilities=[0.25, 0.5, 0.25])
    np.testing.assert_array_equal(table.pmf([-2, -1, 0, 1, 2]), [0, 0.25, 0.5, 0.25, 0])
    assert table.logpmf(5) == -np.inf
    assert table.mean == 0 and table.variance == 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"d": 0}, "d must be >= 1"), ({"d": 2.5}, "d must be integer"), ({"sigma2": -1}, "sigma2")],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sum_of_discrete_gaussians(**({"d": 3, "sigma2": 1.0} | kwargs))
