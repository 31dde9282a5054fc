"""Risk profiles (Kazan & Reiter 2024): values, the ε they imply under ε-DP, and bad specs."""

import math

import numpy as np
import pytest

from adversary.analyses.allocation_risk import RiskProfile, parse_risk_profile

GRID = np.geomspace(1e-9, 1 - 1e-9, 20_001)


def _dp_ratio_bound(p, epsilon):
    """The largest posterior-to-prior ratio ε-DP allows at prior p: e^ε / (1 + p(e^ε − 1))."""
    return math.exp(epsilon) / (1.0 + p * math.expm1(epsilon))


def test_constant_profile_is_its_ratio_everywhere():
    profile = parse_risk_profile("constant:3")
    assert profile == RiskProfile("constant", (3.0,))
    np.testing.assert_array_equal(profile(np.array([1e-6, 0.3, 0.999])), [3.0, 3.0, 3.0])


def test_piecewise_profile_is_linear_in_log_prior_and_flat_beyond_its_ends():
    profile = parse_risk_profile("piecewise:0.01=5,0.1=3,0.5=1.5")
    np.testing.assert_allclose(profile([0.01, 0.1, 0.5]), [5.0, 3.0, 1.5])
    # the geometric mean of two points' priors is halfway in log p
    np.testing.assert_allclose(profile([math.sqrt(0.01 * 0.1)]), [4.0])
    np.testing.assert_allclose(profile([math.sqrt(0.1 * 0.5)]), [2.25])
    np.testing.assert_allclose(profile([1e-5, 0.9]), [5.0, 1.5])


def test_spec_round_trips():
    for spec in ("constant:2.5", "piecewise:0.01=5,0.1=3,0.5=1.5", "piecewise:0.2=2"):
        profile = parse_risk_profile(spec)
        assert parse_risk_profile(profile.spec) == profile


def test_constant_profile_implies_epsilon_log_r_under_pure_dp():
    profile = parse_risk_profile("constant:3")
    assert profile.epsilon_dp() == pytest.approx(math.log(3.0), rel=1e-15)
    # brute force: ε = log r keeps the DP ratio bound within r at every prior, a larger ε not
    eps = profile.epsilon_dp()
    assert all(_dp_ratio_bound(p, eps) <= 3.0 * (1 + 1e-12) for p in GRID)
    assert _dp_ratio_bound(1e-9, eps * 1.001) > 3.0


def test_piecewise_profile_epsilon_is_the_largest_the_bound_allows():
    profile = parse_risk_profile("piecewise:0.01=5,0.1=3,0.5=1.5")
    eps = profile.epsilon_dp()
    ratios = profile(GRID)
    bound = np.array([_dp_ratio_bound(p, eps) for p in GRID])
    assert np.all(bound <= ratios * (1 + 1e-9))
    bigger = np.array([_dp_ratio_bound(p, eps * 1.001) for p in GRID])
    assert np.any(bigger > ratios)
    # the binding prior here is the last point: log(r(1 − p)/(1 − p r)) at p = 0.5, r = 1.5
    assert eps == pytest.approx(math.log(1.5 * 0.5 / (1 - 0.75)), rel=1e-12)


@pytest.mark.parametrize(
    "spec",
    [
        "constant:0.9",  # ratio below 1
        "constant:nan",
        "constant:inf",
        "constant:2,3",
        "constant:",
        "constant",
        "constant:abc",
        "linear:3",  # unknown form
        "piecewise:0.1=2,0.2=3",  # ratio increases with the prior
        "piecewise:0.2=3,0.1=2",  # priors not increasing
        "piecewise:0.1=2,0.1=2",
        "piecewise:0=2",
        "piecewise:1=2",
        "piecewise:0.1",
        "piecewise:0.1=x",
        "piecewise:0.1=0.5",
        3,
    ],
)
def test_a_bad_spec_is_refused_in_one_line_naming_risk_profile(spec):
    with pytest.raises(ValueError, match=r"^risk-profile: ") as error:
        parse_risk_profile(spec)
    assert "\n" not in str(error.value)


def test_a_profile_is_a_function_of_priors_in_the_open_interval():
    with pytest.raises(ValueError, match="prior must lie strictly between 0 and 1"):
        parse_risk_profile("constant:2")([0.5, 1.0])


def test_ratio_or_posterior_is_kazan_reiters_example_1():
    # r*(p) = max(r, a/p) (Kazan & Reiter 2024, Sec. 3.2, Example 1), epsilon in closed form
    profile = parse_risk_profile("ratio-or-posterior:3,0.25")
    np.testing.assert_allclose(profile([0.01, 0.25 / 3, 0.5]), [25.0, 3.0, 3.0])
    closed = math.log((3 - 0.25) / (1 - 0.25))
    assert profile.epsilon_dp() == pytest.approx(closed, rel=1e-15)
    # the infimum over a fine grid of the epsilon each prior tolerates, written out here
    p = np.geomspace(1e-9, 1 - 1e-9, 400_001)
    r = np.maximum(3.0, 0.25 / p)
    ok = p * r < 1
    on_grid = np.log(r[ok] * (1 - p[ok]) / (1 - p[ok] * r[ok])).min()
    assert closed - 1e-12 <= on_grid <= closed * (1 + 1e-4)  # a grid's infimum: from above
    assert parse_risk_profile(profile.spec) == profile
    for bad in ("ratio-or-posterior:3", "ratio-or-posterior:3,1", "ratio-or-posterior:0.5,0.2"):
        with pytest.raises(ValueError, match=r"^risk-profile: "):
            parse_risk_profile(bad)
