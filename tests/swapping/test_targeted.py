"""Targeted record swapping: recordSwap's rules, checked by brute force on the synthetic state."""

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.population.synthetic import synthetic_population
from adversary.scenarios.reconstruction import REDUCED
from adversary.swapping import (
    RISK_VARIABLES,
    TargetedRecordSwapping,
    assign_households,
    household_table,
)
from adversary.swapping.targeted import DONOR, RISKY, SAMPLED
from adversary.swapping.targeted_risk import pair_among, pair_households, rounded_targets

HIERARCHY = ("county", "tract", "block")


@pytest.fixture(scope="module")
def persons():
    return assign_households(synthetic_population(20_000, seed=5), seed=1)


@pytest.fixture(scope="module")
def run(persons):
    return TargetedRecordSwapping().run(persons, seed=7)


@pytest.fixture(scope="module")
def households(persons, run):
    """The household table with the run's columns and each level's area."""
    return household_table(persons).merge(run.households.drop(columns=["size", "voting_age"]))


def _brute_force_levels(persons, k, risk_variables):
    """Each household's swap level: counts of the combination per area by pandas groupby."""
    members = persons[persons["household"] >= 0].copy()
    cells = np.unravel_index(block_cells(members, REDUCED), REDUCED.sizes)
    for name in risk_variables:
        members[f"r_{name}"] = cells[REDUCED.names.index(name)]
    combo = [f"r_{name}" for name in risk_variables]
    level = pd.Series(len(HIERARCHY), index=np.unique(members["household"]))
    for lv in reversed(range(len(HIERARCHY))):
        count = members.groupby([HIERARCHY[lv], *combo])["record_id"].transform("size")
        smallest = count.groupby(members["household"]).min()
        level[smallest.index[smallest < k]] = lv
    return level


@pytest.mark.parametrize("k", [2, 3, 6])
def test_risk_level_is_the_highest_level_where_a_member_count_is_below_k(persons, k):
    trs = TargetedRecordSwapping(k_anonymity=k, risk_variables=("hispanic", "race"))
    got = trs.run(persons, seed=1).households.set_index("household")["risk_level"]
    expected = _brute_force_levels(persons, k, ("hispanic", "race"))
    assert (got.reindex(expected.index) == expected).all()
    assert (expected < len(HIERARCHY)).sum() > 100  # the check bites


def test_risky_households_are_swapped_unless_no_donor_is_left(households, run):
    risky = households[households["risk_level"] < len(HIERARCHY)]
    assert (risky["role"] == RISKY).mean() > 0.99
    assert run.summary["unswappable"].sum() == (risky["partner"] < 0).sum()
    # A risky household left unswapped at level l: every household it could have taken (same
    # parent area, another level-l area, same size: the last profile) was used by then.
    for row in risky[risky["partner"] < 0].itertuples():
        level = row.risk_level
        same_parent = (
            households[HIERARCHY[level - 1]] == getattr(row, HIERARCHY[level - 1])
            if level
            else np.ones(len(households), bool)
        )
        other_area = households[HIERARCHY[level]] != getattr(row, HIERARCHY[level])
        candidates = households[same_parent & other_area & (households["size"] == row.size)]
        used_by_then = candidates["swap_level"].between(0, level)
        assert used_by_then.all()


def test_every_swap_pairs_two_households_of_one_profile_in_sibling_areas(persons, run, households):
    swapped = households[households["partner"] >= 0].set_index("household")
    partner = swapped.loc[swapped["partner"]]
    assert (partner["partner"].to_numpy() == swapped.index.to_numpy()).all()
    assert (partner["swap_level"].to_numpy() == swapped["swap_level"].to_numpy()).all()
    # Every profile holds size; voting age too in the first (exact: see the block invariants).
    assert (partner["size"].to_numpy() == swapped["size"].to_numpy()).all()
    for level, column in enumerate(HIERARCHY):
        at = swapped["swap_level"].to_numpy() == level
        differ = partner[column].to_numpy()[at] != swapped[column].to_numpy()[at]
        assert differ.all()
        parent = HIERARCHY[level - 1] if level else "state"
        assert (partner[parent].to_numpy()[at] == swapped[parent].to_numpy()[at]).all()
    # Each member now carries its partner's original geography.
    out = run.persons
    moved = out["swapped"].to_numpy()
    assert set(np.unique(persons["household"].to_numpy()[moved])) == set(swapped.index)
    origin = household_table(persons).set_index("household")
    target = swapped["partner"].reindex(persons["household"].to_numpy()[moved]).to_numpy()
    for column in ("state", "county", "tract", "block_group", "block"):
        assert (out[column].to_numpy()[moved] == origin[column].reindex(target).to_numpy()).all()
    assert (out.drop(columns="swapped")[~moved] == persons[~moved]).all().all()


