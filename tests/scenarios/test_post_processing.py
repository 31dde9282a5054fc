"""Post-processed release (Kazan & Reiter supplement S6): brute force, Bayes, properties, curves."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.noise import discrete_gaussian, noise_variance
from adversary.noise.sums import sum_of_discrete_gaussians
from adversary.scenarios import post_processing as pp
from adversary.scenarios import single_block as sb

# Block GVHR ρ of the 2020 persons file (paper Table 2), the ρ1 ≈ 0.099 of Figure 6.
BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097
# The S6 setting: p = 1/2, m = 0, truth x1 = x2 = 1; d is not stated in S6, we
# use the d = 27 of the paper's block-group case study (Granville County).
S6 = {"d": 27, "x2": 1}


def _f_fraction(x1_star: int, y1_star: int, x2_tilde: int, d: int) -> int:
    """(S6.2)–(S6.3) with exact rationals: clip, then round to nearest with ties up."""
    share = Fraction(d * x1_star + (x2_tilde - y1_star), d + 1)
    if share < 0:
        return 0
    if share > x2_tilde:
        return x2_tilde
    return math.floor(share + Fraction(1, 2))


# --- f ----------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4, 27])
@pytest.mark.parametrize("x2_tilde", [0, 1, 2, 5, 10])
def test_post_process_matches_exact_rationals(d, x2_tilde):
    x1 = np.arange(-12, 16)[:, None]
    y1 = np.arange(-40, 60)[None, :]
    got = pp.post_process(x1, y1, x2_tilde, d)
    expected = np.array(
        [[_f_fraction(int(a), int(b), x2_tilde, d) for b in y1[0]] for a in x1[:, 0]]
    )
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int64


def test_ties_round_up_and_occur_only_when_d_plus_one_is_even():
    # d = 3: x̄1 = (3·1 + (5 - 4))/4 = 1 ... and (3·1 + (5 - 2))/4 = 3/2 -> 2.
    assert pp.post_process(1, 2, 5, 3) == 2
    assert pp.post_process(1, 4, 5, 3) == 1
    # d = 1: x̄1 = (x1* + 5 - y1*)/2 = 5/2 -> 3 (not 2, as half-to-even would give).
    assert pp.post_process(0, 0, 5, 1) == 3
    # d = 2 (d + 1 odd): N/3 is never a half-integer, so no tie rule is needed.
    n = np.arange(-50, 50)
    assert not np.any((2 * n) % 6 == 3)


@settings(max_examples=200, deadline=None)
@given(
    x1=st.integers(-(10**6), 10**6),
    y1=st.integers(-(10**7), 10**7),
    x2_tilde=st.integers(0, 10**6),
    d=st.integers(1, 1000),
)
def test_post_process_matches_exact_rationals_for_large_values(x1, y1, x2_tilde, d):
    assert pp.post_process(x1, y1, x2_tilde, d) == _f_fraction(x1, y1, x2_tilde, d)


def test_pytensor_graph_equals_numpy_f():
    import pytensor
    import pytensor.tensor as pt

    x1, y1 = pt.lscalar("x1"), pt.lvector("y1")
    for d, x2_tilde in [(1, 3), (3, 5), (27, 10), (4, 0)]:
        fn = pytensor.function([x1, y1], pp.post_process_graph(x1, y1, x2_tilde, d))
        ys = np.arange(-80, 90)
        for a in range(-9, 12):
            np.testing.assert_array_equal(fn(a, ys), pp.post_process(a, ys, x2_tilde, d))


# --- the noise of d x1* - y1*, and the likelihood (S6.5)–(S6.6) ------------------------------


def _w_table(d, sigma2, exact_sum, reach):
    if exact_sum:
        table = sum_of_discrete_gaussians(d, sigma2, 1e-30)
        return table.support, table.probabilities
    w = np.arange(-reach, reach + 1)
    return w, discrete_gaussian.pmf(w, d * sigma2)


@pytest.mark.parametrize("exact_sum", [False, True])
def test_combined_noise_matches_a_double_sum(exact_sum):
    d, sigma2 = 4, 1.7
    noise = pp.combined_noise(d, sigma2, exact_sum, tail_mass=1e-15)
    z = np.arange(-40, 41)
    w, pw = _w_table(d, sigma2, exact_sum, 160)
    v = (d * z[:, None] - w[None, :]).ravel()
    weight = (discrete_gaussian.pmf(z, sigma2)[:, None] * pw[None, :]).ravel()
    expected = np.bincount(v - v.min(), weights=weight)
    got = noise.pmf(np.arange(v.min(), v.max() + 1))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert 0 < noise.omitted_mass <= 1e-15
    assert abs(noise.probabilities.sum() - 1) <= noise.omitted_mass + 1e-14


def _brute_force_table(rho, d, x2, x2_tilde, known, exact_sum=False, convention="paper"):
    """(S6.5) as written: the double sum over x1* and y1* of the indicator (S6.4)."""
    sigma2 = float(noise_variance(rho, convention))
    reach = int(40 * math.sqrt(sigma2)) + 5
    z = np.arange(-reach, reach + 1)
    w, pw = _w_table(d, sigma2, exact_sum, int(40 * math.sqrt(d * sigma2)) + 5)
    pz = discrete_gaussian.pmf(z, sigma2)
    rows = []
    for k in (known, known + 1):
        x1_star = (k + z)[:, None]
        y1_star = (x2 - k + w)[None, :]
        released = pp.post_process(x1_star, y1_star, x2_tilde, d)
        weight = pz[:, None] * pw[None, :]
        rows.append(np.bincount(released.ravel(), weights=weight.ravel(), minlength=x2_tilde + 1))
    return np.array(rows)


TABLE_CASES = [  # (ρ, d, x2, x̃2, m, exact_sum, convention)
    (BLOCK_RHO, 27, 1, 10, 0, False, "paper"),
    (BLOCK_RHO, 27, 1, 1, 0, True, "paper"),
    (0.3, 3, 4, 6, 2, False, "das"),
    (0.3, 3, 4, 6, 2, True, "paper"),
    (1.5, 1, 2, 3, 1, False, "paper"),
    (0.02, 5, 9, 40, 3, False, "paper"),
]


@pytest.mark.parametrize(
    ("rho", "d", "x2", "x2_tilde", "known", "exact_sum", "convention"), TABLE_CASES
)
def test_likelihood_matches_the_double_sum(rho, d, x2, x2_tilde, known, exact_sum, convention):
    table = pp.release_table(
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        convention=convention,
        exact_sum=exact_sum,
    )
    expected = _brute_force_table(rho, d, x2, x2_tilde, known, exact_sum, convention)
    np.testing.assert_allclose(table.probabilities, expected, rtol=1e-11, atol=2e-15)
    assert np.all(table.omitted_mass <= 1e-15)
    np.testing.assert_allclose(table.probabilities.sum(-1), 1.0, atol=1e-14)
    j = np.arange(x2_tilde + 1)
    for i, k in enumerate((known, known + 1)):
        got = pp.likelihood(
            j,
            k,
            rho,
            d=d,
            x2=x2,
            x2_tilde=x2_tilde,
            known_count=known,
            convention=convention,
            exact_sum=exact_sum,
        )
        np.testing.assert_array_equal(got, table.probabilities[i])


def test_release_table_is_vectorised_over_rho():
    rhos = np.array([[0.05, BLOCK_RHO], [0.5, 0.05]])
    table = pp.release_table(rhos, d=27, x2=1, x2_tilde=5)
    assert table.probabilities.shape == (2, 2, 2, 6)
    for index in np.ndindex(rhos.shape):
        one = pp.release_table(rhos[index], d=27, x2=1, x2_tilde=5)
        np.testing.assert_array_equal(table.probabilities[index], one.probabilities)


# --- posterior (S6.7) and its marginal (S6.8) ---------------------------------------------


POSTERIOR_CASES = [  # (p, ρ, d, x2, x̃2, m, truth, exact_sum, convention)
    (0.5, BLOCK_RHO, 27, 1, 10, 0, 1, False, "paper"),
    (0.5, BLOCK_RHO, 27, 1, 1, 0, 0, False, "paper"),
    (0.02, 0.3, 3, 4, 6, 2, 3, True, "das"),
    (0.9, 1.5, 1, 2, 3, 1, 1, False, "paper"),
    (0.2, 0.02, 5, 9, 40, 3, 4, False, "paper"),
]


@pytest.mark.parametrize(
    ("p", "rho", "d", "x2", "x2_tilde", "known", "truth", "exact_sum", "convention"),
    POSTERIOR_CASES,
)
def test_posterior_and_marginals_match_bayes_theorem(
    p, rho, d, x2, x2_tilde, known, truth, exact_sum, convention
):
    rows = _brute_force_table(rho, d, x2, x2_tilde, known, exact_sum, convention)
    with_c, without_c = rows[1], rows[0]
    joint_truth = p * with_c if truth == known + 1 else (1 - p) * without_c
    posterior = joint_truth / (p * with_c + (1 - p) * without_c)
    prior_of_truth = p if truth == known + 1 else 1 - p
    args = dict(
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        true_count=truth,
        convention=convention,
        exact_sum=exact_sum,
    )
    j = np.arange(x2_tilde + 1)
    # A release's posterior has relative error ≲ omitted_mass / likelihood: with the
    # default tail mass (1e-15) check releases of likelihood > 1e-4, with 1e-30 the rest.
    likely = (with_c > 1e-4) & (without_c > 1e-4)
    np.testing.assert_allclose(
        pp.posterior(j[likely], p, rho, **args), posterior[likely], rtol=1e-10
    )
    usable = (with_c > 1e-13) & (without_c > 1e-13)
    np.testing.assert_allclose(
        pp.risk(j[usable], p, rho, tail_mass=1e-30, **args),
        posterior[usable] / prior_of_truth,
        rtol=1e-10,
    )
    truth_row = rows[1] if truth == known + 1 else rows[0]
    expected = np.sum(posterior * truth_row)
    np.testing.assert_allclose(pp.marginal_posterior(p, rho, **args), expected, rtol=1e-12)
    np.testing.assert_allclose(
        pp.marginal_risk(p, rho, **args), expected / prior_of_truth, rtol=1e-12
    )


def test_marginals_broadcast_over_prior_and_rho():
    priors = np.array([0.5, 0.1, 0.01])[:, None]
    rhos = np.array([0.05, BLOCK_RHO, 1.0])
    got = pp.marginal_risk(priors, rhos, d=27, x2=1, x2_tilde=10)
    assert got.shape == (3, 3)
    for i, j in np.ndindex(got.shape):
        one = pp.marginal_risk(float(priors[i, 0]), float(rhos[j]), d=27, x2=1, x2_tilde=10)
        assert got[i, j] == pytest.approx(float(one), rel=1e-14)
    post = pp.posterior(np.arange(4)[:, None, None], priors, rhos, d=27, x2=1, x2_tilde=10)
    assert post.shape == (4, 3, 3)


def test_post_processed_count_zero_is_uninformative():
    """x̃2 = 0 forces x̃1 = 0: the posterior is the prior and the risk is 1."""
    np.testing.assert_allclose(pp.posterior(0, 0.3, BLOCK_RHO, x2_tilde=0, **S6), 0.3)
    np.testing.assert_allclose(pp.marginal_risk(0.3, BLOCK_RHO, x2_tilde=0, **S6), 1.0)


def test_posterior_refuses_releases_beyond_the_noise_tables():
    with pytest.raises(ValueError, match=r"^x1_tilde: .*smaller tail_mass"):
        pp.posterior(1000, 0.5, BLOCK_RHO, x2_tilde=1000, **S6)


# --- without post-processing ----------------------------------------------------------------


@pytest.mark.parametrize("exact_sum", [False, True])
@pytest.mark.parametrize(("p", "truth"), [(0.5, 1), (0.1, 1), (0.1, 0)])
def test_unprocessed_marginal_posterior_matches_a_double_sum(exact_sum, p, truth):
    """The adversary seeing (x1*, y1*): Bayes' theorem on the grid of both noisy counts."""
    d, x2, rho = 3, 2, 0.4
    sigma2 = float(noise_variance(rho))
    z = np.arange(-30, 31)
    w, pw = _w_table(d, sigma2, exact_sum, 60)
    x1_star, y1_star = z[:, None], (w + x2)[None, :]  # relative to X1 = 0 ...

    def joint(k):  # P[x1*, y1* | X1 = k] on a grid of (x1*, y1*) that holds both hypotheses
        wk = np.searchsorted(w, y1_star - x2 + k)
        inside = (y1_star - x2 + k >= w[0]) & (y1_star - x2 + k <= w[-1])
        return discrete_gaussian.pmf(x1_star - k, sigma2) * np.where(
            inside, pw[np.clip(wk, 0, w.size - 1)], 0.0
        )

    with_c, without_c = joint(1), joint(0)
    truth_lik = with_c if truth == 1 else without_c
    prior_truth = p if truth == 1 else 1 - p
    evidence = p * with_c + (1 - p) * without_c
    safe = np.where(evidence > 0, evidence, 1.0)
    expected = np.sum(np.where(evidence > 0, prior_truth * truth_lik**2 / safe, 0.0))
    got = pp.unprocessed_marginal_posterior(
        p, rho, d=d, x2=x2, true_count=truth, exact_sum=exact_sum
    )
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_unprocessed_risk_is_at_least_the_single_block_risk():
    """(x1*, y1*) tells the adversary more than x1* alone, and the gap closes as d grows."""
    rhos = np.array([0.01, 0.05, BLOCK_RHO, 0.5, 2.0])
    single = sb.marginal_risk(0.5, rhos)
    gaps = [pp.unprocessed_marginal_risk(0.5, rhos, d=d, x2=1) - single for d in (1, 5, 27, 200)]
    assert np.all(np.array(gaps) > 0)
    assert np.all(np.diff(np.array(gaps), axis=0) < 0)


