"""Choosing a budget: the largest ρ keeping a measure below a threshold for every prior.

Checked against the single block's closed forms (a root of the marginal risk
(3.4); the jumps of the correct-decision probability (3.6)), on a saw-tooth
where a search assuming monotonicity would be wrong, on the unknown-attribute
and multi-level cases, and for its errors.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy import optimize, special

from adversary.accounting import epsilon_from_zcdp
from adversary.analyses.choose_rho import choose_rho, measure_at, rho_fields, with_rho
from adversary.model_files import load_case
from adversary.noise import discrete_gaussian
from adversary.scenarios import single_block as sb
from adversary.scenarios.single_block import SingleBlockCase

DARE = load_case("dare_county")
#: A sparser scan (refined spacing 10^(1/40) ≈ 6 %): the answer is the same lattice point ρ_j
#: (rho_min and tolerance fix the lattice, the final bisection reaches adjacent points) wherever
#: the scan finds the first violation — for the monotone marginal risk, and for the
#: correct-decision probability's rises, which are bisected down to one lattice step.
SPARSE = {"points_per_decade": 10, "refine": 4}


def _check_crossing(case, result, **kwargs):
    """At ρ every prior is at or below the threshold; at ρ(1 + tol) the binding prior is above."""
    field, measure = result.field, result.measure
    at = measure_at(case, result.rho, measure, field, result.priors)
    assert all(value + bound <= result.threshold for value, bound in at.values())
    above = measure_at(case, result.rho * (1 + result.tolerance), measure, field, result.priors)
    value, bound = above[result.binding_prior]
    assert value + bound > result.threshold
    assert result.rho_above == pytest.approx(result.rho * (1 + result.tolerance), rel=1e-12)
    assert result.measure_above[result.binding_prior] == pytest.approx(value, rel=1e-9)


# --- marginal risk: continuous, checked against the closed form's root ---------------------


def test_dare_county_marginal_risk_at_most_1_5_for_all_five_priors():
    result = choose_rho(DARE, 1.5, **SPARSE)
    _check_crossing(DARE, result)
    assert result.binding_prior == "1/864"
    assert not result.limited_by_rho_max
    # The root of the closed form (3.4) for the binding prior lies in (ρ, ρ(1 + tol)].
    root = optimize.brentq(
        lambda rho: sb.marginal_risk(1 / 864, rho) - 1.5, 1e-3, 10.0, xtol=1e-14, rtol=1e-14
    )
    assert result.rho < root <= result.rho * (1 + result.tolerance)
    assert round(result.rho, 4) == 0.2033  # vs 0.0992 used in 2020 (risk 1.2188 there)
    # Every other prior's root is larger: 1/864 binds.
    for p in (1 / 2, 1 / 5, 1 / 10, 1 / 50):
        assert sb.marginal_risk(p, result.rho_above) < 1.5
    assert result.epsilon == pytest.approx(float(epsilon_from_zcdp(result.rho, 1e-10)))
    assert result.measure_at_rho["1/864"] == pytest.approx(
        float(sb.marginal_risk(1 / 864, result.rho)), rel=1e-14
    )


@pytest.mark.parametrize(("prior", "threshold"), [("1/2", 1.2), ("1/10", 3.0), ("1/50", 1.05)])
def test_one_prior_das_convention_against_the_closed_form(prior, threshold):
    case = dataclasses.replace(DARE, convention="das")
    p = case.priors[prior]
    result = choose_rho(case, threshold, priors=[prior], tolerance=1e-4)
    _check_crossing(case, result)
    root = optimize.brentq(
        lambda rho: sb.marginal_risk(p, rho, convention="das") - threshold, 1e-4, 100.0, xtol=1e-15
    )
    assert result.rho < root <= result.rho * (1 + 1e-4)


def test_error_bounds_are_counted_against_the_threshold():
    """A coarse tail mass makes the bound matter: the answer moves down accordingly."""

    class Loose(SingleBlockCase):
        def marginal_measures(self, prior_label=None, tail_mass=1e-15):
            return super().marginal_measures(prior_label, tail_mass=1e-4)

    loose = Loose(**{f.name: getattr(DARE, f.name) for f in dataclasses.fields(DARE)})
    # 1/864 binds (test_dare_county_…): its bound is the one that moves the answer
    tight = choose_rho(DARE, 1.5, priors=["1/864"], **SPARSE)
    safe = choose_rho(loose, 1.5, priors=["1/864"], **SPARSE)
    assert safe.rho < tight.rho
    assert safe.bound_at_rho["1/864"] == pytest.approx(1e-4 * 864)
    assert safe.measure_at_rho["1/864"] + safe.bound_at_rho["1/864"] <= 1.5


# --- the correct-decision probability: jumps, not monotone ---------------------------------


def _single_block_first_crossing(p, threshold):
    """Smallest ρ with P[correct] > threshold, from the closed form (3.6), for p < 1/2.

    With ``λ = |logit p|`` the decision threshold on the noise is
    ``t = ⌈σ² λ - 1/2⌉``; on ``σ² ∈ ((t - 1/2)/λ, (t + 1/2)/λ]`` P[correct] =
    P[Z ≥ t] falls as ρ grows (t ≥ 1), so it first exceeds a threshold at the
    left end of a tooth, ``ρ_t = λ/(2t + 1)`` (paper convention), where its value
    is ``P[Z ≥ t]`` at ``σ² = (t + 1/2)/λ``.
    """
    lam = -special.logit(p)
    for t in range(200, 0, -1):
        sigma2 = (t + 0.5) / lam
        # At ρ_t itself the release at the threshold is a tie (counted half under the
        # default tie rule); just above ρ_t it is decided for m + 1: the tooth's peak.
        if discrete_gaussian.sf(t, sigma2) > threshold:
            return lam / (2 * t + 1)
    return None


@pytest.mark.parametrize(
    ("prior", "threshold"),
    [("1/10", 0.2), ("1/10", 0.255), ("1/5", 0.1), ("1/50", 0.01), ("1/864", 0.001)],
)
def test_correct_decision_crossing_is_the_first_jump_of_the_saw_tooth(prior, threshold):
    p = DARE.priors[prior]
    result = choose_rho(DARE, threshold, "correct_decision_probability", priors=[prior])
    _check_crossing(DARE, result)
    jump = _single_block_first_crossing(p, threshold)
    assert result.rho < jump <= result.rho * (1 + result.tolerance)


def test_a_search_assuming_monotonicity_would_pass_the_first_jump():
    """P[correct] for p = 1/10 jumps above 0.255 at ρ ≈ 0.7324 and falls back below it
    within about 1 % (to 0.112 by ρ ≈ 2.197, the next jump): bisection on [1e-4, 100]
    assuming monotonicity lands on the later jump."""
    p, threshold = 1 / 10, 0.255
    result = choose_rho(DARE, threshold, "correct_decision_probability", priors=["1/10"])
    assert round(result.rho, 4) == 0.7321
    rho = np.geomspace(result.rho_above, 2.19, 400)
    values = sb.correct_decision_probability(p, rho)
    assert values[0] > threshold and np.mean(values <= threshold) > 0.95  # not monotone
    lo, hi = 1e-4, 100.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if sb.correct_decision_probability(p, mid) <= threshold else (lo, mid)
    assert lo > 2.19  # what a monotone search would report
    # The coarse grid alone misses the tooth: no coarse point lies on it above 0.255.
    coarse = choose_rho(DARE, threshold, "correct_decision_probability", priors=["1/10"], refine=1)
    assert coarse.rho == pytest.approx(result.rho)  # found by bisecting the rise


def test_correct_decision_for_all_five_priors():
    result = choose_rho(DARE, 0.6, "correct_decision_probability", **SPARSE)
    _check_crossing(DARE, result)
    assert result.binding_prior == "1/2"  # p = 1/2 guesses right half the time already
    with pytest.raises(ValueError, match="already"):
        choose_rho(DARE, 0.5, "correct_decision_probability")  # 1/2 is above 0.5 at any ρ


# --- other cases and fields ------------------------------------------------------------------


def test_unknown_ethnicity_allows_about_half_the_single_cell_rho():
    ethnicity = load_case("unknown_ethnicity")
    result = choose_rho(ethnicity, 1.5, priors=["1/864"], **SPARSE)
    _check_crossing(ethnicity, result)
    single = choose_rho(DARE, 1.5, priors=["1/864"], **SPARSE)
    assert 0.45 < result.rho / single.rho < 0.55
    assert round(result.rho, 4) == 0.1017


def test_an_element_of_a_tuple_of_rhos_is_varied_holding_the_others():
    case = dataclasses.replace(load_case("unique_many_levels"), levels=2)
    assert rho_fields(case) == [f"rhos[{i}]" for i in range(6)]
    varied = with_rho(case, 0.5, "rhos[1]")
    assert varied.rhos[1] == 0.5 and varied.rhos[0] == case.rhos[0]
    result = choose_rho(
        case,
        1.2,
        field="rhos[1]",
        priors=["1/2"],
        rho_min=1e-3,
        rho_max=10.0,
        points_per_decade=5,
        refine=2,
        tolerance=1e-2,
    )
    _check_crossing(case, result)
    assert result.field == "rhos[1]"


def test_the_search_range_can_be_the_limit():
    result = choose_rho(DARE, 1.5, priors=["1/2"], rho_max=0.1)
    assert result.limited_by_rho_max and result.binding_prior is None
    assert result.rho == pytest.approx(0.1, rel=1e-3) and result.rho <= 0.1


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"threshold": 1.0}, "threshold"),
        ({"threshold": 0.9}, "threshold"),
        ({"threshold": 900.0}, "threshold"),  # above 1/p for every prior
        ({"threshold": float("nan")}, "threshold"),
        ({"threshold": 0.0, "measure": "correct_decision_probability"}, "threshold"),
        ({"threshold": 1.0, "measure": "correct_decision_probability"}, "threshold"),
        ({"threshold": 1.5, "measure": "risk"}, "measure"),
        ({"threshold": 1.5, "field": "rho2"}, "field"),
        ({"threshold": 1.5, "field": "known_count"}, "field"),
        ({"threshold": 1.5, "priors": ["1/3"]}, "priors"),
        ({"threshold": 1.5, "priors": []}, "priors"),
        ({"threshold": 1.5, "rho_min": 0.0}, "rho_min"),
        ({"threshold": 1.5, "rho_min": 1.0, "rho_max": 0.5}, "rho_max"),
        ({"threshold": 1.5, "tolerance": 0.5}, "tolerance"),
        ({"threshold": 1.5, "points_per_decade": 0}, "points_per_decade"),
        ({"threshold": 1.5, "refine": 1.5}, "refine"),
        ({"threshold": 1.5, "delta": 1.0}, "delta"),
        ({"threshold": 1.001, "rho_min": 0.1}, "threshold"),  # exceeded at rho_min
    ],
)
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        choose_rho(DARE, **kwargs)


def test_threshold_error_says_why():
    with pytest.raises(ValueError, match="greater than 1"):
        choose_rho(DARE, 1.0)
    with pytest.raises(ValueError, match="never be exceeded"):
        choose_rho(DARE, 900.0)
    with pytest.raises(ValueError, match="no rho in"):
        choose_rho(DARE, 1.001, rho_min=0.1)
    with pytest.raises(
        ValueError, match=r"field must name a ρ of the case \(Dare County ED 28-21 \(1940\): rho\)"
    ):
        choose_rho(DARE, 1.5, field="rho1")
