"""The adversary who sees TopDown's tables: three adversaries, exact sums, the data-processing
inequality."""

import numpy as np
import pytest

from adversary.inference import enumerate_posterior
from adversary.paper_setting import PRIORS, RHO_BLOCK, RHO_GROUP
from adversary.scenarios.multi_level import marginals
from adversary.scenarios.published_tables import PublishedTablesCase


@pytest.mark.parametrize("convention", ["paper", "das"])
@pytest.mark.parametrize("truth", [None, 0])
def test_noisy_adversary_is_the_two_level_attack(convention, truth):
    """The measurements-only adversary sees the block and the block group: S1.3 with ℓ = 2."""
    case = PublishedTablesCase(
        "bg",
        {"p": 0.2},
        known_counts=(0, 3),
        true_count=truth,
        convention=convention,
        post_processing="none",
    )
    got = case.marginal_measures()
    expected = marginals(0.2, [RHO_BLOCK, RHO_GROUP], true_count=truth, convention=convention)
    assert got.marginal_posterior == pytest.approx(float(expected.marginal_posterior), abs=1e-8)
    assert got.correct_decision_probability == pytest.approx(
        float(expected.correct_decision_probability), abs=1e-8
    )
    assert got.error_bound < 1e-8


@pytest.mark.parametrize(
    ("known", "scale", "convention"),
    [
        ((0, 3), 1.0, "paper"),
        ((0, 3), 1.0, "das"),
        ((0, 3), 0.25, "paper"),
        ((5, 5), 8.0, "paper"),
        ((2, 0, 1), 2.0, "paper"),
        ((2, 0, 1), 8.0, "das"),
    ],
)
def test_tables_never_beat_the_measurements(known, scale, convention):
    """Data-processing inequality: TopDown's tables are a function of the measurements, so
    the Bayes accuracy (P[correct] averaged over the prior) from them is never larger; the
    adversary with both is the measurements' adversary."""
    for label in PRIORS:
        case = PublishedTablesCase(
            "bg",
            PRIORS,
            known_counts=known,
            rho_block=RHO_BLOCK * scale,
            rho_parent=RHO_GROUP * scale,
            convention=convention,
        )
        table = case.three_adversaries(label).set_index(["adversary", "truth"])
        accuracy = table["bayes_accuracy"]
        bound = table["omitted_mass"].max()
        assert accuracy["published", 1] <= accuracy["noisy", 1] + bound
        both, noisy = table.loc["both"], table.loc["noisy"]
        np.testing.assert_allclose(both.to_numpy(dtype=float), noisy.to_numpy(dtype=float))


def test_post_processing_loses_information_where_counts_are_small():
    """At the 2020 ρ a unique target's block count is often pushed to 0 or rounded:
    the tables' Bayes accuracy is strictly below the measurements'."""
    case = PublishedTablesCase("bg", {"1/2": 0.5}, known_counts=(0, 3))
    accuracy = case.three_adversaries().groupby("adversary")["bayes_accuracy"].first()
    assert accuracy["published"] < accuracy["noisy"] - 0.005


def test_an_invariant_block_group_count_discloses_the_target():
    """Publishing the block group's true count exactly tells an adversary who knows everyone
    else whether the target is in the cell."""
    case = PublishedTablesCase("bg", {"1/10": 0.1}, known_counts=(0, 3), invariant=True)
    table = case.three_adversaries().set_index(["adversary", "truth"])
    for adversary in ("published", "both"):
        assert table.loc[(adversary, 1), "marginal_posterior"] == pytest.approx(1.0, abs=1e-9)
        assert table.loc[(adversary, 1), "correct_decision_probability"] == pytest.approx(
            1.0, abs=1e-9
        )


def test_table_likelihood_by_the_grid_and_by_simulation():
    case = PublishedTablesCase("bg", PRIORS, known_counts=(0, 3), published=(4, 1, 3))
    exact = case.table_likelihood()
    simulated, errors = case.simulated_table_likelihood(draws=100_000, seed=4)
    assert np.all(np.abs(simulated - exact) < 4 * errors)
    # the likelihoods of every table sum to 1 - omitted mass
    grid = case.grid
    assert grid.weight.sum() == pytest.approx(1.0, abs=2 * grid.omitted_mass + 1e-12)


def test_posterior_of_a_published_table_and_its_pymc_model():
    case = PublishedTablesCase("bg", PRIORS, known_counts=(0, 3), published=(4, 1, 3))
    without, with_target = case.table_likelihood()
    for label, p in PRIORS.items():
        expected = p * with_target / (p * with_target + (1 - p) * without)
        assert case.posterior(label) == pytest.approx(expected, rel=1e-12)
        table = enumerate_posterior(case.model(label))
        assert float(table.marginal("X1").sel(X1=1)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"priors": {"p": 1.0}}, "strictly between 0 and 1"),
        ({"known_counts": (-1, 2)}, "known_counts"),
        ({"target_block": 2}, "target_block must be"),
        ({"true_count": 3}, "true_count must be 0 or 1"),
        ({"rho_block": -1.0}, "rho_block"),
        ({"post_processing": "oracle"}, "post_processing must be one of"),
        ({"published": (4, 1)}, "published must be 3 counts"),
        ({"published": (4, 1, 1)}, "must sum to the block group"),
        ({"tail_mass": 1e-300, "rho_block": 1e-6, "method": "exact"}, "tail_mass: the hierarchy"),
        ({"method": "guess"}, "method must be one of"),
        ({"draws": 1}, "draws must be an integer"),
    ],
)
def test_bad_input_names_the_argument(changes, message):
    arguments = {"name": "bg", "priors": {"p": 0.5}, "known_counts": (0, 3), **changes}
    with pytest.raises(ValueError, match=message):
        case = PublishedTablesCase(**arguments)
        case.marginal_measures()


