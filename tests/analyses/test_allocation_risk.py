"""The risk of an allocation under every attack: the same numbers as each scenario called directly
at the allocation's ρ, and its errors."""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from adversary.analyses.allocation_risk import (
    ATTACKS,
    DEFAULT_PRIORS,
    allocation_risk,
    attack_case,
)
from adversary.budget import get_preset
from adversary.model_files import load_case
from adversary.models.reconstruction_block import PRIOR
from adversary.scenarios import single_block as sb
from adversary.scenarios.reconstruction import REDUCED, pl94_block
from adversary.scenarios.reconstruction.data_holder import holder_measures
from adversary.scenarios.reconstruction.posterior import ExactPosteriors, compositions, log_prior

PRESET = get_preset("pl94-2020-persons")
CHEAP = ("single_block", "block_group", "unknown_attribute", "published_tables", "many_levels")


@pytest.fixture(scope="module")
def risk():
    return allocation_risk(PRESET, attacks=CHEAP)


def test_single_block_is_the_closed_form_at_the_block_detailed_rho(risk):
    rho = PRESET.rho("block", "detailed")
    p = np.array(DEFAULT_PRIORS)
    posterior = sb.marginal_posterior(p, rho, convention="das")
    np.testing.assert_allclose(risk.ratio.sel(attack="single_block"), posterior / p, rtol=1e-12)
    np.testing.assert_allclose(risk.posterior.sel(attack="single_block"), posterior, rtol=1e-12)
    correct = sb.correct_decision_probability(p, rho, convention="das")
    np.testing.assert_allclose(risk.correct.sel(attack="single_block"), correct, rtol=1e-12)


@pytest.mark.parametrize(
    ("attack", "model"),
    [
        ("unknown_attribute", "unknown_ethnicity"),
        ("published_tables", "published_tables"),
        ("many_levels", "unique_many_levels"),
    ],
)
def test_each_attack_is_its_shipped_case_at_the_2020_preset(risk, attack, model):
    """The shipped cases are built at the 2020 preset's ρ with the paper's five priors."""
    case = load_case(model).replace(convention="das")
    measures = [case.marginal_measures(label) for label in case.priors]
    np.testing.assert_allclose(
        risk.ratio.sel(attack=attack), [m.marginal_risk for m in measures], rtol=1e-12
    )
    np.testing.assert_allclose(
        risk.correct.sel(attack=attack),
        [m.correct_decision_probability for m in measures],
        rtol=1e-12,
        atol=1e-300,
    )
    np.testing.assert_allclose(
        risk.ratio_error.sel(attack=attack), [m.risk_error_bound for m in measures], rtol=1e-12
    )


def test_block_group_is_the_granville_case_at_the_block_and_block_group_rho(risk):
    case = load_case("granville_county").replace(convention="das")
    measures = case.marginal_measures("1/2")
    assert risk.ratio.sel(attack="block_group", prior=0.5) == pytest.approx(
        measures.marginal_risk, rel=1e-12
    )


def test_every_query_with_an_allocation_is_the_case_with_the_preset_name():
    risk = allocation_risk(PRESET, attacks=["every_query"], priors=(0.5, 0.1))
    case = load_case("every_query").replace(convention="das", priors=risk_priors((0.5, 0.1)))
    for p in (0.5, 0.1):
        measures = case.marginal_measures(repr(p))
        assert risk.ratio.sel(attack="every_query", prior=p) == measures.marginal_risk
        assert risk.correct_error.sel(attack="every_query", prior=p) == measures.error_bound
    assert risk.method.sel(attack="every_query") == "monte-carlo"


def test_every_query_case_takes_an_allocation_and_its_total():
    case = load_case("every_query").replace(budget=PRESET, rho_total=None)
    assert case.rho_total == 2.56
    np.testing.assert_array_equal(case.looks().rhos, load_case("every_query").looks().rhos)


def risk_priors(priors):
    return attack_case("every_query", PRESET, priors).priors


