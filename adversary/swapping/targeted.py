"""Targeted record swapping (TRS), the EU 2021 census method, after sdcMicro's ``recordSwap``.

This is the package's own vectorised implementation of the procedure that
sdcTools/sdcMicro implements in ``src/recordSwap/recordSwap.cpp`` (C++ core)
and documents in ``R/recordSwap.R``. The rules it keeps from there:

- **Risk** (``setRisk``): at each level ``l`` of the ``hierarchy`` (highest
  first), a person's count is the number of persons of its level-``l`` area
  with its combination of the ``risk_variables``, its risk ``1/count``; a
  household's risk is its members' largest (its count their smallest).
- **Risky households** (``setLevels``): a household is risky at the highest
  level where its count is below ``k_anonymity`` and is swapped *across* that
  level: with a household of another area of that level. Counts shrink down
  the hierarchy, so a household is risky somewhere iff it is risky in its
  lowest-level area.
- **The swap rate** (``distributeDraws``): ``rate`` counts *both* households of
  a swap, so a lowest-level area of ``n`` households targets ``n * rate / 2``
  sampled households, rounded at random.
- **Levels in order** (``recordSwap``): from the highest level down, the risky
  households of each level not yet swapped are swapped; at the lowest level
  each area also samples households that are not risky until its target is
  met (none when its risky households already reach it). A household is
  swapped at most once (as sampled household or as donor).
- **Donors** (``sampleDonor``): a household not yet swapped, of another area of
  the swap's level, with the same values of the first ``similarity`` profile;
  where none is left, of the second profile, and so on. Where no profile
  gives one, the household is not swapped (recordSwap logs it) and is not
  sampled again (it may still be taken as a donor at a lower level).
- **The swap**: the two households exchange their geography (every level).

**Where this implementation differs** (each for a vectorised run, the
adversary's law of :mod:`adversary.scenarios.swapping.targeted_law`, or the
package's data):

1. Donors are drawn *uniformly* among the eligible households, and the
   lowest level's extra households uniformly among the block's households
   that are not risky; recordSwap weights both by risk (``prob / Exp(1)``
   keys, a weighted sample without replacement).
2. A donor comes from another area of the swap's level *within the same
   parent area* (the state for the highest level); recordSwap takes it from
   any other area of that level in the whole data.
3. Donors are first households that are not themselves to be swapped at that
   level; only where none is left do the remaining ones pair with each other
   (recordSwap's risk-ordered pool mixes both). With ``k_anonymity`` so large
   that every household is risky at the highest level, all are paired with
   each other across that level (a household left over, with no partner in
   another area, is not swapped).
4. The lowest level's extra draw is ``max(0, target - risky)`` where ``risky``
   counts all the area's risky households; recordSwap subtracts the ones
   swapped at higher levels as sampled households plus those risky at the
   lowest level. The random rounding is systematic (each area rounds up with
   probability its fractional part, the total kept); recordSwap rounds up a
   uniformly chosen set of areas, as many as the rounded sum of the fractions.
5. Counts are over household persons only, on the 56-cell ``REDUCED``
   classification's codes (race in 7 categories); group-quarters persons are
   neither counted nor swapped.
6. Seeding: the households of state ``s`` use ``numpy.random.default_rng([seed,
   4, s])`` (the state is the root above the hierarchy), so the result does
   not depend on the rows' order or on other states.

**Parameters** (defaults; ranges): ``rate`` 0.05, in [0, 1] (share of
households swapped, both households of a swap counted); ``k_anonymity`` 3, an
integer ≥ 1 (1: no household is risky); ``risk_variables`` ``("voting_age",
"hispanic", "race")``, names of ``REDUCED`` (``hhgq``, ``voting_age``,
``hispanic``, ``race``); ``similarity`` ``(("size", "voting_age"),
("size",))``, profiles of household columns of
:func:`~adversary.swapping.household_table` (``size``, ``voting_age``);
``hierarchy`` ``("county", "tract", "block")``, geography levels below the
state from coarse to fine (at least one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ..population.schema import GEOGRAPHY
from .households import HOUSEHOLD, household_table
from .targeted_risk import pair_among, pair_households, risk_levels, rounded_targets

__all__ = ["HOUSEHOLD_COLUMNS", "RISK_VARIABLES", "TargetedRecordSwapping", "TargetedSwapRun"]

#: The attributes of the ``REDUCED`` classification a risk variable may name (imported
#: lazily: :mod:`adversary.scenarios` loads PyMC).
RISK_VARIABLES = ("hhgq", "voting_age", "hispanic", "race")

#: The household columns a similarity profile may use.
HOUSEHOLD_COLUMNS = ("size", "voting_age")

_LEVELS = GEOGRAPHY[1:]  # below the state, coarse to fine

#: Roles of a household in a run.
NONE, RISKY, SAMPLED, DONOR = 0, 1, 2, 3


def _names(value, parameter: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names:
        raise ValueError(f"{parameter} must name at least one column")
    for name in names:
        if name not in allowed:
            raise ValueError(f"{parameter}: unknown column {name!r} (one of {', '.join(allowed)})")
    return names


def _profile_codes(table: pd.DataFrame, profile: tuple[str, ...]) -> np.ndarray:
    """Each household's similarity profile as a small integer (equal iff the values are)."""
    code = np.zeros(len(table), dtype=np.int64)
    for column in profile:
        values = table[column].to_numpy().astype(np.int64)
        code = code * (int(values.max()) + 1 if values.size else 1) + values
    return np.unique(code, return_inverse=True)[1]


