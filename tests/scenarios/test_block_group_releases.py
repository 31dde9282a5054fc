"""The block-group attack over every release (Kazan & Reiter Sec. 4.3, Figure 4, S4)."""

import numpy as np
import pytest

from adversary.model_files import load_case
from adversary.noise import discrete_gaussian
from adversary.scenarios import block_group as bg
from adversary.scenarios import single_block
from adversary.scenarios.block_group.paper_sampler import stationary_x1_probability
from adversary.scenarios.block_group.prior import (
    bounded_uniform,
    improper_uniform,
    point_mass,
)
from adversary.scenarios.block_group.releases import (
    decision_map,
    posterior_by_full_enumeration,
    release_grid,
)

RHO1 = 2.56 * 165 / 4099 * 3945 / 4097
RHO2 = 2.56 * 1256 / 4099 * 1288 / 4099
SETTING = {"prior": 0.5, "rho1": RHO1, "rho2": RHO2, "d": 27}


def _thinned(grid, step=7):
    """Every ``step``-th y1* value: the full 5-d reference stays quick."""
    return grid | {"y1_release": grid["y1_release"][::step]}


@pytest.mark.parametrize(
    ("x2_prior", "sum_noise"),
    [
        (improper_uniform(), "approximate"),
        (bounded_uniform(10), "approximate"),
        (point_mass(25), "approximate"),
        (improper_uniform(), "exact"),
    ],
)
def test_posterior_on_the_release_grid_matches_full_enumeration(x2_prior, sum_noise):
    maps = decision_map((1, 1), x2_prior=x2_prior, sum_noise=sum_noise, **SETTING)
    noise = bg.noise_model(RHO1, RHO2, 27, sum_noise=sum_noise)
    grid = _thinned(release_grid((1, 1, 0), noise))
    reference = posterior_by_full_enumeration(grid, noise, 0.5, x2_prior, 0, x2_max=80)
    ours = maps.posterior.sel(y1_release=grid["y1_release"]).values
    np.testing.assert_allclose(ours, reference, rtol=1e-10, atol=1e-14)


def test_grid_holds_all_but_the_tail_mass():
    maps = decision_map((1, 1), **SETTING, tail_mass=1e-12)
    assert 1 - float(maps.release_probability.sum()) <= 1e-12
    assert maps.attrs["omitted_mass"] == 1e-12


def test_posterior_at_grid_points_equals_the_one_release_posterior():
    maps = decision_map((1, 3), x2_prior=bounded_uniform(10), **SETTING)
    for release in [(2, 1, -1), (0, 7, 9), (-6, 0, 40)]:
        expected = bg.x1_posterior(*release, x2_prior=bounded_uniform(10), **SETTING)
        got = float(maps.posterior.sel(dict(zip(maps.posterior.dims, release, strict=True))))
        assert got == pytest.approx(expected, rel=1e-11)


def test_without_hierarchy_is_the_single_block_decision():
    maps = decision_map((1, 1), **SETTING)
    assert maps.attrs["correct_decision_probability_without_hierarchy"] == pytest.approx(
        float(single_block.correct_decision_probability(0.5, RHO1)), rel=1e-12
    )
    # Kazan & Reiter Sec. 4.3: "the corresponding probability is 58.89%".
    assert round(100 * maps.attrs["correct_decision_probability_without_hierarchy"], 2) == 58.89


def test_changed_decisions_account_for_the_difference():
    attrs = decision_map((1, 1), x2_prior=bounded_uniform(10), **SETTING).attrs
    gain = attrs["changed_to_correct"] - attrs["changed_to_wrong"]
    assert attrs["correct_decision_probability"] - attrs[
        "correct_decision_probability_without_hierarchy"
    ] == pytest.approx(gain, abs=1e-14)


def test_marginal_measures_against_simulated_releases():
    """Simulate the mechanism from the truth, run the adversary's exact posterior on each draw."""
    rng = np.random.default_rng(20231)
    draws = 1500
    sigma1, sigma2 = 1 / (2 * RHO1), 1 / (2 * RHO2)
    x1s = 1 + discrete_gaussian.sample(sigma1, draws, rng)
    x2s = 1 + discrete_gaussian.sample(sigma2, draws, rng)
    # y1* is the sum of 27 other blocks' noisy counts (all 0 in truth): the exact mechanism.
    y1s = discrete_gaussian.sample(sigma1, (draws, 27), rng).sum(axis=1)
    posteriors = np.array(
        [
            bg.x1_posterior(a, b, c, x2_prior=bounded_uniform(10), sum_noise="exact", **SETTING)
            for a, b, c in zip(x1s, x2s, y1s, strict=True)
        ]
    )
    exact = decision_map((1, 1), x2_prior=bounded_uniform(10), sum_noise="exact", **SETTING).attrs
    for sample, expected in [
        (posteriors, exact["marginal_posterior"]),
        (posteriors >= 0.5, exact["correct_decision_probability"]),
    ]:
        standard_error = np.std(sample) / np.sqrt(draws)
        assert abs(np.mean(sample) - expected) < 4 * standard_error


