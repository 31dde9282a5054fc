"""Household swapping as the US 1990–2010 censuses: households exchanged between blocks.

:class:`HouseholdSwapping` moves a share ``rate`` of the households to a block
other than their own, each in the place of a household of the same match key
(default :data:`~.households.MATCH_KEY`: persons and voting-age persons) from
the same area ``within`` (tract, block group, county or state), so every
block's persons and voting-age persons stay exact and every ``within`` area's
tables are unchanged: persons only move within it.

**The design.** Within each area:

1. *Selection.* Each household is selected independently with probability
   ``rate``. Group-quarters persons (``household = -1``) are in no household
   and never move.
2. *Rotation.* Within each (area, match-key class), the selected households are
   ordered by block, and at random within a block; with ``m`` of them and ``b``
   in the class's largest block, household ``i`` of that order takes the place
   of household ``(i + b) mod m``. When ``2b ≤ m`` this lands every one of them
   in another block: a block's run is at most ``b`` long, so ``i + b`` is past
   it, and a wrapped ``i + b - m`` falls before the run of a block of ``l``
   households whenever ``l + b ≤ m`` (true for every block, the largest
   included, when ``2b ≤ m``). Each block gives up and receives as many
   households of the class as before, so its totals on the match key are kept.
3. *Excess.* When ``2b > m``, the last ``e = 2b - m`` selected households of
   the largest block (in the random order) are set aside, and the others
   rotated as in 2 (the largest block then holds exactly half of them). An
   exchange of a household set aside with a household *not selected* moves two
   households, so it stands for two selections: the first ``k`` of the ``e``
   (in the random order) are exchanged, ``k = e/2`` when ``e`` is even and
   ``(e ± 1)/2`` with probability ½ each when it is odd, so that ``2k`` has
   mean ``e`` and the share of households moved stays ``rate`` on average; the
   other ``e - k`` stay in place (*balanced*). Each of the ``k`` takes as its
   partner a household of its class, not selected, from another block of the
   area, drawn at random (distinct partners: the unselected households of the
   class outside the largest block in random order), and the two exchange
   places. One for which no such partner is left (e.g. the only household of
   its class in the area) stays in place and is counted as *unswapped for
   want of a partner* (:class:`SwapSummary`).

So the households that move are the selected ones, less the balanced ones and
those with no partner, plus the partners; all three come from classes with
few selected households in an area. The realised share is measured in
``tests/swapping/test_household_swapping.py``: within binomial error of
``rate`` on a synthetic state of a million persons.

**Seeding.** The area ``a`` (its integer identifier) draws from
``numpy.random.default_rng([seed, 3, a])``: first one uniform per household of
the area in increasing household identifier (selected when below ``rate``),
then one more per household (the random order of steps 2 and 3), then one
more (a household's coin, which rounds ``e/2`` in step 3 when it is the first
set aside of its class). An area's
swaps depend only on its own households: the result is the same bytes however
the persons are partitioned, as long as each area is whole in its partition.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from ..population.schema import GEOGRAPHY
from .households import HOUSEHOLD, MATCH_KEY, household_table

__all__ = ["SWAP_AREAS", "HouseholdSwapping", "SwapSummary"]

#: The areas a household's partner may come from, smallest first.
SWAP_AREAS = ("block_group", "tract", "county", "state")
#: The column of the result saying whether the person's household moved.
SWAPPED = "swapped"


@dataclass(frozen=True)
class SwapSummary:
    """What one swap did, in households: ``households`` (all, group quarters excluded),
    ``selected`` (drawn with probability ``rate``), ``swapped`` (moved: the selected
    ones with a partner, and the partners), ``partners`` (moved without being
    selected: the partners of step 3), ``balanced`` (selected, set aside in step 3
    and left in place because each exchange with a partner moves two) and
    ``no_partner`` (selected but left in place, no household of their class in
    another block of the area left to exchange with)."""

    households: int = 0
    selected: int = 0
    swapped: int = 0
    partners: int = 0
    balanced: int = 0
    no_partner: int = 0

    def __add__(self, other: SwapSummary) -> SwapSummary:
        return SwapSummary(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    @property
    def rate(self) -> float:
        """The realised share of households swapped (0 with no household)."""
        return self.swapped / self.households if self.households else 0.0


@dataclass(frozen=True)
class HouseholdSwapping:
    """Household swapping (module docstring): the US censuses' mechanism 1990–2010.

    Parameters
    ----------
    rate : float, required (no default), a real in ``[0, 1]``
        The probability that a household is selected for swapping.
    within : {"block_group", "tract", "county", "state"}, default ``"county"``
        The area the partner comes from (persons move only within it).
    match_key : tuple of str, default :data:`~.households.MATCH_KEY` ``("size", "voting_age")``
        The columns two exchanged households share: non-empty; each a column of
        :func:`~.households.household_table` (``size``, ``voting_age``) or a
        column of the persons that is the same for every member of a household. A key
        under which no household has a partner in another block of its area (at a rate
        above 0) is refused when swapping; single households without one stay in place
        and are counted (``no_partner``).
    """

    rate: float
    within: str = "county"
    match_key: tuple = MATCH_KEY

    name = "swapping"

    def __post_init__(self):
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"rate must be a real number in [0, 1], got {rate!r}")
        if self.within not in SWAP_AREAS:
            raise ValueError(f"within must be one of {SWAP_AREAS}, got {self.within!r}")
        key = self.match_key
        if (
            isinstance(key, str)
            or not isinstance(key, tuple | list)
            or not key
            or not all(isinstance(c, str) for c in key)
        ):
            raise ValueError(f"match_key must be a non-empty tuple of column names, got {key!r}")
        object.__setattr__(self, "rate", float(rate))
        object.__setattr__(self, "match_key", tuple(key))

    @property
    def label(self) -> str:
        key = ", ".join(self.match_key)
        return f"household swapping (rate {self.rate:g}, within {self.within}, key {key})"

    def swap(self, persons: pd.DataFrame, *, seed: int) -> pd.DataFrame:
        """``persons`` with swapped households' geography exchanged and a bool ``swapped``
        column (the mechanism contract; :meth:`swap_with_summary` also counts)."""
        return self.swap_with_summary(persons, seed=seed)[0]

    def swap_with_summary(
        self, persons: pd.DataFrame, *, seed: int
    ) -> tuple[pd.DataFrame, SwapSummary]:
        """:meth:`swap`'s result and its :class:`SwapSummary`."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        table = self._households(persons)
        destination, summary = _destinations(table, self, int(seed))
        out = persons.copy()
        household = persons[HOUSEHOLD].to_numpy()
        member = household >= 0
        row = np.searchsorted(table[HOUSEHOLD].to_numpy(), household[member])
        moved = destination[row] != row
        for column in (g for g in GEOGRAPHY if g in persons.columns):
            values = out[column].to_numpy().copy()
            values[member] = table[column].to_numpy()[destination[row]]
            out[column] = values
        swapped = np.zeros(len(persons), dtype=bool)
        swapped[member] = moved
        out[SWAPPED] = swapped
        return out, summary

    def _households(self, persons: pd.DataFrame) -> pd.DataFrame:
        """The household table with the match key's columns (checked)."""
        if not isinstance(persons, pd.DataFrame):
            raise TypeError(f"persons must be a pandas DataFrame, got {type(persons).__name__}")
        if self.within not in persons.columns:
            raise ValueError(f"persons: no {self.within!r} column (within={self.within!r})")
        if not pd.api.types.is_integer_dtype(persons[self.within]):
            raise ValueError(f"persons: {self.within} must hold integer identifiers")
        table = household_table(persons)
        extra = [c for c in self.match_key if c not in table.columns]
        missing = [c for c in extra if c not in persons.columns]
        if missing:
            raise ValueError(
                f"match_key: columns {missing} are neither household_table's nor the persons'"
            )
        if extra:
            members = persons[persons[HOUSEHOLD].to_numpy() >= 0]
            grouped = members.groupby(HOUSEHOLD, sort=True)[extra]
            if (grouped.nunique(dropna=False) > 1).any(axis=None):
                raise ValueError(
                    f"match_key: columns {extra} differ between members of a household"
                )
            table = table.join(grouped.first().reset_index(drop=True))
        return table


