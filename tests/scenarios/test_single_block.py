"""Single-block attack (Kazan & Reiter Sec. 3.1): paper tables, brute force, properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from adversary.noise import discrete_gaussian, noise_variance
from adversary.scenarios import single_block as sb

# Block GVHR ρ of the 2020 persons file: 2.56 · 165/4099 · 3945/4097 (paper Table 2).
BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097
PRIORS = np.array([1 / 2, 1 / 5, 1 / 10, 1 / 50, 1 / 864])

# Table 4, rows x1* = 1..5. The posterior column for p = 1/864 is not legible
# in the text of the paper we have, so it is checked against brute force only.
TABLE4_POSTERIOR = np.array(
    [
        [0.525, 0.216, 0.109, 0.022],
        [0.574, 0.252, 0.130, 0.027],
        [0.622, 0.291, 0.154, 0.032],
        [0.667, 0.334, 0.182, 0.039],
        [0.710, 0.379, 0.213, 0.047],
    ]
)
TABLE4_RISK = np.array(
    [
        [1.05, 1.08, 1.09, 1.10, 1.10],
        [1.15, 1.26, 1.30, 1.34, 1.35],
        [1.24, 1.46, 1.54, 1.62, 1.64],
        [1.33, 1.67, 1.82, 1.96, 2.00],
        [1.42, 1.90, 2.13, 2.37, 2.44],
    ]
)
TABLE4_PRINTED_MASS = np.array([0.161, 0.119, 0.073, 0.036, 0.015])
TABLE5_POSTERIOR = np.array([0.524, 0.225, 0.117, 0.024])
TABLE5_RISK = np.array([1.05, 1.13, 1.17, 1.21, 1.22])


def _round_half_up(values, digits):
    return np.floor(np.asarray(values) * 10**digits + 0.5) / 10**digits


def test_table4_posterior_and_risk_to_the_printed_digits():
    releases = np.arange(1, 6)[:, None]
    post = sb.posterior(releases, PRIORS, BLOCK_RHO)
    np.testing.assert_array_equal(_round_half_up(post[:, :4], 3), TABLE4_POSTERIOR)
    np.testing.assert_array_equal(
        _round_half_up(sb.risk(releases, PRIORS, BLOCK_RHO), 2), TABLE4_RISK
    )


def test_table4_mass_column_is_the_noise_pmf_not_the_release_probability():
    """The paper prints P[noise = x1*]; the release x1* has probability P[noise = x1* - 1].

    With the truth x1 = 1 the probability of the release x1* is the discrete
    Gaussian pmf at x1* - 1. The printed column equals the pmf at x1* (the
    probability of x1* when X1 = 0), one step off: docs/differences.md.
    """
    releases = np.arange(1, 6)
    ours = sb.release_pmf(releases, BLOCK_RHO, true_count=1)
    np.testing.assert_allclose(ours, [0.17772, 0.16093, 0.11950, 0.07276, 0.03633], atol=5e-6)
    printed_model = sb.release_pmf(releases, BLOCK_RHO, true_count=0)
    np.testing.assert_array_equal(_round_half_up(printed_model, 3), TABLE4_PRINTED_MASS)
    assert not np.array_equal(_round_half_up(ours, 3), TABLE4_PRINTED_MASS)


def test_table5_marginal_posterior_and_risk_to_the_printed_digits():
    post = sb.marginal_posterior(PRIORS, BLOCK_RHO)
    np.testing.assert_array_equal(_round_half_up(post[:4], 3), TABLE5_POSTERIOR)
    np.testing.assert_array_equal(
        _round_half_up(sb.marginal_risk(PRIORS, BLOCK_RHO), 2), TABLE5_RISK
    )


def _brute_force_posterior(release, p, sigma2, known, truth):
    """Bayes' theorem written out with the two discrete Gaussian likelihoods."""
    with_c = np.log(p) + discrete_gaussian.logpmf(release - (known + 1), sigma2)
    without_c = np.log1p(-p) + discrete_gaussian.logpmf(release - known, sigma2)
    of_truth = with_c if truth == known + 1 else without_c
    return np.exp(of_truth - np.logaddexp(with_c, without_c))


CASES = [  # (p, ρ, m, truth, convention)
    (0.5, BLOCK_RHO, 0, 1, "paper"),
    (1 / 864, BLOCK_RHO, 0, 1, "paper"),
    (0.2, 0.7, 3, 3, "paper"),
    (0.02, 0.05, 12, 13, "das"),
    (0.9, 2.0, 0, 0, "das"),
]


