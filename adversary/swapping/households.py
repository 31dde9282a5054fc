"""Households of a population of persons: who lives with whom, and each household's match key.

Swapping exchanges *households* between blocks, so a population of persons
needs them. A table that has a ``household`` column keeps it; the synthetic
state (:func:`adversary.population.synthetic.synthetic_population`) has none,
and :func:`assign_households` gives it one by a stated simple model.

**The model.** Persons in group quarters (``hhgq > 0``) live in no household
(``household = -1``) and are never swapped. The household persons of each
block are cut into households whose sizes are drawn from :data:`HOUSEHOLD_SIZE_PMF`
(sizes 1 … 7, roughly the 2020 shares of 1-, 2-, …, 7-or-more-person
households), the last household of a block taking the persons left (so the
block's total is met and a few households near block ends are smaller than
drawn). Each household's first member, its householder, is an adult
(``voting_age = 1``) while the block has adults for every household; the
other members are the block's remaining persons in random order. Persons'
characteristics are not changed: they stay independent of their
housemates', as in the synthetic model.

**Identifiers and seeding.** A household's identifier is the smallest
``record_id`` of its members, so it is unique in the table and the same
however the table is partitioned. The households of the county ``c`` (its
identifier) come from ``numpy.random.default_rng([seed, 2, c])``: a county's
households do not depend on the other counties or on the order of the rows.

**A person in their block.** :func:`target_blocks` gives, for chosen
household persons, their block as the swapping attack takes it (a tuple of
households, each a tuple of its members' cells) and their place in it.

**Match key.** :func:`household_table` gives one row per household with its
geography, ``size`` (persons) and ``voting_age`` (persons of voting age): the
default match key of household swapping (:data:`MATCH_KEY`), under which a
swap keeps every block's persons and voting-age persons exact.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..population.schema import GEOGRAPHY

__all__ = [
    "HOUSEHOLD",
    "HOUSEHOLD_SIZE_PMF",
    "MATCH_KEY",
    "assign_households",
    "household_table",
    "target_blocks",
]

#: The column naming each person's household (-1: group quarters, in no household).
HOUSEHOLD = "household"

#: Household sizes 1 … 7 (7: seven or more persons), roughly the 2020 shares.
HOUSEHOLD_SIZE_PMF = np.array([0.28, 0.345, 0.15, 0.125, 0.06, 0.025, 0.015])

#: The default match key of household swapping: persons and voting-age persons.
MATCH_KEY = ("size", "voting_age")

_REQUIRED = ("record_id", "block", "county", "voting_age", "hhgq")


def _check_persons(persons: pd.DataFrame) -> None:
    if not isinstance(persons, pd.DataFrame):
        raise TypeError(f"persons must be a pandas DataFrame, got {type(persons).__name__}")
    missing = [c for c in _REQUIRED if c not in persons.columns]
    if missing:
        raise ValueError(f"persons: columns {missing} are missing")
    if persons["record_id"].duplicated().any():
        raise ValueError("persons: record_id must be unique")


def _county_households(frame: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """The household identifier of each row of one county's household persons.

    ``frame`` holds the county's persons not in group quarters, sorted by
    (block, record_id); the result is aligned with its rows.
    """
    n = len(frame)
    block = frame["block"].to_numpy()
    adult = frame["voting_age"].to_numpy() == 1
    # Household starts: where a drawn size runs out, and at every block's first person.
    sizes = rng.choice(HOUSEHOLD_SIZE_PMF.size, size=n, p=HOUSEHOLD_SIZE_PMF) + 1
    ends = np.cumsum(sizes)
    is_head = np.zeros(n, dtype=bool)
    is_head[ends[ends < n]] = True
    is_head[0] = True
    is_head[1:] |= block[1:] != block[:-1]
    slot_household = np.cumsum(is_head) - 1
    # Fill the heads' slots first, adults first, then every other slot, within each block.
    slot_order = np.lexsort((np.arange(n), ~is_head, block))
    person_order = np.lexsort((rng.random(n), ~adult, block))
    household_of_person = np.empty(n, dtype=np.int64)
    household_of_person[person_order] = slot_household[slot_order]
    record = frame["record_id"].to_numpy().astype(np.int64)
    first_record = np.full(slot_household[-1] + 1, np.iinfo(np.int64).max)
    np.minimum.at(first_record, household_of_person, record)
    return first_record[household_of_person]


def assign_households(persons: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """``persons`` with a ``household`` column, by the model of the module docstring.

    ``persons`` needs ``record_id``, ``county``, ``block``, ``voting_age`` and
    ``hhgq``; the rows keep their order. A table that already has a
    ``household`` column is refused (keep it, or drop it to redraw).
    """
    _check_persons(persons)
    if HOUSEHOLD in persons.columns:
        raise ValueError(f"persons: already has a {HOUSEHOLD!r} column")
    household = np.full(len(persons), -1, dtype=np.int64)
    in_household = persons["hhgq"].to_numpy() == 0
    rows = np.flatnonzero(in_household)
    frame = persons.iloc[rows]
    order = np.lexsort((frame["record_id"].to_numpy(), frame["block"].to_numpy()))
    county = frame["county"].to_numpy()[order]
    cuts = np.flatnonzero(county[1:] != county[:-1]) + 1
    # Sorting by block first keeps each county's rows together (a block lies in one county).
    for part in np.split(np.arange(rows.size), cuts):
        if part.size == 0:
            continue
        rng = np.random.default_rng([int(seed), 2, int(county[part[0]])])
        household[rows[order[part]]] = _county_households(frame.iloc[order[part]], rng)
    out = persons.copy()
    out[HOUSEHOLD] = household
    return out


def household_table(persons: pd.DataFrame) -> pd.DataFrame:
    """One row per household: ``household``, its geography, ``size`` and ``voting_age``.

    Sorted by household identifier; group-quarters persons (``household = -1``)
    are left out.
    """
    if HOUSEHOLD not in persons.columns:
        raise ValueError(
            f"persons: no {HOUSEHOLD!r} column (adversary.swapping.assign_households adds one)"
        )
    members = persons[persons[HOUSEHOLD].to_numpy() >= 0]
    geography = [g for g in GEOGRAPHY if g in members.columns]
    grouped = members.groupby(HOUSEHOLD, sort=True)
    table = grouped[geography].first()
    if (grouped["block"].nunique() > 1).any():
        raise ValueError("persons: a household's members live in more than one block")
    table["size"] = grouped.size().astype(np.int64)
    table["voting_age"] = grouped["voting_age"].sum().astype(np.int64)
    return table.reset_index()


def target_blocks(persons: pd.DataFrame, cells, record_ids, n_cells: int) -> list[tuple]:
    """For each of ``record_ids`` (household persons of ``persons``): ``(block, households,
    (h, m), counts)``.

    ``cells``: each row's cell code (aligned with ``persons``); ``households``: the
    block's households in identifier order, each the tuple of its members' cells in
    ``record_id`` order; ``(h, m)``: the person's household and member index in it;
    ``counts``: the block's household persons in each of the ``n_cells`` cells. A
    block's households are built once however many of its persons are asked for.
    """
    in_household = persons[HOUSEHOLD].to_numpy() >= 0
    frame = pd.DataFrame(
        {
            "block": persons["block"].to_numpy()[in_household],
            HOUSEHOLD: persons[HOUSEHOLD].to_numpy()[in_household],
            "record_id": persons["record_id"].to_numpy()[in_household],
            "cell": np.asarray(cells)[in_household],
        }
    ).sort_values(["block", HOUSEHOLD, "record_id"], kind="stable")
    blocks, members = frame["block"].to_numpy(), frame[HOUSEHOLD].to_numpy()
    codes = frame["cell"].to_numpy()
    position = pd.Index(frame["record_id"]).get_indexer(np.asarray(record_ids))
    if np.any(position < 0):
        raise ValueError("record_ids: every one must be a household person of persons")
    cache, out = {}, []
    for at in position:
        block = blocks[at]
        if block not in cache:
            low = np.searchsorted(blocks, block, "left")
            high = np.searchsorted(blocks, block, "right")
            starts = np.r_[0, np.flatnonzero(np.diff(members[low:high])) + 1]
            households = tuple(tuple(h.tolist()) for h in np.split(codes[low:high], starts[1:]))
            counts = np.bincount(codes[low:high], minlength=n_cells)
            cache[block] = (low, starts, households, counts)
        low, starts, households, counts = cache[block]
        h = int(np.searchsorted(starts, at - low, "right")) - 1
        out.append((block, households, (h, int(at - low - starts[h])), counts))
    return out