RHOS = np.array([0.005, 0.02, 0.05, BLOCK_RHO, 0.2, 0.5, 1.0, 2.0, 5.0])


@pytest.mark.parametrize("d", [1, 5, 27])
@pytest.mark.parametrize("x2_tilde", [1, 10, 100])
def test_post_processing_never_raises_the_risk_of_the_noisy_counts(d, x2_tilde):
    """S6: marginal risk with post-processing ≤ without, the bound being the (x1*, y1*) risk.

    x̃1 is a function of (x1*, y1*), and E_T[posterior] = Σ_D P[D, T]²/(p_T P[D])
    can only fall when releases D are merged. Truncation error ≤ 4·1e-15/p_T².
    """
    with_pp = pp.marginal_risk(0.5, RHOS, d=d, x2=1, x2_tilde=x2_tilde)
    without = pp.unprocessed_marginal_risk(0.5, RHOS, d=d, x2=1)
    assert np.all(with_pp <= without + 1e-13)
    assert np.all(with_pp >= 1.0 - 1e-13)
    with_pp_exact = pp.marginal_risk(0.5, RHOS[:4], d=d, x2=1, x2_tilde=x2_tilde, exact_sum=True)
    without_exact = pp.unprocessed_marginal_risk(0.5, RHOS[:4], d=d, x2=1, exact_sum=True)
    assert np.all(with_pp_exact <= without_exact + 1e-13)