@dataclass(frozen=True)
class TargetedSwapRun:
    """One run: the swapped ``persons`` and what happened to each household.

    ``households``: ``household``, ``area`` (its lowest-level area), ``size``,
    ``voting_age``,
    ``risk_level`` (the level it is risky at; ``len(hierarchy)``: not risky),
    ``role`` (0 not swapped, 1 risky and swapped, 2 sampled at the lowest
    level, 3 donor), ``partner`` (household identifier, -1) and
    ``swap_level``. ``summary``: per level, households ``at_risk``,
    ``swapped`` (risky ones), ``sampled``, ``donors`` and ``unswappable``.
    """

    persons: pd.DataFrame
    households: pd.DataFrame
    summary: pd.DataFrame

    def _free(self) -> pd.DataFrame:
        """The households neither risky nor sampled: those that can only be donors."""
        h = self.households
        return h[(h["risk_level"] == self.summary.shape[0]) & (h["role"] != SAMPLED)]

    @property
    def donor_rate(self) -> float:
        """Share of the households neither risky nor sampled that were taken as donors."""
        free = self._free()
        return float((free["role"] == DONOR).mean()) if len(free) else 0.0

    def donor_rates(self) -> dict[tuple[int, int], float]:
        """:attr:`donor_rate` per household profile ``(size, voting_age)``."""
        free = self._free()
        rates = (free["role"] == DONOR).groupby([free["size"], free["voting_age"]]).mean()
        return {(int(s), int(v)): float(r) for (s, v), r in rates.items()}


