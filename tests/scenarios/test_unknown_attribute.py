"""The unknown-attribute attack (S1.2's third attack, K categories): closed form, brute force,
the single-block and two-level identities, simulation, enumeration and MCMC of the model."""

import dataclasses
import itertools

import numpy as np
import pytest

from adversary import inference
from adversary.measures.protocol import Attack
from adversary.model_files import load_case
from adversary.noise import discrete_gaussian, noise_variance
from adversary.scenarios import multi_level as ml
from adversary.scenarios import single_block as sb
from adversary.scenarios import unknown_attribute as ua
from adversary.scenarios.unknown_attribute import UnknownAttributeCase

RHO_BLOCK = 0.0992


# --- brute force ------------------------------------------------------------------------


def _bayes(releases, prior, rho, known, convention="paper", released=None):
    """Bayes' theorem written out: π_k Π_{released j} DG pmf(x_j* - m_j - 1[j = k]), normalised."""
    prior, known = np.asarray(prior, float), np.asarray(known)
    n = prior.size
    cells = np.arange(n) if released is None else np.asarray(released)
    sigma2 = np.broadcast_to(noise_variance(rho, convention), (n,))[cells]
    releases = np.asarray(releases)
    joint = []
    for k in range(n):
        counts = known + (np.arange(n) == k)
        likelihood = discrete_gaussian.pmf(releases - counts[cells], sigma2).prod(axis=-1)
        joint.append(prior[k] * likelihood)
    joint = np.stack(joint, axis=-1)
    return joint / joint.sum(axis=-1, keepdims=True)


def _credit(post, truth, rule):
    """(3.6)'s count per release: the rule's credit of the truth among the tied modes."""
    best = post.max(axis=-1, keepdims=True)
    tied = post >= best * (1 - 1e-9)
    first = np.argmax(tied, axis=-1)
    last = tied.shape[-1] - 1 - np.argmax(tied[..., ::-1], axis=-1)
    if rule == "split":
        return tied[:, truth] / tied.sum(axis=-1)
    return ((last if rule == "largest" else first) == truth).astype(float)


def _brute_marginals(
    prior, rho, truth, convention="paper", released=None, reach=None, tie_rule="split"
):
    """(3.3) and (3.6) by summing over every release vector in a box around the truth."""
    prior = np.asarray(prior, float)
    n = prior.size
    cells = np.arange(n) if released is None else np.asarray(released)
    sigma2 = np.broadcast_to(noise_variance(rho, convention), (n,))[cells]
    reaches = [
        int(discrete_gaussian.cutoff(s2, 1e-17)) if reach is None else reach for s2 in sigma2
    ]
    known = np.zeros(n, dtype=np.int64)
    counts = known + (np.arange(n) == truth)
    post_sum = correct_sum = 0.0
    grid = np.array(list(itertools.product(*[range(-r, r + 1) for r in reaches])))
    releases = grid + counts[cells]
    weight = discrete_gaussian.pmf(grid, sigma2).prod(axis=-1)
    post = _bayes(releases, prior, rho, known, convention, released)
    post_sum = float(weight @ post[:, truth])
    correct_sum = float(weight @ _credit(post, truth, tie_rule))
    return post_sum, correct_sum


# --- the posterior ------------------------------------------------------------------------

POSTERIOR_CASES = [
    # (prior, rho, known, released, convention)
    ([0.5, 0.3, 0.2], RHO_BLOCK, [5, 2, 0], None, "paper"),
    ([0.1, 0.2, 0.3, 0.4], [0.5, 0.05, 2.0, 0.25], [10, 0, 3, 1], None, "das"),
    ([0.25, 0.25, 0.25, 0.25], 0.2465, [0, 7, 1, 2], [0, 2, 3], "paper"),
    ([1 / 864, 1 - 1 / 864], RHO_BLOCK, [0, 44], [0], "paper"),
]