def test_granville_case_measures_come_from_the_decision_map():
    case = load_case("granville_county")
    measures = case.marginal_measures()
    maps = case.decision_map()
    assert measures.correct_decision_probability == maps.attrs["correct_decision_probability"]
    assert measures.marginal_risk == pytest.approx(measures.marginal_posterior / 0.5)


# --- Kazan & Reiter's printed decision probabilities (Sec. 4.3 and S4) ----------------------

# (prior of X2 | X1, truth (x1, x2), printed % correct, our exact %).
PRINTED = [
    (improper_uniform(), (1, 1), 59, 31.82),
    (bounded_uniform(10), (1, 1), 59, 38.97),
    (point_mass(1), (1, 1), 59, 59.27),
    (point_mass(25), (1, 1), 74, 73.46),
    (point_mass(25), (0, 0), 42, 42.52),
]


@pytest.mark.parametrize(("x2_prior", "truth", "printed", "ours"), PRINTED)
def test_s4_decision_probabilities(x2_prior, truth, printed, ours):
    """Exact values, and what the paper's sampler gives; docs/paper-differences.md.

    The uniform priors' 59% is the incompatible sampler's stationary law (X1 update
    ignoring k1 ≤ k2); the model's posterior decides correctly far less often,
    because X2 = 0 is possible only with X1 = 0. The point-mass rows agree with
    the printed values within their Monte Carlo error.
    """
    maps = decision_map(truth, x2_prior=x2_prior, tie_rule="largest", **SETTING)  # the paper's
    exact = 100 * maps.attrs["correct_decision_probability"]
    assert round(exact, 2) == ours

    noise = bg.noise_model(RHO1, RHO2, 27)
    release = np.meshgrid(*(maps[d].values for d in maps.posterior.dims), indexing="ij")
    paper_posterior = stationary_x1_probability(
        *release, prior=0.5, noise=noise, x2_prior=x2_prior, x2_max=50
    )
    paper_decision = (paper_posterior >= 0.5).astype(int)
    paper = 100 * float(maps.release_probability.values[paper_decision == truth[0]].sum())
    assert abs(paper - printed) < 1.0
    if x2_prior.kind in ("improper_uniform", "bounded_uniform"):
        assert abs(exact - printed) > 15


# --- ties ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize(("value", "truth"), [(1, (1, 1)), (25, (0, 0))])
def test_tie_rules_of_the_decision_map_against_the_point_mass_closed_form(value, truth, rule):
    """A point mass on X2 makes the log odds exactly 0 on whole lines of releases.

    With ``X2 = v`` known, (S3.4) is ``P[X1 = k1] DG(x1* - k1; ρ1) DG(y1* - (v - k1); ρ1/d)``
    (the x2* term is the same for both k1), so the log odds of ``X1 = 1`` at
    ``p = 1/2`` are a difference of discrete Gaussian log-pmfs, computed here on
    the whole release grid and scored by the rule's definition.
    """
    maps = decision_map(truth, x2_prior=point_mass(value), tie_rule=rule, **SETTING)
    x1r, _, y1r = np.meshgrid(*(maps[d].values for d in maps.posterior.dims), indexing="ij")
    s1, sy = 1 / (2 * RHO1), 27 / (2 * RHO1)
    log_odds = (
        discrete_gaussian.logpmf(x1r - 1, s1)
        - discrete_gaussian.logpmf(x1r, s1)
        + discrete_gaussian.logpmf(y1r - (value - 1), sy)
        - discrete_gaussian.logpmf(y1r - value, sy)
    )
    tied = np.abs(log_odds) <= 1e-9
    up = np.where(tied, {"split": 0.5, "largest": 1.0, "smallest": 0.0}[rule], log_odds > 0)
    credit = up if truth[0] == 1 else 1.0 - up
    weights = maps.release_probability.values
    np.testing.assert_array_equal(maps.tied.values, tied)
    assert weights[tied].sum() > 5e-3  # ties carry mass here (about 0.6%)
    assert maps.attrs["correct_decision_probability"] == pytest.approx(
        float(np.sum(weights * credit)), abs=1e-14
    )


def test_split_is_the_average_of_the_two_deterministic_rules():
    values = {
        rule: decision_map((1, 1), x2_prior=point_mass(1), tie_rule=rule, **SETTING).attrs[
            "correct_decision_probability"
        ]
        for rule in ("split", "largest", "smallest")
    }
    assert values["split"] == pytest.approx((values["largest"] + values["smallest"]) / 2)
    assert values["largest"] > values["split"]
