"""The multi-query attack: exact likelihood of every look, against closed forms and brute force."""

import numpy as np
import pytest

from adversary.budget import get_preset
from adversary.inference import enumerate_posterior
from adversary.noise.mechanisms import CellKeyNoise, DiscreteGaussianNoise
from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.multi_query import MultiQueryCase
from adversary.scenarios.multi_query.likelihood import log_likelihoods
from adversary.scenarios.reconstruction import REDUCED
from adversary.scenarios.single_block import SingleBlockCase
from adversary.scenarios.unknown_attribute import UnknownAttributeCase

K = REDUCED.n_cells
#: Dare County's target: household, voting age, not Hispanic, Black.
TARGET = {"hhgq": 0, "voting_age": 1, "hispanic": 0, "race": 1}
MARGINALS = {
    "hhgq": [0.97, 0.03],
    "voting_age": [0.22, 0.78],
    "hispanic": [0.81, 0.19],
    "race": [0.62, 0.12, 0.011, 0.06, 0.002, 0.084, 0.103],
}


def _prior(p, truth=TARGET):
    cell = int(np.ravel_multi_index(tuple(truth.values()), REDUCED.sizes))
    prior = np.full(K, (1.0 - p) / (K - 1))
    prior[cell] = p
    return prior


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_detailed_query_is_the_single_block_attack(convention):
    priors = {label: _prior(p) for label, p in PRIORS.items()}
    case = MultiQueryCase("mq", priors, truth=TARGET, convention=convention)
    assert case.looks().labels == ("block:detailed[15]",)
    dare = SingleBlockCase("sb", RHO_BLOCK, PRIORS, convention=convention)
    for label in PRIORS:
        got, expected = case.marginal_measures(label), dare.marginal_measures(label)
        assert got.method == "exact"
        assert got.marginal_posterior == pytest.approx(expected.marginal_posterior, abs=1e-14)
        assert got.marginal_risk == pytest.approx(expected.marginal_risk, rel=1e-12)
        assert got.correct_decision_probability == pytest.approx(
            expected.correct_decision_probability, rel=1e-9, abs=1e-14
        )
        assert 0 <= got.error_bound < 1e-14


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_detailed_query_on_an_attribute_is_the_unknown_attribute_attack(convention):
    truth = {**TARGET, "hispanic": 1}
    case = MultiQueryCase(
        "mq", {"m": MARGINALS}, truth=truth, question="hispanic", convention=convention
    )
    assert len(case.looks().labels) == 2
    expected = UnknownAttributeCase(
        "ua",
        ("no", "yes"),
        (3, 0),
        {"m": MARGINALS["hispanic"]},
        "yes",
        RHO_BLOCK,
        convention=convention,
    ).marginal_measures()
    got = case.marginal_measures()
    for name in ("marginal_posterior", "marginal_risk", "correct_decision_probability"):
        assert getattr(got, name) == pytest.approx(getattr(expected, name), rel=1e-12)


def test_aggregate_queries_are_looks_and_the_total_is_not():
    case = MultiQueryCase("mq", {"m": MARGINALS}, truth=TARGET, queries="all")
    looks = case.looks()
    # the cell question: one count per query holds the target's cell; the total holds every cell.
    assert "block:total[0]" in looks.uninformative
    assert len(looks.labels) == 9 and len(set(q.split("[")[0] for q in looks.labels)) == 9
    rhos = dict(zip((label.split("[")[0] for label in looks.labels), looks.rhos, strict=True))
    preset = get_preset()
    assert rhos["block:race"] == pytest.approx(preset.rho("block", "race"))
    # a query the preset does not measure at a level (the US total) gives no look
    us = MultiQueryCase("mq", {"m": MARGINALS}, truth=TARGET, queries=["total"], levels=["us"])
    assert us.looks().labels == () and us.looks().uninformative == ()


def test_adding_the_total_changes_nothing():
    base = MultiQueryCase("mq", {"m": MARGINALS}, truth=TARGET, queries=["race", "detailed"])
    more = base.replace(queries=["total", "race", "detailed"])
    assert more.looks().labels == base.looks().labels
    assert more.marginal_measures().as_dict() == base.marginal_measures().as_dict()


def _brute_posterior(case, releases):
    """Bayes' theorem over every cell, the releases' pmf a product over the looks by hand."""
    looks = case.looks()
    prior = np.array(case.priors[next(iter(case.priors))])
    possible = np.flatnonzero(prior > 0)
    incidence = looks.incidence
    joint = []
    for j, cell in enumerate(possible):
        likelihood = 1.0
        for o, rho in enumerate(looks.rhos):
            noise = DiscreteGaussianNoise.from_rho(rho, case.convention)
            likelihood *= float(noise.pmf(releases[o] - int(incidence[o, j])))
        joint.append(prior[cell] * likelihood)
    joint = np.array(joint) / np.sum(joint)
    in_cell = possible == case.truth
    return np.array([joint[~in_cell].sum(), joint[in_cell].sum()])


def test_posterior_is_bayes_theorem_over_every_look():
    case = MultiQueryCase(
        "mq",
        {"m": MARGINALS},
        truth=TARGET,
        queries="all",
        levels=["block", "tract"],
        releases=tuple(range(-4, 14)),
    )
    assert len(case.looks().labels) == 18
    np.testing.assert_allclose(
        case.posterior().values, _brute_posterior(case, case.releases), rtol=1e-10
    )


