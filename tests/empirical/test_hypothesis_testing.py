"""The hypothesis-testing view of DP: JASON Table 5-7, Gaussian DP, exact Neyman–Pearson.

References: JASON (2022) Table 5-7 as printed; closed forms of the (ε, δ)
and Gaussian trade-off functions (Dong, Roth & Su 2019); discrete Gaussian
tails from :mod:`adversary.noise.discrete_gaussian`; Kazan & Reiter's
probability of a correct decision (3.6).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from adversary.accounting import epsilon_from_zcdp
from adversary.empirical import hypothesis_testing as ht
from adversary.empirical import privacy_loss as pl
from adversary.noise import discrete_gaussian as dg
from adversary.noise import noise_variance
from adversary.scenarios import single_block as sb

ALPHAS = np.r_[0.0, np.logspace(-12, -1, 23), np.linspace(0.1, 1.0, 19)]


# --- JASON Table 5-7 --------------------------------------------------------------------


def test_jason_pure_dp_rows_are_the_bound_rounded_up():
    """1 - f_{ε,0}(0.01) = min(e^ε α, 1 - e^{-ε}(1 - α)), printed rounded up."""
    rows = {row["date"] + row["description"]: row for row in ht.jason_table_5_7()}
    expected = {
        0.25: math.exp(0.25) * 0.01,  # 0.0128403 -> 0.01285
        6.0: 1 - math.exp(-6.0) * 0.99,  # 0.997546 -> 0.9976
        4.5: math.exp(4.5) * 0.01,  # 0.900171 -> 0.90018
    }
    for row in ht.JASON_TABLE_5_7:
        if row.epsilon in expected:
            ours = rows[row.date + row.description]
            assert ours["ours"] == pytest.approx(expected[row.epsilon], rel=1e-14)
            assert ours["ours_rounded_up"] == row.printed
            assert ours["ours_rounded"] != row.printed  # to nearest would print one less


def test_jason_production_row():
    """ε = 19.61, δ = 1e-10: 1 - e^{-ε}(1 - 1e-10 - 0.01) = 0.99999999699 → 0.999999997."""
    row = ht.jason_table_5_7()[6]
    assert row["ours"] == pytest.approx(1 - math.exp(-19.61) * (1 - 1e-10 - 0.01), abs=1e-16)
    assert row["ours_rounded"] == row["ours_rounded_up"] == row["printed"] == 0.999999997


def test_jason_april_2021_row_used_alpha_one_tenth():
    """ε = 12.2 prints 0.9999955: at α = 0.01 the bound is 0.99999502; at α = 0.1, 0.99999548."""
    row = ht.jason_table_5_7()[5]
    assert row["ours"] == pytest.approx(1 - math.exp(-12.2) * 0.99, abs=1e-16)
    assert row["ours_rounded_up"] == 0.9999951 != row["printed"]
    at_tenth = float(ht.effective_tpr(12.2, 0.0, fpr=0.1))
    assert round(at_tenth, 7) == math.ceil(at_tenth * 1e7) / 1e7 == row["printed"]


def test_jason_zcdp_row_is_the_bun_steinke_minimum():
    """Bottom row 0.997: min over δ with ε = ρ + 2√(ρ log 1/δ) at ρ = 2.63."""
    row = ht.jason_table_5_7()[7]
    assert round(row["ours"], 3) == row["printed"] == 0.997
    assert row["ours"] == pytest.approx(0.99696, abs=5e-6)
    delta, eps = row["delta_at_minimum"], row["epsilon_at_minimum"]
    assert eps == pytest.approx(2.63 + 2 * math.sqrt(2.63 * math.log(1 / delta)), rel=1e-12)
    for factor in (0.9, 0.99, 1.01, 1.1):  # a minimum in δ
        other = min(delta * factor, 1 - 1e-9)
        neighbour = ht.tpr_bound(0.01, epsilon_from_zcdp(2.63, other, "bun-steinke"), other)
        assert neighbour >= row["ours"] - 1e-12
    # every valid route bounds the mechanisms that are 2.63-zCDP: tighter conversion, lower bound
    assert row["cks_minimum"] == pytest.approx(0.7597, abs=1e-4)
    assert row["gaussian_mechanism"] == pytest.approx(norm.cdf(norm.ppf(0.01) + math.sqrt(5.26)))
    assert row["discrete_gaussian"] < row["gaussian_mechanism"] < row["cks_minimum"] < row["ours"]


def test_discrete_gaussian_at_production_rho_is_a_randomised_threshold():
    """σ² = 1/(2·2.63): reject o ≥ 2, and o = 1 with probability γ; TPR(0.01) by hand."""
    sigma2 = 1 / (2 * 2.63)
    tail1, tail2 = float(dg.sf(1, sigma2)), float(dg.sf(2, sigma2))
    p1, p0 = float(dg.pmf(1, sigma2)), float(dg.pmf(0, sigma2))
    gamma = (0.01 - tail2) / p1
    expected = tail1 + gamma * p0  # P[Z ≥ 1] + γ P[Z = 0] under D' (o = 1 + Z)
    assert float(ht.discrete_gaussian_tpr(0.01, 2.63)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.2014, abs=1e-4)


# --- closed forms and exact identities --------------------------------------------------------


@pytest.mark.parametrize("decay", [0.05, 0.7, 2.5])
def test_two_sided_geometric_attains_the_pure_dp_bound(decay):
    """The geometric mechanism's LR is e^{±a}: its trade-off is exactly f_{a,0}."""
    curve = ht.tradeoff(pl.IntegerNoise.two_sided_geometric(decay))
    np.testing.assert_allclose(curve.tpr(ALPHAS), ht.tpr_bound(ALPHAS, decay), atol=1e-14)
    np.testing.assert_allclose(
        curve.type_ii_error(ALPHAS), ht.type_ii_error_bound(ALPHAS, decay), atol=1e-14
    )


