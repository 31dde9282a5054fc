"""Monte Carlo measures of attack models with other noise (NoiseRelease) against exact sums."""

import dataclasses

import pytest

from adversary.measures.monte_carlo import monte_carlo_measures
from adversary.measures.simulation import simulate_releases
from adversary.model_files import load_case
from adversary.noise import CellKeyNoise, DiscreteLaplaceNoise
from adversary.scenarios.multi_level import MultiLevelCase

N_SE = 4.0
MEASURES = ("marginal_posterior", "marginal_risk", "correct_decision_probability")


def assert_agrees(mc, exact):
    se = mc.details["standard_errors"]
    for name in MEASURES:
        estimate, reference = getattr(mc, name), getattr(exact, name)
        assert abs(estimate - reference) <= N_SE * se[name] + exact.error_bound, (name, se)


@pytest.mark.parametrize(
    "mechanism",
    [CellKeyNoise(5.04, 6), DiscreteLaplaceNoise.from_variance(5.04)],
    ids=lambda m: m.name,
)
def test_single_block_with_another_mechanism(mechanism):
    case = dataclasses.replace(load_case("dare_county"), rho=None, mechanism=mechanism)
    model = case.model("1/2")
    draws = simulate_releases(model, {"X1": 1}, 2000, random_seed=3)["x1_release"]
    if mechanism.bounded:  # exact draws stay on the support around the truth
        assert draws.min() >= 1 - mechanism.bound and draws.max() <= 1 + mechanism.bound
    mc = monte_carlo_measures(model, {"X1": 1}, releases=3000, random_seed=1)
    assert_agrees(mc, case.marginal_measures("1/2"))


def test_levels_with_a_mechanism_each():
    mechanisms = (CellKeyNoise(2.0, 3), DiscreteLaplaceNoise(1.0))
    case = MultiLevelCase("ml", None, {"a": 0.3}, observed_releases=(1, 0), mechanism=mechanisms)
    mc = monte_carlo_measures(case.model("a"), {"X1": 1}, releases=3000, random_seed=2)
    assert_agrees(mc, case.marginal_measures("a"))