def test_roles_count_the_summary(run):
    h = run.households
    s = run.summary
    assert s["swapped"].sum() == (h["role"] == RISKY).sum()
    assert s["sampled"].sum() == (h["role"] == SAMPLED).sum()
    assert s["donors"].sum() == (h["role"] == DONOR).sum()
    assert (s["sampled"].iloc[:-1] == 0).all()  # only the lowest level samples


def test_without_risky_households_the_rate_counts_both_households_of_a_swap(persons):
    rate = 0.1
    run = TargetedRecordSwapping(rate=rate, k_anonymity=1).run(persons, seed=3)
    h = run.households
    sampled = (h["role"] == SAMPLED).sum()
    # Σ_b round(n_b · rate / 2): the total is floor or ceil of N · rate / 2.
    assert abs(sampled - len(h) * rate / 2) < 1
    assert (h["role"] == RISKY).sum() == 0
    assert (h["partner"] >= 0).sum() == 2 * ((h["role"] == SAMPLED) & (h["partner"] >= 0)).sum()
    assert (h["partner"] >= 0).mean() == pytest.approx(rate, abs=0.003)


def test_sampled_per_block_is_the_target_less_the_risky_ones_on_average(persons, households):
    """E[sampled in block b] = max(0, n_b · rate / 2 - risky_b) (the law's step 2)."""
    rate, seeds = 0.3, 20
    trs = TargetedRecordSwapping(rate=rate)
    blocks = households.groupby("block").agg(
        n=("size", "size"), risky=("risk_level", lambda x: (x < len(HIERARCHY)).sum())
    )
    x = blocks["n"] * rate / 2
    expected = np.maximum(x - blocks["risky"], 0).sum()
    # Variance of the rounding per block ≤ frac(x)(1 - frac(x)).
    variance = (np.where(x >= blocks["risky"], (x % 1) * (1 - x % 1), 0)).sum()
    total = 0
    for seed in range(seeds):
        h = trs.run(persons, seed=seed).households
        total += (h["role"] == SAMPLED).sum()
    assert abs(total / seeds - expected) < 4 * np.sqrt(variance / seeds) + 1


def _moves(households, persons_per_household, column, up_to_level):
    """Net persons into each area of ``column`` by the swaps at levels ≤ ``up_to_level``."""
    h = households[(households["partner"] >= 0) & (households["swap_level"] <= up_to_level)]
    destination = households.set_index("household")[column].reindex(h["partner"]).to_numpy()
    gain = pd.Series(persons_per_household.reindex(h["household"]).to_numpy(), index=destination)
    return gain.groupby(level=0).sum().sub(h.groupby(column)["size"].sum(), fill_value=0)


def test_area_totals_are_exact_above_the_swap_level(persons):
    # The 20 000-person state has one county: the levels below it, with no size in the profile.
    hierarchy = ("tract", "block_group", "block")
    trs = TargetedRecordSwapping(similarity=(("voting_age",),), k_anonymity=30, hierarchy=hierarchy)
    run = trs.run(persons, seed=2)
    h = household_table(persons).merge(run.households.drop(columns=["size", "voting_age"]))
    sizes = h.set_index("household")["size"]
    for column in ("state", "county"):
        assert (run.persons.groupby(column).size() == persons.groupby(column).size()).all()
    for level, column in enumerate(hierarchy):
        after, before = run.persons.groupby(column).size(), persons.groupby(column).size()
        change = after.sub(before, fill_value=0)
        expected = _moves(h, sizes, column, level).reindex(change.index, fill_value=0)
        assert (change == expected).all()  # swaps below the level stay inside its areas
        assert (h["swap_level"] == level).any() and (change != 0).any()


def test_block_persons_exact_when_every_profile_holds_size(persons, run):
    for column in ("block", "tract", "county"):
        assert (run.persons.groupby(column).size() == persons.groupby(column).size()).all()
    trs = TargetedRecordSwapping(similarity=(("size", "voting_age"),))
    out = trs.swap(persons, seed=4)
    adults = persons.groupby("block")["voting_age"].sum()
    assert (out.groupby("block")["voting_age"].sum().reindex(adults.index) == adults).all()


def test_same_seed_same_bytes_whatever_the_order_or_the_other_states():
    persons = assign_households(synthetic_population(12_000, states=2, seed=3), seed=2)
    trs = TargetedRecordSwapping(rate=0.1)
    out = trs.swap(persons, seed=9)
    assert out.equals(trs.swap(persons, seed=9))
    shuffled = trs.swap(persons.sample(frac=1.0, random_state=1), seed=9)
    assert shuffled.sort_values("record_id").reset_index(drop=True).equals(out)
    state = persons["state"].iloc[0]
    alone = trs.swap(persons[persons["state"] == state].reset_index(drop=True), seed=9)
    mine = out[(persons["state"] == state).to_numpy()].reset_index(drop=True)
    assert alone.equals(mine)
    assert not trs.swap(persons, seed=10)["swapped"].equals(out["swapped"])


