"""NoiseRelease: any mechanism's noisy count in a PyMC model (log-p, draws, per-element noise)."""

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from adversary.distributions import BernoulliCount, NoiseRelease
from adversary.distributions.noise_release import symbolic_logpmf
from adversary.noise import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
    TruncatedGeometricNoise,
)
from adversary.noise.mechanisms import NoiseMechanism

MECHANISMS = [
    DiscreteGaussianNoise(3.0),
    DiscreteLaplaceNoise(2.0),
    DiscreteLaplaceNoise(0.2),
    TruncatedGeometricNoise(2.0, 4),
    CellKeyNoise(2.0, 5),
    CellKeyNoise(0.05, 30),  # far tails underflow in the pmf, not in the log-pmf
    FinitePmfNoise(1, [0.5, 0.0, 0.5]),  # not containing 0, a hole inside
]


class _Shifted(NoiseMechanism):
    """An unbounded mechanism without a closed form here: tabulated by NoiseRelease."""

    label = "shifted Laplace"
    support = (None, None)
    variance = DiscreteLaplaceNoise(1.0).variance
    _inner = DiscreteLaplaceNoise(1.0)

    def logpmf(self, z):
        return self._inner.logpmf(z)

    def sf(self, k):
        return self._inner.sf(k)

    def cdf(self, k):
        return self._inner.cdf(k)

    def cutoff(self, tail_mass=1e-15):
        return self._inner.cutoff(tail_mass)

    def outside_mass(self, reach):
        return self._inner.outside_mass(reach)

    def sample(self, size=None, rng=None):
        return self._inner.sample(size, rng)


@pytest.mark.parametrize("mech", [*MECHANISMS, _Shifted()], ids=lambda m: m.label)
def test_log_p_is_the_mechanisms_log_pmf(mech):
    z = np.arange(-40, 41)
    expected = mech.logpmf(z)
    if isinstance(mech, _Shifted):  # tabulated: -inf beyond the table's cut-off
        expected = np.where(np.abs(z) <= mech.cutoff(1e-15), expected, -np.inf)
    np.testing.assert_allclose(symbolic_logpmf(mech, z).eval(), expected, rtol=1e-13, atol=0)
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=2, p=0.3)
        NoiseRelease("x1_release", mu=x1, mechanism=mech, observed=4)
    logp = model.compile_logp(sum=False)
    for k in (2, 3):
        assert logp({"X1": k})[1] == pytest.approx(float(mech.logpmf(4 - k)), rel=1e-13, abs=0)


@pytest.mark.parametrize("mech", MECHANISMS[1:5], ids=lambda m: m.label)
def test_draws_follow_the_pmf(mech):
    draws = pm.draw(_dist(mech, 7), draws=4000, random_seed=3)
    z = draws - 7
    support = np.arange(-60, 61)
    expected = mech.pmf(support) * z.size
    counts = np.array([np.sum(z == v) for v in support])
    keep = expected >= 5
    observed, expected = counts[keep], expected[keep]
    rest = z.size - expected.sum()
    if rest > 1e-6:  # lump the small cells together
        observed, expected = np.append(observed, z.size - observed.sum()), np.append(expected, rest)
    assert observed.sum() == z.size
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def _dist(mech, mu):
    with pm.Model():
        return NoiseRelease("y", mu=mu, mechanism=mech)


def test_one_mechanism_per_element_of_the_last_axis():
    mechanisms = [CellKeyNoise(2.0, 5), DiscreteLaplaceNoise(2.0), FinitePmfNoise(3, [1.0])]
    with pm.Model(coords={"level": [1, 2, 3]}) as model:
        x1 = BernoulliCount("X1", known=0, p=0.5)
        NoiseRelease(
            "releases",
            mu=x1 + np.array([0, 2, 0]),
            mechanism=mechanisms,
            observed=[3, 9, 4],
            dims="level",
        )
    values = model.compile_logp(sum=False)({"X1": 1})[1]
    expected = [m.logpmf(z) for m, z in zip(mechanisms, (2, 6, 3), strict=True)]
    np.testing.assert_allclose(values, expected, rtol=1e-13)
    draws = pm.draw(model["releases"], draws=200, random_seed=1)
    assert draws.shape == (200, 3)
    assert set(np.unique(draws[:, 2])) <= {3, 4}  # X1 + 3, X1 in {0, 1}
    assert np.all((draws[:, 0] >= -5) & (draws[:, 0] <= 6))  # X1 + cell-key noise


def test_bad_mechanisms_are_refused():
    with pm.Model(), pytest.raises(TypeError, match="NoiseMechanism"):
        NoiseRelease("y", mu=0, mechanism=2.0)
    with pm.Model(), pytest.raises(TypeError, match="NoiseMechanism"):
        NoiseRelease("y", mu=0, mechanism=[DiscreteLaplaceNoise(1.0), "x"])
