"""The exact release pmf of a block under swapping: a convolution over households.

The release is the block's counts of K tracked cells after swapping (Kazan &
Reiter's ``x*``, here exact counts of a swapped block instead of noisy ones).
Household h, of ``a_h`` voting-age persons and ``b_h`` others, is swapped with
probability π_h (:mod:`.laws`) and then contributes the counts of the household
swapped in: independent multinomials ``Mult(a_h; q_va)`` and ``Mult(b_h; q_other)``
over the tracked cells (and "any other cell"), ``q`` the composition
(:class:`~.block.Composition`). Kept, it contributes its own counts ``o_h``:

    P[x* | block] = Σ_{s ∈ {0,1}^H} Π_h π_h^{s_h} (1 - π_h)^{1 - s_h}
                    · P[incoming of the swapped households = x* - Σ_{h kept} o_h],

which is the H-fold convolution of the households' pmfs
``(1 - π_h) δ_{o_h} + π_h Mult(a_h; q_va) ⊛ Mult(b_h; q_other)`` — no enumeration of
the 2^H swap vectors. The pmf is a dense array over ``0..N`` per tracked cell
(N persons in the block), sized against the memory budget before it is built;
the convolutions are direct sums of non-negative terms, so a release no swap
vector can produce has probability exactly 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal, special

from ...memory import check_memory
from .block import VOTING_AGE, members_by_kind
from .laws import swap_probabilities

__all__ = ["HouseholdTables", "feasible_swaps", "household_tables", "release_pmf"]

# Arrays of the release grid's size a computation holds at once (the running
# convolution, its result, one per hypothesis and the measures' temporaries).
_GRID_ARRAYS = 6


@dataclass(frozen=True)
class HouseholdTables:
    """What the release depends on, per household of one hypothesised block.

    ``own`` (H × K): each household's counts of the tracked cells;
    ``adults``, ``others`` (H): its voting-age persons and the others;
    ``swap`` (H): π_h from the law; ``q_adult``, ``q_other`` (K): the composition's
    shares of the tracked cells for each kind of person (0 for a cell of the
    other kind).
    """

    own: np.ndarray
    adults: np.ndarray
    others: np.ndarray
    swap: np.ndarray
    q_adult: np.ndarray
    q_other: np.ndarray

    @property
    def size(self) -> int:
        """N, the block's persons."""
        return int(self.adults.sum() + self.others.sum())


def household_tables(block, law, composition, cells) -> HouseholdTables:
    """:class:`HouseholdTables` of ``block`` for the tracked ``cells`` (a tuple of codes)."""
    cells = np.asarray(cells, dtype=np.int64)
    own = np.array([[sum(code == c for code in members) for c in cells] for members in block])
    kinds = np.array([members_by_kind(members) for members in block], dtype=np.int64)
    adult_cell = VOTING_AGE[cells]
    return HouseholdTables(
        own=own.reshape(len(block), cells.size).astype(np.int64),
        adults=kinds[:, 0],
        others=kinds[:, 1],
        swap=swap_probabilities(law, block),
        q_adult=np.where(adult_cell, composition.pmf(True)[cells], 0.0),
        q_other=np.where(adult_cell, 0.0, composition.pmf(False)[cells]),
    )


def multinomial_grid(trials: int, probs: np.ndarray) -> np.ndarray:
    """``P[counts of the cells = y]`` for ``trials`` draws, on the grid ``0..trials`` per cell.

    ``probs``: each cell's probability; the rest goes to "any other cell".
    Exactly 0 where ``Σ y > trials`` or a cell of probability 0 has a count.
    """
    y = np.indices((trials + 1,) * probs.size).reshape(probs.size, -1)
    total = y.sum(axis=0)
    rest = max(0.0, 1.0 - float(probs.sum()))
    left = trials - total
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (
            special.gammaln(trials + 1)
            - special.gammaln(y + 1).sum(axis=0)
            - special.gammaln(np.maximum(left, 0) + 1)
            + special.xlogy(y, probs[:, None]).sum(axis=0)
            + special.xlogy(np.maximum(left, 0), rest)
        )
    pmf = np.where(left >= 0, np.exp(log_pmf), 0.0)
    return pmf.reshape((trials + 1,) * probs.size)


