"""Households of the synthetic state: every household person in one household of one block."""

import numpy as np
import pandas as pd
import pytest

from adversary.population.synthetic import synthetic_population
from adversary.swapping import HOUSEHOLD_SIZE_PMF, assign_households, household_table


@pytest.fixture(scope="module")
def persons():
    return synthetic_population(20_000, seed=5)


@pytest.fixture(scope="module")
def with_households(persons):
    return assign_households(persons, seed=1)


def test_group_quarters_in_no_household_and_the_rest_in_one(persons, with_households):
    household = with_households["household"].to_numpy()
    in_gq = persons["hhgq"].to_numpy() > 0
    assert (household[in_gq] == -1).all()
    assert (household[~in_gq] >= 0).all()
    # The identifier is the smallest record_id of the members.
    members = with_households[~in_gq]
    assert (
        members.groupby("household")["record_id"].min().index
        == members.groupby("household")["record_id"].min().to_numpy()
    ).all()


def test_households_lie_in_one_block_and_sum_to_its_household_persons(persons, with_households):
    table = household_table(with_households)
    household_persons = persons[persons["hhgq"] == 0].groupby("block").size()
    assert (
        table.groupby("block")["size"].sum().reindex(household_persons.index) == household_persons
    ).all()
    assert table["size"].between(1, HOUSEHOLD_SIZE_PMF.size).all()
    adults = persons[persons["hhgq"] == 0].groupby("block")["voting_age"].sum()
    assert (table.groupby("block")["voting_age"].sum().reindex(adults.index) == adults).all()


def test_sizes_follow_the_stated_pmf_within_sampling_error(with_households):
    sizes = household_table(with_households)["size"].to_numpy()
    # Truncation at block ends moves a little mass to small sizes; blocks are mostly ≥ 10 persons,
    # so the drawn pmf holds to a few points: a bound the truncation cannot reach.
    shares = np.bincount(sizes, minlength=8)[1:] / sizes.size
    assert np.abs(shares - HOUSEHOLD_SIZE_PMF).max() < 0.03


def test_every_household_has_an_adult_where_the_block_has_enough(with_households):
    table = household_table(with_households)
    by_block = table.groupby("block").agg(households=("size", "size"), adults=("voting_age", "sum"))
    enough = by_block.index[by_block["adults"] >= by_block["households"]]
    assert (table[table["block"].isin(enough)]["voting_age"] >= 1).all()


def test_independent_of_row_order_and_of_other_counties(persons, with_households):
    shuffled = assign_households(persons.sample(frac=1.0, random_state=3), seed=1)
    again = shuffled.sort_values("record_id")["household"].to_numpy()
    assert np.array_equal(again, with_households.sort_values("record_id")["household"].to_numpy())
    county = persons["county"].iloc[0]
    alone = assign_households(persons[persons["county"] == county], seed=1)
    mine = with_households[with_households["county"] == county]
    assert np.array_equal(alone["household"].to_numpy(), mine["household"].to_numpy())
    other_seed = assign_households(persons, seed=2)["household"].to_numpy()
    assert not np.array_equal(other_seed, with_households["household"].to_numpy())


def test_bad_input_is_one_line_naming_the_argument(persons, with_households):
    with pytest.raises(TypeError, match="persons must be a pandas DataFrame"):
        assign_households(persons.to_numpy())
    with pytest.raises(ValueError, match=r"persons: columns \['hhgq'\] are missing"):
        assign_households(persons.drop(columns="hhgq"))
    with pytest.raises(ValueError, match="already has a 'household' column"):
        assign_households(with_households)
    with pytest.raises(ValueError, match="record_id must be unique"):
        assign_households(pd.concat([persons.head(3), persons.head(1)]))
    with pytest.raises(ValueError, match="no 'household' column"):
        household_table(persons)


def test_target_blocks_give_each_person_their_block_and_place(with_households):
    from adversary.analyses.reconstruction_study import block_cells
    from adversary.scenarios.reconstruction import REDUCED
    from adversary.swapping import target_blocks

    members = with_households[with_households["household"] >= 0]
    cells = block_cells(with_households, REDUCED)
    chosen = members["record_id"].to_numpy()[::997]
    found = target_blocks(with_households, cells, chosen, REDUCED.n_cells)
    by_record = dict(zip(with_households["record_id"], cells, strict=True))
    for record, (block, households, (h, m), counts) in zip(chosen, found, strict=True):
        mine = members[members["block"] == block].sort_values(["household", "record_id"])
        expected = tuple(
            tuple(by_record[r] for r in group["record_id"])
            for _, group in mine.groupby("household")
        )
        assert households == expected
        ids = sorted(mine["household"].unique())
        person = members[members["record_id"] == record].iloc[0]
        assert ids[h] == person["household"]
        assert sorted(mine[mine["household"] == person["household"]]["record_id"])[m] == record
        assert np.array_equal(
            counts, np.bincount([by_record[r] for r in mine["record_id"]], minlength=56)
        )
    with pytest.raises(ValueError, match=r"^record_ids: every one must be a household person"):
        target_blocks(with_households, cells, [-5], REDUCED.n_cells)
