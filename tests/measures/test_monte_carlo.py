"""Monte Carlo marginal measures of any PyMC attack model against exact answers.

``monte_carlo_measures`` simulates release sets from a model with its latents at
the truth, infers each (exact enumeration or MCMC) and averages. Here its
estimates of the marginal posterior (3.3), marginal risk (3.4) and correct-
decision probability (3.6) must lie within four of its own reported standard
errors of the exact values: the scenarios' release-grid sums
(``case.marginal_measures()``) for the Dare County single block and the
Granville County block group, and, for a user-written K-cell attack, a
brute-force sum over every release vector computed here. Seeds are fixed.
"""

import math

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary import inference
from adversary.distributions import BernoulliCount, DiscreteGaussian, FinitePmf
from adversary.measures.monte_carlo import monte_carlo_measures
from adversary.measures.release_posteriors import ReleasePosteriors, release_posteriors
from adversary.measures.simulation import simulate_releases
from adversary.model_files import load_case
from adversary.noise import discrete_gaussian
from adversary.scenarios import block_group
from adversary.scenarios import single_block as sb
from adversary.scenarios.block_group.case import BlockGroupCase
from adversary.scenarios.block_group.prior import conditional_pmf, point_mass

N_SE = 4.0
MEASURES = ("marginal_posterior", "marginal_risk", "correct_decision_probability")


def assert_agrees(mc, exact, *, max_se=0.05):
    """Every measure within 4 reported SEs (+ the exact value's bound) of ``exact``."""
    se = mc.details["standard_errors"]
    assert mc.method == "monte-carlo"
    assert mc.prior_of_truth == pytest.approx(exact.prior_of_truth, rel=1e-12)
    for name in MEASURES:
        estimate, reference = getattr(mc, name), getattr(exact, name)
        assert 0 < se[name] < max_se * (1 if name != "marginal_risk" else 1 / mc.prior_of_truth)
        assert abs(estimate - reference) <= N_SE * se[name] + exact.error_bound, (
            name,
            estimate,
            reference,
            se[name],
        )


@pytest.fixture(scope="module")
def dare():
    return load_case("dare_county")


@pytest.fixture(scope="module")
def granville():
    return load_case("granville_county")


# --- the scenarios' exact sums ----------------------------------------------------------


@pytest.mark.parametrize(("label", "seed"), [("1/2", 1), ("1/10", 2), ("1/864", 3)])
def test_single_block_exact_inference(dare, label, seed):
    mc = monte_carlo_measures(
        dare.model(label), {"X1": dare.truth}, releases=20_000, random_seed=seed
    )
    assert_agrees(mc, dare.marginal_measures(label))
    assert mc.details["inference"] == "exact"
    assert mc.details["target"] == "X1"
    assert mc.error_bound == pytest.approx(
        N_SE * max(mc.details["standard_errors"][k] for k in MEASURES[::2]) + mc.omitted_mass
    )
    assert mc.details["event_posterior"].shape == (20_000,)
    assert mc.details["seconds_per_release"] < 0.01


def test_single_block_per_release_posteriors_are_3_1(dare):
    """Each simulated release's posterior is (3.1) at that release."""
    p = dare.priors["1/5"]
    mc = monte_carlo_measures(dare.model("1/5"), {"X1": 1}, releases=200, random_seed=4)
    releases = simulate_releases(dare.model("1/5"), {"X1": 1}, releases=200, random_seed=4)
    expected = sb.posterior(releases["x1_release"], p, dare.rho)
    np.testing.assert_allclose(mc.details["event_posterior"], expected, rtol=1e-12)
    decisions = sb.decision(releases["x1_release"], p, dare.rho)
    np.testing.assert_array_equal(mc.details["decision_credit"], decisions == 1)


def test_block_group_exact_inference(granville):
    truth = {"X1": granville.truth[0], "X2": granville.truth[1]}
    mc = monte_carlo_measures(granville.model(), truth, releases=20_000, random_seed=5)
    assert_agrees(mc, granville.marginal_measures())
    # X2 is unbounded above: an automatic window, with its omitted mass reported.
    low, high = mc.details["ranges"]["X2"]
    assert low == 0 and high > 10
    assert mc.omitted_mass < 1e-12