def _destinations(table: pd.DataFrame, mechanism: HouseholdSwapping, seed: int):
    """For each household (row of ``table``), the row whose place it takes (itself when
    it stays), and the :class:`SwapSummary`."""
    n = len(table)
    area = table[mechanism.within].to_numpy().astype(np.int64)
    # Rows by area, then household identifier (the table is sorted by identifier).
    by_area = np.argsort(area, kind="stable")
    cuts = np.flatnonzero(np.diff(area[by_area])) + 1
    chosen, order_key, coin = np.empty(n), np.empty(n), np.empty(n)
    for rows in np.split(by_area, cuts) if n else []:
        rng = np.random.default_rng([seed, 3, int(area[rows[0]])])
        for draws in (chosen, order_key, coin):
            draws[rows] = rng.random(rows.size)
    selected = chosen < mechanism.rate
    classes = table[[mechanism.within, *mechanism.match_key]]
    group = classes.groupby(list(classes.columns), sort=True, dropna=False).ngroup().to_numpy()
    block = table["block"].to_numpy()
    if mechanism.rate > 0 and n and pd.Series(block).groupby(group).nunique().max() < 2:
        raise ValueError(
            f"match_key {mechanism.match_key!r}: no household has a partner with the same key "
            f"in another block of its {mechanism.within}, so none can be swapped"
        )
    destination = np.arange(n)
    sel = np.flatnonzero(selected)
    excess = _excess(sel, group, block, order_key)
    rotated = np.setdiff1d(sel, excess)
    rotated = rotated[np.lexsort((order_key[rotated], block[rotated], group[rotated]))]
    destination[rotated] = _rotation(rotated, group[rotated], block[rotated])
    exchanged, balanced = _halved(excess, group, order_key, coin)
    paired, partner = _partners(exchanged, selected, group, block, order_key)
    destination[paired] = partner
    destination[partner] = paired
    summary = SwapSummary(
        households=n,
        selected=int(sel.size),
        swapped=int(np.count_nonzero(destination != np.arange(n))),
        partners=int(partner.size),
        balanced=int(balanced.size),
        no_partner=int(exchanged.size - paired.size),
    )
    return destination, summary


