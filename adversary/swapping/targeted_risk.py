"""The vectorised steps of targeted record swapping: risk levels, targets per area, donor pairing.

Pure numpy on arrays indexed by household (see :mod:`.targeted` for the
procedure and how it relates to sdcMicro's ``recordSwap``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pair_among", "pair_households", "risk_levels", "rounded_targets"]


def risk_levels(
    person_household: np.ndarray,
    combination: np.ndarray,
    person_areas: list[np.ndarray],
    n_households: int,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Each household's swap level and the smallest count of its members at each level.

    ``person_areas[l]`` is each person's area (small integers) at hierarchy
    level ``l`` (0 the highest). The count of a person at level ``l`` is the
    number of persons of its area with its risk ``combination``; a household's
    count is its members' smallest (its risk ``1/count`` the largest, as
    recordSwap's ``setRisk``). The swap level is the highest level where the
    count is below ``k`` (recordSwap's ``setLevels``), ``len(person_areas)``
    where there is none. Returns ``(level, counts)`` with ``counts`` of shape
    ``(levels, n_households)``.
    """
    n_levels = len(person_areas)
    counts = np.empty((n_levels, n_households), dtype=np.int64)
    n_combinations = int(combination.max()) + 1 if combination.size else 1
    for level, area in enumerate(person_areas):
        key = area.astype(np.int64) * n_combinations + combination
        _, inverse, per_key = np.unique(key, return_inverse=True, return_counts=True)
        mine = np.full(n_households, np.iinfo(np.int64).max)
        np.minimum.at(mine, person_household, per_key[inverse])
        counts[level] = mine
    risky = counts < k
    level = np.where(risky.any(axis=0), risky.argmax(axis=0), n_levels)
    return level, counts


def rounded_targets(expected: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``expected`` rounded at random to integers: unbiased, and the total kept.

    Systematic rounding: with one uniform ``u``, area ``a`` gets
    ``floor(F_a + u) - floor(F_{a-1} + u)`` where ``F`` is the cumulative sum,
    so ``floor(expected_a)`` or one more, one more with probability
    ``frac(expected_a)``, and the total is ``floor`` or ``ceil`` of the sum.
    """
    cumulative = np.concatenate(([0.0], np.cumsum(expected)))
    return np.diff(np.floor(cumulative + rng.random())).astype(np.int64)


def _propose(
    seekers: np.ndarray,
    donors: np.ndarray,
    group: np.ndarray,
    area: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """One round: each seeker draws a donor of its group outside its area; a donor keeps one.

    Returns the accepted (seeker, donor) pairs and whether any seeker had a
    donor to draw (if not, no later round can pair anyone).
    """
    if seekers.size == 0 or donors.size == 0:
        return seekers[:0], seekers[:0], False
    order = np.lexsort((area[donors], group[donors]))
    donors = donors[order]
    span = int(max(area[donors].max(), area[seekers].max())) + 1
    d_group = group[donors].astype(np.int64)
    d_key = d_group * span + area[donors]
    g = group[seekers].astype(np.int64)
    g0 = np.searchsorted(d_group, g, side="left")
    g1 = np.searchsorted(d_group, g, side="right")
    # The donors of the seeker's own area: a run inside its group's run.
    own = g * span + area[seekers]
    a0 = np.searchsorted(d_key, own, side="left")
    a1 = np.searchsorted(d_key, own, side="right")
    choices = (g1 - g0) - (a1 - a0)
    able = choices > 0
    if not able.any():
        return seekers[:0], seekers[:0], False
    seekers, g0, a0, a1, choices = (x[able] for x in (seekers, g0, a0, a1, choices))
    j = g0 + (rng.random(seekers.size) * choices).astype(np.int64)
    pick = np.where(j < a0, j, j + (a1 - a0))
    # A donor drawn by several seekers goes to one of them, at random.
    tiebreak = np.lexsort((rng.random(seekers.size), pick))
    first = np.ones(seekers.size, dtype=bool)
    first[1:] = pick[tiebreak][1:] != pick[tiebreak][:-1]
    kept = tiebreak[first]
    return seekers[kept], donors[pick[kept]], True


def pair_households(
    seekers: np.ndarray,
    donors: np.ndarray,
    group: np.ndarray,
    area: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (seeker, donor): each seeker a distinct donor of its ``group`` in another ``area``.

    Rounds of ``_propose`` on the seekers and donors still free, until no
    free seeker has a free donor of its group outside its area: so a seeker
    stays unpaired only when no donor is left for it. Each round pairs at least
    one seeker while any can be, and a seeker's donor is uniform among the
    free donors it may take (collisions resolved at random).
    """
    found_s, found_d = [], []
    while seekers.size and donors.size:
        s, d, possible = _propose(seekers, donors, group, area, rng)
        if not possible:
            break
        found_s.append(s)
        found_d.append(d)
        seekers = np.setdiff1d(seekers, s, assume_unique=True)
        donors = np.setdiff1d(donors, d, assume_unique=True)
    if not found_s:
        return seekers[:0], seekers[:0]
    return np.concatenate(found_s), np.concatenate(found_d)


def pair_among(
    seekers: np.ndarray, group: np.ndarray, area: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of seekers with each other (same ``group``, other ``area``), while any can pair.

    Each round splits the free seekers at random into proposers and
    candidates and runs one ``_propose``; it stops when no two free
    seekers of a group lie in different areas.
    """
    found_s, found_d = [], []
    while seekers.size > 1 and _pairable(seekers, group, area):
        proposer = rng.random(seekers.size) < 0.5
        s, d, _ = _propose(seekers[proposer], seekers[~proposer], group, area, rng)
        found_s.append(s)
        found_d.append(d)
        seekers = np.setdiff1d(seekers, np.concatenate((s, d)), assume_unique=True)
    if not found_s:
        return seekers[:0], seekers[:0]
    return np.concatenate(found_s), np.concatenate(found_d)


def _pairable(seekers: np.ndarray, group: np.ndarray, area: np.ndarray) -> bool:
    """Whether some group holds free seekers of two different areas."""
    order = np.lexsort((area[seekers], group[seekers]))
    g, a = group[seekers][order], area[seekers][order]
    return bool(((g[1:] == g[:-1]) & (a[1:] != a[:-1])).any())
