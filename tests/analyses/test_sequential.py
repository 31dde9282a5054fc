"""Sequential releases (Kazan & Reiter supplement S5): Bayes, order, brute force, S1.3 identity."""

import itertools

import numpy as np
import pytest

from adversary.analyses import sequential as sq
from adversary.noise import discrete_gaussian, noise_variance
from adversary.scenarios import multi_level as ml
from adversary.scenarios import single_block as sb

BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097


def _one_shot(releases, p, rhos, conventions, known, has_c):
    """Bayes' theorem on all releases at once: P[X1 = x1 | x*_11..x*_1j] for every j."""
    releases = np.asarray(releases)
    sigma2 = np.array([noise_variance(r, c) for r, c in zip(rhos, conventions, strict=True)])
    with_c = np.log(p) + np.cumsum(discrete_gaussian.logpmf(releases - known - 1, sigma2), -1)
    without_c = np.log1p(-p) + np.cumsum(discrete_gaussian.logpmf(releases - known, sigma2), -1)
    of_truth = with_c if has_c else without_c
    return np.exp(of_truth - np.logaddexp(with_c, without_c))


CASES = [  # (releases, p, rhos, conventions, m, truth)
    ([2, 0, 1], 1 / 2, [BLOCK_RHO] * 3, ["paper"] * 3, 0, 1),
    ([1, 3, -2, 0, 2], 1 / 50, [0.1, 0.25, 0.05, 0.05, 0.5], ["paper", "das"] * 2 + ["das"], 0, 1),
    ([5, 4, 7, 6], 1 / 5, [0.3, 0.3, 1.0, 0.02], ["das"] * 4, 4, 4),
    ([0, -1], 1 / 864, [BLOCK_RHO, 2.0], ["paper", "paper"], 0, 0),
]


@pytest.mark.parametrize(("releases", "p", "rhos", "conventions", "known", "truth"), CASES)
def test_product_of_conditional_risks_is_the_one_shot_posterior_over_its_prior(
    releases, p, rhos, conventions, known, truth
):
    has_c = truth == known + 1
    result = sq.sequential_risk(releases, p, rhos, known, truth, conventions)
    prior_of_truth = p if has_c else 1 - p
    bayes = _one_shot(releases, p, rhos, conventions, known, has_c)
    np.testing.assert_allclose(result.posteriors, bayes, rtol=1e-12)
    assert result.prior_of_truth == pytest.approx(prior_of_truth, rel=1e-15)
    # (S5.8): the total risk after j releases is the product of the first j conditional risks
    np.testing.assert_allclose(result.total_risks, np.cumprod(result.conditional_risks), rtol=1e-12)
    # (S5.5): … and the one-shot posterior over the original prior.
    np.testing.assert_allclose(result.total_risks, bayes / prior_of_truth, rtol=1e-12)
    assert result.total_risk == pytest.approx(bayes[-1] / prior_of_truth, rel=1e-12)
    assert result.posterior == pytest.approx(bayes[-1], rel=1e-12)
    # (S5.2): each conditional risk is the new posterior over the updated prior.
    np.testing.assert_allclose(result.updated_priors[1:], bayes[:-1], rtol=1e-12)
    assert result.updated_priors[0] == pytest.approx(prior_of_truth, rel=1e-15)
    np.testing.assert_allclose(
        result.conditional_risks, result.posteriors / result.updated_priors, rtol=1e-12
    )


@pytest.mark.parametrize(("releases", "p", "rhos", "conventions", "known", "truth"), CASES)
def test_the_posterior_is_the_prior_of_the_next_release(
    releases, p, rhos, conventions, known, truth
):
    """(S5.4) as printed, one release at a time, against the carried log odds."""
    result = sq.sequential_risk(releases, p, rhos, known, truth, conventions)
    prior_c = p  # P[X1 = m + 1 | earlier releases]
    for j, (release, rho, convention) in enumerate(zip(releases, rhos, conventions, strict=True)):
        sigma2 = noise_variance(rho, convention)
        like_c = discrete_gaussian.pmf(release - known - 1, sigma2)
        like = discrete_gaussian.pmf(release - known, sigma2)
        s54 = like_c * prior_c / (like_c * prior_c + like * (1 - prior_c))
        assert sq.updated_prior(release, prior_c, rho, known, convention) == pytest.approx(
            s54, rel=1e-12
        )
        expected = s54 if truth == known + 1 else 1 - s54
        assert result.posteriors[j] == pytest.approx(expected, rel=1e-12)
        # The conditional risk is the single-block risk (3.2) under the updated prior.
        risk = sb.risk(release, prior_c, rho, known, truth, convention)
        assert result.conditional_risks[j] == pytest.approx(risk, rel=1e-12)
        prior_c = s54