@pytest.mark.parametrize(
    "x2_prior", [conditional_pmf({0: 0.2, 1: 0.5, 2: 0.3}), point_mass(1)], ids=["pmf", "point"]
)
def test_block_group_potential_priors(granville, x2_prior):
    """X2 priors carried by latent-only Potentials (X2 >= X1, renormalising mass)."""
    case = BlockGroupCase(
        name="Granville, S4 prior",
        releases=granville.releases,
        truth=granville.truth,
        priors={"1/2": 0.5},
        rho1=granville.rho1,
        rho2=granville.rho2,
        d=granville.d,
        x2_prior=x2_prior,
    )
    truth = {"X1": case.truth[0], "X2": case.truth[1]}
    mc = monte_carlo_measures(case.model(), truth, releases=1000, random_seed=6)
    assert mc.details["prior"]["variables"] == ["X1", "X2"]  # coupled through the Potential
    assert_agrees(mc, case.marginal_measures())


def test_multi_level_exact_inference():
    """The target unique at six levels (S1.1): one vector of releases."""
    case = load_case("unique_many_levels")
    mc = monte_carlo_measures(case.model(), {"X1": 1}, releases=5000, random_seed=16)
    assert_agrees(mc, case.marginal_measures())


def test_mcmc_single_block(dare):
    mc = monte_carlo_measures(
        dare.model("1/2"),
        {"X1": 1},
        releases=40,
        method="mcmc",
        draws=200,
        tune=30,
        random_seed=7,
    )
    assert mc.details["inference"] == "mcmc"
    assert_agrees(mc, dare.marginal_measures("1/2"), max_se=0.1)


def test_mcmc_block_group(granville):
    mc = monte_carlo_measures(
        granville.model(),
        {"X1": 1, "X2": 1},
        releases=30,
        method="mcmc",
        draws=150,  # its two kernels stay on the Python VM on a cold cache (at 200 both compiled)
        tune=30,
        random_seed=8,
    )
    assert_agrees(mc, granville.marginal_measures(), max_se=0.12)


# --- compiled once: the same posteriors as enumerating each release -------------------------


def test_release_posteriors_equal_enumerate(granville):
    releases = {"x1_release": [2, 0, 5], "x2_release": [1, 3, 1], "y1_release": [-1, 5, -7]}
    releases = {k: np.asarray(v) for k, v in releases.items()}
    engine = ReleasePosteriors(granville.model())
    table = engine(releases, {"X1": 1}, "X2", centre={"X1": 1, "X2": 1})
    for r in range(3):
        rel = tuple(int(releases[k][r]) for k in ("x1_release", "x2_release", "y1_release"))
        exact = block_group.posterior(*rel, **granville._arguments(None))
        assert table["event_posterior"][r] == pytest.approx(float(exact.isel(X1=1).sum()), 1e-10)
        x2 = exact.sum("X1")
        ours = table["target_posterior"][r].sel(X2=x2["X2"].values)
        np.testing.assert_allclose(ours.values, x2.values, rtol=1e-8, atol=1e-14)
    assert table["omitted_mass"].max() < 1e-12


# --- a user-written attack: the target's cell among K, brute force --------------------------

KNOWN, PRIOR, RHO = [2, 0, 1], [0.5, 0.3, 0.2], 0.5  # σ² = 1/(2ρ) = 1


def cell_attack(releases=(0, 0, 0)):
    """Latent cell ``C`` of the target; released counts ``m + e_C + DG`` (observed)."""
    k = len(KNOWN)
    with pm.Model() as model:
        cell = FinitePmf("C", support=list(range(k)), probs=PRIOR)
        counts = pt.as_tensor_variable(np.asarray(KNOWN)) + pt.cast(
            pt.eq(pt.arange(k), cell), "int64"
        )
        DiscreteGaussian("releases", mu=counts, rho=RHO, observed=list(releases))
    return model


