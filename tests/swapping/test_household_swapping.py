"""Household swapping: exact invariants, the realised rate, seeding, and bad input."""

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.population.schema import GEOGRAPHY
from adversary.population.synthetic import synthetic_population
from adversary.swapping import assign_households, household_table
from adversary.swapping.household_swapping import HouseholdSwapping, SwapSummary


@pytest.fixture(scope="module")
def persons():
    return assign_households(synthetic_population(50_000, seed=7), seed=2)


@pytest.fixture(scope="module")
def swapped(persons):
    return HouseholdSwapping(0.2).swap_with_summary(persons, seed=11)


def _counts(frame, by, column=None):
    grouped = frame.groupby(list(by), sort=True)
    return grouped.size() if column is None else grouped[column].sum()


def test_block_persons_and_voting_age_persons_are_kept(persons, swapped):
    out, summary = swapped
    assert summary.swapped > 1000  # the test moves many households
    for column in (None, "voting_age"):
        assert _counts(out, ["block"], column).equals(_counts(persons, ["block"], column))


@pytest.mark.parametrize("within", ["county", "tract"])
def test_the_areas_56_cell_tables_are_kept(persons, within):
    out = HouseholdSwapping(0.3, within=within).swap(persons, seed=4)
    cells = block_cells(persons)
    before = pd.crosstab(persons[within], cells)
    after = pd.crosstab(out[within], cells)
    assert before.equals(after)
    # ... while the blocks' tables change.
    assert not pd.crosstab(persons["block"], cells).equals(pd.crosstab(out["block"], cells))


def test_records_are_kept_and_households_move_whole_to_another_block(persons, swapped):
    out, _ = swapped
    others = [c for c in persons.columns if c not in GEOGRAPHY]
    assert out[others].equals(persons[others])
    # The multiset of household locations (with their match keys) is unchanged.
    key = [*GEOGRAPHY, "size", "voting_age"]
    before = household_table(persons)[key].sort_values(key).reset_index(drop=True)
    after = household_table(out)[key].sort_values(key).reset_index(drop=True)
    assert before.equals(after)
    moved = out["swapped"].to_numpy()
    assert (out["block"].to_numpy()[moved] != persons["block"].to_numpy()[moved]).all()
    assert (out[~moved][list(GEOGRAPHY)] == persons[~moved][list(GEOGRAPHY)]).all(axis=None)
    # A household's members all moved or all stayed.
    assert (out.groupby("household")["swapped"].nunique() == 1).all()


def test_group_quarters_persons_never_move(persons, swapped):
    out, _ = swapped
    gq = persons["household"].to_numpy() < 0
    assert gq.sum() > 0
    assert not out["swapped"].to_numpy()[gq].any()
    assert out[gq][list(GEOGRAPHY)].equals(persons[gq][list(GEOGRAPHY)])


def test_rate_zero_gives_the_input_back(persons):
    out, summary = HouseholdSwapping(0.0).swap_with_summary(persons, seed=3)
    assert out.drop(columns="swapped").equals(persons)
    assert (out.dtypes.drop("swapped") == persons.dtypes).all()
    assert not out["swapped"].any() and summary.swapped == 0


@pytest.mark.parametrize("within", ["county", "tract"])
def test_realised_rate_within_binomial_error_on_a_million_persons(within):
    persons = assign_households(synthetic_population(1_000_000, seed=1), seed=1)
    rate = 0.05
    _, summary = HouseholdSwapping(rate, within=within).swap_with_summary(persons, seed=3)
    n = summary.households
    assert n == persons.loc[persons["household"] >= 0, "household"].nunique()
    assert abs(summary.swapped - rate * n) < 4 * np.sqrt(n * rate * (1 - rate))
    assert summary.swapped == (
        summary.selected - summary.balanced - summary.no_partner + summary.partners
    )


def _tiny():
    """County 1: blocks 10 and 20 of tract 100; households by (block, size), one person of
    voting age each (ids are first record ids)."""
    rows, record = [], 0
    plan = [(10, 1), (10, 1), (20, 1), (20, 1), (10, 2), (10, 2), (10, 2), (20, 2), (10, 3)]
    for block, size in plan:
        for member in range(size):
            rows.append((record + member, block, record, 1 if member == 0 else 0))
        record += size
    frame = pd.DataFrame(rows, columns=["record_id", "block", "household", "voting_age"])
    return frame.assign(state=1, county=1, tract=100, block_group=1000, hhgq=0)


