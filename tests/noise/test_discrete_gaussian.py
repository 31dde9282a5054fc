"""The discrete Gaussian DG(0, σ²): normaliser, pmf, variance, tails, cut-off.

References are 50-digit mpmath sums; for σ² beyond direct summation they use
Poisson summation (exact identities) or mpmath's own endpoint Euler–Maclaurin
with the exact integral, a different formula from the midpoint one in ``sf``.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.noise import discrete_gaussian as dg
from adversary.noise import exact_sampling

EPS = np.finfo(float).eps
DPS = 50
# Beyond j² - k² ≥ 2σ²·DIGITS_LOG the terms are below e^{-130} ≈ 1e-57 of the first.
DIGITS_LOG = 130


def mp_terms_tail(k: int, s2: float) -> mp.mpf:
    """``Σ_{j ≥ k} e^{-j²/(2σ²)}`` by direct summation (the term ratio by recurrence)."""
    with mp.workdps(DPS + 10):
        s = mp.mpf(s2)
        n = int(-k + math.sqrt(k * k + 2 * s2 * DIGITS_LOG)) + 2
        term = mp.exp(-(mp.mpf(k) ** 2) / (2 * s))
        step = mp.exp(-mp.mpf(2 * k + 1) / (2 * s))  # term_{j+1}/term_j
        shrink = mp.exp(-1 / s)  # step_{j+1}/step_j
        total = mp.mpf(0)
        for _ in range(n):
            total += term
            term *= step
            step *= shrink
        return +total


def mp_normaliser(s2: float) -> mp.mpf:
    """``Σ_k e^{-k²/(2σ²)}``: a direct sum for σ² ≤ 1e4, Poisson summation above."""
    with mp.workdps(DPS):
        if s2 <= 1e4:
            return 1 + 2 * mp_terms_tail(1, s2)
        s = mp.mpf(s2)
        dual = mp.fsum(mp.exp(-2 * mp.pi**2 * s * n * n) for n in range(1, 6))
        return mp.sqrt(2 * mp.pi * s) * (1 + 2 * dual)


def mp_variance(s2: float) -> mp.mpf:
    """``Σ k² e^{-k²/(2σ²)} / Z``: direct for σ² ≤ 1e3, Poisson summation above.

    Poisson: ``Σ_k k² e^{-k²/(2s)} = √(2πs) Σ_n (s - 4π²s²n²) e^{-2π²sn²}``.
    """
    with mp.workdps(DPS):
        s = mp.mpf(s2)
        if s2 <= 1e3:
            n = int(math.sqrt(2 * s2 * DIGITS_LOG)) + 2
            second = 2 * mp.fsum(
                mp.mpf(j) ** 2 * mp.exp(-(mp.mpf(j) ** 2) / (2 * s)) for j in range(1, n)
            )
        else:
            second = mp.sqrt(2 * mp.pi * s) * mp.fsum(
                (s - 4 * mp.pi**2 * s**2 * n * n) * mp.exp(-2 * mp.pi**2 * s * n * n)
                for n in range(-5, 6)
            )
        return second / mp_normaliser(s2)


def mp_upper_tail(k: int, s2: float) -> mp.mpf:
    """``P[Z ≥ k]`` for ``k ≥ 1``.

    Direct sums where they take at most ~40 000 terms; otherwise for small
    ``k`` the identity ``T(k) = (Z - 1)/2 - Σ_{1 ≤ j < k} f(j)`` and for large
    ``k`` mpmath's endpoint Euler–Maclaurin with the exact integral.
    """
    with mp.workdps(DPS):
        n_direct = -k + math.sqrt(k * k + 2 * s2 * DIGITS_LOG)
        if n_direct <= 40_000:
            tail = mp_terms_tail(k, s2)
        elif k <= 2000:
            s = mp.mpf(s2)
            head = mp.fsum(mp.exp(-(mp.mpf(j) ** 2) / (2 * s)) for j in range(1, k))
            tail = (mp_normaliser(s2) - 1) / 2 - head
        else:
            s = mp.mpf(s2)
            sigma = mp.sqrt(s)
            integral = sigma * mp.sqrt(mp.pi / 2) * mp.erfc(k / (sigma * mp.sqrt(2)))
            tail = mp.sumem(lambda x: mp.exp(-(x**2) / (2 * s)), [k, mp.inf], integral=integral)
        return tail / mp_normaliser(s2)


# --- normaliser and pmf ---------------------------------------------------------------

BOUNDARY = 1 / (2 * np.pi)  # both theta series have ratio e^{-π} here
NORMALISER_SIGMA2 = [
    *np.logspace(-3, 12, 31),
    BOUNDARY * (1 - 1e-12),
    BOUNDARY * (1 + 1e-12),
    0.5,
    5.04,
    1 / (2 * 0.0992),
]


@pytest.mark.parametrize("s2", NORMALISER_SIGMA2)
def test_normaliser_matches_mpmath(s2):
    exact = mp.log(mp_normaliser(s2))
    got = float(dg.log_normaliser(s2))
    # log Z to within 2 ulp of itself (+ 2 eps absolute where log Z ≈ 0).
    assert abs(mp.mpf(got) - exact) <= 2 * np.spacing(abs(float(exact))) + 2 * EPS


def test_normaliser_is_vectorised():
    s2 = np.array([[0.1], [10.0]])
    np.testing.assert_array_equal(
        dg.log_normaliser(s2), [[float(dg.log_normaliser(0.1))], [float(dg.log_normaliser(10.0))]]
    )


@pytest.mark.parametrize("s2", [1e-3, 0.05, 0.1, 0.15, BOUNDARY, 0.2, 0.5, 2.0, 100.0])
def test_truncation_bound_holds_and_is_tight(s2):
    # The series N_TERMS uses, truncated and complete, in 50 digits.
    with mp.workdps(DPS):
        s = mp.mpf(s2)
        a = max(1 / (2 * s), 2 * mp.pi**2 * s)

        def series(terms):
            return 1 + 2 * mp.fsum(mp.exp(-a * n * n) for n in range(1, terms + 1))

        error = 1 - series(dg.N_TERMS) / series(40)
    assert 0 <= error <= dg.NORMALISER_TRUNCATION_BOUND
    if s2 == BOUNDARY:  # worst case a = π: the bound is within a factor 2
        assert error >= 0.5 * dg.NORMALISER_TRUNCATION_BOUND


def test_truncation_bound_value():
    assert dg.NORMALISER_TRUNCATION_BOUND == pytest.approx(
        2 * math.exp(-math.pi * (dg.N_TERMS + 1) ** 2) / (1 - math.exp(-math.pi))
    )
    assert dg.NORMALISER_TRUNCATION_BOUND < 1e-33


@pytest.mark.parametrize("s2", [*np.logspace(-3, 6, 19), BOUNDARY, 5.04])
def test_pmf_sums_to_one(s2):
    k = int(dg.cutoff(s2, 1e-20))
    total = math.fsum(dg.pmf(np.arange(-k, k + 1), s2))
    assert abs(total - 1) <= 1e-14


def test_pmf_values_against_mpmath():
    for s2 in [0.3, 5.04, 1e5]:
        z = np.array([0, 1, 2, 7, int(3 * math.sqrt(s2)), int(30 * math.sqrt(s2))])
        got = dg.pmf(z, s2)
        with mp.workdps(DPS):
            exact = [
                mp.exp(-(mp.mpf(int(v)) ** 2) / (2 * mp.mpf(s2))) / mp_normaliser(s2) for v in z
            ]
        for v, g, e in zip(z, got, exact, strict=True):
            x = v * v / (2 * s2)
            assert abs(mp.mpf(g) / e - 1) <= 8 * EPS * (1 + x)


# --- variance --------------------------------------------------------------------------

VARIANCE_SIGMA2 = [*np.logspace(-3, 12, 16), BOUNDARY * (1 - 1e-12), BOUNDARY * (1 + 1e-12), 0.5]


@pytest.mark.parametrize("s2", VARIANCE_SIGMA2)
def test_variance_matches_mpmath(s2):
    exact = mp_variance(s2)
    got = float(dg.variance(s2))
    # For small σ² the leading term is e^{-1/(2σ²)}, whose exponent carries a
    # rounding error of eps/(2σ²); the result inherits it.
    assert abs(mp.mpf(got) / exact - 1) <= 8 * EPS * (1 + 1 / (2 * s2))
    assert got <= s2


def test_variance_reference_methods_agree():
    # The direct and Poisson forms of the reference agree where both are cheap.
    for s2 in [0.5, 20.0]:
        with mp.workdps(DPS):
            s = mp.mpf(s2)
            poisson = mp.sqrt(2 * mp.pi * s) * mp.fsum(
                (s - 4 * mp.pi**2 * s**2 * n * n) * mp.exp(-2 * mp.pi**2 * s * n * n)
                for n in range(-8, 9)
            )
            assert abs(poisson / mp_normaliser(s2) / mp_variance(s2) - 1) < mp.mpf(10) ** -45


@pytest.mark.parametrize("s2", [1e-2, 0.1, BOUNDARY, 0.5, 1.0, 2.0])
def test_variance_is_strictly_below_sigma2(s2):
    # Canonne, Kamath & Steinke (2020), Prop. 5; σ² - Var = 2.3e-15 at σ² = 2,
    # about 10 ulp, so the gap is visible in float64 up to there.
    assert dg.variance(s2) < s2
    gap = s2 - mp_variance(s2)
    assert abs((s2 - float(dg.variance(s2))) - gap) <= 4 * EPS * s2


def test_variance_at_extremes_is_finite():
    np.testing.assert_array_equal(dg.variance([1e-300, 1e300]), [0.0, 1e300])


# --- tails -----------------------------------------------------------------------------

SF_SIGMA2 = [1e-3, 0.3, 5.04, 50.0, 1234.5, 9999.9, 1e4, 1e6, 1e8, 1e12]
SF_MULTIPLES = [0.3, 1.0, 3.0, 10.0, 20.0, 30.0, 37.0]


def sf_cases(s2):
    sigma = math.sqrt(s2)
    ks = {1, 2, 3, 10, 1000} | {int(m * sigma) + 1 for m in SF_MULTIPLES}
    return sorted(ks)


@pytest.mark.parametrize("s2", SF_SIGMA2)
def test_sf_matches_mpmath(s2):
    ks = np.array(sf_cases(s2))
    got_upper = dg.sf(ks, s2)
    got_lower = dg.sf(1 - ks, s2)
    got_cdf = dg.cdf(ks - 1, s2)
    for k, upper, lower, cdf in zip(ks, got_upper, got_lower, got_cdf, strict=True):
        exact = mp_upper_tail(int(k), s2)
        if exact < 1e-300:
            assert upper <= 1e-300
            continue
        x = k * k / (2 * s2)
        # Rounding in e^{-k²/(2σ²)} grows with its exponent, as in the pmf.
        assert abs(mp.mpf(upper) / exact - 1) <= 8 * EPS + 2 * EPS * x, (k, upper, exact)
        assert abs(mp.mpf(lower) - (1 - exact)) <= 3 * EPS  # P[Z ≥ 1 - k] = 1 - P[Z ≥ k]
        assert abs(mp.mpf(cdf) - (1 - exact)) <= 3 * EPS  # P[Z ≤ k - 1]


def test_sf_far_tail_at_large_sigma2_by_direct_sum():
    # One far-tail point at σ² = 1e8 by direct summation (~40 000 terms), not Euler–Maclaurin.
    k = 370_001
    exact = mp_terms_tail(k, 1e8) / mp_normaliser(1e8)
    assert exact < 1e-290
    assert abs(mp.mpf(float(dg.sf(k, 1e8))) / exact - 1) <= 8 * EPS + 2 * EPS * k * k / 2e8


def test_sf_beyond_underflow():
    for s2 in [0.5, 9999.9, 1e4, 1e12]:
        sigma = math.sqrt(s2)
        far = np.array([int(40 * sigma) + 2, int(1000 * sigma) + 2, 2**62])
        np.testing.assert_array_equal(dg.sf(far, s2), 0.0)
        np.testing.assert_array_equal(dg.sf(-far, s2), 1.0)
        np.testing.assert_array_equal(dg.cdf(-far, s2), 0.0)
    assert dg.sf(np.iinfo(np.int64).min, 1e30) == 1.0


def test_sf_symmetric_identities_exact():
    k = np.arange(-50, 51)
    for s2 in [0.7, 40.0, 5e5]:
        np.testing.assert_array_equal(dg.cdf(k, s2), dg.sf(-k, s2))
        np.testing.assert_allclose(dg.sf(k, s2) + dg.cdf(k - 1, s2), 1.0, rtol=0, atol=2 * EPS)
        np.testing.assert_allclose(dg.sf(k, s2) + dg.sf(1 - k, s2), 1.0, rtol=0, atol=2 * EPS)
    assert dg.sf(0, 3.0) == pytest.approx(0.5 + 0.5 * float(dg.pmf(0, 3.0)), abs=2 * EPS)


def test_sf_is_vectorised_over_both_arguments():
    k = np.array([[1], [5], [-2]])
    s2 = np.array([0.5, 5.04, 1e4, 1e9])
    got = dg.sf(k, s2)
    assert got.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert got[i, j] == dg.sf(int(k[i, 0]), s2[j])


def test_sf_at_huge_sigma2_is_linear_near_zero():
    # Cost independent of σ² in the Euler–Maclaurin range (was a ~40σ-point grid).
    k = np.arange(-20_000, 20_000, 7)
    got = dg.sf(k, 1e200)
    np.testing.assert_allclose(got, 0.5 - (k - 0.5) / math.sqrt(2 * math.pi * 1e200), rtol=1e-15)


def test_sf_threshold_switch_is_continuous():
    ks = np.array([1, 30, 100, 300, 1000, 3000])
    below = dg.sf(ks, np.nextafter(dg.SF_GRID_MAX_SIGMA2, 0))
    above = dg.sf(ks, dg.SF_GRID_MAX_SIGMA2)
    x = ks * ks / (2 * dg.SF_GRID_MAX_SIGMA2)
    np.testing.assert_array_less(np.abs(above / below - 1), 16 * EPS + 4 * EPS * x)


def test_euler_maclaurin_error_bound():
    """``SF_EM_ERROR_BOUND`` bounds ``|B₁₆|/16! ∫_a^∞ |f⁽¹⁶⁾| / T(k)`` for σ ≥ 100, u ≤ 40.

    With ``u = a/σ``, ``a = k - ½``: ``∫_a^∞ |f⁽¹⁶⁾| = σ^{-15} ∫_u^∞ |He₁₆| e^{-t²/2} dt``
    and ``T(k) ≥ ∫_k^∞ f = σ ∫_{u+1/(2σ)}^∞ e^{-t²/2} dt``; the ratio falls as σ grows.
    Beyond the largest zero of He₁₆ (< √66) the integral is ``He₁₅(u) e^{-u²/2}``;
    below it, Cauchy–Schwarz gives ``≤ √(2π·16!)``.
    """
    p = dg.SF_EM_TERMS
    sigma = math.sqrt(dg.SF_GRID_MAX_SIGMA2)
    with mp.workdps(30):
        coefficient = abs(mp.bernoulli(2 * p)) / mp.factorial(2 * p) * mp.mpf(sigma) ** (-2 * p)

        def lower_tail_integral(u):
            return mp.sqrt(mp.pi / 2) * mp.erfc((u + 1 / (2 * sigma)) / mp.sqrt(2))

        root_bound = math.sqrt(8 * p + 2)
        inner = (
            coefficient * mp.sqrt(2 * mp.pi * mp.factorial(2 * p)) / lower_tail_integral(root_bound)
        )
        outer = max(
            coefficient
            * mp.hermite(2 * p - 1, u / mp.sqrt(2))
            * 2 ** (-(2 * p - 1) / mp.mpf(2))  # He_n(u) = 2^{-n/2} H_n(u/√2)
            * mp.exp(-(u**2) / 2)
            / lower_tail_integral(u)
            for u in np.linspace(root_bound, 40.0, 200)
        )
    assert inner <= dg.SF_EM_ERROR_BOUND
    assert outer <= dg.SF_EM_ERROR_BOUND
    assert outer >= dg.SF_EM_ERROR_BOUND / 10  # the stated bound is not loose


def test_euler_maclaurin_coefficients():
    # c_m = -B_{2m}(½)/(2m)!: 1/24, -7/5760, 31/967680, -127/154828800, …
    with mp.workdps(30):
        exact = [-mp.bernpoly(2 * m, mp.mpf(1) / 2) / mp.factorial(2 * m) for m in range(1, 9)]
    np.testing.assert_allclose(dg._EM_COEFFICIENTS, [float(c) for c in exact], rtol=4 * EPS)
    assert dg._EM_COEFFICIENTS[0] == pytest.approx(1 / 24, rel=EPS)


# --- tail bound and cut-off --------------------------------------------------------------


@pytest.mark.parametrize("s2", [1e-3, 0.3, 5.04, 50.0, 2000.0, 1e6, 1e10])
def test_tail_bound_exceeds_exact_tail(s2):
    sigma = math.sqrt(s2)
    ks = sorted({1, 2, 3} | {int(m * sigma) + 1 for m in [0.5, 1, 2, 5, 10, 30]})
    bound = dg.tail_bound(ks, s2)
    for k, b in zip(ks, bound, strict=True):
        exact = mp_upper_tail(k, s2) if s2 <= 1e4 else mp.mpf(float(dg.sf(k, s2)))
        if exact >= 1e-300:  # below, float64 cannot tell
            assert mp.mpf(b) >= exact * (1 + 1e-13)


CUTOFF_CASES = [
    (s2, m) for s2 in [1e-3, 0.3, 5.04, 50.0, 3e3, 1e6, 1e12] for m in [1e-3, 1e-15, 1e-300]
]


@pytest.mark.parametrize(("s2", "tail_mass"), CUTOFF_CASES)
def test_cutoff_leaves_at_most_tail_mass(s2, tail_mass):
    k = int(dg.cutoff(s2, tail_mass))
    assert 2 * dg.tail_bound(k + 1, s2) <= tail_mass
    assert k == 0 or 2 * dg.tail_bound(k, s2) > tail_mass  # smallest such K
    # The true mass outside [-K, K].
    outside = 2 * (mp_upper_tail(k + 1, s2) if s2 <= 1e4 else mp.mpf(float(dg.sf(k + 1, s2))))
    assert outside <= tail_mass
    if k > 0:  # and one step in leaves too much (the bound is within a factor of a few)
        inside = 2 * (mp_upper_tail(k, s2) if s2 <= 1e4 else mp.mpf(float(dg.sf(k, s2))))
        assert inside > tail_mass / 10


def test_cutoff_is_vectorised():
    got = dg.cutoff([[0.5], [5e6]], [1e-3, 1e-15])
    assert got.shape == (2, 2)
    assert got[1, 1] == dg.cutoff(5e6, 1e-15)


def test_cutoff_rejects_a_sigma2_beyond_int64():
    with pytest.raises(ValueError, match=r"^sigma2 "):
        dg.cutoff(1e40)


# --- arguments and re-export ---------------------------------------------------------------


def test_sample_is_reexported():
    assert dg.sample is exact_sampling.sample
    assert "sample" in dg.__all__ and "cdf" in dg.__all__


@pytest.mark.parametrize("func", [dg.sf, dg.cdf, dg.logpmf])
def test_bad_arguments_name_themselves(func):
    with pytest.raises(ValueError, match=r"^sigma2 "):
        func(1, -1.0)
    with pytest.raises(ValueError, match=r"^(k|z) must be integer-valued"):
        func(1.5, 1.0)
    with pytest.raises(TypeError, match=r"^sigma2 "):
        func(1, "x")


# --- properties ------------------------------------------------------------------------------

sigma2s = st.floats(min_value=1e-8, max_value=1e8, allow_nan=False, allow_infinity=False)
zs = st.integers(min_value=-(10**7), max_value=10**7)


@settings(max_examples=300, deadline=None)
@given(z=zs, s2=sigma2s)
def test_logpmf_symmetric_finite_and_at_most_zero(z, s2):
    value = dg.logpmf(z, s2)
    assert np.isfinite(value)
    assert value <= 0
    assert value == dg.logpmf(-z, s2)
    assert dg.logpmf(0, s2) >= value


@settings(max_examples=200, deadline=None)
@given(s2=st.floats(min_value=1e-2, max_value=1e10), u=st.floats(min_value=-12, max_value=12))
def test_sf_steps_are_the_pmf(s2, u):
    k = int(u * math.sqrt(s2))
    upper, next_upper = dg.sf([k, k + 1], s2)
    assert next_upper <= upper
    step = upper - next_upper
    # sf carries a relative error of ~1e-15 + 2 eps k²/(2σ²) (see test_sf_matches_mpmath),
    # the difference that much absolute error.
    x = k * k / (2 * s2)
    assert abs(step - dg.pmf(k, s2)) <= (4e-15 + 4 * EPS * x) * upper + 1e-300