def brute_force(truth_cell: int, event_cells: set[int]):
    """Exact (3.3), (3.6) summed over every release vector within |z| <= 12 of the truth."""
    sigma2 = 1 / (2 * RHO)
    z = np.arange(-12, 13)
    pmf = discrete_gaussian.pmf(z, sigma2)
    grids = np.meshgrid(z, z, z, indexing="ij")
    noise = np.stack([g.reshape(-1) for g in grids], axis=-1)
    weight = np.prod(pmf[noise + 12], axis=-1)
    known = np.asarray(KNOWN)
    releases = known + np.eye(3, dtype=np.int64)[truth_cell] + noise
    increments = np.eye(3, dtype=np.int64)
    log_w = np.log(PRIOR) - ((releases[:, None, :] - known - increments) ** 2).sum(-1) / (
        2 * sigma2
    )
    post = np.exp(log_w - np.logaddexp.reduce(log_w, axis=1, keepdims=True))
    event = post[:, sorted(event_cells)].sum(axis=1)
    right = post.argmax(axis=1) == truth_cell
    return float(weight @ event), float(weight @ right), float(weight.sum())


@pytest.mark.parametrize("truth_cell", [0, 2])
def test_user_model_against_brute_force(truth_cell):
    posterior, decision, mass = brute_force(truth_cell, {truth_cell})
    assert mass == pytest.approx(1.0, abs=1e-12)
    mc = monte_carlo_measures(cell_attack(), {"C": truth_cell}, releases=20_000, random_seed=9)
    prior = PRIOR[truth_cell]
    assert mc.prior_of_truth == pytest.approx(prior, rel=1e-12)
    se = mc.details["standard_errors"]
    assert abs(mc.marginal_posterior - posterior) <= N_SE * se["marginal_posterior"]
    assert abs(mc.marginal_risk - posterior / prior) <= N_SE * se["marginal_risk"]
    assert abs(mc.correct_decision_probability - decision) <= (
        N_SE * se["correct_decision_probability"]
    )
    assert se["marginal_posterior"] < 0.01


def test_user_model_callable_event_and_mcmc():
    """An event on several cells as a callable; the MCMC path on the same model."""
    posterior, _, _ = brute_force(1, {1, 2})
    event = lambda v: v["C"] >= 1  # noqa: E731
    mc = monte_carlo_measures(cell_attack(), {"C": 1}, event, releases=2000, random_seed=10)
    assert mc.prior_of_truth == pytest.approx(0.5, rel=1e-12)
    assert (
        abs(mc.marginal_posterior - posterior)
        <= N_SE * mc.details["standard_errors"]["marginal_posterior"]
    )
    mcmc = monte_carlo_measures(
        cell_attack(), {"C": 1}, event, releases=30, method="mcmc", draws=200, tune=20,
        random_seed=11,
    )  # fmt: skip
    se = mcmc.details["standard_errors"]
    assert abs(mcmc.marginal_posterior - posterior) <= N_SE * se["marginal_posterior"]
    _, decision_1, _ = brute_force(1, {1})
    assert abs(mcmc.correct_decision_probability - decision_1) <= (
        N_SE * se["correct_decision_probability"]
    )


def test_vector_latent_elements_are_independent_single_blocks():
    """A vector of two single-block targets: target and event by element label."""
    known, p, rho = [0, 2], [0.3, 0.6], 0.25
    with pm.Model() as model:
        x = BernoulliCount("X", known=known, p=p)
        DiscreteGaussian("x_release", mu=x, rho=rho, observed=[0, 0])
    mc = monte_carlo_measures(model, {"X": [1, 2]}, target="X[1]", releases=2000, random_seed=12)
    assert mc.details["target"] == "X[1]"
    assert mc.prior_of_truth == pytest.approx(1 - p[1], rel=1e-12)
    args = (p[1], rho, known[1], 2)
    se = mc.details["standard_errors"]
    assert (
        abs(mc.marginal_posterior - float(sb.marginal_posterior(*args)))
        <= N_SE * se["marginal_posterior"]
    )
    exact_decision = float(sb.correct_decision_probability(*args))
    assert abs(mc.correct_decision_probability - exact_decision) <= (
        N_SE * se["correct_decision_probability"]
    )
    joint = monte_carlo_measures(
        model, {"X": [1, 2]}, {"X": [1, 2]}, target="X[0]", releases=10, random_seed=1
    )
    assert joint.prior_of_truth == pytest.approx(p[0] * (1 - p[1]), rel=1e-12)


