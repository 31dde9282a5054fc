"""An allocation's risk against the data holder's limits, and the total ρ where an attack binds."""

import numpy as np
import pytest
import xarray as xr

from adversary.analyses.allocation_risk import (
    ScaledAttack,
    allocation_risk,
    attack_case,
    binding_message,
    binding_rho,
    check_risk,
    parse_risk_profile,
)
from adversary.analyses.choose_rho import choose_rho
from adversary.budget import get_preset

PRESET = get_preset("pl94-2020-persons")
SHARE = PRESET.rho("block", "detailed") / float(PRESET.rho_total)
#: A sparser scan than the default, the same for binding_rho and choose_rho (same lattice).
SCAN = {"points_per_decade": 10, "refine": 4}


@pytest.fixture(scope="module")
def risk():
    return allocation_risk(PRESET, attacks=("single_block", "unknown_attribute"))


def test_profile_limits_are_recomputed_from_the_values(risk):
    profile = parse_risk_profile("piecewise:0.01=1.2,0.2=1.1,0.5=1.03")
    checked = check_risk(risk, profile)
    limit = profile(risk.prior.values)[None, :]
    upper = risk.ratio.values + risk.ratio_error.values
    np.testing.assert_array_equal(checked.ratio_limit.values, np.broadcast_to(limit, upper.shape))
    np.testing.assert_array_equal(checked.ratio_within.values, upper <= limit)
    np.testing.assert_allclose(checked.ratio_margin.values, limit - upper, rtol=1e-15)
    within = checked.ratio_within.values
    assert within.any() and not within.all()  # the profile splits the cells
    assert checked.attrs["within"] is False and checked.attrs["profile"] == profile.spec


def test_correct_bound_is_checked_on_value_plus_bound(risk):
    checked = check_risk(risk, correct_bound=0.5)
    upper = risk.correct.values + risk.correct_error.values
    np.testing.assert_array_equal(checked.correct_within.values, upper <= 0.5)
    assert not checked.correct_within.sel(prior=0.5).any()  # P[correct] > 1/2 at p = 1/2
    assert checked.correct_within.sel(prior=0.1).all()


def test_the_error_bound_counts_against_the_limit():
    """A value at the limit with a positive bound is not within it (conservative)."""
    fake = xr.Dataset(
        {
            "ratio": (("attack", "prior"), [[1.5, 1.5]]),
            "ratio_error": (("attack", "prior"), [[0.0, 1e-9]]),
        },
        coords={"attack": ["x"], "prior": [0.1, 0.2]},
    )
    checked = check_risk(fake, "constant:1.5")
    assert checked.ratio_within.values.tolist() == [[True, False]]
    assert checked.ratio_margin.values[0, 1] == pytest.approx(-1e-9, rel=1e-6)


