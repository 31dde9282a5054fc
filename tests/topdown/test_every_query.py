"""TopDown with every query: one query equals today's per-cell TopDown, the linear mode is the
GLS closed form with the equal split, published tables are consistent non-negative integers."""

import dataclasses
import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversary.analyses.reconstruction_study import block_cells
from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_population
from adversary.topdown import topdown_many
from adversary.topdown.every_query import (
    LEVELS,
    every_query_runs,
    every_query_topdown,
    level_operators,
    noisy_answers,
    truth_tables,
    unit_generator,
)

PRESET = get_preset("pl94-2020-persons")


def allocation_of(shares: dict) -> object:
    """The preset with, at every level, the query shares ``shares`` (query: Fraction)."""
    row = tuple(Fraction(shares.get(q, 0)) for q in PRESET.queries)
    return dataclasses.replace(PRESET, query_shares=(row,) * len(PRESET.levels))


DETAILED_ONLY = allocation_of({"detailed": 1})


def population_truth(persons: int, seed: int):
    """The true tables of a synthetic population, each person in their cell."""
    population = synthetic_population(persons, seed=seed)
    return truth_tables(population.assign(cell=block_cells(population)))


@pytest.fixture(scope="module")
def truth():
    return population_truth(3_000, seed=5)


def counties_of(truth, level):
    """The county index (position among counties) of every unit of ``level``."""
    index = np.arange(truth["county"].dataset.sizes["unit"])
    ids = truth["county"]["unit"].values
    for lower in LEVELS[2 : LEVELS.index(level) + 1]:
        index = index[pd.Index(ids).get_indexer(truth[lower]["parent"].values)]
        ids = truth[lower]["unit"].values
    return index


def measured(truth, allocation, seed, run=0):
    """Every level's noisy answers, drawn as the release draws them (county by county)."""
    operators = level_operators(allocation)
    answers = {}
    for depth, level in enumerate(LEVELS):
        counts = truth[level]["counts"].values
        county = np.zeros(counts.shape[0], dtype=int) if depth == 0 else counties_of(truth, level)
        if level == "county":
            county = np.arange(counts.shape[0])
        parts = [
            noisy_answers(
                counts[county == k], operators[level], unit_generator(seed, run, level, k)
            )
            for k in np.unique(county)
        ]
        answers[level] = np.concatenate(parts)
    return operators, answers


def test_one_query_equals_todays_topdown_cell_by_cell(truth):
    published = every_query_topdown(truth, DETAILED_ONLY, seed=7)
    _, answers = measured(truth, DETAILED_ONLY, seed=7)
    units = np.concatenate([truth[level]["unit"].values for level in LEVELS])
    parent_ids = np.concatenate([truth[level]["parent"].values for level in LEVELS])
    parents = np.concatenate([[-1], pd.Index(units).get_indexer(parent_ids[1:])])
    noisy = np.concatenate([answers[level] for level in LEVELS])  # detailed only: x̂ = y
    state = published["state"]["counts"].values[0]
    # every family's children share a level's variance: the fit depends on none of them
    expected = topdown_many(noisy.T.astype(float), 1.0, parents, invariant=state).T
    got = np.concatenate([published[level]["counts"].values for level in LEVELS])
    np.testing.assert_array_equal(got, expected)
    assert state.sum() == truth["state"]["counts"].values.sum()


def test_gls_estimate_is_the_weighted_least_squares_solution():
    operators = level_operators(PRESET)
    rng = np.random.default_rng(0)
    for operator in operators.values():
        answers = rng.normal(5.0, 3.0, size=(4, operator.matrix.shape[0]))
        root = 1.0 / np.sqrt(operator.variances)
        weighted = operator.matrix * root[:, None]
        for y, x in zip(answers, operator.estimate(answers), strict=True):
            expected = np.linalg.lstsq(weighted, y * root, rcond=None)[0]
            np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-9)


def test_linear_mode_is_gls_invariant_and_equal_split(truth):
    published = every_query_topdown(truth, PRESET, seed=3, nonnegative=False, rounded=False)
    operators, answers = measured(truth, PRESET, seed=3)
    estimates = {}
    for level in LEVELS:
        operator, root = operators[level], 1.0 / np.sqrt(operators[level].variances)
        weighted = operator.matrix * root[:, None]
        estimates[level] = np.linalg.lstsq(weighted, (answers[level] * root).T, rcond=None)[0].T
    sigma = np.linalg.inv(
        (operators["state"].matrix.T / operators["state"].variances) @ (operators["state"].matrix)
    )
    total = truth["state"]["counts"].values.sum()
    x = estimates["state"][0]
    expected = {"state": (x - sigma.sum(1) * (x.sum() - total) / sigma.sum())[None]}
    for upper, level in itertools.pairwise(LEVELS):
        index = pd.Index(truth[upper]["unit"].values).get_indexer(truth[level]["parent"].values)
        sums = np.zeros_like(expected[upper])
        np.add.at(sums, index, estimates[level])
        sizes = np.bincount(index)
        gap = (expected[upper] - sums) / sizes[:, None]
        expected[level] = estimates[level] + gap[index]
    for level in LEVELS:
        got = published[level]["counts"].values
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, expected[level], rtol=1e-9, atol=1e-7)