def test_log_likelihoods_are_each_cells_sum_over_its_looks_to_the_last_bit():
    """Cells of equal incidence share one sum: it must be each cell's own sum, in look order."""
    rng = np.random.default_rng(5)
    incidence = rng.integers(0, 2, size=(6, 40))
    incidence[5] *= 2  # a look that sums two releases of the target's count
    assert len(np.unique(incidence, axis=1).T) < 40  # some cells share a column
    mechanisms = [DiscreteGaussianNoise(sigma2=s) for s in (5.0, 2.5, 10.0, 1.0, 1.7, 3.3)]
    residuals = rng.integers(-8, 10, size=(300, 6))
    got = log_likelihoods(residuals, incidence, mechanisms)
    assert got.shape == (300, 40) and got.flags.c_contiguous
    for cell in range(40):
        expected = np.zeros(300)
        for look, mechanism in enumerate(mechanisms):
            expected += mechanism.logpmf(residuals[:, look] - incidence[look, cell])
        np.testing.assert_array_equal(got[:, cell], expected)


def test_the_pymc_model_enumerates_to_the_same_posterior():
    truth = {**TARGET, "hispanic": 1}
    case = MultiQueryCase(
        "mq",
        {"m": MARGINALS},
        truth=truth,
        question="race",
        queries="all",
        releases=tuple(int(x) for x in np.resize([2, 0, 1, -1, 3, 1, 0], 35)),
    )
    table = enumerate_posterior(case.model())
    np.testing.assert_allclose(
        table.marginal("persons[0]").values, case.posterior().values, rtol=1e-8
    )


@pytest.mark.parametrize("question", ["cell", "race"])
def test_monte_carlo_agrees_with_the_exact_release_grid(question):
    case = MultiQueryCase(
        "mq",
        {"p": _prior(0.2)},
        truth=TARGET,
        question=question,
        queries=["race", "detailed"] if question == "cell" else ["detailed"],
        rho_total=40 * 2.56,
        replications=40_000,
        seed=3,
    )
    exact = case.replace(method="exact").marginal_measures()
    drawn = case.replace(method="monte-carlo").marginal_measures()
    assert exact.method == "exact" and drawn.method == "monte-carlo"
    errors = drawn.details["standard_errors"]
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert abs(getattr(drawn, name) - getattr(exact, name)) < 4 * errors[name] + 1e-12


def test_cell_key_noise_looks():
    """Bounded noise: a look can rule a cell out; the grid sum stays exact."""
    noise = CellKeyNoise(target_variance=2.0, bound=3)
    case = MultiQueryCase(
        "mq", {"m": MARGINALS}, truth=TARGET, queries=["race", "detailed"], mechanism=noise
    )
    got = case.marginal_measures()
    assert got.method == "exact" and got.error_bound == 0.0
    single = MultiQueryCase("mq", {"m": MARGINALS}, truth=TARGET, mechanism=noise)
    assert (
        got.correct_decision_probability >= single.marginal_measures().correct_decision_probability
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"queries": "every"}, "queries must be"),
        ({"queries": ["race", "race"]}, "queries must not repeat"),
        ({"truth": "nowhere"}, "truth must be a cell label"),
        ({"truth": 56}, "truth must be a cell index"),
        ({"question": "age"}, "question must be"),
        ({"levels": ["moon"]}, "level must be one of"),
        ({"convention": "other"}, "convention"),
        ({"method": "guess"}, "method must be"),
        ({"replications": 1}, "replications must be"),
        ({"priors": {"m": [1.0]}}, r"priors\['m'\] must be 56"),
        ({"priors": {"m": {"race": [1 / 7] * 7}}}, r"priors\['m'\]: marginals must give"),
        ({"releases": (1, 2)}, "releases must be 1 integers"),
        ({"question": "race", "cell": 3}, "cell: only the question"),
    ],
)
def test_bad_input_names_the_argument(changes, message):
    arguments = {"name": "mq", "priors": {"m": MARGINALS}, "truth": TARGET, **changes}
    with pytest.raises(ValueError, match=message):
        MultiQueryCase(**arguments)


def test_true_cell_with_prior_zero_is_refused():
    prior = _prior(0.0)
    with pytest.raises(ValueError, match="true cell probability 0"):
        MultiQueryCase("mq", {"z": prior}, truth=TARGET)


def test_detailed_query_at_every_level_is_the_many_levels_attack():
    """Monte Carlo over six looks against S1.3's sum (exact within 5e-10), within 4 SE."""
    from adversary.scenarios.multi_level import marginals, rhos_2020

    levels = ("block", "block_group", "tract", "county", "state", "us")
    case = MultiQueryCase("mq", {"p": _prior(0.1)}, truth=TARGET, levels=levels, seed=1)
    got = case.marginal_measures()
    assert got.method == "monte-carlo" and len(case.looks().labels) == 6
    expected = marginals(0.1, rhos_2020(6))
    errors = got.details["standard_errors"]
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert abs(getattr(got, name) - float(getattr(expected, name))) < 4 * errors[name]