def test_reconstruction_bound_by_block_size_bins():
    fake = xr.Dataset(
        {
            "reconstructed_share": ("block_size", [0.4, 0.45, 0.3, 0.2]),
            "reconstructed_share_error": ("block_size", [0.05, 0.1, 0.0, 0.01]),
        },
        coords={"block_size": [1, 2, 3, 10]},
    )
    checked = check_risk(fake, reconstruction_bound={"1-2": 0.5, "3": 0.3, "4+": 0.2})
    np.testing.assert_array_equal(checked.reconstructed_share_limit, [0.5, 0.5, 0.3, 0.2])
    np.testing.assert_array_equal(checked.reconstructed_share_within, [True, False, True, False])
    with pytest.raises(ValueError, match="reconstruction_bound: no bin holds block size 10"):
        check_risk(fake, reconstruction_bound={"1-3": 0.5})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "profile: give a risk profile"),
        ({"profile": "constant:0.5"}, "risk-profile:"),
        ({"correct_bound": 1.0}, "correct_bound must be a probability"),
        ({"correct_bound": "x"}, "correct_bound must be a probability"),
        ({"reconstruction_bound": {1: 0.5}}, "the risk holds no reconstruction attack"),
    ],
)
def test_bad_limits_are_refused(risk, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_risk(risk, **kwargs)


@pytest.mark.parametrize(
    ("bound", "match"),
    [
        ({"0": 0.5}, "bin '0' is not a block size"),
        ({"3-1": 0.5}, "ends before it starts"),
        ({"1-3": 0.5, "3+": 0.2}, "bins overlap"),
        ({"1": 1.5}, r"must be a share in \[0, 1\]"),
        ({}, "reconstruction_bound must map"),
    ],
)
def test_bad_reconstruction_bounds_are_refused(bound, match):
    fake = xr.Dataset(
        {
            "reconstructed_share": ("block_size", [0.4]),
            "reconstructed_share_error": ("block_size", [0.0]),
        },
        coords={"block_size": [1]},
    )
    with pytest.raises(ValueError, match=match):
        check_risk(fake, reconstruction_bound=bound)


# --- binding_rho --------------------------------------------------------------------------


def _single_block_choice(threshold, measure, priors):
    case = attack_case("single_block", PRESET, priors)
    return choose_rho(
        case,
        threshold,
        measure,
        priors=list(case.priors),
        rho_min=1e-3 * SHARE,
        rho_max=1e3 * SHARE,
        **SCAN,
    )


def test_constant_profile_binds_where_choose_rho_puts_the_block_rho():
    result = binding_rho(PRESET, "constant:1.05", "single_block", priors=(0.1,), **SCAN)
    expected = _single_block_choice(1.05, "marginal_risk", (0.1,))
    assert result.rho_total * SHARE == pytest.approx(expected.rho, rel=1e-12)
    assert result.binding.binding_prior == "0.1" and not result.limited_by_rho_max
    assert "attack single_block binds" in binding_message(result)


def test_correct_bound_binds_where_choose_rho_does():
    result = binding_rho(PRESET, correct_bound=0.9, priors=(0.5, 0.2), **SCAN)
    expected = _single_block_choice(0.9, "correct_decision_probability", (0.5, 0.2))
    assert result.rho_total * SHARE == pytest.approx(expected.rho, rel=1e-12)


def test_a_profile_binds_at_the_smallest_of_its_priors_answers():
    profile = parse_risk_profile("piecewise:0.05=1.3,0.5=1.02")
    priors = (0.5, 0.05)
    result = binding_rho(PRESET, profile, "single_block", priors=priors, **SCAN)
    each = [_single_block_choice(float(profile([p])[0]), "marginal_risk", (p,)).rho for p in priors]
    assert result.rho_total * SHARE == pytest.approx(min(each), rel=1e-12)
    assert len(result.choices) == 2


def test_a_limit_the_risk_cannot_reach_does_not_bind():
    """At p = 1/2 the marginal risk is below 1/p = 2 for every ρ: a limit of 3 never binds."""
    result = binding_rho(PRESET, "constant:3", "single_block", priors=(0.5,), rho_max=10.0)
    assert result.limited_by_rho_max and result.rho_total == 10.0 and result.choices == ()
    assert "stays within the limits up to total rho 10" in binding_message(result)


def test_scaled_attack_reads_every_rho_from_the_scaled_allocation():
    scaled = ScaledAttack("block_group", PRESET, (0.5,), "das", 5.12)
    assert scaled.case.rho1 == pytest.approx(2 * PRESET.rho("block", "detailed"), rel=1e-15)
    assert scaled.case.rho2 == pytest.approx(2 * PRESET.rho("block_group", "detailed"), rel=1e-15)


def test_binding_rho_refuses_what_it_cannot_search():
    with pytest.raises(ValueError, match="profile: give a risk profile or correct_bound"):
        binding_rho(PRESET, attack="single_block")
    with pytest.raises(ValueError, match="attack must be one of"):
        binding_rho(PRESET, "constant:2", "reconstruction")