@pytest.mark.parametrize("sigma2", [0.19, 1.0, 12.5])
@pytest.mark.parametrize("shift", [1, 2])
def test_discrete_gaussian_knots_are_tails(sigma2, shift):
    """Rejecting o ≥ t: FPR = P[Z ≥ t], TPR = P[Z ≥ t - s] (the LR increases with o).

    A window of tail mass 1e-300 keeps even far-tail rates relatively exact
    (with 1e-15 a rate is off by up to the omitted mass times the likelihood
    ratio at the window's edge).
    """
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(sigma2, 1e-300), shift)
    for t in range(-3, 6):
        fpr = float(dg.sf(t, sigma2))
        assert float(curve.tpr(fpr)) == pytest.approx(float(dg.sf(t - shift, sigma2)), rel=1e-12)
        beta = float(dg.cdf(t - shift - 1, sigma2))  # 1 - TPR without cancellation
        if beta > 0:
            assert float(curve.type_ii_error(fpr)) == pytest.approx(beta, rel=1e-12)


def test_most_powerful_test_has_exact_level():
    sigma2 = 7.0
    noise = pl.IntegerNoise.discrete_gaussian(sigma2)
    curve = ht.tradeoff(noise)
    for alpha in (1e-9, 0.01, 0.05, 0.3):
        rejected, boundary, gamma = curve.test(alpha)
        assert np.all(rejected > boundary)  # a threshold on the output
        assert np.all(np.diff(rejected) == -1)
        level = noise.pmf(rejected).sum() + gamma * float(noise.pmf(boundary))
        power = noise.pmf(rejected - 1).sum() + gamma * float(noise.pmf(boundary - 1))
        assert level == pytest.approx(alpha, rel=1e-12)
        assert power == pytest.approx(float(curve.tpr(alpha)), rel=1e-12)


def test_gaussian_dp_closed_form():
    for mu in (0.0, 0.1, 1.0, 2.2935, 6.0):
        tpr = ht.gaussian_tpr(ALPHAS, mu)
        np.testing.assert_allclose(tpr, norm.cdf(norm.ppf(ALPHAS) + mu), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(tpr + ht.gaussian_type_ii_error(ALPHAS, mu), 1.0, atol=2e-16)
    np.testing.assert_allclose(ht.gaussian_tpr(ALPHAS, 0.0), ALPHAS, atol=1e-15)
    assert float(ht.mu_from_rho(2.63)) == pytest.approx(math.sqrt(5.26))


@pytest.mark.parametrize(("sigma2", "tolerance"), [(100.0, 4e-5), (2500.0, 4e-7)])
def test_discrete_gaussian_approaches_gaussian_dp(sigma2, tolerance):
    """For large σ the lattice curve is within its chord error of Φ(Φ⁻¹(α) + 1/σ)."""
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(sigma2))
    alphas = np.linspace(0, 1, 20_001)
    gap = curve.tpr(alphas) - ht.gaussian_tpr(alphas, 1 / math.sqrt(sigma2))
    assert np.max(np.abs(gap)) < tolerance