@pytest.mark.parametrize(("prior", "rho", "known", "released", "convention"), POSTERIOR_CASES)
def test_posterior_and_risk_are_bayes_theorem(prior, rho, known, released, convention):
    rng = np.random.default_rng(7)
    n_released = len(prior) if released is None else len(released)
    cells = np.arange(len(prior)) if released is None else np.asarray(released)
    releases = np.asarray(known)[cells] + rng.integers(-4, 6, size=(40, n_released))
    args = (releases, prior, rho, known, convention, released)
    exact = _bayes(*args)
    np.testing.assert_allclose(ua.posterior(*args), exact, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(ua.risk(*args), exact / np.asarray(prior), rtol=1e-12)
    np.testing.assert_allclose(ua.posterior(*args).sum(-1), 1.0, rtol=1e-14)
    # The decision is the posterior mode, a tie going to the first or last tied category.
    tied = exact >= exact.max(-1, keepdims=True) * (1 - 1e-9)
    first_mode = np.argmax(tied, axis=-1)
    last_mode = tied.shape[-1] - 1 - np.argmax(tied[..., ::-1], axis=-1)
    np.testing.assert_array_equal(ua.decision(*args, tie_rule="smallest"), first_mode)
    np.testing.assert_array_equal(ua.decision(*args, tie_rule="largest"), last_mode)
    untied = tied.sum(-1) == 1
    np.testing.assert_array_equal(ua.decision(*args, rng=0)[untied], first_mode[untied])


def test_posterior_is_the_closed_form_of_the_paper_convention():
    prior, rho, known = np.array([0.5, 0.3, 0.2]), 0.3, np.array([5, 2, 0])
    releases = np.array([[6, 2, 1], [5, 3, 0], [4, 4, 4]])
    target = np.eye(3, dtype=np.int64)
    log_w = np.log(prior) - rho * ((releases[:, None, :] - known - target[None, :, :]) ** 2).sum(-1)
    expected = np.exp(log_w - np.logaddexp.reduce(log_w, axis=-1, keepdims=True))
    np.testing.assert_allclose(ua.posterior(releases, prior, rho, known), expected, rtol=1e-12)
    # s_k = (2(x_k* - m_k) - 1)/(2σ²) = ρ(2(x_k* - m_k) - 1) in the paper's convention.
    assert ua.log_likelihood_ratios([6, 2, 1], rho, known).tolist() == pytest.approx(
        [rho, -rho, rho]
    )
    assert ua.log_likelihood_ratios([6], rho, known, released=[0]).tolist() == pytest.approx(
        [rho, 0.0, 0.0]
    )


def test_posterior_broadcasts_priors_and_releases():
    priors = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])
    releases = np.array([[1, 0], [0, 1]])[:, None, :]
    out = ua.posterior(releases, priors, 0.5, [0, 0])
    assert out.shape == (2, 3, 2)
    for i, j in itertools.product(range(2), range(3)):
        np.testing.assert_allclose(out[i, j], _bayes(releases[i, 0], priors[j], 0.5, [0, 0]))


def test_equal_scores_are_ties_decided_by_the_tie_rule():
    # Uniform prior, one ρ, every release the same distance from its known count.
    tied = {"tie_rule": "smallest"}
    assert ua.decision([3, 4, 5], [1 / 3] * 3, 0.1, [2, 3, 4], **tied) == 0
    assert ua.decision([3, 4, 5], [1 / 3] * 3, 0.1, [2, 3, 4], tie_rule="largest") == 2
    assert ua.decision([2, 5, 5], [1 / 3] * 3, 0.1, [2, 4, 4], **tied) == 1
    # A tie between the second and third only: a seeded draw picks one of them.
    draws = {int(ua.decision([1, 5, 5], [0.2, 0.4, 0.4], 0.1, [2, 4, 4], rng=s)) for s in range(50)}
    assert draws == {1, 2}
    with pytest.raises(ValueError, match=r"rng: the decision is tied between \[1, 2\]"):
        ua.decision([1, 5, 5], [0.2, 0.4, 0.4], 0.1, [2, 4, 4])


def test_release_pmf_is_the_product_of_the_cell_pmfs():
    releases, rho, known = np.array([6, 2, 1]), [0.1, 0.2, 0.3], np.array([5, 2, 0])
    for c in range(3):
        counts = known + (np.arange(3) == c)
        expected = np.prod(discrete_gaussian.pmf(releases - counts, noise_variance(rho)))
        assert ua.release_pmf(releases, rho, known, c) == pytest.approx(expected, rel=1e-14)
    assert ua.release_pmf([1], rho, known, 0, released=[2]) == pytest.approx(
        float(discrete_gaussian.pmf(1, noise_variance(0.3)))
    )