def test_when_every_household_is_risky_they_pair_with_each_other_across_the_top_level(persons):
    run = TargetedRecordSwapping(k_anonymity=10**9, hierarchy=("tract", "block")).run(
        persons, seed=5
    )
    h = household_table(persons).merge(run.households.drop(columns=["size", "voting_age"]))
    assert (h["risk_level"] == 0).all()
    assert set(h["role"]) <= {0, RISKY}  # no donors that are not risky, nothing sampled
    assert (h.loc[h["partner"] >= 0, "swap_level"] == 0).all()
    # Left over: per size (the last profile), households of a single tract.
    left = h[h["partner"] < 0]
    assert (left.groupby("size")["tract"].nunique() <= 1).all()
    assert (h["partner"] >= 0).mean() > 0.99


def test_rounded_targets_are_unbiased_and_keep_the_total():
    expected = np.array([0.3, 1.25, 0.0, 2.5, 0.95])

    class Grid:
        """A stand-in generator whose uniforms run over a fine grid."""

        def __init__(self):
            self.values = iter((np.arange(10_000) + 0.5) / 10_000)

        def random(self):
            return next(self.values)

    grid = Grid()
    draws = np.array([rounded_targets(expected, grid) for _ in range(10_000)])
    assert np.allclose(draws.mean(axis=0), expected, atol=1e-4)
    assert set(draws.sum(axis=1)) <= {5, 6}
    assert (draws >= np.floor(expected)).all() and (draws <= np.ceil(expected)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate": 1.5}, r"rate must be in \[0, 1\], got 1.5"),
        ({"rate": -0.1}, r"rate must be in \[0, 1\]"),
        ({"rate": "0.1"}, "rate must be a number"),
        ({"k_anonymity": 0}, "k_anonymity must be an integer >= 1, got 0"),
        ({"k_anonymity": 2.5}, "k_anonymity must be an integer >= 1"),
        ({"risk_variables": ("age",)}, "risk_variables: unknown column 'age'"),
        ({"risk_variables": ()}, "risk_variables must name at least one column"),
        ({"similarity": (("size", "tenure"),)}, "similarity: unknown column 'tenure'"),
        ({"similarity": ()}, "similarity must be a non-empty sequence"),
        ({"hierarchy": ()}, "hierarchy must name at least one column"),
        ({"hierarchy": ("county", "zip")}, "hierarchy: unknown column 'zip'"),
        ({"hierarchy": ("block", "county")}, "hierarchy must run from coarse to fine"),
    ],
)
def test_bad_parameters_are_one_line_naming_the_parameter(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message) as error:
        TargetedRecordSwapping(**kwargs)
    assert "\n" not in str(error.value)


def test_bad_persons_are_one_line(persons):
    trs = TargetedRecordSwapping()
    with pytest.raises(TypeError, match="persons must be a pandas DataFrame"):
        trs.swap(persons.to_numpy(), seed=0)
    with pytest.raises(ValueError, match="no 'household' column"):
        trs.swap(persons.drop(columns="household"), seed=0)
    with pytest.raises(ValueError, match=r"columns \['tract'\] are missing"):
        trs.swap(persons.drop(columns="tract"), seed=0)


def test_risk_variables_are_the_reduced_attributes():
    assert RISK_VARIABLES == REDUCED.names


def test_name_and_label():
    trs = TargetedRecordSwapping(rate=0.1, k_anonymity=4)
    assert trs.name == "trs"
    assert "10%" in trs.label and "k=4" in trs.label


@pytest.mark.parametrize("seed", range(5))
def test_pairing_leaves_a_seeker_only_when_no_donor_is_left_for_it(seed):
    rng = np.random.default_rng(seed)
    n = 400
    group, area = rng.integers(0, 6, n), rng.integers(0, 4, n)
    seekers = np.flatnonzero(rng.random(n) < 0.4)
    donors = np.setdiff1d(np.arange(n), seekers)
    s, d = pair_households(seekers, donors, group, area, rng)
    assert np.unique(s).size == s.size and np.unique(d).size == d.size
    assert np.isin(s, seekers).all() and np.isin(d, donors).all()
    assert (group[s] == group[d]).all() and (area[s] != area[d]).all()
    free = np.setdiff1d(donors, d)
    for left in np.setdiff1d(seekers, s):
        assert not ((group[free] == group[left]) & (area[free] != area[left])).any()
    # Among themselves: what is left of a group lies in one area.
    a, b = pair_among(seekers, group, area, rng)
    assert np.intersect1d(a, b).size == 0 and (area[a] != area[b]).all()
    rest = np.setdiff1d(seekers, np.concatenate((a, b)))
    assert all(np.unique(area[rest][group[rest] == g]).size <= 1 for g in range(6))


def test_pairing_two_seekers_whatever_the_random_split():
    # A split with every seeker on one side (half the draws) once failed on an empty side.
    for seed in range(20):
        generator = np.random.default_rng(seed)
        a, b = pair_among(np.array([0, 1]), np.zeros(2, int), np.array([0, 1]), generator)
        assert sorted([*a, *b]) == [0, 1]