@pytest.mark.parametrize("x2_tilde", [1, 10])
def test_in_the_s6_setting_post_processing_is_below_the_single_block_risk(x2_tilde):
    with_pp = pp.marginal_risk(0.5, RHOS, x2_tilde=x2_tilde, **S6)
    assert np.all(with_pp <= sb.marginal_risk(0.5, RHOS) + 1e-13)


def test_single_block_risk_is_not_a_bound_at_large_post_processed_counts():
    """A difference from S6's text: with d = 27 and x̃2 = 100 the post-processed risk
    exceeds the single-block risk (3.4) at ρ1 ≈ 0.099; it stays below the
    (x1*, y1*) risk. Likewise for every ρ1 when d = 1 (docs: module docstring).
    """
    with_pp = float(pp.marginal_risk(0.5, BLOCK_RHO, x2_tilde=100, **S6))
    single = float(sb.marginal_risk(0.5, BLOCK_RHO))
    bound = float(pp.unprocessed_marginal_risk(0.5, BLOCK_RHO, **S6))
    assert single == pytest.approx(1.047333, abs=1e-6)
    assert with_pp == pytest.approx(1.047961, abs=1e-6)
    assert bound == pytest.approx(1.049005, abs=1e-6)
    assert single < with_pp < bound
    d1 = pp.marginal_risk(0.5, RHOS, d=1, x2=1, x2_tilde=10)
    assert np.all(d1 > sb.marginal_risk(0.5, RHOS))