# --- reproducibility and arguments --------------------------------------------------------


def test_same_seed_same_numbers(dare):
    a = monte_carlo_measures(dare.model(), {"X1": 1}, releases=50, random_seed=13)
    b = monte_carlo_measures(dare.model(), {"X1": 1}, releases=50, random_seed=13)
    c = monte_carlo_measures(dare.model(), {"X1": 1}, releases=50, random_seed=14)
    assert a.as_dict() == b.as_dict()
    np.testing.assert_array_equal(a.details["event_posterior"], b.details["event_posterior"])
    assert a.marginal_posterior != c.marginal_posterior


def test_one_release_has_infinite_standard_error(dare):
    mc = monte_carlo_measures(dare.model(), {"X1": 1}, releases=1, random_seed=0)
    assert math.isinf(mc.error_bound)


def test_prior_of_truth_given(dare):
    mc = monte_carlo_measures(
        dare.model("1/2"), {"X1": 1}, releases=10, random_seed=0, prior_of_truth=0.25
    )
    assert mc.marginal_risk == pytest.approx(mc.marginal_posterior / 0.25)
    assert mc.details["prior"]["method"] == "given"


def test_release_posteriors_checks_its_releases(granville):
    with pytest.raises(ValueError, match="releases"):
        release_posteriors(granville.model(), {"x1_release": np.array([1])})


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"truth": {"X1": 1, "nope": 0}}, "truth"),
        ({"truth": {"X1": 1, "x1_release": 0}}, "truth"),
        ({"truth": {"X1": 5}}, "truth"),  # outside {m, m + 1}
        ({"truth": {"X1": 0.5}}, "truth"),
        ({"truth": {}}, "truth"),
        ({"releases": 0}, "releases"),
        ({"releases": 2.5}, "releases"),
        ({"method": "nuts"}, "method"),
        ({"target": "X9"}, "target"),
        ({"event": {"X9": 1}}, "event"),
        ({"prior_of_truth": 0.0}, "prior_of_truth"),
        ({"se_multiple": -1}, "se_multiple"),
    ],
)
def test_bad_arguments_name_the_argument(dare, kwargs, argument):
    arguments = {"truth": {"X1": 1}, "releases": 10, **kwargs}
    with pytest.raises(ValueError, match=argument):
        monte_carlo_measures(dare.model(), **arguments)


def test_block_group_truth_outside_support(granville):
    with pytest.raises(ValueError, match="truth"):  # X2 >= X1 fails
        monte_carlo_measures(granville.model(), {"X1": 1, "X2": 0}, releases=10)
    with pytest.raises(ValueError, match="truth"):  # X2 missing
        monte_carlo_measures(granville.model(), {"X1": 1}, releases=10)


def test_likelihood_in_a_potential_is_refused():
    """Draws ignore Potentials: a release whose likelihood is a Potential cannot be simulated."""
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=0.5)
        release = DiscreteGaussian("x1_release", mu=x1, sigma2=5.0, observed=1)
        pm.Potential("extra", -((release - x1) ** 2) / 10.0)
    with pytest.raises(ValueError, match="Potential 'extra'"):
        monte_carlo_measures(model, {"X1": 1}, releases=10)
    # A post-processed release as an indicator Potential on a latent noisy count (S6.4).
    with pm.Model() as post_processed:
        x1 = BernoulliCount("X1", known=0, p=0.5)
        noisy = DiscreteGaussian("x1_star", mu=x1, sigma2=5.0)
        pm.Potential("x1_tilde", pt.switch(pt.eq(pt.clip(noisy, 0, 10), 1), 0.0, -np.inf))
    with pytest.raises(ValueError, match="x1_tilde"):
        monte_carlo_measures(post_processed, {"X1": 1, "x1_star": 1}, releases=10)