def test_gaussian_dp_lies_under_its_exact_eps_delta_profile():
    """μ-GDP is (ε, δ(ε))-DP with δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2) (DRS Cor. 2.13)."""
    mu = 1.3
    for eps in (0.0, 0.5, 1.0, 3.0):
        delta = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        gap = ht.tpr_bound(ALPHAS, eps, delta) - ht.gaussian_tpr(ALPHAS, mu)
        assert gap.min() > -1e-12
        assert gap.min() < 1e-3  # tangent somewhere: the profile is tight


def test_discrete_gaussian_satisfies_every_zcdp_conversion():
    """DG(1/(2ρ)) is ρ-zCDP, so its exact curve lies under every (ε(δ), δ) bound."""
    rho = 0.5
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(float(noise_variance(rho, "paper"))))
    for delta in (1e-12, 1e-6, 1e-3, 0.05, 0.3, 0.8):
        for conversion in ("cks", "bun-steinke"):
            eps = epsilon_from_zcdp(rho, delta, conversion)
            assert np.all(curve.tpr(ALPHAS) <= ht.tpr_bound(ALPHAS, eps, delta) + 1e-12)


@pytest.mark.parametrize("sigma2", [0.5, 5.0, 80.0])
def test_hockey_stick_delta_is_the_conjugate_of_the_tradeoff(sigma2):
    """δ(ε) of the privacy loss distribution = max_α (TPR(α) - e^ε α), attained at a knot."""
    noise = pl.IntegerNoise.discrete_gaussian(sigma2)
    curve = ht.tradeoff(noise)
    distribution = pl.privacy_loss_distribution(noise)
    for eps in (0.0, 0.1, 0.7, 2.0):
        conjugate = np.max(curve.tpr_knots - math.exp(eps) * curve.fpr_knots)
        assert distribution.delta(eps) == pytest.approx(conjugate, rel=1e-11, abs=1e-15)


@pytest.mark.parametrize("rho", [0.01, 0.0992, 0.2465, 1.0])
@pytest.mark.parametrize("convention", ["paper", "das"])
def test_bayes_decision_at_even_prior_is_the_best_test(rho, convention):
    """Kazan & Reiter (3.6) at p = 1/2 equals (1 + max_α (TPR(α) - α))/2."""
    sigma2 = float(noise_variance(rho, convention))
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(sigma2))
    advantage = np.max(curve.tpr_knots - curve.fpr_knots)
    for truth in (0, 1):
        paper = sb.correct_decision_probability(0.5, rho, 0, truth, convention)
        assert float(paper) == pytest.approx((1 + advantage) / 2, rel=1e-12)


# --- monotonicity (hypothesis) ----------------------------------------------------------------

rates = st.floats(0.0, 1.0)
epsilons = st.floats(0.0, 30.0)