# --- K = 2: the single-block attack and the two-level attack ------------------------------


@pytest.mark.parametrize("convention", ["paper", "das"])
@pytest.mark.parametrize("p", [1 / 2, 1 / 5, 1 / 10, 1 / 50, 1 / 864, 0.93])
def test_k2_with_one_cell_released_is_the_single_block_attack(p, convention):
    """S1.2: "replace p with p_v" — category 0 is "has c", its cell the released one."""
    prior, known = [p, 1 - p], [3, 8]
    releases = np.arange(-6, 12)[:, None]
    np.testing.assert_allclose(
        ua.posterior(releases, prior, RHO_BLOCK, known, convention, released=[0])[:, 0],
        sb.posterior(releases[:, 0], p, RHO_BLOCK, 3, convention=convention),
        rtol=1e-13,
    )
    # Category 0 is m + 1: the unknown attribute's "smallest" is the single block's "largest".
    np.testing.assert_array_equal(
        ua.decision(
            releases, prior, RHO_BLOCK, known, convention, released=[0], tie_rule="smallest"
        )
        == 0,
        sb.decision(releases[:, 0], p, RHO_BLOCK, 3, convention, tie_rule="largest") == 4,
    )
    for truth, true_count in ((0, 4), (1, 3)):
        args = (p, RHO_BLOCK, 3, true_count, convention)
        for ua_rule, sb_rule in (("split", "split"), ("smallest", "largest")):
            got = ua.marginals(prior, RHO_BLOCK, truth, convention, released=[0], tie_rule=ua_rule)
            assert got.marginal_posterior == pytest.approx(sb.marginal_posterior(*args), abs=1e-15)
            assert got.marginal_risk == pytest.approx(sb.marginal_risk(*args), rel=1e-13)
            assert got.correct_decision_probability == pytest.approx(
                sb.correct_decision_probability(*args, tie_rule=sb_rule), abs=1e-15
            )


def test_k2_case_with_one_cell_released_has_the_single_block_measures():
    ethnicity = load_case("unknown_ethnicity")
    one_cell = dataclasses.replace(ethnicity, released=("not Hispanic",), observed_releases=(1,))
    dare = load_case("dare_county")
    assert list(one_cell.priors) == list(dare.priors)
    for label in dare.priors:
        got, expected = one_cell.marginal_measures(label), dare.marginal_measures(label)
        assert got.prior_of_truth == pytest.approx(expected.prior_of_truth, rel=1e-15)
        for name in ("marginal_posterior", "correct_decision_probability"):
            assert getattr(got, name) == pytest.approx(getattr(expected, name), abs=1e-15)
        assert got.marginal_risk == pytest.approx(expected.marginal_risk, rel=1e-13)


@pytest.mark.parametrize("truth", [0, 1])
def test_k2_with_both_cells_released_is_the_two_level_attack(truth):
    """The log likelihood ratio of the two categories is a sum of two single-block ratios."""
    rhos = (RHO_BLOCK, 0.2465)
    for p in (1 / 2, 1 / 10, 1 / 864):
        got = ua.marginals([p, 1 - p], rhos, truth)
        p_truth = p if truth == 0 else 1 - p
        # Category 0 plays "has c" (ties go to it); the truth 1 is "lacks c".
        expected = ml.marginals(p, rhos, true_count=1 if truth == 0 else 0)
        assert got.marginal_posterior == pytest.approx(
            float(expected.marginal_posterior), abs=1e-14
        )
        assert got.marginal_risk == pytest.approx(got.marginal_posterior / p_truth)
        assert got.correct_decision_probability == pytest.approx(
            float(expected.correct_decision_probability), abs=1e-14
        )


# --- the marginal measures --------------------------------------------------------------

MARGINAL_CASES = [
    # (prior, rho, released, convention): small cut-offs, so brute force is quick
    ([0.5, 0.3, 0.2], [0.6, 0.9, 1.5], None, "paper"),
    ([1 / 3, 1 / 3, 1 / 3], 1.0, None, "paper"),  # ties with positive probability
    ([0.05, 0.15, 0.8], 0.8, None, "das"),
    ([0.1, 0.2, 0.3, 0.4], [2.0, 1.0, 3.0, 1.5], [0, 1, 3], "paper"),
    ([0.25, 0.25, 0.25, 0.25], 2.0, None, "paper"),
]