def test_enumerate_and_monte_carlo_share_semantics_of_events():
    """The exact path evaluates an event on the grid as on draws: same answer as enumerate."""
    model = cell_attack(releases=(3, 1, 1))
    table = inference.enumerate_posterior(model)
    engine = ReleasePosteriors(model)
    event = lambda v: v["C"] != 0  # noqa: E731
    ours = engine({"releases": np.array([[3, 1, 1]])}, event, "C")
    assert float(ours["event_posterior"][0]) == pytest.approx(
        inference.posterior_probability(table, event), rel=1e-12
    )


def test_mcmc_reaches_a_continuous_latent():
    """Unknown noise scale (a prior on log σ²): NUTS beside the exact Gibbs step; quadrature."""
    mu, sd, p, true_sigma2 = math.log(2.0), 0.5, 0.5, 2.0
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=p)
        log_sigma2 = pm.Normal("log_sigma2", mu=mu, sigma=sd)
        DiscreteGaussian("x1_release", mu=x1, sigma2=pt.exp(log_sigma2), observed=1)
    truth = {"X1": 1, "log_sigma2": math.log(true_sigma2)}
    with pytest.raises(TypeError, match="method='mcmc'"):
        monte_carlo_measures(model, truth, releases=5)
    mc = monte_carlo_measures(
        model, truth, releases=16, method="mcmc", draws=200, tune=100, random_seed=15
    )

    def dg_pmf(z, sigma2):  # by direct sums, |k| <= 80
        k = np.arange(-80, 81)[:, None]
        norm = np.exp(-(k**2) / (2 * sigma2)).sum(0)
        return np.exp(-(np.asarray(z)[..., None] ** 2) / (2 * sigma2)) / norm

    log_s2 = np.linspace(mu - 8 * sd, mu + 8 * sd, 4001)
    weights = np.exp(-0.5 * ((log_s2 - mu) / sd) ** 2)
    weights /= weights.sum()
    x = np.arange(-40, 42)
    lik1 = dg_pmf(x - 1, np.exp(log_s2)) @ weights
    lik0 = dg_pmf(x, np.exp(log_s2)) @ weights
    posterior = p * lik1 / (p * lik1 + (1 - p) * lik0)
    releases = dg_pmf(x - 1, np.array([true_sigma2]))[:, 0]
    se = mc.details["standard_errors"]
    assert abs(mc.marginal_posterior - releases @ posterior) <= N_SE * se["marginal_posterior"]
    assert abs(mc.correct_decision_probability - releases @ (posterior >= 0.5)) <= (
        N_SE * se["correct_decision_probability"]
    )
    with pytest.raises(ValueError, match="target"):
        monte_carlo_measures(model, truth, target="log_sigma2", releases=5, method="mcmc")


@pytest.mark.parametrize("method", ["exact", "mcmc"])
@pytest.mark.parametrize("observed", [(3,), (4, 4)])
def test_observed_values_equal_to_graph_constants_stay_observations(method, observed):
    """Observations equal to a graph constant (mu = 3 + X, x* = 3) or to each other.

    They stay observations: the marginal measures cannot depend on the observed values.
    """

    def build(values):
        with pm.Model() as model:
            x = BernoulliCount("X", known=0, p=0.5)
            for i, value in enumerate(values):
                DiscreteGaussian(f"release_{i}", mu=3 + x, rho=1.0, observed=value)
        return model

    other = tuple(v + 2 for v in observed)
    settings = {"releases": 400 if method == "exact" else 8, "random_seed": 3}  # equal, any n
    if method == "mcmc":  # short chains: the equality holds for any, and a cold cache compiles none
        settings |= {"draws": 100, "tune": 20}
    first = monte_carlo_measures(build(observed), {"X": 1}, method=method, **settings)
    second = monte_carlo_measures(build(other), {"X": 1}, method=method, **settings)
    assert first.marginal_posterior == pytest.approx(second.marginal_posterior, rel=1e-12)