def test_risk_rises_toward_the_bound_as_the_post_processed_count_grows():
    """S6: larger x̃2 gives risks closer to the bound — at the ρ1 of Figure 6 and below.

    At large ρ1 the order reverses: with x2 = 1 the share is shifted by
    (x̃2 - x2)/(d + 1), and when that shift is near a half-integer the rounding
    hides the (nearly noiseless) count; e.g. ρ1 = 2, d = 27 gives 1.619, 1.589, 1.443.
    """
    rhos = np.array([0.005, 0.02, 0.05, BLOCK_RHO, 0.2, 0.5])
    risks = np.array([pp.marginal_risk(0.5, rhos, x2_tilde=x, **S6) for x in (1, 10, 100)])
    bound = pp.unprocessed_marginal_risk(0.5, rhos, **S6)
    assert np.all(np.diff(risks, axis=0) > 0)
    assert np.all(bound - risks[-1] < 0.5 * (bound - risks[0]))
    high = [float(pp.marginal_risk(0.5, 2.0, x2_tilde=x, **S6)) for x in (1, 10, 100)]
    np.testing.assert_allclose(high, [1.61869, 1.58913, 1.44313], atol=1e-5)


def test_the_approximation_of_the_summed_noise_barely_matters():
    approx = pp.marginal_risk(0.5, RHOS[:5], x2_tilde=10, **S6)
    exact = pp.marginal_risk(0.5, RHOS[:5], x2_tilde=10, exact_sum=True, **S6)
    assert np.all(np.abs(approx - exact) < 1e-3)
    assert np.any(approx != exact)