def test_the_command_line_choices_are_the_cases():
    from adversary.cli.common import POST_PROCESSING_CHOICES
    from adversary.scenarios.published_tables import POST_PROCESSING

    assert POST_PROCESSING_CHOICES == tuple(POST_PROCESSING)


ETHNICITY = ("not Hispanic", "Hispanic")


def _attribute_case(**changes):
    from adversary.scenarios.published_tables import PublishedAttributeCase

    arguments = {
        "name": "ua",
        "categories": ETHNICITY,
        "priors": {"0.81": (0.81, 0.19), "1/2": (0.5, 0.5)},
        "known_counts": ((0, 3), (1, 0)),
        "true_category": "Hispanic",
        **changes,
    }
    return PublishedAttributeCase(**arguments)


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_attribute_noisy_adversary_is_the_two_level_multi_query_attack(convention):
    from adversary.scenarios.multi_query import MultiQueryCase

    case = _attribute_case(convention=convention, post_processing="none")
    truth = {"hhgq": 0, "voting_age": 1, "hispanic": 1, "race": 1}
    marginals = {"hhgq": [0.5, 0.5], "voting_age": [0.5, 0.5], "hispanic": [0.81, 0.19]}
    marginals["race"] = [1 / 7] * 7
    looks = MultiQueryCase(
        "mq",
        {"m": marginals},
        truth=truth,
        question="hispanic",
        levels=("block", "block_group"),
        convention=convention,
        method="exact",
    )
    got, expected = case.marginal_measures("0.81"), looks.marginal_measures()
    assert got.method == "exact"
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert getattr(got, name) == pytest.approx(getattr(expected, name), abs=1e-8)


@pytest.mark.parametrize("known", [((0, 3), (1, 0)), ((2, 2), (0, 0))])
def test_attribute_tables_never_beat_the_measurements(known):
    case = _attribute_case(known_counts=known)
    for label in case.priors:
        accuracy = case.bayes_accuracy(label)
        assert accuracy["published"] <= accuracy["noisy"] + 1e-8
    both = case.replace(post_processing="both").marginal_measures("1/2")
    noisy = case.replace(post_processing="none").marginal_measures("1/2")
    assert both.as_dict() == noisy.as_dict()


def test_attribute_posterior_of_published_tables_and_its_model():
    case = _attribute_case(published=((4, 1, 3), (1, 1, 0)))
    for label in case.priors:
        prior = np.array(case.priors[label])
        cells = [
            PublishedTablesCase(
                "cell", {"p": 0.5}, known_counts=row, published=table
            ).table_likelihood()
            for row, table in zip(case.known_counts, case.published, strict=True)
        ]
        # P[T | C = k] = P[T_k | in] * prod of the other cells' P[T_c | out]
        joint = prior * np.array([cells[0][1] * cells[1][0], cells[0][0] * cells[1][1]])
        np.testing.assert_allclose(case.posterior(label), joint / joint.sum(), rtol=1e-10)
        table = enumerate_posterior(case.model(label))
        np.testing.assert_allclose(table.marginal("C").values, joint / joint.sum(), rtol=1e-9)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"categories": ("a",)}, "categories must name K >= 2"),
        ({"known_counts": ((0, 3),)}, "known_counts must hold one row"),
        ({"priors": {"x": (1.0, 0.0)}}, r"priors\['x'\] must be 2 probabilities > 0"),
        ({"true_category": "other"}, "true_category must be one of"),
        ({"target_block": 5}, "target_block must be"),
        ({"post_processing": "all"}, "post_processing must be one of"),
        ({"published": ((4, 1, 3),)}, "published must hold one table per category"),
        ({"published": ((4, 1, 3), (1, 1, 1))}, "blocks must sum to its block group"),
    ],
)
def test_attribute_bad_input_names_the_argument(changes, message):
    with pytest.raises(ValueError, match=message):
        _attribute_case(**changes)


def test_simulated_measures_agree_with_the_grid():
    """Cross-fitted simulation (the table's law from the other batches) within 4 SE of the
    exact sums, for every adversary and both truths."""
    case = PublishedTablesCase("bg", {"1/2": 0.5}, known_counts=(0, 3))
    exact = case.three_adversaries().set_index(["adversary", "truth"])
    drawn = case.replace(method="simulation", draws=100_000, seed=5).three_adversaries()
    drawn = drawn.set_index(["adversary", "truth"])
    assert (exact["se_posterior"] == 0).all() and (drawn["se_posterior"] > 0).all()
    for measure, se in (
        ("marginal_posterior", "se_posterior"),
        ("correct_decision_probability", "se_correct"),
    ):
        assert np.all(np.abs(drawn[measure] - exact[measure]) < 4 * drawn[se] + 1e-12), measure
    measures = case.replace(method="simulation", draws=20_000).marginal_measures()
    assert measures.method == "monte-carlo" and measures.error_bound > 0


def test_distinct_tables_are_numpys_unique_rows():
    """table_ids (by lexsort) gives np.unique(axis=0)'s distinct rows, order and ids."""
    from adversary.scenarios.published_tables.grid import table_ids

    rng = np.random.default_rng(5)
    for units in (1, 3, 4):
        first, second = rng.integers(-3, 4, (2000, units)), rng.integers(-3, 4, (700, units))
        distinct, ids = table_ids(first, second)
        expected, inverse = np.unique(np.vstack([first, second]), axis=0, return_inverse=True)
        np.testing.assert_array_equal(distinct, expected)
        np.testing.assert_array_equal(np.concatenate(ids), inverse.reshape(-1))
        assert [len(i) for i in ids] == [2000, 700]
        np.testing.assert_array_equal(distinct[ids[1]], second)