@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize(("prior", "rho", "released", "convention"), MARGINAL_CASES)
def test_marginals_equal_brute_force_sums_over_every_release(
    prior, rho, released, convention, tie_rule
):
    for truth in range(len(prior)):
        got = ua.marginals(prior, rho, truth, convention, released, tie_rule=tie_rule)
        post, correct = _brute_marginals(prior, rho, truth, convention, released, tie_rule=tie_rule)
        assert abs(got.marginal_posterior - post) <= got.posterior_error_bound + 1e-13
        assert abs(got.correct_decision_probability - correct) <= (got.decision_error_bound + 1e-13)
        assert got.marginal_risk == pytest.approx(got.marginal_posterior / prior[truth])
        assert got.omitted_mass <= 1e-15
        grid = ua.marginals(prior, rho, truth, convention, released, method="grid")
        assert abs(grid.marginal_posterior - post) <= grid.posterior_error_bound + 1e-13


@pytest.mark.parametrize("grid_width", [1e-4, 0.02])
def test_grid_method_is_within_its_bound_of_enumeration(grid_width):
    cases = [([0.1, 0.2, 0.3, 0.4], [0.3, 0.1, 0.5, 0.2]), ([0.6, 0.2, 0.1, 0.1], RHO_BLOCK)]
    for prior, rho in cases:
        for truth in range(4):
            exact = ua.marginals(prior, rho, truth, method="enumeration")
            grid = ua.marginals(prior, rho, truth, method="grid", grid_width=grid_width)
            assert exact.method == "enumeration" and grid.method == "grid"
            assert grid.grid_width == grid_width
            difference = abs(grid.marginal_posterior - exact.marginal_posterior)
            assert difference <= grid.posterior_error_bound
            # Three other cells: the first is kept exactly, two are split.
            bound = 2 * ua.GRID_CURVATURE_BOUND * grid_width**2 / 8 + grid.omitted_mass
            assert grid.posterior_error_bound <= bound
            assert grid.correct_decision_probability == exact.correct_decision_probability


def test_marginals_agree_with_simulated_releases_within_4_se():
    """K = 6 (the grid method): average the exact posterior over simulated releases."""
    prior = np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    rho, known, truth = 0.2465, np.array([4, 0, 2, 1, 0, 3]), 3
    got = ua.marginals(prior, rho, truth)
    assert got.method == "grid"
    n = 20_000
    rng = np.random.default_rng(2023)
    noise = discrete_gaussian.sample(noise_variance(rho), size=(n, 6), rng=rng)
    releases = known + (np.arange(6) == truth) + noise
    post = ua.posterior(releases, prior, rho, known)[:, truth]
    correct = ua.decision(releases, prior, rho, known, rng=1) == truth
    se_post = post.std(ddof=1) / np.sqrt(n)
    q = got.correct_decision_probability
    assert abs(post.mean() - got.marginal_posterior) <= 4 * se_post
    assert abs(correct.mean() - q) <= 4 * np.sqrt(q * (1 - q) / n)


def test_marginals_do_not_depend_on_the_known_counts_and_reject_bad_options():
    case = load_case("unknown_ethnicity")
    other = dataclasses.replace(case, known_counts=(7, 2))
    assert case.marginal_measures("1/10") == other.marginal_measures("1/10")
    with pytest.raises(ValueError, match="method"):
        ua.marginals([0.5, 0.5], 1.0, 0, method="mcmc")
    with pytest.raises(ValueError, match="grid_width"):
        ua.marginals([0.5, 0.5], 1.0, 0, grid_width=0)
    with pytest.raises(ValueError, match="tail_mass"):
        ua.marginals([0.5, 0.5], 1.0, 0, tail_mass=2.0)


# --- the PyMC model ---------------------------------------------------------------------

