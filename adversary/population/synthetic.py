"""A seeded synthetic geography and population shaped like the 2020 Census.

For tests and demos of the population assessment: nested units (state ⊃
county ⊃ tract ⊃ block group ⊃ block) and one record per person, scaled to a
chosen number of persons.

**Block sizes (JASON 2022, Table 8-11).** Persons live in blocks of < 10,
10–49, 50–99, 100–249 and ≥ 250 people in the proportions 8.1 : 67.6 : 69.1 :
80.0 : 84.0 (millions, 2010). Each bin's persons are split into blocks whose
sizes follow ``P[s] ∝ s^(-a)`` within the bin: ``a = 2.5`` (a Pareto tail) on
``250 … 20 000`` for the top bin, and one exponent ``a`` for the four lower
bins solved so that there are 5 892 698 blocks per 308.8 million persons
(Table 2-2's block count over Table 8-11's persons; this mixes 2020 blocks with
2010 persons, as the two tables do). The bin's persons are met exactly (sizes
adjusted within the bin's bounds); a bin with fewer persons than its smallest
block passes them to the bin below.

**Units (JASON 2022, Table 2-2).** From the number of blocks: block groups =
blocks / 24.575, tracts = block groups / 2.835, counties = tracts / 24.20
(5 892 698 / 239 780, 239 780 / 84 589, 84 589 / 3 496), each at least 1; the
number of states is chosen (default 1: "a synthetic state"). Blocks are
assigned to block groups in random order, each parent getting at least one
child and the rest by a Dirichlet(4)-multinomial; likewise block groups to
tracts, tracts to counties, counties to states.

**Identifiers.** GEOID-like integers (not Census GEOIDs): state ``SS``, county
``SSCCC``, tract ``SSCCCTTTTTT``, block group ``…GGG``, block ``…GGGBBBB``
(18 digits), each the parent's identifier followed by a 1-based index.

**Characteristics: a stated simple model.** Independent across persons given
their tract and block:

- ``age``: single years 0–100, ``P ∝ 1`` below 60, falling linearly to 0 at
  101 (22.5 % under 18); ``voting_age = 1[age ≥ 18]``;
- ``sex``: 1 (female) with probability 0.508, else 0;
- ``hispanic``: 1 with the tract's probability ``~ Beta(20·0.187, 20·0.813)``;
- ``race``: one of the 63 OMB combinations (code ``mask - 1`` for the bit mask
  of White, Black, AIAN, Asian, NHPI, Some other race), drawn as one of seven
  groups with the tract's shares ``~ Dirichlet(20 × (61.6, 12.4, 1.1, 6.0,
  0.2, 8.4, 10.2) %)`` (2020 shares: six races alone and two or more), two or
  more races then a combination of k races with weight ``10^-(k-2)`` split
  equally within k;
- ``hhgq``: 0 (household) or a group-quarters type 1–7: a block holds one
  facility with probability 0.05, of a type uniform on 1–7, and each of its
  residents lives in it with probability 1/2.

**Seeding.** The skeleton (block sizes and units) comes from
``numpy.random.default_rng([seed, 0])``; the persons of the county with
0-based index k from ``default_rng([seed, 1, k])``, so a county's records do
not depend on how counties are grouped into partitions or processed.
Records are numbered ``record_id = 0, 1, …`` county by county, block by block.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
from scipy import optimize

from ..memory import check_memory
from ..topdown.bias import BLOCK_SIZE_BINS, block_size_bin
from .schema import GEOGRAPHY

__all__ = [
    "BLOCK_SIZE_BINS",
    "SKELETON_BYTES_PER_PERSON",
    "TABLE_2_2_UNITS",
    "TABLE_8_11_PERSONS",
    "TABLE_8_11_UNIQUE_AGE_SEX",
    "Geography",
    "block_size_bin",
    "synthetic_geography",
    "synthetic_persons",
    "synthetic_population",
]

#: JASON (2022) Table 2-2: geographic units in the 2020 Census (DAS spine).
TABLE_2_2_UNITS = {
    "nation": 1,
    "state": 88,
    "county": 3_496,
    "tract": 84_589,
    "block_group": 239_780,
    "block": 5_892_698,
}

#: Block-size bins of JASON (2022) Table 8-11 (persons per block, inclusive bounds).
_BIN_BOUNDS = ((1, 9), (10, 49), (50, 99), (100, 249), (250, 20_000))

#: JASON (2022) Table 8-11: persons (2010) by the size of their block.
TABLE_8_11_PERSONS = dict(
    zip(BLOCK_SIZE_BINS, (8.1e6, 67.6e6, 69.1e6, 80.0e6, 84.0e6), strict=True)
)
#: JASON (2022) Table 8-11: fraction unique on single-year age and sex in their block.
TABLE_8_11_UNIQUE_AGE_SEX = dict(zip(BLOCK_SIZE_BINS, (0.95, 0.79, 0.59, 0.34, 0.08), strict=True))

_TOP_EXPONENT = 2.5
_BLOCKS_PER_PERSON = TABLE_2_2_UNITS["block"] / sum(TABLE_8_11_PERSONS.values())
_CHILDREN_PER_PARENT = {
    "block_group": TABLE_2_2_UNITS["block"] / TABLE_2_2_UNITS["block_group"],
    "tract": TABLE_2_2_UNITS["block_group"] / TABLE_2_2_UNITS["tract"],
    "county": TABLE_2_2_UNITS["tract"] / TABLE_2_2_UNITS["county"],
}
_DIRICHLET_SPREAD = 4.0
#: Bytes the skeleton of blocks takes at its peak, per person (2.7 measured at a million people;
#: rounded up): sized against the memory budget before it is built.
SKELETON_BYTES_PER_PERSON = 8
_ID_DIGITS = {"state": 2, "county": 3, "tract": 6, "block_group": 3, "block": 4}

# Characteristics model (module docstring).
_RACE_GROUP_SHARES = np.array([61.6, 12.4, 1.1, 6.0, 0.2, 8.4, 10.2]) / 100.0
_HISPANIC_SHARE = 0.187
_TRACT_CONCENTRATION = 20.0
_FEMALE = 0.508
_GQ_BLOCK_PROBABILITY = 0.05
_GQ_RESIDENT_PROBABILITY = 0.5
_GQ_TYPES = 7


def _size_pmf(low: int, high: int, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.arange(low, high + 1)
    weights = sizes.astype(np.float64) ** -exponent
    return sizes, weights / weights.sum()


@cache
def lower_bin_exponent() -> float:
    """Exponent ``a`` of ``P[s] ∝ s^-a`` in the four lower bins matching Table 2-2's blocks."""
    persons = np.array(list(TABLE_8_11_PERSONS.values()))

    def mean(bounds, exponent):
        sizes, pmf = _size_pmf(*bounds, exponent)
        return float(sizes @ pmf)

    top = persons[-1] / mean(_BIN_BOUNDS[-1], _TOP_EXPONENT)

    def excess(exponent):
        pairs = zip(persons[:-1], _BIN_BOUNDS[:-1], strict=True)
        lower = sum(p / mean(b, exponent) for p, b in pairs)
        return (lower + top) / persons.sum() - _BLOCKS_PER_PERSON

    return float(optimize.brentq(excess, -2.0, 3.0, xtol=1e-12))