@pytest.mark.parametrize(("p", "rho", "known", "truth", "convention"), CASES)
def test_posterior_matches_bayes_theorem(p, rho, known, truth, convention):
    sigma2 = noise_variance(rho, convention)
    releases = np.arange(known - 15, known + 17)
    expected = _brute_force_posterior(releases, p, sigma2, known, truth)
    got = sb.posterior(releases, p, rho, known, truth, convention)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    prior_of_truth = p if truth == known + 1 else 1 - p
    np.testing.assert_allclose(
        sb.risk(releases, p, rho, known, truth, convention), expected / prior_of_truth, rtol=1e-12
    )


@pytest.mark.parametrize(("p", "rho", "known", "truth", "convention"), CASES)
def test_marginal_measures_match_a_brute_force_sum_over_releases(p, rho, known, truth, convention):
    sigma2 = float(noise_variance(rho, convention))
    reach = int(60 * np.sqrt(sigma2)) + 60
    releases = np.arange(truth - reach, truth + reach + 1)
    weights = discrete_gaussian.pmf(releases - truth, sigma2)
    post = _brute_force_posterior(releases, p, sigma2, known, truth)
    expected = np.sum(weights * post)
    got = sb.marginal_posterior(p, rho, known, truth, convention)
    np.testing.assert_allclose(got, expected, rtol=1e-12)

    decided = sb.decision(releases, p, rho, known, convention)
    expected_correct = np.sum(weights[decided == truth])
    got_correct = sb.correct_decision_probability(p, rho, known, truth, convention)
    np.testing.assert_allclose(got_correct, expected_correct, rtol=1e-10, atol=1e-300)


def test_decision_threshold_at_the_production_rho():
    # Solving logit(p) + (2 x1* - 1)/(2σ²) ≥ 0 by hand: p = 1/2 decides 1 from
    # x1* = 1 on, p = 1/5 from x1* = 8 on (σ² = 1/(2ρ) ≈ 5.039).
    decided = sb.decision(np.arange(-2, 12)[:, None], [0.5, 0.2], BLOCK_RHO)
    assert np.flatnonzero(decided[:, 0])[0] == 3  # x1* = 1
    assert np.flatnonzero(decided[:, 1])[0] == 10  # x1* = 8
    p_correct = sb.correct_decision_probability([0.5, 0.2], BLOCK_RHO)
    sigma2 = noise_variance(BLOCK_RHO)
    np.testing.assert_allclose(p_correct, discrete_gaussian.sf([0, 7], sigma2), rtol=1e-14)


def test_known_count_shifts_releases_and_leaves_marginals_unchanged():
    """S1.1: a target among m others gives the same analysis shifted by m."""
    releases = np.arange(-5, 8)
    m = 41
    np.testing.assert_allclose(
        sb.posterior(releases + m, 0.1, 0.3, known_count=m), sb.posterior(releases, 0.1, 0.3)
    )
    np.testing.assert_allclose(
        sb.marginal_risk(0.1, 0.3, known_count=m), sb.marginal_risk(0.1, 0.3), rtol=1e-14
    )


def test_arguments_broadcast_over_releases_priors_and_rho():
    rhos = np.array([0.01, 0.1, 1.0])
    got = sb.marginal_posterior(PRIORS[:, None], rhos)
    assert got.shape == (5, 3)
    for i, p in enumerate(PRIORS):
        for j, rho in enumerate(rhos):
            assert got[i, j] == pytest.approx(float(sb.marginal_posterior(p, rho)), rel=1e-13)


# --- properties -----------------------------------------------------------------

priors = st.floats(1e-6, 1 - 1e-6)
rhos = st.floats(1e-8, 1e3)
counts = st.integers(0, 10**7)
conventions = st.sampled_from(["paper", "das"])


@settings(max_examples=60, deadline=None)
@given(p=priors, rho=rhos, m=counts, x=st.integers(-50, 50), convention=conventions)
def test_posterior_increases_with_the_release(p, rho, m, x, convention):
    low, high = sb.posterior([m + x, m + x + 1], p, rho, m, convention=convention)
    assert 0.0 <= low <= high <= 1.0
    # Strictly larger wherever the posterior is not saturated at 0 or 1.
    if 1e-300 < low and high < 1 - 1e-15:
        assert high > low


@settings(max_examples=40, deadline=None)
@given(p=priors, rho=rhos, m=counts, has_c=st.booleans(), convention=conventions)
def test_marginal_measures_are_finite_probabilities(p, rho, m, has_c, convention):
    truth = m + 1 if has_c else m
    post = sb.marginal_posterior(p, rho, m, truth, convention)
    correct = sb.correct_decision_probability(p, rho, m, truth, convention)
    prior_of_truth = p if has_c else 1 - p
    assert 0.0 <= post <= 1.0
    assert 0.0 <= correct <= 1.0
    assert np.isfinite(sb.marginal_risk(p, rho, m, truth, convention))
    # Averaged over releases from the truth, the posterior of the truth is at
    # least its prior π: Σ f1 · π f1 / (π f1 + (1-π) f0) ≥ π (Σ f1)² / Σ (π f1 + (1-π) f0)
    # = π by the Cauchy–Schwarz (Sedrakyan) inequality.
    assert post >= prior_of_truth * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(p=priors, convention=conventions)
