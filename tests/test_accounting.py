"""zCDP ↔ (ε, δ)-DP conversions against published reference values and identities."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.accounting import (
    Conversion,
    as_conversion,
    delta_from_zcdp,
    epsilon_from_zcdp,
    log_delta_from_zcdp,
    rho_from_pure_dp,
)

# --- OpenDP's published test values (repo opendp/opendp, commit bc6e18b86) ----------
# OpenDP's make_zCDP_to_approxDP uses the Canonne-Kamath-Steinke bound (Cor. 13); the
# Gaussian mechanism with scale s on a sensitivity-1 query is rho = 1/(2 s^2)-zCDP.

# python/test/test_meas.py::test_gaussian_curve and
# R/opendp/tests/testthat/test-measurements.R "test_gaussian_curve": scale 4.
RHO_SCALE_4 = (1 / 4) ** 2 / 2


def test_opendp_gaussian_curve_epsilon():
    assert epsilon_from_zcdp(RHO_SCALE_4, 1e-3) == pytest.approx(0.6880024554878085, rel=1e-12)


def test_opendp_gaussian_curve_delta_at_zero_and_back():
    assert delta_from_zcdp(RHO_SCALE_4, 0.0) == pytest.approx(0.1508457845622862, rel=1e-12)
    assert delta_from_zcdp(RHO_SCALE_4, 0.6880024554878085) == pytest.approx(1e-3, rel=1e-12)


def test_opendp_fix_delta_scale_10():
    # python/test/test_comb.py::test_fix_delta and ::test_cast_zcdp_approxdp (rho = 0.005).
    assert epsilon_from_zcdp(0.005, 1e-6) == pytest.approx(0.42994146883694934, rel=1e-12)


def test_opendp_composition_of_two_fixed_delta_gaussians():
    # python/test/test_comb.py::test_make_composition_approx: two scale-1 Gaussians
    # (rho = 0.5 each), each fixed at delta = 1e-7, compose to epsilon 11.341717670937543.
    assert 2 * epsilon_from_zcdp(0.5, 1e-7) == pytest.approx(11.341717670937543, rel=1e-12)


@pytest.mark.parametrize(
    ("rho", "epsilon", "delta"),
    [
        # rust/src/combinators/measure_cast/zCDP_to_approxDP/cdp_delta/test.rs
        (0.05, 0.25, 8.17727531036956e-2),  # test_cdp_delta_rounding_regression
        (5e-30, 1e-13, 2.619676329730346e-234),  # optimal alpha > 2^53, same test
        (0.5, 0.0, 0.5588356393474351),  # test_edge_cases
    ],
)
def test_opendp_rust_cdp_delta(rho, epsilon, delta):
    assert delta_from_zcdp(rho, epsilon) == pytest.approx(delta, rel=1e-11)


def test_opendp_rust_epsilon_is_zero_at_delta_of_zero_epsilon():
    # test.rs::test_edge_cases: cdp_epsilon(0.5, cdp_delta(0.5, 0)) == 0.
    assert epsilon_from_zcdp(0.5, 0.5588356393474351) == 0.0


# --- IBM/discrete-gaussian-differential-privacy cdp2adp.py (commit cb190d2) ----------
# The repository prints, but does not record, these in its __main__ block; the numbers
# are that block's output (run with Python 3.12).


def test_cdp2adp_main_block_values():
    assert delta_from_zcdp(0.025, 1.0) == pytest.approx(1.3361319064032213e-06, rel=1e-10)
    assert epsilon_from_zcdp(0.025, 1e-6) == pytest.approx(1.014074254726128, rel=1e-10)


# --- The 2020 Census PL 94-171 persons file -----------------------------------------

PRODUCTION_RHO = float(Fraction(542, 339) ** 2)  # DAS person_default.ini: global_scale 339/542


def test_census_reported_epsilon_17_14_is_cks_at_the_production_rho():
    # JASON (2022) Sec. 6.2: persons file rho = 2.56 "reported as epsilon = 17.14";
    # DAS prod_default.ini: approx_dp_delta = 1e-10. The DAS computes epsilon with the
    # CKS Cor. 13 bound (programs/engine/curve.py) at rho = (542/339)^2 = 2.5562...
    assert PRODUCTION_RHO == pytest.approx(2.556225581051331, rel=1e-15)
    assert round(float(epsilon_from_zcdp(PRODUCTION_RHO, 1e-10)), 2) == 17.14
    # With rho rounded to 2.56 CKS gives 17.16; Bun-Steinke gives 17.90 and 17.92.
    assert round(float(epsilon_from_zcdp(2.56, 1e-10)), 2) == 17.16
    assert round(float(epsilon_from_zcdp(PRODUCTION_RHO, 1e-10, "bun-steinke")), 2) == 17.90
    assert round(float(epsilon_from_zcdp(2.56, 1e-10, "bun-steinke")), 2) == 17.92


def test_jason_19_61_is_not_a_conversion_of_rho_2_63():
    # JASON Sec. 5.4.1 attributes epsilon = 19.61 at delta = 1e-10 to rho = 2.63; neither
    # conversion gives it (17.43 CKS, 18.19 Bun-Steinke). 19.61 = 17.14 (persons) + 2.47
    # (housing units), epsilons added under basic (epsilon, delta) composition.
    assert round(float(epsilon_from_zcdp(2.63, 1e-10)), 2) == 17.43
    assert round(float(epsilon_from_zcdp(2.63, 1e-10, "bun-steinke")), 2) == 18.19


# --- Closed forms and identities ------------------------------------------------------


def test_bun_steinke_closed_form():
    rho, delta = np.array([0.1, 2.56]), np.array([1e-6, 1e-10])
    expected = rho + 2 * np.sqrt(rho * np.log(1 / delta))
    np.testing.assert_allclose(epsilon_from_zcdp(rho, delta, "bun-steinke"), expected, rtol=1e-15)
    # Inverse: delta = exp(-(eps - rho)^2 / (4 rho)) for eps > rho, trivial delta = 1 below.
    np.testing.assert_allclose(delta_from_zcdp(rho, expected, "bun-steinke"), delta, rtol=1e-12)
    assert delta_from_zcdp(1.0, 0.5, "bun-steinke") == 1.0


def _cks_epsilon_mpmath(rho: float, delta: float) -> float:
    """CKS Cor. 13 epsilon by 400 bisections at 50 digits, for comparison."""
    with mpmath.workdps(50):
        rho, big_l = mpmath.mpf(rho), -mpmath.log(mpmath.mpf(delta))
        lo, hi = min(mpmath.sqrt(big_l / (4 * rho)), big_l / 4), mpmath.sqrt(big_l / rho)
        for _ in range(400):
            mid = (lo + hi) / 2
            if rho * mid**2 + mpmath.log1p(mid) - big_l > 0:
                hi = mid
            else:
                lo = mid
        t = (lo + hi) / 2
        eps = (1 + t) * rho + (big_l - mpmath.log1p(t)) / t + mpmath.log(t / (1 + t))
        return float(max(eps, 0))


@pytest.mark.parametrize(
    ("rho", "delta"),
    [(1e-20, 1e-6), (1e-6, 1e-300), (0.0992, 1e-10), (2.56, 1e-10), (50.0, 0.3), (1e5, 1e-12)],
)
def test_cks_matches_high_precision(rho, delta):
    assert epsilon_from_zcdp(rho, delta) == pytest.approx(
        _cks_epsilon_mpmath(rho, delta), rel=1e-12
    )


def test_vectorised_and_broadcast():
    rho = np.array([[0.01], [1.0]])
    delta = np.array([1e-10, 1e-5, 1e-2])
    eps = epsilon_from_zcdp(rho, delta)
    assert eps.shape == (2, 3)
    for i, r in enumerate(rho[:, 0]):
        for j, d in enumerate(delta):
            assert eps[i, j] == epsilon_from_zcdp(r, d)
    assert np.all(np.diff(eps, axis=1) < 0)  # larger delta, smaller epsilon
    assert np.all(np.diff(eps, axis=0) > 0)  # larger rho, larger epsilon
    assert isinstance(epsilon_from_zcdp(1.0, 1e-6), float)


def test_log_delta_stays_finite_where_delta_underflows():
    log_delta = log_delta_from_zcdp(1e-4, 10.0)
    assert delta_from_zcdp(1e-4, 10.0) == 0.0
    # Leading term -(eps - rho)^2/(4 rho) = -249950; the CKS bound is slightly smaller.
    assert -250_010 < log_delta < -((10 - 1e-4) ** 2) / 4e-4


def test_pure_dp_to_zcdp():
    # Bun & Steinke (2016) Prop. 1.4: eps-DP implies (eps^2/2)-zCDP.
    np.testing.assert_allclose(rho_from_pure_dp([0.25, 1.0, 4.5]), [0.03125, 0.5, 10.125])


# --- Properties -----------------------------------------------------------------------

rhos = st.floats(1e-8, 1e4)
deltas = st.floats(1e-250, 0.99)


@settings(max_examples=200, deadline=None)
@given(rho=rhos, delta=deltas)
def test_cks_never_exceeds_bun_steinke(rho, delta):
    assert epsilon_from_zcdp(rho, delta) <= epsilon_from_zcdp(rho, delta, "bun-steinke")
    # ... and, equivalently, at the same epsilon its delta is no larger.
    eps = epsilon_from_zcdp(rho, delta, "bun-steinke")
    assert log_delta_from_zcdp(rho, eps) <= log_delta_from_zcdp(rho, eps, "bun-steinke") + 1e-9


@settings(max_examples=200, deadline=None)
@given(rho=rhos, delta=deltas, conversion=st.sampled_from(["cks", "bun-steinke"]))
def test_directions_invert_each_other(rho, delta, conversion):
    eps = epsilon_from_zcdp(rho, delta, conversion)
    if eps > 0:
        log_delta = log_delta_from_zcdp(rho, eps, conversion)
        assert log_delta == pytest.approx(np.log(delta), rel=1e-9, abs=1e-9)
    else:  # delta is at least delta(rho, 0): every epsilon >= 0 works
        assert log_delta_from_zcdp(rho, 0.0, conversion) <= np.log(delta) + 1e-12


@settings(max_examples=100, deadline=None)
@given(rho=rhos, eps=st.floats(0.0, 1e3))
def test_delta_to_epsilon_round_trip(rho, eps):
    log_delta = log_delta_from_zcdp(rho, eps)
    if -700 < log_delta < np.log(0.99):
        back = epsilon_from_zcdp(rho, np.exp(log_delta))
        assert back == pytest.approx(eps, rel=1e-8, abs=1e-8)


# --- Bad input --------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.0, -1.0, np.inf, np.nan, [1.0, 0.0]])
def test_bad_rho(rho):
    with pytest.raises(ValueError, match=r"^rho must be finite and > 0"):
        epsilon_from_zcdp(rho, 1e-6)
    with pytest.raises(ValueError, match=r"^rho must be finite and > 0"):
        delta_from_zcdp(rho, 1.0)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5, np.nan])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match=r"^delta must lie strictly between 0 and 1"):
        epsilon_from_zcdp(1.0, delta)


@pytest.mark.parametrize("epsilon", [-1e-9, -1.0, np.inf, np.nan])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match=r"^epsilon must be finite and >= 0"):
        delta_from_zcdp(1.0, epsilon)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, np.inf])
def test_bad_pure_epsilon(epsilon):
    with pytest.raises(ValueError, match=r"^epsilon must be finite and > 0"):
        rho_from_pure_dp(epsilon)


def test_non_numeric_is_a_type_error():
    with pytest.raises(TypeError, match=r"^rho must be numeric"):
        epsilon_from_zcdp("2.56", 1e-10)


def test_conversion_names():
    assert as_conversion("CKS") is Conversion.CKS
    assert as_conversion("bun_steinke") is Conversion.BUN_STEINKE
    with pytest.raises(ValueError, match=r"^conversion must be one of 'bun-steinke', 'cks'"):
        epsilon_from_zcdp(1.0, 1e-6, "renyi")