def test_order_of_the_releases_does_not_change_the_total_risk():
    releases = np.array([3, -1, 0, 2])
    rhos = np.array([0.1, 0.4, BLOCK_RHO, 0.05])
    conventions = np.array(["paper", "das", "paper", "das"])
    reference = sq.sequential_risk(releases, 0.1, rhos, convention=list(conventions))
    conditionals = set()
    for order in itertools.permutations(range(4)):
        order = list(order)
        permuted = sq.sequential_risk(
            releases[order], 0.1, rhos[order], convention=list(conventions[order])
        )
        assert permuted.total_risk == pytest.approx(reference.total_risk, rel=1e-12)
        conditionals.add(round(float(permuted.conditional_risks[0]), 12))
    assert len(conditionals) == 4  # the first conditional risk depends on which comes first


def test_vectorised_over_cases_and_priors():
    rng = np.random.default_rng(5)
    releases = rng.integers(-3, 6, size=(7, 1, 3))
    priors = np.array([0.5, 0.1, 1 / 864])
    rhos = np.array([0.1, 0.2, 0.3])
    result = sq.sequential_risk(releases, priors, rhos)
    assert result.total_risks.shape == (7, 3, 3)
    for i, k in itertools.product(range(7), range(3)):
        one = sq.sequential_risk(releases[i, 0], float(priors[k]), rhos)
        np.testing.assert_allclose(result.total_risks[i, k], one.total_risks, rtol=1e-14)
    assert sq.sequential_risk([1, 2], 0.3, 0.2).total_risks.shape == (2,)  # one ρ for all


def test_many_informative_releases_stay_finite():
    """100 releases at ρ = 2: the posterior of the truth is 1 in floating point, 0 for the other."""
    result = sq.sequential_risk(np.ones(100, dtype=int), 1 / 864, 2.0)
    assert result.total_risk == pytest.approx(864.0, rel=1e-12)
    assert np.all(np.isfinite(result.conditional_risks))
    lacks = sq.sequential_risk(np.ones(100, dtype=int), 1 / 864, 2.0, true_count=0)
    assert lacks.total_risk < 1e-80 and np.all(np.isfinite(np.log(lacks.conditional_risks)))


def test_one_release_is_the_single_block_attack():
    releases = np.arange(-3, 6)[:, None]
    for p, truth in ((0.5, 1), (1 / 50, 1), (0.2, 0)):
        result = sq.sequential_risk(releases, p, BLOCK_RHO, true_count=truth)
        np.testing.assert_allclose(
            result.total_risk, sb.risk(releases[:, 0], p, BLOCK_RHO, true_count=truth), rtol=1e-13
        )


# --- m releases are the ℓ-level attack with equal known counts ----------------------------


def test_m_releases_of_one_count_are_the_l_level_attack():
    """x*_1j = m + T + Z_j: the posterior is (S1.1) with m_i = m at every level."""
    rng = np.random.default_rng(11)
    rhos = np.array([0.1, 0.3, 0.05, 0.2])
    known = 3
    releases = known + rng.integers(-4, 6, size=(25, 4))
    for p, truth in ((0.2, 4), (0.2, 3)):
        result = sq.sequential_risk(releases, p, rhos, known, truth)
        levels = ml.posterior(releases, p, rhos, [known] * 4, truth)
        np.testing.assert_allclose(result.posterior, levels, rtol=1e-12)
        exact = sq.marginals(p, rhos, known, truth)
        by_levels = ml.marginals(p, rhos, [known] * 4, truth)
        for name in ("marginal_posterior", "marginal_risk", "correct_decision_probability"):
            assert getattr(exact, name) == getattr(by_levels, name)


def _brute_force_marginals(p, rhos, conventions, has_c, tie_rule):
    """Sum over the joint grid of the m noises of the posterior and the decision's credit."""
    sigma2 = [float(noise_variance(r, c)) for r, c in zip(rhos, conventions, strict=True)]
    grids = [
        np.arange(
            -int(discrete_gaussian.cutoff(s, 1e-17)), 1 + int(discrete_gaussian.cutoff(s, 1e-17))
        )
        for s in sigma2
    ]
    noise = np.stack(np.meshgrid(*grids, indexing="ij"), axis=-1).reshape(-1, len(rhos))
    weight = np.prod([discrete_gaussian.pmf(noise[:, j], s) for j, s in enumerate(sigma2)], 0)
    truth = 1 if has_c else 0
    releases = truth + noise
    result = sq.sequential_risk(releases, p, rhos, 0, truth, conventions)
    posterior = np.sum(weight * result.posterior)
    # The decision from all releases. With one ρ and p = 1/2 the log odds are
    # ρ Σ(2x*_j - 1): decide in integers, a tie (0) counted by the rule.
    a = sq.paper_rhos(rhos, conventions)
    if p == 0.5 and np.all(a == a[0]):
        statistic = np.sum(2 * releases - 1, axis=-1)
        tie = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
        decides_c = np.where(statistic == 0, tie, (statistic > 0).astype(float))
    else:
        decides_c = ml.decision(releases, p, a, rng=0)  # no ties here
    right = np.sum(weight * (decides_c if truth == 1 else 1 - decides_c))
    return posterior, right