def test_risk_tends_to_one_as_rho_tends_to_zero(p, convention):
    risks = sb.marginal_risk(p, [1e-2, 1e-4, 1e-6, 1e-8], convention=convention)
    assert np.all(np.diff(np.abs(risks - 1)) <= 1e-12)
    assert abs(risks[-1] - 1) < 1e-3


@settings(max_examples=40, deadline=None)
@given(p=priors, rho=rhos, m=counts, x=st.integers(-(10**7), 10**7), convention=conventions)
def test_extreme_inputs_stay_finite(p, rho, m, x, convention):
    values = [
        sb.posterior(x, p, rho, m, convention=convention),
        sb.risk(x, p, rho, m, convention=convention),
        sb.release_pmf(x, rho, m, convention),
    ]
    assert all(np.isfinite(v) and v >= 0 for v in values)


# --- bad input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rho": 0.0}, "rho must be finite and > 0"),
        ({"rho": -1.0}, "rho must be finite and > 0"),
        ({"prior": 0.0}, "prior must lie strictly between 0 and 1"),
        ({"prior": 1.0}, "prior must lie strictly between 0 and 1"),
        ({"release": 1.5}, "release must be integer-valued"),
        ({"known_count": -1}, "known_count must be a count >= 0"),
        ({"known_count": 2.5}, "known_count must be integer-valued"),
        ({"true_count": 5}, "true_count must equal known_count or known_count \\+ 1"),
        ({"convention": "laplace"}, "convention must be one of"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    arguments = {"release": 1, "prior": 0.5, "rho": 0.1} | kwargs
    with pytest.raises(ValueError, match=message):
        sb.posterior(**arguments)


# ---------------------------------------------------------------- ties (3.5)-(3.6)


def _credit_by_brute_force(p, rho, truth, rule, known=0, reach=60):
    """(3.6) summed over releases x1* = truth + z, the log odds of m + 1 from (3.1)."""
    sigma2 = 1 / (2 * rho)
    total = 0.0
    for z in range(-reach, reach + 1):
        release = truth + z
        log_odds = np.log(p / (1 - p)) + (2 * (release - known) - 1) / (2 * sigma2)
        if abs(log_odds) <= 1e-9:
            up = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[rule]
        else:
            up = float(log_odds > 0)
        total += discrete_gaussian.pmf(z, sigma2) * (up if truth == known + 1 else 1 - up)
    return total


@pytest.mark.parametrize("rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize("truth", [1, 0])
def test_a_prior_that_makes_the_threshold_an_integer_ties_the_decision(rule, truth):
    rho = 0.0992
    sigma2 = 1 / (2 * rho)
    # logit p = -(k + 1/2)/σ²: the release x1* = k + 1 leaves the posterior at exactly 1/2.
    p = float(special.expit(-(2 + 0.5) / sigma2))
    got = sb.correct_decision_probability(p, rho, true_count=truth, tie_rule=rule)
    assert float(got) == pytest.approx(_credit_by_brute_force(p, rho, truth, rule), abs=1e-14)
    assert float(sb.posterior(3, p, rho)) == pytest.approx(0.5, abs=1e-12)
    tied_mass = discrete_gaussian.pmf(3 - truth, sigma2)
    largest = sb.correct_decision_probability(p, rho, true_count=truth, tie_rule="largest")
    smallest = sb.correct_decision_probability(p, rho, true_count=truth, tie_rule="smallest")
    assert abs(float(largest - smallest)) == pytest.approx(tied_mass, rel=1e-9)


def test_an_ordinary_prior_has_no_tie_and_every_rule_agrees():
    values = {
        rule: sb.correct_decision_probability([0.5, 0.1], 0.0992, tie_rule=rule)
        for rule in ("split", "largest", "smallest")
    }
    np.testing.assert_array_equal(values["split"], values["largest"])
    np.testing.assert_array_equal(values["split"], values["smallest"])


def test_a_tied_decision_is_drawn_under_split_and_ruled_otherwise():
    rho = 0.0992
    p = float(special.expit(-(2 + 0.5) * 2 * rho))
    assert sb.decision(3, p, rho, tie_rule="largest") == 1
    assert sb.decision(3, p, rho, tie_rule="smallest") == 0
    with pytest.raises(ValueError, match="rng: the decision is tied between"):
        sb.decision(3, p, rho)
    draws = [int(sb.decision(3, p, rho, rng=seed)) for seed in range(200)]
    assert set(draws) == {0, 1}
    assert sb.decision(4, p, rho) == 1 and sb.decision(2, p, rho) == 0  # no tie: no rng needed
