"""The synthetic geography: JASON's Table 2-2 and 8-11 shapes, exact totals, seeded."""

import numpy as np
import pandas as pd
import pytest

from adversary.population.schema import validate
from adversary.population.synthetic import (
    BLOCK_SIZE_BINS,
    TABLE_2_2_UNITS,
    TABLE_8_11_PERSONS,
    TABLE_8_11_UNIQUE_AGE_SEX,
    block_size_bin,
    synthetic_geography,
    synthetic_persons,
    synthetic_population,
)


@pytest.fixture(scope="module")
def geography():
    return synthetic_geography(2_000_000, seed=11)


def test_persons_are_exact_and_bins_match_table_8_11(geography):
    blocks = geography.blocks
    assert geography.persons == 2_000_000
    persons = blocks.groupby(block_size_bin(blocks["size"]), observed=False)["size"].sum()
    shares = np.array(list(TABLE_8_11_PERSONS.values()))
    expected = 2_000_000 * shares / shares.sum()
    # each bin's persons are met exactly (largest remainders of the shares)
    np.testing.assert_allclose(persons.to_numpy(), expected, atol=1)
    assert list(persons.index) == list(BLOCK_SIZE_BINS)


def test_units_follow_table_2_2(geography):
    units = geography.units()
    per_person = TABLE_2_2_UNITS["block"] / sum(TABLE_8_11_PERSONS.values())
    assert units["block"] == pytest.approx(2_000_000 * per_person, rel=0.02)
    for child, parent in (("block", "block_group"), ("block_group", "tract"), ("tract", "county")):
        ratio = TABLE_2_2_UNITS[child] / TABLE_2_2_UNITS[parent]
        assert units[child] / units[parent] == pytest.approx(ratio, rel=0.02)
    assert units["state"] == 1


def test_identifiers_nest_and_are_global(geography):
    blocks = geography.blocks
    assert blocks["block"].is_unique
    assert (blocks["block"] // 10_000 == blocks["block_group"]).all()
    assert (blocks["block_group"] // 1_000 == blocks["tract"]).all()
    assert (blocks["tract"] // 1_000_000 == blocks["county"]).all()
    assert (blocks["county"] // 1_000 == blocks["state"]).all()


def test_seeded_and_counties_independent_of_grouping():
    a = synthetic_population(30_000, states=2, seed=5)
    b = synthetic_population(30_000, states=2, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = synthetic_population(30_000, states=2, seed=6)
    assert not a[["race", "age"]].equals(c[["race", "age"]])
    geography = synthetic_geography(30_000, states=2, seed=5)
    last = geography.counties().iloc[-1]
    alone = synthetic_persons(geography.blocks, int(last.county_index), 5, int(last.first_record))
    pd.testing.assert_frame_equal(
        alone.reset_index(drop=True),
        a[a["county"] == last.county].reset_index(drop=True),
    )
    assert list(a["record_id"]) == list(range(30_000))
    validate(a, ["hhgq", "voting_age", "hispanic", "race", "age", "sex"])


def test_characteristics_follow_the_stated_model():
    people = synthetic_population(200_000, seed=2)
    assert people["voting_age"].mean() == pytest.approx(1 - 18 / 80, abs=0.01)
    assert (people["voting_age"] == (people["age"] >= 18)).all()
    assert people["sex"].mean() == pytest.approx(0.508, abs=0.01)
    assert people["hispanic"].mean() == pytest.approx(0.187, abs=0.03)
    assert people["race"].between(0, 62).all()
    assert (people["race"] == 0).mean() == pytest.approx(0.616, abs=0.05)  # White alone
    assert people["hhgq"].between(0, 7).all()
    assert (people["hhgq"] > 0).mean() == pytest.approx(0.025, abs=0.01)


def test_uniqueness_on_age_and_sex_falls_with_block_size_as_in_table_8_11():
    """Shape check of the stated model against Table 8-11's *Unique* column."""
    people = synthetic_population(200_000, seed=4)
    size = people.groupby("block")["record_id"].transform("size")
    unique = people.groupby(["block", "age", "sex"])["record_id"].transform("size") == 1
    share = unique.groupby(block_size_bin(size), observed=False).mean()
    assert (np.diff(share.to_numpy()) < 0).all()
    table = np.array(list(TABLE_8_11_UNIQUE_AGE_SEX.values()))
    np.testing.assert_allclose(share.to_numpy(), table, atol=0.15)


def test_small_populations_and_bad_arguments():
    tiny = synthetic_geography(7, seed=1)
    assert tiny.persons == 7 and tiny.units()["county"] == 1
    assert tiny.blocks["size"].between(1, 9).all()
    with pytest.raises(ValueError, match="persons must be an integer >= 1"):
        synthetic_geography(0)
    with pytest.raises(ValueError, match="states must be an integer"):
        synthetic_geography(100, states=0)