def _bin_persons(persons: int) -> np.ndarray:
    """Persons per Table 8-11 bin: largest remainders of the shares, summing to ``persons``."""
    shares = np.array(list(TABLE_8_11_PERSONS.values()))
    exact = persons * shares / shares.sum()
    out = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - out), kind="stable")
    out[order[: persons - out.sum()]] += 1
    # A bin too small for even one block of its smallest size passes its persons down.
    for k in range(len(out) - 1, 0, -1):
        if 0 < out[k] < _BIN_BOUNDS[k][0]:
            out[k - 1] += out[k]
            out[k] = 0
    return out


def _sizes_in_bin(rng, persons: int, bounds, exponent: float) -> np.ndarray:
    """Block sizes within ``bounds`` summing to exactly ``persons``."""
    if persons == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = bounds
    values, pmf = _size_pmf(low, high, exponent)
    n = max(1, round(persons / float(values @ pmf)))
    n = min(max(n, -(-persons // high)), persons // low)
    sizes = rng.choice(values, size=n, p=pmf)
    gap = persons - int(sizes.sum())
    if gap > 0:
        sizes += rng.multivariate_hypergeometric(high - sizes, gap)
    elif gap < 0:
        sizes -= rng.multivariate_hypergeometric(sizes - low, -gap)
    return sizes.astype(np.int64)


def _split(rng, n_children: int, n_parents: int) -> np.ndarray:
    """Children per parent: at least one each, the rest Dirichlet-multinomial."""
    weights = rng.dirichlet(np.full(n_parents, _DIRICHLET_SPREAD))
    return 1 + rng.multinomial(n_children - n_parents, weights)


@dataclass(frozen=True)
class Geography:
    """The skeleton: one row per block with its units, size and county index.

    ``blocks`` has the columns of :data:`~adversary.population.schema.GEOGRAPHY`,
    ``size`` (persons) and ``county_index`` (0-based, in county order), sorted
    by block; ``seed`` seeds the persons.
    """

    blocks: pd.DataFrame
    seed: int

    @property
    def persons(self) -> int:
        return int(self.blocks["size"].sum())

    def counties(self) -> pd.DataFrame:
        """One row per county: ``county``, ``county_index``, ``persons``, ``first_record``."""
        grouped = self.blocks.groupby("county_index", sort=True)
        out = pd.DataFrame(
            {"county": grouped["county"].first(), "persons": grouped["size"].sum()}
        ).reset_index()
        out["first_record"] = np.concatenate([[0], np.cumsum(out["persons"].to_numpy())[:-1]])
        return out

    def units(self) -> dict[str, int]:
        return {level: int(self.blocks[level].nunique()) for level in GEOGRAPHY}


def synthetic_geography(persons: int, *, states: int = 1, seed: int = 0) -> Geography:
    """Blocks and their units for ``persons`` people (module docstring), seeded."""
    if isinstance(persons, bool) or not isinstance(persons, int | np.integer) or persons < 1:
        raise ValueError(f"persons must be an integer >= 1, got {persons!r}")
    if (
        isinstance(states, bool)
        or not isinstance(states, int | np.integer)
        or not 1 <= states <= 92
    ):
        raise ValueError(f"states must be an integer from 1 to 92, got {states!r}")
    check_memory(SKELETON_BYTES_PER_PERSON * persons, f"persons: {persons} synthetic people")
    rng = np.random.default_rng([seed, 0])
    lower = lower_bin_exponent()
    sizes = np.concatenate(
        [
            _sizes_in_bin(rng, int(p), bounds, _TOP_EXPONENT if k == 4 else lower)
            for k, (p, bounds) in enumerate(
                zip(_bin_persons(int(persons)), _BIN_BOUNDS, strict=True)
            )
        ]
    )
    sizes = rng.permutation(sizes)
    n_blocks = sizes.size
    n_bg = max(1, round(n_blocks / _CHILDREN_PER_PARENT["block_group"]))
    n_tract = max(1, round(n_bg / _CHILDREN_PER_PARENT["tract"]))
    n_county = max(1, round(n_tract / _CHILDREN_PER_PARENT["county"]))
    n_county, n_tract = max(n_county, states), max(n_tract, n_county, states)
    n_bg, n_blocks_needed = max(n_bg, n_tract), max(n_bg, n_tract)
    if n_blocks < n_blocks_needed:
        raise ValueError(f"persons: {persons} people make too few blocks for {states} states")
    # children counts, top-down: states ⊃ counties ⊃ tracts ⊃ block groups ⊃ blocks
    per_parent = {
        "county": _split(rng, n_county, states),
        "tract": _split(rng, n_tract, n_county),
        "block_group": _split(rng, n_bg, n_tract),
        "block": _split(rng, n_blocks, n_bg),
    }
    ids = {"state": np.arange(1, states + 1, dtype=np.int64)}
    parent = "state"
    for level in ("county", "tract", "block_group", "block"):
        counts = per_parent[level]
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 1
        if within.max() >= 10 ** _ID_DIGITS[level]:
            raise ValueError(f"persons: too many units per {parent} for the identifier digits")
        ids[level] = np.repeat(ids[parent], counts) * 10 ** _ID_DIGITS[level] + within
        for upper in list(ids)[:-1]:
            ids[upper] = np.repeat(ids[upper], counts)
        parent = level
    blocks = pd.DataFrame({level: ids[level] for level in GEOGRAPHY})
    blocks["size"] = sizes
    blocks["county_index"] = pd.factorize(blocks["county"], sort=True)[0]
    return Geography(blocks.reset_index(drop=True), int(seed))


# --- characteristics ---------------------------------------------------------------------


def _multi_race_codes_and_weights():
    codes, weights = [], []
    for k in range(2, 7):
        combos = list(itertools.combinations(range(6), k))
        for combo in combos:
            codes.append(sum(1 << r for r in combo) - 1)
            weights.append(10.0 ** -(k - 2) / len(combos))
    weights = np.array(weights)
    return np.array(codes), weights / weights.sum()


_MULTI_RACE_CODES, _MULTI_RACE_WEIGHTS = _multi_race_codes_and_weights()
_SINGLE_RACE_CODES = np.array([(1 << r) - 1 for r in range(6)])


def _age_pmf() -> np.ndarray:
    ages = np.arange(101)
    weights = np.where(ages < 60, 1.0, (101 - ages) / 41.0)
    return weights / weights.sum()


def _categorical_by_row(rng, cdf_rows: np.ndarray, row: np.ndarray) -> np.ndarray:
    """One draw per person from the categorical whose cumulative row is ``cdf_rows[row]``."""
    u = rng.random(row.size)
    return (u[:, None] >= cdf_rows[row, :-1]).sum(axis=1)


def synthetic_persons(blocks: pd.DataFrame, county_index: int, seed: int, first_record: int):
    """The persons of one county (the blocks of ``blocks`` with that index), seeded."""
    rng = np.random.default_rng([seed, 1, int(county_index)])
    mine = blocks[blocks["county_index"] == county_index]
    size = mine["size"].to_numpy()
    n = int(size.sum())
    out = {level: np.repeat(mine[level].to_numpy(), size) for level in GEOGRAPHY}
    tract_codes, tract_of_block = np.unique(mine["tract"].to_numpy(), return_inverse=True)
    n_tracts = tract_codes.size
    tract = np.repeat(tract_of_block, size)
    race_shares = rng.dirichlet(_TRACT_CONCENTRATION * _RACE_GROUP_SHARES, size=n_tracts)
    hispanic_rate = rng.beta(
        _TRACT_CONCENTRATION * _HISPANIC_SHARE,
        _TRACT_CONCENTRATION * (1 - _HISPANIC_SHARE),
        size=n_tracts,
    )
    has_gq = rng.random(size.size) < _GQ_BLOCK_PROBABILITY
    gq_type = rng.integers(1, _GQ_TYPES + 1, size=size.size)

    age = rng.choice(101, size=n, p=_age_pmf())
    sex = (rng.random(n) < _FEMALE).astype(np.int8)
    hispanic = (rng.random(n) < hispanic_rate[tract]).astype(np.int8)
    group = _categorical_by_row(rng, np.cumsum(race_shares, axis=1), tract)
    multi = rng.choice(_MULTI_RACE_CODES, size=n, p=_MULTI_RACE_WEIGHTS)
    race = np.where(group < 6, _SINGLE_RACE_CODES[np.minimum(group, 5)], multi)
    in_gq = np.repeat(has_gq, size) & (rng.random(n) < _GQ_RESIDENT_PROBABILITY)
    hhgq = np.where(in_gq, np.repeat(gq_type, size), 0)

    frame = pd.DataFrame({"record_id": first_record + np.arange(n, dtype=np.int64)})
    for level in GEOGRAPHY:
        frame[level] = out[level]
    frame["age"] = age.astype(np.int16)
    frame["sex"] = sex
    frame["voting_age"] = (age >= 18).astype(np.int8)
    frame["hispanic"] = hispanic
    frame["race"] = race.astype(np.int8)
    frame["hhgq"] = hhgq.astype(np.int8)
    return frame


def synthetic_population(persons: int, *, states: int = 1, seed: int = 0) -> pd.DataFrame:
    """Every person of :func:`synthetic_geography` in one table (small populations)."""
    geography = synthetic_geography(persons, states=states, seed=seed)
    counties = geography.counties()
    frames = [
        synthetic_persons(geography.blocks, int(row.county_index), seed, int(row.first_record))
        for row in counties.itertuples()
    ]
    return pd.concat(frames, ignore_index=True)
