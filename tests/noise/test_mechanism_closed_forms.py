"""Closed forms and printed numbers of the noise mechanisms.

The discrete Gaussian adapter against its module; the truncated geometric's
normaliser and variance and the cell-key p-table's variance, entropy and shape
(50-digit mpmath sums); the numbers Bach (2020) prints about cell-key p-tables;
the variance-matched constructors. The pmf, tails, draws and accounting are
in test_mechanisms.py.
"""

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from adversary.noise import discrete_gaussian as dg
from adversary.noise import exact_sampling, noise_variance
from adversary.noise.mechanisms import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    TruncatedGeometricNoise,
    cell_key_max_variance,
)

EPS = np.finfo(float).eps
DPS = 50


# --- the discrete Gaussian adapter -----------------------------------------------------------


@pytest.mark.parametrize("sigma2", [0.3, 5.04, 1e6])
def test_discrete_gaussian_adapter_equals_the_module(sigma2):
    mech = DiscreteGaussianNoise(sigma2)
    z = np.arange(-40, 41) * max(1, int(math.sqrt(sigma2)) // 4)
    np.testing.assert_array_equal(mech.logpmf(z), dg.logpmf(z, sigma2))
    np.testing.assert_array_equal(mech.pmf(z), dg.pmf(z, sigma2))
    np.testing.assert_array_equal(mech.sf(z), dg.sf(z, sigma2))
    np.testing.assert_array_equal(mech.cdf(z), dg.cdf(z, sigma2))
    assert mech.variance == float(dg.variance(sigma2))
    for t in [1e-3, 1e-15]:
        assert mech.cutoff(t) == int(dg.cutoff(sigma2, t))
        assert mech.outside_mass(mech.cutoff(t)) == 2 * dg.tail_bound(mech.cutoff(t) + 1, sigma2)
    np.testing.assert_array_equal(mech.sample(500, 9), exact_sampling.sample(sigma2, 500, 9))
    assert mech.support == (None, None) and not mech.bounded
    assert mech.pure_epsilon() is None


def test_discrete_gaussian_from_rho_under_both_conventions():
    paper = DiscreteGaussianNoise.from_rho(0.0992)
    assert paper.sigma2 == 1 / (2 * 0.0992) and paper.sensitivity == 1.0
    das = DiscreteGaussianNoise.from_rho(0.0992, "das")
    assert das.sigma2 == noise_variance(0.0992, "das") and das.sensitivity == math.sqrt(2)
    for mech in (paper, das):
        assert mech.zcdp_rho() == pytest.approx(0.0992, rel=4 * EPS)
    with pytest.raises(ValueError, match=r"^convention "):
        DiscreteGaussianNoise.from_rho(0.1, "census")


# --- closed forms ----------------------------------------------------------------------------


def test_discrete_laplace_variance_approaches_the_laplace_one():
    # Bach (2020) eq. (3): Var Lap(b) = 2b²; the two-sided geometric has 2b² - 1/6 + O(1/b²).
    for b in [10.0, 1000.0]:
        assert DiscreteLaplaceNoise(b).variance == pytest.approx(2 * b * b - 1 / 6, abs=1e-2 / b)


@pytest.mark.parametrize(("b", "bound"), [(0.5, 3), (2.0, 5), (20.0, 3), (3.0, 40), (1.0, 0)])
def test_truncated_geometric_normaliser_and_variance(b, bound):
    mech = TruncatedGeometricNoise(b, bound)
    with mp.workdps(DPS):
        q = mp.exp(-1 / mp.mpf(b))
        normaliser = (1 + q - 2 * q ** (bound + 1)) / (1 - q)
        direct = mp.fsum(q ** abs(z) for z in range(-bound, bound + 1))
        assert abs(normaliser / direct - 1) < mp.mpf(10) ** -40
        variance = mp.fsum(z * z * q ** abs(z) for z in range(-bound, bound + 1)) / direct
    assert abs(mp.mpf(float(mech.pmf(0))) * normaliser - 1) <= 8 * EPS
    assert abs(mp.mpf(mech.variance) - variance) <= 1e-14 * max(variance, 1)


CELL_KEY_CASES = [
    (2.0, 5),
    (2.0, 10),
    (3.0, 5),
    (1.0, 3),
    (0.3, 10),
    (1e-6, 4),
    (1e-200, 2),
    (4.0 - 1e-9, 3),  # μ ≈ 1e-10, just inside the uniform limit
    (4.0, 3),  # exactly E(E+1)/3: μ = 0
    (cell_key_max_variance(7), 7),  # the float E(E+1)/3 itself
    (1000.0, 1000),
]


@pytest.mark.parametrize(("v", "bound"), CELL_KEY_CASES)
def test_cell_key_variance_equals_v(v, bound):
    mech = CellKeyNoise(v, bound)
    with mp.workdps(DPS):
        mu = mp.mpf(mech.multiplier)
        weights = [mp.exp(-mu * z * z) for z in range(-bound, bound + 1)]
        exact = mp.fsum(z * z * w for z, w in zip(range(-bound, bound + 1), weights, strict=True))
        exact /= mp.fsum(weights)
    assert abs(exact / v - 1) <= 1e-12  # the p-table built from the float μ has variance V
    assert abs(mech.variance / v - 1) <= 1e-12
    assert mech.multiplier >= 0
    if v >= bound * (bound + 1) / 3:
        assert mech.multiplier == 0.0
        np.testing.assert_allclose(mech.pmf(np.arange(-bound, bound + 1)), 1 / (2 * bound + 1))


def test_cell_key_table_is_maximum_entropy():
    # Any other symmetric pmf on {-E..E} with variance V has lower entropy:
    # perturb along directions that keep Σp, Σzp and Σz²p fixed.
    mech = CellKeyNoise(2.0, 5)
    z = np.arange(-5, 6)
    p = mech.pmf(z)

    def entropy(x):
        return -float(np.sum(x * np.log(x)))

    constraints = np.vstack([np.ones(11), z, z**2])
    _, _, vt = np.linalg.svd(constraints)
    null = vt[3:]  # orthogonal to the three constraints
    rng = np.random.default_rng(0)
    for _ in range(50):
        direction = rng.standard_normal(null.shape[0]) @ null
        step = 0.5 * p.min() / np.abs(direction).max()
        other = p + step * direction
        assert other @ z**2 == pytest.approx(2.0, abs=1e-12)
        assert entropy(other) < entropy(p)


def test_cell_key_monotone_in_v_and_gaussian_shape():
    # μ falls as V rises (dVar/dμ = -Var(Z²) < 0); the table is a truncated DG(1/(2μ)).
    mus = [CellKeyNoise(v, 6).multiplier for v in [0.5, 1.0, 2.0, 5.0, 10.0, 14.0]]
    assert all(a > b for a, b in itertools.pairwise(mus)) and mus[-1] == 0.0
    mech = CellKeyNoise(2.0, 8)
    z = np.arange(-8, 9)
    truncated = dg.pmf(z, 1 / (2 * mech.multiplier))
    np.testing.assert_allclose(mech.pmf(z), truncated / truncated.sum(), rtol=1e-13)


# --- Bach (2020): the numbers printed about cell-key p-tables --------------------------------


def revealing_probability(mech) -> float:
    """Bach (2020) Sec. 3.2, eq. (10)-(11): ``p1 = P[|F + M - T| > 3(E - 1)]``.

    ``F + M - T`` of a 3-tuple with independent noise on each count; with
    symmetric noise it is distributed as the sum of three noises.
    """
    e = mech.bound
    table = mech.sum_table(3, 0.0)
    extreme = np.arange(3 * e - 2, 3 * e + 1)
    return 2.0 * math.fsum(table.pmf(extreme))


@pytest.mark.parametrize("bound", [1, 2, 3, 5, 10])
def test_bach_footnote_14_uniform_noise(bound):
    # "uniform noise ∈ {-E, E} gives p1 = 20/(2E + 1)³": the p-table at V = E(E+1)/3.
    mech = CellKeyNoise(cell_key_max_variance(bound), bound)
    assert mech.multiplier == 0.0
    assert revealing_probability(mech) == pytest.approx(20 / (2 * bound + 1) ** 3, rel=1e-14)


def test_bach_section_3_2_revealing_probabilities():
    # "with E = 5 and V = 2 each output 3-tuple has just an individual chance
    # p1 ≃ O(10⁻⁷) of being divulged": exactly 1.5217e-7.
    p1 = revealing_probability(CellKeyNoise(2.0, 5))
    assert p1 == pytest.approx(1.521672250970e-7, rel=1e-9)
    # "for E = 10 and V ≤ 4 it is practically zero": at most 5.3e-16.
    assert revealing_probability(CellKeyNoise(4.0, 10)) == pytest.approx(5.34103e-16, rel=1e-4)
    assert revealing_probability(CellKeyNoise(2.0, 10)) < 1e-29


def test_bach_footnote_35_averaging_probability():
    # V = 2, k = 1000 noise terms summed, averaged over t = 100: P[|avg| < 0.5]
    # = P[|S| ≤ 49]. Bach found 741 (E = 10) and 725 (E = 5) of 1000 samples and
    # the Gaussian value 73.6 %; the exact value is 0.73165 for both E.
    for bound, found in [(10, 741), (5, 725)]:
        table = CellKeyNoise(2.0, bound).sum_table(1000, 0.0)
        exact = math.fsum(table.pmf(np.arange(-49, 50)))
        assert exact == pytest.approx(0.73165, abs=1e-5)
        assert abs(found / 1000 - exact) < 2 * math.sqrt(exact * (1 - exact) / 1000)
    assert math.erf(0.5 / math.sqrt(2 * 0.2)) == pytest.approx(0.736, abs=5e-4)


# --- variance-matched constructors -----------------------------------------------------------


@pytest.mark.parametrize("v", [1e-6, 0.05, 0.5, 2.0, 10.0, 1e6])
def test_from_variance_hits_the_variance(v):
    assert DiscreteGaussianNoise.from_variance(v).variance == pytest.approx(v, rel=1e-14)
    assert DiscreteLaplaceNoise.from_variance(v).variance == pytest.approx(v, rel=1e-13)
    bound = max(2, int(2 * math.sqrt(v)) + 1)
    assert TruncatedGeometricNoise.from_variance(v, bound).variance == pytest.approx(v, rel=1e-13)


def test_from_variance_refuses_the_uniform_limit():
    with pytest.raises(ValueError, match=r"^variance must be below E\(E\+1\)/3 = 4"):
        TruncatedGeometricNoise.from_variance(4.0, 3)
    assert TruncatedGeometricNoise.from_variance(3.999, 3).scale > 100