@pytest.mark.parametrize(
    ("p", "rhos", "conventions", "has_c"),
    [
        (0.5, [BLOCK_RHO] * 3, ["paper"] * 3, True),  # equal ρ: exact ties at p = 1/2
        (0.5, [0.3, 0.3], ["paper", "paper"], False),
        (0.5, [0.3] * 4, ["paper"] * 4, True),
        (0.1, [0.2, 0.4, 0.1], ["das", "paper", "das"], True),
        (1 / 864, [0.5, 0.25], ["paper", "paper"], True),
    ],
)
@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
def test_marginals_against_a_brute_force_sum_over_all_releases(
    p, rhos, conventions, has_c, tie_rule
):
    posterior, right = _brute_force_marginals(p, rhos, conventions, has_c, tie_rule)
    exact = sq.marginals(p, rhos, 0, 1 if has_c else 0, conventions, tie_rule=tie_rule)
    prior_of_truth = p if has_c else 1 - p
    assert abs(float(exact.marginal_posterior) - posterior) <= exact.posterior_error_bound + 1e-14
    assert float(exact.marginal_risk) == pytest.approx(posterior / prior_of_truth, rel=1e-9)
    assert abs(float(exact.correct_decision_probability) - right) <= (
        exact.decision_error_bound + 1e-14
    )


def test_marginal_by_releases_is_every_prefix():
    rhos = [BLOCK_RHO, 0.2, 0.05]
    conventions = ["paper", "das", "paper"]
    priors = [0.5, 1 / 50]
    curve = sq.marginal_by_releases(priors, rhos, convention=conventions)
    assert curve.marginal_risk.dims == ("releases", "prior")
    np.testing.assert_array_equal(curve.rho, rhos)
    np.testing.assert_allclose(curve.paper_rho, [BLOCK_RHO, 0.1, 0.05], rtol=1e-15)
    assert list(curve.convention.values) == conventions
    for n in (1, 2, 3):
        exact = sq.marginals(priors, rhos[:n], convention=conventions[:n])
        np.testing.assert_allclose(
            curve.marginal_risk.sel(releases=n), exact.marginal_risk, rtol=1e-13
        )
        np.testing.assert_allclose(
            curve.correct_decision_probability.sel(releases=n),
            exact.correct_decision_probability,
            rtol=1e-13,
        )
    # Risk grows with every release; the first release is the single-block attack.
    assert np.all(np.diff(curve.marginal_risk, axis=0) > 0)
    np.testing.assert_allclose(
        curve.marginal_risk.sel(releases=1),
        sb.marginal_risk(np.array(priors), BLOCK_RHO),
        rtol=1e-9,
    )


def test_a_das_release_is_a_paper_release_at_half_the_rho():
    np.testing.assert_allclose(sq.paper_rhos([0.2, 0.2], ["das", "paper"]), [0.1, 0.2])
    a = sq.sequential_risk([2, 1], 0.3, [0.2, 0.4], convention="das")
    b = sq.sequential_risk([2, 1], 0.3, [0.1, 0.2], convention="paper")
    np.testing.assert_allclose(a.total_risks, b.total_risks, rtol=1e-14)


def test_updated_case_carries_the_posterior_into_the_next_release():
    from adversary.scenarios.single_block import SingleBlockCase

    case = SingleBlockCase(name="t", rho=BLOCK_RHO, priors={"1/2": 0.5, "1/50": 1 / 50})
    after = sq.updated_case(case, 3, rho=0.2)
    assert after.rho == 0.2 and after.name == case.name
    for label, p in case.priors.items():
        assert after.priors[label] == pytest.approx(sb.posterior(3, p, BLOCK_RHO), rel=1e-15)
        two = sq.sequential_risk([3, 1], p, [BLOCK_RHO, 0.2])
        assert sb.risk(1, after.priors[label], 0.2) == pytest.approx(
            two.conditional_risks[1], rel=1e-12
        )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: sq.sequential_risk([1, 2], 0.0, [0.1, 0.2]), "prior"),
        (lambda: sq.sequential_risk([1, 2.5], 0.5, [0.1, 0.2]), "releases"),
        (lambda: sq.sequential_risk([], 0.5, 0.1), "releases"),
        (lambda: sq.sequential_risk([1, 2], 0.5, [0.1, 0.2, 0.3]), "rhos"),
        (lambda: sq.sequential_risk([1, 2], 0.5, [0.1, -0.2]), "rhos"),
        (lambda: sq.sequential_risk([1, 2], 0.5, 0.1, known_count=-1), "known_count"),
        (lambda: sq.sequential_risk([1, 2], 0.5, 0.1, true_count=2), "true_count"),
        (lambda: sq.sequential_risk([1, 2], 0.5, [0.1, 0.2], convention=["das"]), "convention"),
        (lambda: sq.sequential_risk([1, 2], 0.5, 0.1, convention="other"), "convention"),
        (lambda: sq.marginals(1.5, [0.1, 0.2]), "prior"),
        (lambda: sq.marginal_by_releases(0.5, [[0.1, 0.2]]), "rhos"),
    ],
)
def test_bad_arguments_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