MODEL_CASES = {
    "K3": ([5, 2, 0], [0.5, 0.3, 0.2], [6, 2, 1], RHO_BLOCK, None, "paper"),
    "K4-subset-das": (
        [0, 7, 1, 2],
        [0.05, 0.05, 0.45, 0.45],
        [1, 1, 2],
        [0.5, 2, 1, 3],
        [0, 2, 3],
        "das",
    ),
    "K2-ethnicity": ([0, 0], [1 / 10, 9 / 10], [1, 0], RHO_BLOCK, None, "paper"),
}


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_enumerating_the_model_gives_the_exact_posterior(name):
    known, prior, releases, rho, released, convention = MODEL_CASES[name]
    attack = ua.model(releases, prior, rho, known, convention, released)
    table = inference.enumerate_posterior(attack)
    exact = ua.posterior(releases, prior, rho, known, convention, released)
    assert table.joint.dims == ("C",)
    np.testing.assert_allclose(table.joint.values, exact, rtol=1e-12, atol=1e-300)
    assert table.omitted_mass == 0.0


def test_mcmc_agrees_with_the_exact_posterior_within_4_mcse(assert_within_mcse):
    known, prior, releases, rho, released, convention = MODEL_CASES["K3"]
    attack = ua.model(releases, prior, rho, known, convention, released)
    tree = inference.sample(attack, draws=1500, chains=2, cores=1, random_seed=5, progressbar=False)
    exact = ua.posterior(releases, prior, rho, known, convention, released)
    for category, probability in enumerate(exact):
        assert_within_mcse(tree, {"C": category}, probability)


# --- the case and the shipped model file ------------------------------------------------


def _case(**changes):
    fields = {
        "name": "race",
        "categories": ("White", "Black", "Asian"),
        "known_counts": (30, 2, 0),
        "priors": {
            "even": (1 / 3, 1 / 3, 1 / 3),
            "census": {"White": 0.8, "Black": 0.15, "Asian": 0.05},
        },
        "true_category": "Asian",
        "rho": RHO_BLOCK,
        "observed_releases": (31, 1, 2),
    }
    return UnknownAttributeCase(**(fields | changes))


def test_case_is_a_risk_case_whose_measures_are_the_marginals():
    case = _case()
    assert isinstance(case, Attack)
    assert case.priors["census"] == (0.8, 0.15, 0.05)  # stored in category order
    assert case.true_index == 2 and case.released_indices == (0, 1, 2)
    measures = case.marginal_measures("census")
    direct = ua.marginals([0.8, 0.15, 0.05], RHO_BLOCK, 2)
    assert measures.marginal_posterior == direct.marginal_posterior
    assert measures.marginal_risk == direct.marginal_risk
    assert measures.correct_decision_probability == direct.correct_decision_probability
    assert measures.prior_of_truth == 0.05
    assert measures.error_bound == max(direct.posterior_error_bound, direct.decision_error_bound)
    assert measures.details["marginal_method"] == "enumeration"
    posterior = case.posterior("census")
    assert posterior.dims == ("category",)
    np.testing.assert_allclose(
        posterior.values, _bayes([31, 1, 2], [0.8, 0.15, 0.05], RHO_BLOCK, [30, 2, 0])
    )
    assert case.decision("census") == case.categories[int(np.argmax(posterior.values))]
    table = inference.enumerate_posterior(case.model("even"))
    np.testing.assert_allclose(table.joint.values, case.posterior("even").values, rtol=1e-12)
    # A sweep replaces the field.
    assert dataclasses.replace(case, rho=1.0).marginal_measures("census").marginal_risk > (
        measures.marginal_risk
    )


def test_case_normalises_names_indices_and_a_per_cell_rho():
    case = _case(
        true_category=1, released=(0, "Asian"), observed_releases=(31, 2), rho=(0.1, 0.2, 0.3)
    )
    assert case.true_category == "Black" and case.released == ("White", "Asian")
    assert case.rho == (0.1, 0.2, 0.3)
    np.testing.assert_allclose(
        case.posterior("even").values,
        _bayes([31, 2], [1 / 3] * 3, [0.1, 0.2, 0.3], [30, 2, 0], released=[0, 2]),
    )
    assert dataclasses.replace(case, observed_releases=None).marginal_measures().marginal_risk > 1
    with pytest.raises(ValueError, match="observed_releases"):
        dataclasses.replace(case, observed_releases=None).model()