def test_a_class_without_partner_is_counted_and_left_in_place():
    persons = _tiny()
    # Every household selected. Size 1: two per block, rotated: all four move. Size 2:
    # three in block 10, one in 20: m = 4, b = 3, e = 2 set aside, k = 1 of them seeks a
    # partner (none is unselected) and one is balanced; the other two exchange. Size 3:
    # alone in its class, e = 1: balanced (k = 0) or without partner (k = 1), by its coin.
    alone = []
    for seed in range(40):
        out, summary = HouseholdSwapping(1.0).swap_with_summary(persons, seed=seed)
        k = summary.no_partner - 1
        assert k in (0, 1)
        assert summary == SwapSummary(
            households=9, selected=9, swapped=6, partners=0, balanced=2 - k, no_partner=1 + k
        )
        moved = out.groupby("household")["swapped"].first()
        assert moved.loc[[0, 1, 2, 3]].all() and not moved.loc[12]
        assert moved.loc[[4, 6, 8]].sum() == 1 and moved.loc[10]
        assert _counts(out, ["block"]).equals(_counts(persons, ["block"]))
        alone.append(k)
    assert 0 < sum(alone) < 40  # the coin rounds e/2 both ways


def test_unselected_partners_come_from_another_block_and_count():
    persons = _tiny()
    runs = [HouseholdSwapping(0.5).swap_with_summary(persons, seed=s) for s in range(200)]
    assert any(summary.partners > 0 for _, summary in runs)
    for out, summary in runs:
        assert summary.swapped == (
            summary.selected - summary.balanced - summary.no_partner + summary.partners
        )
        moved = out["swapped"].to_numpy()
        assert (out["block"].to_numpy()[moved] != persons["block"].to_numpy()[moved]).all()
        assert out.drop_duplicates("household")["swapped"].sum() == summary.swapped
        assert _counts(out, ["block"]).equals(_counts(persons, ["block"]))


def test_same_seed_same_bytes_whatever_the_rows_order_and_the_other_counties(persons):
    mechanism = HouseholdSwapping(0.2)
    whole = mechanism.swap(persons, seed=5)
    shuffled = mechanism.swap(persons.sample(frac=1.0, random_state=1), seed=5)
    assert shuffled.sort_index().equals(whole)
    county = persons["county"].iloc[0]
    alone = mechanism.swap(persons[persons["county"] == county], seed=5)
    assert alone.equals(whole[persons["county"] == county])
    assert not mechanism.swap(persons, seed=6).equals(whole)


def test_a_match_key_of_a_persons_column_constant_in_households(persons):
    tenure = persons["household"].to_numpy() % 2
    frame = persons.assign(tenure=tenure)
    out = HouseholdSwapping(0.3, match_key=("size", "tenure")).swap(frame, seed=1)
    for column in (None, "tenure"):
        assert _counts(out, ["block"], column).equals(_counts(frame, ["block"], column))


def test_bad_parameters_are_one_line_naming_them(persons):
    for rate in (1.5, -0.1, "0.1", True, float("nan")):
        with pytest.raises(ValueError, match=r"^rate must be a real number in"):
            HouseholdSwapping(rate)
    with pytest.raises(ValueError, match=r"^within must be one of"):
        HouseholdSwapping(0.1, within="city")
    for key in ((), "size", ("size", 3)):
        with pytest.raises(ValueError, match=r"^match_key must be a non-empty tuple"):
            HouseholdSwapping(0.1, match_key=key)
    with pytest.raises(ValueError, match=r"^match_key: columns \['tenure'\] are neither"):
        HouseholdSwapping(0.1, match_key=("size", "tenure")).swap(persons, seed=0)
    with pytest.raises(ValueError, match="differ between members of a household"):
        HouseholdSwapping(0.1, match_key=("age",)).swap(persons, seed=0)
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0"):
        HouseholdSwapping(0.1).swap(persons, seed=-1)
    with pytest.raises(ValueError, match="no 'household' column"):
        HouseholdSwapping(0.1).swap(persons.drop(columns="household"), seed=0)
    # A key held by one household each (its identifier): nobody has a partner.
    with pytest.raises(
        ValueError, match=r"^match_key \('household',\): no household has a partner"
    ):
        HouseholdSwapping(0.1, match_key=("household",)).swap(persons, seed=0)
    # At rate 0 nothing is asked of the key.
    kept = HouseholdSwapping(0.0, match_key=("household",)).swap(persons, seed=0)
    assert not kept["swapped"].any()


def test_name_label_and_defaults():
    mechanism = HouseholdSwapping(0.05)
    assert mechanism.name == "swapping" and mechanism.within == "county"
    assert mechanism.match_key == ("size", "voting_age")
    assert mechanism.label == "household swapping (rate 0.05, within county, key size, voting_age)"
    assert HouseholdSwapping(0.05, match_key=["size"]).match_key == ("size",)