def incoming_pmf(tables: HouseholdTables, h: int, cache: dict | None = None) -> np.ndarray:
    """The tracked cells' counts of the household swapped in for household ``h``.

    The convolution of its voting-age persons' multinomial and its others'
    (each with probability 0 for the cells of the other kind). It depends on the
    household only through its numbers of each kind of person: ``cache`` (a dict
    kept over the households of one :class:`HouseholdTables`) holds each pair's
    pmf once.
    """
    key = (int(tables.adults[h]), int(tables.others[h]))
    if cache is not None and key in cache:
        return cache[key]
    adults = multinomial_grid(key[0], tables.q_adult)
    others = multinomial_grid(key[1], tables.q_other)
    pmf = signal.convolve(adults, others, method="direct")
    if cache is not None:
        cache[key] = pmf
    return pmf


def household_pmf(tables: HouseholdTables, h: int, cache: dict | None = None) -> np.ndarray:
    """``(1 - π_h) δ_{o_h} + π_h · incoming``: household h's contribution to the counts
    (``cache``: :func:`incoming_pmf`'s)."""
    pmf = tables.swap[h] * incoming_pmf(tables, h, cache)
    pmf[tuple(tables.own[h])] += 1.0 - tables.swap[h]
    return pmf


def _check_size(tables: HouseholdTables, arrays: int, what: str) -> None:
    points = float(tables.size + 1) ** tables.own.shape[1]
    check_memory(8.0 * points * arrays, f"{what} ({points:.3g} releases)")


def release_pmf(tables: HouseholdTables, what: str = "the release pmf") -> np.ndarray:
    """``P[x* | block]`` on the grid ``0..N`` per tracked cell (module docstring).

    Refuses (one line naming ``what``) when the grid exceeds the memory budget.
    """
    _check_size(tables, _GRID_ARRAYS, what)
    total, cache = np.ones((1,) * tables.own.shape[1]), {}
    for h in range(tables.own.shape[0]):
        total = signal.convolve(total, household_pmf(tables, h, cache), method="direct")
    return total


def feasible_swaps(tables: HouseholdTables, release) -> np.ndarray | None:
    """A swap vector of positive probability that can produce ``release``, or ``None``.

    The start of a sampler (a point of zero posterior would never move): the
    running convolutions forward, then back from the release choosing at each
    household the more probable of kept (its own counts) or swapped (the
    likeliest incoming counts).
    """
    _check_size(tables, tables.own.shape[0] + 2, "the start's forward pmfs")
    forward, cache = [np.ones((1,) * tables.own.shape[1])], {}
    for h in range(tables.own.shape[0]):
        pmf = household_pmf(tables, h, cache)
        forward.append(signal.convolve(forward[-1], pmf, method="direct"))
    rest = np.asarray(release, dtype=np.int64)
    if np.any(rest < 0) or np.any(rest >= forward[-1].shape) or forward[-1][tuple(rest)] == 0:
        return None
    swaps = np.zeros(tables.own.shape[0], dtype=np.int64)
    for h in reversed(range(tables.own.shape[0])):
        before = forward[h]
        kept = rest - tables.own[h]
        kept_weight = (1.0 - tables.swap[h]) * _at(before, kept)
        incoming = incoming_pmf(tables, h, cache)
        draws = np.indices(incoming.shape).reshape(incoming.ndim, -1).T
        weights = np.array([incoming[tuple(j)] * _at(before, rest - j) for j in draws])
        if tables.swap[h] * weights.max() > kept_weight:
            swaps[h] = 1
            rest = rest - draws[int(np.argmax(weights))]
        else:
            rest = kept
    return swaps


def _at(pmf: np.ndarray, index: np.ndarray) -> float:
    """``pmf[index]``, 0 outside its grid."""
    if np.any(index < 0) or np.any(index >= pmf.shape):
        return 0.0
    return float(pmf[tuple(index)])