def test_shipped_ethnicity_model_file_is_the_two_level_attack():
    case = load_case("unknown_ethnicity")
    assert case.categories == ("not Hispanic", "Hispanic") and case.true_category == "not Hispanic"
    for label, prior in case.priors.items():
        expected = ml.marginals(prior[0], (case.rho, case.rho))
        got = case.marginal_measures(label)
        tolerance = float(expected.risk_error_bound) + got.details["risk_error_bound"]
        assert abs(got.marginal_risk - float(expected.marginal_risk)) <= tolerance
    # Dare County numbers worth recording: two cells double the information of one.
    one_cell = dataclasses.replace(case, released=("not Hispanic",), observed_releases=None)
    assert (
        case.marginal_measures("1/864").marginal_risk
        > one_cell.marginal_measures("1/864").marginal_risk
    )


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: ua.posterior([1, 0], [0.5, 0.6], 1.0, [0, 0]), "prior"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5, 0.0], 1.0, [0, 0, 0]), "prior"),
        (lambda: ua.posterior([1, 0], [1.0], 1.0, [0]), "prior"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5], 1.0, [0, 0, 0]), "known_counts"),
        (lambda: ua.posterior([1, 0, 2], [0.5, 0.5], 1.0, [0, 0]), "releases"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5], [1.0, 2.0, 3.0], [0, 0]), "rho"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5], -1.0, [0, 0]), "rho"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5], 1.0, [0, -1]), "known_counts"),
        (lambda: ua.posterior([1], [0.5, 0.5], 1.0, [0, 0], released=[2]), "released"),
        (lambda: ua.posterior([1.5, 0], [0.5, 0.5], 1.0, [0, 0]), "releases"),
        (lambda: ua.marginals([0.5, 0.5], 1.0, 2), "true_category"),
        (lambda: ua.marginals([0.5, 0.5], 1.0, -1), "true_category"),
        (lambda: ua.release_pmf([1, 0], 1.0, [0, 0], 5), "true_category"),
        (lambda: ua.posterior([1, 0], [0.5, 0.5], 1.0, [0, 0], convention="x"), "convention"),
        (lambda: _case(priors={"bad": (0.5, 0.3, 0.3)}), "priors"),
        (lambda: _case(priors={"bad": (0.5, 0.5)}), "priors"),
        (lambda: _case(priors={"bad": {"White": 0.5, "Black": 0.5}}), "priors"),
        (lambda: _case(known_counts=(1, 2)), "known_counts"),
        (lambda: _case(known_counts=(1, -2, 0)), "known_counts"),
        (lambda: _case(true_category="Hispanic"), "true_category"),
        (lambda: _case(true_category=3), "true_category"),
        (lambda: _case(rho=(0.1, 0.2)), "rho"),
        (lambda: _case(observed_releases=(1, 2)), "observed_releases"),
        (lambda: _case(released=("Asian", "White"), observed_releases=(1, 2)), "released"),
        (lambda: _case(categories=("a", "a", "b")), "categories"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- ties ----------------------------------------------------------------------------------


def test_split_ties_do_not_depend_on_the_order_of_the_categories():
    """Relabelling the categories moves the truth's position: only "split" is invariant."""
    prior, rho = [0.25, 0.5, 0.25], 1.0
    for rule, invariant in (("split", True), ("smallest", False), ("largest", False)):
        first = ua.marginals(prior, rho, 0, tie_rule=rule).correct_decision_probability
        last = ua.marginals(prior[::-1], rho, 2, tie_rule=rule).correct_decision_probability
        assert (first == pytest.approx(last, abs=1e-15)) is invariant, rule


def test_three_categories_under_a_uniform_prior_tie_on_a_sixth_of_the_releases():
    """The example of the concepts page: 17% of the release mass tied at the 2020 block ρ."""
    values = {
        rule: ua.marginals([1 / 3] * 3, RHO_BLOCK, 0, tie_rule=rule).correct_decision_probability
        for rule in ("smallest", "split", "largest")
    }
    for rule, value in values.items():
        _, brute = _brute_marginals([1 / 3] * 3, RHO_BLOCK, 0, reach=25, tie_rule=rule)
        assert value == pytest.approx(brute, abs=1e-12), rule
    # the numbers the concepts page quotes
    assert [round(values[r], 3) for r in ("smallest", "largest", "split")] == [0.536, 0.399, 0.465]