def _runs(values: np.ndarray) -> np.ndarray:
    """Starts of the runs of equal consecutive ``values`` (one or more arrays, zipped)."""
    change = np.zeros(values[0].size, dtype=bool)
    if values[0].size:
        change[0] = True
    for v in values:
        change[1:] |= v[1:] != v[:-1]
    return np.flatnonzero(change)


def _block_runs(group: np.ndarray, block: np.ndarray):
    """For rows sorted by (group, block): each row's group start, group size, rank in its
    (group, block) run, run length, and the largest run length of its group."""
    size = group.size
    g_start = _runs([group])
    r_start = _runs([group, block])
    g_len = np.diff(np.append(g_start, size))
    r_len = np.diff(np.append(r_start, size))
    g_of_row = np.repeat(np.arange(g_start.size), g_len)
    r_of_row = np.repeat(np.arange(r_start.size), r_len)
    g_of_run = g_of_row[r_start] if size else np.empty(0, dtype=np.int64)
    b = np.zeros(g_start.size, dtype=np.int64)
    np.maximum.at(b, g_of_run, r_len)
    rank = np.arange(size) - r_start[r_of_row]
    return g_start[g_of_row], g_len[g_of_row], rank, r_len[r_of_row], b[g_of_row]


def _rotation(rows: np.ndarray, group: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Step 2: ``rows`` sorted by (group, block, random order), no block holding more than
    half of its group: row ``i`` of each group takes the place of row ``(i + b) mod m``."""
    start, m, _, _, b = _block_runs(group, block)
    position = np.arange(rows.size) - start
    return rows[start + (position + b) % np.maximum(m, 1)]


def _excess(sel, group, block, order_key):
    """Step 3's households set aside (rows of ``table``)."""
    rows = sel[np.lexsort((order_key[sel], block[sel], group[sel]))]
    _, m, rank, run, b = _block_runs(group[rows], block[rows])
    aside = (run == b) & (2 * b > m) & (rank >= m - b)
    return rows[aside]


def _halved(excess, group, order_key, coin):
    """Step 3's ``k`` of each class's ``e`` households set aside that take a partner, and
    the ``e - k`` that stay (balanced); ``k`` rounds ``e/2`` by the first one's coin."""
    excess = excess[np.lexsort((order_key[excess], group[excess]))]
    start, e, rank, _, _ = _block_runs(group[excess], group[excess])
    k = e // 2 + ((e % 2 == 1) & (coin[excess[start]] < 0.5))
    return excess[rank < k], excess[rank >= k]


def _partners(excess, selected, group, block, order_key):
    """Step 3's pairs: the households set aside that found a partner, and their partners."""
    excess = excess[np.lexsort((order_key[excess], group[excess]))]
    # a group's households set aside all lie in its largest block
    largest_of_group = pd.Series(block[excess], index=group[excess])
    largest_of_group = largest_of_group[~largest_of_group.index.duplicated()]
    candidates = np.flatnonzero(~selected & np.isin(group, group[excess]))
    own = largest_of_group.reindex(group[candidates]).to_numpy()
    candidates = candidates[block[candidates] != own]
    candidates = candidates[np.lexsort((order_key[candidates], group[candidates]))]
    first = np.searchsorted(group[candidates], group[excess], side="left")
    last = np.searchsorted(group[candidates], group[excess], side="right")
    rank = np.arange(excess.size) - np.searchsorted(group[excess], group[excess], side="left")
    found = rank < last - first
    return excess[found], candidates[first[found] + rank[found]]
