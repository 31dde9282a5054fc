"""Every scenario's PyMC model, sampled by the exact Gibbs steps, against its exact posterior.

Several observation sets and priors each; the tolerance is 4 Monte Carlo
standard errors from the ESS of the event's indicator. (Multi-level and
post-processing models are checked the same way in their own test files.)
"""

import pytest

from adversary.inference import sample
from adversary.scenarios import block_group as bg
from adversary.scenarios import single_block
from adversary.scenarios.block_group.prior import (
    bounded_uniform,
    conditional_pmf,
    improper_uniform,
    point_mass,
)

RHO1 = 2.56 * 165 / 4099 * 3945 / 4097
RHO2 = 2.56 * 1256 / 4099 * 1288 / 4099
DRAWS = {"draws": 1500, "tune": 100, "chains": 2, "cores": 1, "progressbar": False}


@pytest.mark.parametrize(
    ("release", "prior", "known", "convention"),
    [(2, 0.5, 0, "paper"), (5, 1 / 50, 0, "paper"), (9, 0.2, 7, "das")],
)
def test_single_block(release, prior, known, convention, assert_within_mcse):
    model = single_block.model(release, prior, RHO1, known, convention)
    tree = sample(model, random_seed=11, **DRAWS)
    exact = float(single_block.posterior(release, prior, RHO1, known, convention=convention))
    assert_within_mcse(tree, {"X1": known + 1}, exact)


@pytest.mark.parametrize(
    ("releases", "x2_prior", "sum_noise", "prior"),
    [
        ((2, 1, -1), improper_uniform(), "approximate", 0.5),
        ((0, 6, 4), bounded_uniform(10), "approximate", 0.3),
        ((3, 2, -8), point_mass(25), "exact", 0.5),
        ((1, 4, 2), conditional_pmf({1: 1.0, 2: 1.0, 6: 2.0}), "exact", 0.7),
    ],
)
def test_block_group(releases, x2_prior, sum_noise, prior, assert_within_mcse):
    arguments = {"prior": prior, "rho1": RHO1, "rho2": RHO2, "d": 27}
    arguments |= {"x2_prior": x2_prior, "sum_noise": sum_noise}
    model = bg.model(*releases, **arguments)
    tree = sample(model, random_seed=5, **DRAWS)
    exact = bg.posterior(*releases, **arguments)
    assert_within_mcse(tree, {"X1": 1}, float(exact.sel(X1=1).sum()))
    for value in exact.X2.values[:4]:
        probability = float(exact.sel(X2=value).sum())
        if probability > 0.02:
            assert_within_mcse(tree, {"X2": int(value)}, probability)