def check_published(tree, truth):
    """Consistent at every level and cell, non-negative integers, the state total invariant."""
    for upper, level in itertools.pairwise(LEVELS):
        counts = tree[level]["counts"].values
        assert counts.dtype == np.int64 and counts.min() >= 0
        index = pd.Index(tree[upper]["unit"].values).get_indexer(tree[level]["parent"].values)
        sums = np.zeros_like(tree[upper]["counts"].values)
        np.add.at(sums, index, counts)
        np.testing.assert_array_equal(sums, tree[upper]["counts"].values)
    assert tree["state"]["counts"].values.sum() == truth["state"]["counts"].values.sum()
    assert tree["state"]["counts"].values.min() >= 0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(persons=st.integers(50, 2_500), seed=st.integers(0, 2**16), detailed=st.integers(1, 9))
def test_published_tables_are_consistent_nonnegative_integers(persons, seed, detailed):
    truth = population_truth(persons, seed)
    allocation = allocation_of(
        {
            "detailed": Fraction(detailed, 10),
            "voting_age_hispanic_race": Fraction(10 - detailed, 20),
            "total": Fraction(10 - detailed, 20),
        }
    )
    check_published(every_query_topdown(truth, allocation, seed=seed), truth)


def test_runs_are_independent_releases_run_zero_the_single_one(truth):
    runs = every_query_runs(truth, PRESET, 2, seed=4)
    single = every_query_topdown(truth, PRESET, seed=4)
    for level in LEVELS:
        assert runs[level]["counts"].dims == ("run", "unit", "cell")
        np.testing.assert_array_equal(runs[level]["counts"].values[0], single[level]["counts"])
    assert not np.array_equal(runs["block"]["counts"].values[0], runs["block"]["counts"].values[1])


def test_same_seed_same_bytes_on_one_and_two_workers(truth):
    from adversary.population.cluster import local_cluster, worker_count

    alone = every_query_topdown(truth, PRESET, seed=11)
    # one cluster started (its start-up is the test's cost): run on its two workers, then
    # retire one and run on the other alone
    with local_cluster(2) as client:
        for workers in (2, 1):
            if workers == 1:
                client.retire_workers(n=1)
            assert worker_count(client) == workers
            spread = every_query_topdown(truth, PRESET, seed=11, client=client)
            for level in LEVELS:
                got = spread[level]["counts"].values.tobytes()
                assert got == alone[level]["counts"].values.tobytes()


def test_a_level_that_does_not_identify_the_cells_is_refused(truth):
    shares = [row for row in PRESET.query_shares]
    tract = PRESET.levels.index("tract")
    shares[tract] = tuple(Fraction(q == "total") for q in PRESET.queries)
    allocation = dataclasses.replace(PRESET, query_shares=tuple(shares))
    with pytest.raises(ValueError, match=r"^budget: level 'tract' does not identify the 56 cells"):
        every_query_topdown(truth, allocation)


def test_truth_from_a_table_of_cell_counts_equals_truth_from_records(truth):
    persons = synthetic_population(3_000, seed=5)
    table = persons[list(LEVELS)].assign(cell=block_cells(persons), count=1)
    table = table.groupby([*LEVELS, "cell"], as_index=False)["count"].sum()
    other = truth_tables(table)
    for level in LEVELS:
        xr_equal = other[level].dataset.identical(truth[level].dataset)
        assert xr_equal
    assert truth["state"]["counts"].values.sum() == 3_000
    assert truth["state"]["parent"].values.tolist() == [-1]


def test_bad_input_is_refused_in_one_line(truth):
    with pytest.raises(ValueError, match=r"^runs must be an integer >= 1, got 0"):
        every_query_runs(truth, PRESET, 0)
    with pytest.raises(TypeError, match=r"^nonnegative must be True or False"):
        every_query_topdown(truth, PRESET, nonnegative="yes")
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0"):
        every_query_topdown(truth, PRESET, seed=-1)
    with pytest.raises(TypeError, match=r"^truth must be an xarray.DataTree"):
        every_query_topdown(truth["block"].dataset, PRESET)
    from adversary.scenarios.reconstruction import DETAILED

    with pytest.raises(ValueError, match=r"^truth: state counts must be units × 2016 cells"):
        every_query_topdown(truth, PRESET, classification=DETAILED)
    with pytest.raises(ValueError, match=r"^data: columns \['cell'\] are missing"):
        truth_tables(synthetic_population(100, seed=1))