@settings(max_examples=200, deadline=None)
@given(alpha=rates, beta=rates, eps=epsilons, more=st.floats(0.0, 5.0), delta=st.floats(0, 0.5))
def test_eps_delta_bound_is_monotone(alpha, beta, eps, more, delta):
    low, high = sorted((alpha, beta))
    tpr = float(ht.tpr_bound(low, eps, delta))
    assert low - 1e-15 <= tpr <= 1.0
    assert float(ht.tpr_bound(high, eps, delta)) >= tpr
    assert float(ht.tpr_bound(low, eps + more, delta)) >= tpr
    assert float(ht.tpr_bound(low, eps, min(delta + more / 10, 1.0))) >= tpr
    assert tpr + float(ht.type_ii_error_bound(low, eps, delta)) == pytest.approx(1.0, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(alpha=rates, beta=rates, mu=st.floats(0.0, 20.0), more=st.floats(0.0, 5.0))
def test_gaussian_tradeoff_is_monotone(alpha, beta, mu, more):
    low, high = sorted((alpha, beta))
    tpr = float(ht.gaussian_tpr(low, mu))
    assert low - 1e-15 <= tpr <= 1.0
    assert float(ht.gaussian_tpr(high, mu)) >= tpr
    assert float(ht.gaussian_tpr(low, mu + more)) >= tpr


@settings(max_examples=40, deadline=None)
@given(sigma2=st.floats(0.05, 2000.0), factor=st.floats(1.0, 10.0), alpha=rates)
def test_discrete_gaussian_tradeoff_properties(sigma2, factor, alpha):
    """Concave, above the diagonal, symmetric (β(β(α)) = α), weaker with more noise.

    "Weaker" in total variation, ``max_α TPR(α) - α = P[Z = 0]``: the curves of
    two discrete Gaussians are not ordered at every α (σ² = 0.9375 and
    1.125 σ² cross near α = 0.0059, TPR 0.06410 < 0.06484: a sum of discrete
    Gaussians is not one, so the noisier is no garbling of the other).
    """
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(sigma2))
    tpr = float(curve.tpr(alpha))
    assert tpr >= alpha - 1e-12
    noise = pl.IntegerNoise.discrete_gaussian(sigma2)
    log_ratio = noise.logpmf(curve.outputs - 1) - noise.logpmf(curve.outputs)
    assert np.all(np.diff(log_ratio) <= 0)  # segments' slopes decrease: concave
    low, high = sorted((alpha, float(curve.type_ii_error(alpha))))
    middle = float(curve.tpr((low + high) / 2))
    assert middle >= (float(curve.tpr(low)) + float(curve.tpr(high))) / 2 - 1e-12
    beta = float(curve.type_ii_error(alpha))
    assert float(curve.type_ii_error(beta)) == pytest.approx(alpha, abs=1e-9)
    noisier = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(sigma2 * factor))
    advantage = float(np.max(curve.tpr_knots - curve.fpr_knots))
    assert advantage == pytest.approx(float(noise.pmf(0)), abs=1e-12)
    assert float(np.max(noisier.tpr_knots - noisier.fpr_knots)) <= advantage + 1e-12


def test_discrete_gaussian_tradeoffs_cross():
    """The example hypothesis found: more noise, yet a larger TPR at one α."""
    alpha = 0.005859375
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(0.9375))
    noisier = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(0.9375 * 1.125))
    assert float(noisier.tpr(alpha)) > float(curve.tpr(alpha)) + 7e-4


# --- bad arguments ------------------------------------------------------------------------------


def test_bad_arguments_name_themselves():
    curve = ht.tradeoff(pl.IntegerNoise.discrete_gaussian(2.0))
    cases = [
        ("fpr", lambda: ht.tpr_bound(1.5, 1.0)),
        ("fpr", lambda: ht.tpr_bound(-0.1, 1.0)),
        ("fpr", lambda: ht.type_ii_error_bound(math.nan, 1.0)),
        ("epsilon", lambda: ht.tpr_bound(0.1, -1.0)),
        ("epsilon", lambda: ht.effective_tpr(math.inf)),
        ("delta", lambda: ht.tpr_bound(0.1, 1.0, 1.5)),
        ("mu", lambda: ht.gaussian_tpr(0.1, -0.5)),
        ("fpr", lambda: ht.gaussian_tpr(2.0, 0.5)),
        ("rho", lambda: ht.mu_from_rho(0.0)),
        ("rho", lambda: ht.zcdp_minimum_tpr_bound(-1.0)),
        ("conversion", lambda: ht.zcdp_minimum_tpr_bound(1.0, conversion="renyi")),
        ("fpr", lambda: curve.tpr(1.01)),
        ("fpr", lambda: curve.test(-0.2)),
        ("shift", lambda: ht.tradeoff(pl.IntegerNoise.discrete_gaussian(2.0), 0)),
        ("rho", lambda: ht.discrete_gaussian_tpr(0.1, 0.0)),
    ]
    for name, call in cases:
        with pytest.raises(ValueError, match=rf"^{name}"):
            call()