def test_a_scaled_allocation_moves_every_rho():
    doubled = dataclasses.replace(PRESET, rho_total=PRESET.rho_total * 2)
    risk = allocation_risk(doubled, attacks="single_block", priors=(0.2,), convention="paper")
    rho = 2 * PRESET.rho("block", "detailed")
    expected = sb.marginal_posterior(0.2, rho, convention="paper") / 0.2
    assert float(risk.ratio.item()) == pytest.approx(float(expected), rel=1e-12)
    assert risk.attrs["convention"] == "paper" and risk.attrs["rho_total"] == 5.12


def test_reconstruction_is_holder_measures_of_the_preset_block():
    risk = allocation_risk(
        "pl94-2020-persons",
        attacks=["reconstruction"],
        block_sizes=(1, 2),
        reconstruction_replications=6,
        seed=3,
    )
    for n in (1, 2):
        block = pl94_block("b", REDUCED, n=n, prior=PRIOR, seed=2020, convention="das")
        expected = holder_measures(block.replace(releases=None), replications=6, seed=3)
        got = risk.sel(block_size=n)
        assert float(got.reconstructed_share) == pytest.approx(
            expected["overlap_share"]["mean"], rel=1e-12
        )
        assert float(got.exact_block_rate) == pytest.approx(
            expected["map_exact"]["mean"], rel=1e-12
        )
        assert float(got.reconstructed_share_error) == pytest.approx(
            4 * expected["overlap_share"]["standard_error"], rel=1e-12
        )
    assert "attack" not in risk.dims or risk.sizes["attack"] == 0


def test_exact_posteriors_are_the_normalised_prior_times_each_noise_pmf():
    """Brute force: P(h | x*) ∝ P(h) Π_q P_q(x*_q − a_q·h), each pmf evaluated per histogram."""
    block = pl94_block("b", REDUCED, n=2, prior=PRIOR, seed=7, convention="das")
    histograms = compositions(2, REDUCED.n_cells)
    counts = histograms @ block.incidence().T
    log_weights = log_prior(block, histograms) + sum(
        mechanism.logpmf(block.releases[q] - counts[:, q])
        for q, mechanism in enumerate(block.noise())
    )
    weights = np.exp(log_weights - log_weights.max())
    posterior = ExactPosteriors(block)(block.releases)
    np.testing.assert_allclose(posterior.probabilities, weights / weights.sum(), rtol=1e-10)
    assert posterior.probabilities.sum() == pytest.approx(1.0, rel=1e-14)


def test_default_attacks_are_all():
    assert ATTACKS[-1] == "reconstruction" and len(ATTACKS) == 7


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"attacks": ["single_block", "nope"]}, "attacks must be distinct names"),
        ({"attacks": []}, "attacks must be distinct names"),
        ({"priors": (0.5, 1.0)}, "priors must be distinct numbers strictly in"),
        ({"priors": (0.5, 0.5)}, "priors must be distinct numbers strictly in"),
        ({"priors": "x"}, "priors must be numbers in"),
        ({"convention": "other"}, "convention"),
        ({"attacks": "reconstruction", "block_sizes": (0,)}, "block_sizes must be positive"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        allocation_risk(PRESET, **kwargs)


def test_an_allocation_without_the_query_an_attack_needs_is_refused():
    block = PRESET.levels.index("block")
    rows = list(PRESET.query_shares)
    detailed = PRESET.queries.index("detailed")
    row = list(rows[block])
    row[0], row[detailed] = row[0] + row[detailed], Fraction(0)
    rows[block] = tuple(row)
    no_detail = dataclasses.replace(PRESET, name="no block detail", query_shares=tuple(rows))
    needs = r"allocation: 'no block detail' does not measure the detailed query at block"
    with pytest.raises(ValueError, match=needs):
        allocation_risk(no_detail, attacks="single_block")
    with pytest.raises(TypeError, match="allocation must be a BudgetAllocation, a preset name"):
        allocation_risk(2.56)