# --- bad arguments --------------------------------------------------------------------------

GOOD = {"d": 27, "x2": 1, "x2_tilde": 10}


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"x2_tilde": -1}, "x2_tilde"),
        ({"x2_tilde": 2.5}, "x2_tilde"),
        ({"d": 0}, "d"),
        ({"d": 1.5}, "d"),
        ({"x2": 0}, "x2"),
        ({"x2": 1.5}, "x2"),
        ({"known_count": -1}, "known_count"),
        ({"known_count": 0.5}, "known_count"),
        ({"prior": 0.0}, "prior"),
        ({"prior": 1.0}, "prior"),
        ({"prior": 1.5}, "prior"),
        ({"rho": 0.0}, "rho"),
        ({"rho": -0.1}, "rho"),
        ({"true_count": 2}, "true_count"),
        ({"x1_tilde": 11}, "x1_tilde"),
        ({"x1_tilde": -1}, "x1_tilde"),
        ({"x1_tilde": 1.5}, "x1_tilde"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(change, name):
    args = {"x1_tilde": 3, "prior": 0.5, "rho": BLOCK_RHO, **GOOD, **change}
    x1_tilde, prior, rho = args.pop("x1_tilde"), args.pop("prior"), args.pop("rho")
    with pytest.raises(ValueError, match=rf"^{name} "):
        pp.posterior(x1_tilde, prior, rho, **args)
    if name != "x1_tilde":
        with pytest.raises(ValueError, match=rf"^{name} "):
            pp.marginal_risk(prior, rho, **args)
    if name not in ("true_count",):
        with pytest.raises(ValueError, match=rf"^{name} "):
            pp.model(x1_tilde, prior, rho, **{k: v for k, v in args.items()})


def test_bad_arguments_of_f_and_the_noise():
    with pytest.raises(ValueError, match=r"^x2_tilde "):
        pp.post_process(1, 2, -1, 3)
    with pytest.raises(ValueError, match=r"^d "):
        pp.post_process(1, 2, 3, 0)
    with pytest.raises(ValueError, match=r"^x1_star "):
        pp.post_process(1.5, 2, 3, 3)
    with pytest.raises(ValueError, match=r"^sigma2 "):
        pp.combined_noise(3, 0.0)
    with pytest.raises(ValueError, match=r"^count "):
        pp.likelihood(1, 5, BLOCK_RHO, **GOOD)


# --- the decision and all marginal measures at once ----------------------------------------


@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize(
    ("p", "rho", "d", "x2", "x2_tilde", "known", "truth", "exact_sum", "convention"),
    POSTERIOR_CASES,
)
def test_decision_and_its_probability_match_the_double_sum(
    p, rho, d, x2, x2_tilde, known, truth, exact_sum, convention, tie_rule
):
    rows = _brute_force_table(rho, d, x2, x2_tilde, known, exact_sum, convention)
    with np.errstate(divide="ignore"):
        log_odds = np.log(p * rows[1]) - np.log((1 - p) * rows[0])
    tied = np.abs(log_odds) <= 1e-9
    up = np.where(tied, {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule], log_odds > 0)
    truth_row = rows[1] if truth == known + 1 else rows[0]
    expected = np.sum(truth_row * (up if truth == known + 1 else 1.0 - up))
    args = dict(d=d, x2=x2, x2_tilde=x2_tilde, known_count=known, convention=convention)
    j = np.arange(x2_tilde + 1)
    # Where the two hypotheses are nearly tied the truncation could swap them: skip those.
    clear = np.abs(p * rows[1] - (1 - p) * rows[0]) > 1e-12
    np.testing.assert_array_equal(
        pp.decision(j, p, rho, exact_sum=exact_sum, **args, rng=0)[clear],
        known + (log_odds > 0)[clear],
    )
    result = pp.marginals(p, rho, true_count=truth, exact_sum=exact_sum, tie_rule=tie_rule, **args)
    assert float(result.correct_decision_probability) == pytest.approx(expected, abs=1e-13)
    assert float(result.decision_error_bound) >= float(result.omitted_mass)
    assert (
        abs(float(result.correct_decision_probability) - expected)
        <= float(result.decision_error_bound) + 1e-14
    )
    assert pp.correct_decision_probability(
        p, rho, true_count=truth, exact_sum=exact_sum, tie_rule=tie_rule, **args
    ) == pytest.approx(expected, abs=1e-13)
    prior_of_truth = p if truth == known + 1 else 1 - p
    assert float(result.posterior_error_bound) == float(result.omitted_mass) / prior_of_truth
    assert float(result.risk_error_bound) == float(result.omitted_mass) / prior_of_truth**2
    assert float(result.marginal_posterior) == float(
        pp.marginal_posterior(p, rho, true_count=truth, exact_sum=exact_sum, **args)
    )


def test_decision_probability_bound_grows_only_at_a_tie():
    """x̃2 = 0 with p = 1/2: both hypotheses give x̃1 = 0, a tie counted by the rule."""
    for rule, value in (("split", 0.5), ("largest", 1.0), ("smallest", 0.0)):
        tie = pp.marginals(0.5, BLOCK_RHO, x2_tilde=0, tie_rule=rule, **S6)
        assert float(tie.correct_decision_probability) == pytest.approx(value, abs=1e-14)
        assert float(tie.decision_error_bound) > 0.99  # a tie the truncation could tip
    clear = pp.marginals(0.3, BLOCK_RHO, x2_tilde=0, **S6)
    assert float(clear.correct_decision_probability) == 0.0  # always decides 0, truth is 1
    assert float(clear.decision_error_bound) == float(clear.omitted_mass)


# --- Figure 6 curves ----------------------------------------------------------------------


def test_curve_over_post_processed_count_is_figure6_left():
    curve = pp.marginal_by_x2_tilde().sel(prior=0.5)
    assert curve.rho.item() == BLOCK_RHO
    assert list(curve.x2_tilde.values) == list(range(1, 101))
    risk = curve.marginal_risk
    # docs/paper-differences.md, the S6 table.
    np.testing.assert_allclose(
        risk.sel(x2_tilde=[1, 10, 100]).values, [1.03222, 1.04189, 1.04796], atol=5e-6
    )
    assert curve.unprocessed_marginal_risk.item() == pytest.approx(1.049005, abs=1e-6)
    assert curve.single_block_marginal_risk.item() == pytest.approx(1.047333, abs=1e-6)
    # The bound holds at every x̃2; the single-block risk is passed from x̃2 ≈ 70 on.
    assert np.all(risk <= curve.unprocessed_marginal_risk + 1e-13)
    above = curve.x2_tilde.values[(risk > curve.single_block_marginal_risk).values]
    assert 65 <= above.min() <= 75 and np.all(np.diff(above) == 1)
    assert np.all(curve.risk_error_bound < 1e-14)
    for x in (1, 37):
        one = pp.marginals(0.5, BLOCK_RHO, x2_tilde=x, **S6)
        row = curve.sel(x2_tilde=x)
        for name in ("marginal_posterior", "correct_decision_probability", "decision_error_bound"):
            assert row[name].item() == pytest.approx(float(getattr(one, name)), rel=1e-14)


def test_curve_over_rho_is_figure6_right():
    rhos = np.array([0.02, BLOCK_RHO, 0.5])
    priors = [0.5, 0.1]
    curve = pp.marginal_by_rho(rhos, prior=priors)
    assert curve.marginal_risk.dims == ("x2_tilde", "rho", "prior")
    assert list(curve.x2_tilde.values) == [1, 10, 100]
    assert curve.attrs["reference_rho"] == BLOCK_RHO
    for x in (1, 10, 100):
        for p in priors:
            expected = pp.marginal_risk(p, rhos, x2_tilde=x, **S6)
            np.testing.assert_allclose(
                curve.marginal_risk.sel(x2_tilde=x, prior=p), expected, rtol=1e-13
            )
    for p in priors:
        np.testing.assert_allclose(
            curve.unprocessed_marginal_risk.sel(prior=p),
            pp.unprocessed_marginal_risk(p, rhos, **S6),
            rtol=1e-13,
        )
        np.testing.assert_allclose(
            curve.single_block_marginal_risk.sel(prior=p), sb.marginal_risk(p, rhos), rtol=1e-13
        )
    assert np.all(curve.marginal_risk <= curve.unprocessed_marginal_risk + 1e-13)
    left = pp.marginal_by_x2_tilde([1, 10, 100], prior=priors)
    np.testing.assert_allclose(
        curve.marginal_risk.sel(rho=BLOCK_RHO), left.marginal_risk, rtol=1e-14
    )
    assert pp.marginal_by_rho().sizes == {"x2_tilde": 3, "rho": 41, "prior": 1}


def test_curves_refuse_bad_arguments():
    with pytest.raises(ValueError, match=r"^x2_tildes "):
        pp.marginal_by_x2_tilde([1, -2])
    with pytest.raises(ValueError, match=r"^rho "):
        pp.marginal_by_x2_tilde(rho=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"^rhos "):
        pp.marginal_by_rho([0.1, 0.0])
    with pytest.raises(ValueError, match=r"^prior "):
        pp.marginal_by_rho(prior=[[0.5]])
    with pytest.raises(ValueError, match=r"^rho: marginal_by_rho takes"):
        pp.marginal_by_rho(rho=0.1)
    with pytest.raises(ValueError, match=r"^mechanism: .*no mechanism"):
        pp.marginal_by_rho(mechanism=None)