@dataclass(frozen=True)
class TargetedRecordSwapping:
    """Targeted record swapping of households (module docstring: rules, defaults, differences)."""

    rate: float = 0.05
    k_anonymity: int = 3
    risk_variables: tuple[str, ...] = ("voting_age", "hispanic", "race")
    similarity: tuple[tuple[str, ...], ...] = (("size", "voting_age"), ("size",))
    hierarchy: tuple[str, ...] = ("county", "tract", "block")

    name: ClassVar[str] = "trs"

    def __post_init__(self) -> None:
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, int | float | np.number):
            raise TypeError(f"rate must be a number, got {type(rate).__name__}")
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"rate must be in [0, 1], got {rate}")
        k = self.k_anonymity
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k_anonymity must be an integer >= 1, got {k!r}")
        risk = _names(self.risk_variables, "risk_variables", RISK_VARIABLES)
        if isinstance(self.similarity, str) or not self.similarity:
            raise ValueError("similarity must be a non-empty sequence of profiles")
        profiles = tuple(_names(p, "similarity", HOUSEHOLD_COLUMNS) for p in self.similarity)
        hierarchy = _names(self.hierarchy, "hierarchy", _LEVELS)
        if list(hierarchy) != sorted(set(hierarchy), key=_LEVELS.index):
            raise ValueError(f"hierarchy must run from coarse to fine, got {hierarchy}")
        object.__setattr__(self, "rate", float(rate))
        object.__setattr__(self, "k_anonymity", int(k))
        object.__setattr__(self, "risk_variables", risk)
        object.__setattr__(self, "similarity", profiles)
        object.__setattr__(self, "hierarchy", hierarchy)

    @property
    def label(self) -> str:
        return (
            f"targeted record swapping ({100 * self.rate:g}%, k={self.k_anonymity}, "
            f"risk {'×'.join(self.risk_variables)}, across {'>'.join(self.hierarchy)})"
        )

    def combinations(self, cells: np.ndarray) -> np.ndarray:
        """The risk variables' combination (an integer code) of each ``REDUCED`` cell code."""
        from ..scenarios.swapping.targeted_law import risk_combinations

        return risk_combinations(cells, self.risk_variables)

    def swap(self, persons: pd.DataFrame, *, seed: int) -> pd.DataFrame:
        """``persons`` after swapping, with a bool column ``swapped`` (the mechanism contract)."""
        return self.run(persons, seed=seed).persons

    def run(self, persons: pd.DataFrame, *, seed: int) -> TargetedSwapRun:
        """Swap ``persons`` (with a ``household`` column) and say what happened."""
        if not isinstance(persons, pd.DataFrame):
            raise TypeError(f"persons must be a pandas DataFrame, got {type(persons).__name__}")
        from ..analyses.reconstruction_study import block_cells
        from ..scenarios.reconstruction import REDUCED

        table = household_table(persons)
        missing = [c for c in ("state", *self.hierarchy) if c not in table.columns]
        if missing:
            raise ValueError(f"persons: columns {missing} are missing")
        ids = table[HOUSEHOLD].to_numpy()
        rows = np.flatnonzero(persons[HOUSEHOLD].to_numpy() >= 0)
        member_of = np.searchsorted(ids, persons[HOUSEHOLD].to_numpy()[rows])
        combination = self.combinations(block_cells(persons.iloc[rows], REDUCED))
        areas = [np.unique(table[c].to_numpy(), return_inverse=True)[1] for c in self.hierarchy]
        level, _ = risk_levels(
            member_of, combination, [a[member_of] for a in areas], ids.size, self.k_anonymity
        )
        profiles = [_profile_codes(table, p) for p in self.similarity]
        partner = np.full(ids.size, -1, dtype=np.int64)
        role = np.zeros(ids.size, dtype=np.int8)
        swap_level = np.full(ids.size, -1, dtype=np.int64)
        state = table["state"].to_numpy()
        for s in np.unique(state):
            mine = np.flatnonzero(state == s)
            rng = np.random.default_rng([int(seed), 4, int(s)])
            self._swap_state(
                rng, level[mine], [a[mine] for a in areas], [p[mine] for p in profiles],
                out=(mine, partner, role, swap_level),
            )  # fmt: skip
        return self._result(persons, rows, member_of, table, level, partner, role, swap_level)

    def _swap_state(self, rng, level, areas, profiles, *, out) -> None:
        """Swap one state's households (arrays aligned with ``out[0]``, global indices)."""
        mine, partner, role, swap_level = out
        n = level.size
        n_levels = len(self.hierarchy)
        lowest = np.unique(areas[-1], return_inverse=True)[1]
        n_b = np.bincount(lowest)
        risky_b = np.bincount(lowest[level < n_levels], minlength=n_b.size)
        target = rounded_targets(n_b * (self.rate / 2), rng)
        used = np.zeros(n, dtype=bool)
        given_up = np.zeros(n, dtype=bool)
        local_role = np.zeros(n, dtype=np.int8)
        for lv in range(n_levels):
            seekers = np.flatnonzero(~used & ~given_up & (level == lv))
            local_role[seekers] = RISKY
            if lv == n_levels - 1:
                extra = np.maximum(target - risky_b, 0)
                pool = np.flatnonzero(~used & (level == n_levels))
                pool = pool[np.lexsort((rng.random(pool.size), lowest[pool]))]
                starts = np.searchsorted(lowest[pool], lowest[pool], side="left")
                sampled = pool[np.arange(pool.size) - starts < extra[lowest[pool]]]
                local_role[sampled] = SAMPLED
                seekers = np.concatenate((seekers, sampled))
            seeking = np.zeros(n, dtype=bool)
            seeking[seekers] = True
            parent = areas[lv - 1] if lv else np.zeros(n, dtype=np.int64)
            groups = [parent * (int(p.max()) + 1) + p for p in profiles]
            donors = np.flatnonzero(~used & ~seeking)
            pairs = []
            for group in groups:
                s, d = pair_households(seekers, donors, group, areas[lv], rng)
                pairs.append((s, d))
                seekers = np.setdiff1d(seekers, s, assume_unique=True)
                donors = np.setdiff1d(donors, d, assume_unique=True)
            for group in groups:
                s, d = pair_among(seekers, group, areas[lv], rng)
                pairs.append((s, d))
                seekers = np.setdiff1d(seekers, np.concatenate((s, d)), assume_unique=True)
            given_up[seekers] = True
            for s, d in pairs:
                partner[mine[s]], partner[mine[d]] = mine[d], mine[s]
                used[s] = used[d] = True
                swap_level[mine[s]] = swap_level[mine[d]] = lv
                local_role[d] = np.where(seeking[d], local_role[d], DONOR)
        role[mine] = np.where(used, local_role, NONE)

    def _result(self, persons, rows, member_of, table, level, partner, role, swap_level):
        geography = [c for c in GEOGRAPHY if c in persons.columns]
        out = persons.copy()
        hh_partner = partner[member_of]
        moved = hh_partner >= 0
        for column in geography:
            values = out[column].to_numpy().copy()
            values[rows[moved]] = table[column].to_numpy()[hh_partner[moved]]
            out[column] = values
        swapped = np.zeros(len(persons), dtype=bool)
        swapped[rows[moved]] = True
        out["swapped"] = swapped
        ids = table[HOUSEHOLD].to_numpy()
        households = pd.DataFrame(
            {
                HOUSEHOLD: ids,
                "area": table[self.hierarchy[-1]].to_numpy(),
                "size": table["size"].to_numpy(),
                "voting_age": table["voting_age"].to_numpy(),
                "risk_level": level,
                "role": role,
                "partner": np.where(partner >= 0, ids[np.maximum(partner, 0)], -1),
                "swap_level": swap_level,
            }
        )
        return TargetedSwapRun(out, households, self._summary(households))

    def _summary(self, households: pd.DataFrame) -> pd.DataFrame:
        levels = np.arange(len(self.hierarchy))
        at = households["risk_level"].to_numpy()
        role = households["role"].to_numpy()
        where = households["swap_level"].to_numpy()

        def per_level(mask):
            return np.bincount(where[mask], minlength=levels.size)

        risky = at < levels.size
        at_risk = np.bincount(at[risky], minlength=levels.size)
        swapped = per_level(role == RISKY)
        return pd.DataFrame(
            {
                "level": list(self.hierarchy),
                "at_risk": at_risk,
                "swapped": swapped,
                "sampled": per_level(role == SAMPLED),
                "donors": per_level(role == DONOR),
                "unswappable": np.bincount(at[risky & (role == NONE)], minlength=levels.size),
            }
        )
