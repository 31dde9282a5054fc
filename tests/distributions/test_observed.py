"""Observed data of the package's int64 distributions is checked, not silently truncated."""

import numpy as np
import pymc as pm
import pytest

from adversary.distributions import BernoulliCount, DiscreteGaussian, NoiseRelease
from adversary.distributions.tabulated_noise import TabulatedNoise
from adversary.noise import DiscreteLaplaceNoise
from adversary.noise.finite_pmf import FinitePmf

TABLE = FinitePmf(start=-1, probabilities=np.array([0.25, 0.5, 0.25]))
DECLARATIONS = {
    "DiscreteGaussian": lambda observed: DiscreteGaussian("x", mu=0, sigma2=1.0, observed=observed),
    "BernoulliCount": lambda observed: BernoulliCount("x", known=0, p=0.5, observed=observed),
    "NoiseRelease": lambda observed: NoiseRelease(
        "x", mu=0, mechanism=DiscreteLaplaceNoise(2.0), observed=observed
    ),
    "TabulatedNoise": lambda observed: TabulatedNoise("x", mu=0, table=TABLE, observed=observed),
}


@pytest.mark.parametrize("declare", DECLARATIONS.values(), ids=DECLARATIONS)
@pytest.mark.parametrize("observed", [2.9, [1, 0.5]])
def test_non_integer_observed_data_is_refused_naming_the_variable(declare, observed):
    with pm.Model(), pytest.raises(ValueError, match=r"^observed \(of 'x'\) must be integer"):
        declare(observed)


@pytest.mark.parametrize("declare", DECLARATIONS.values(), ids=DECLARATIONS)
@pytest.mark.parametrize("observed", [np.inf, -np.inf, np.nan, [1.0, np.inf], [np.nan, 2.0]])
def test_non_finite_observed_data_is_refused_naming_the_variable(declare, observed):
    """inf was accepted (the posterior equalled the prior); NaN failed inside PyTensor."""
    with pm.Model(), pytest.raises(ValueError, match=r"^observed \(of 'x'\) must be finite"):
        declare(observed)


@pytest.mark.parametrize("declare", DECLARATIONS.values(), ids=DECLARATIONS)
def test_integral_observed_data_is_kept_exactly(declare):
    with pm.Model() as model:
        declare(np.array([1.0, 0.0]))
    assert model["x"].owner is not None
    np.testing.assert_array_equal(model.rvs_to_values[model["x"]].data, [1, 0])
