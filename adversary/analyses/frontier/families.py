"""Families of budget allocations: lists of :class:`~adversary.budget.BudgetAllocation`
with distinct names, made from a base allocation by changing one thing.

- :func:`rho_totals` — the total ρ scaled, every share kept;
- :func:`level_shares` / :func:`level_share_grid` — the level shares;
- :func:`query_shares` / :func:`query_share_grid` — the query shares within one level;
- :func:`explicit` — a list given allocation by allocation (checked).

**Exact shares.** Shares stay exact :class:`~fractions.Fraction` objects. An int
or a Fraction is taken as it is; a float ``x`` is read as
``Fraction(x).limit_denominator(10**9)`` (so 0.3 is 3/10 and 1/3 is 1/3). A vector over *every*
level (or every query of a level) must sum to 1 within 1e-6 and is then divided
by its exact sum, so it sums to exactly 1. A vector over *some* of them (the
chosen ``levels`` or ``queries``) sets those shares; the others take the rest,
``1 − Σ chosen``, in proportion to their shares in the base (exact), so their
ratios to one another are kept.

**Grids.** :func:`simplex_grid` gives every point of the simplex whose
coordinates are positive multiples of ``1/steps``; the grid families place the
chosen shares and, when some keys are not chosen, the others' total as one
more coordinate on it (every share positive: a share of 0 leaves a level's
queries unmeasured). A grid is sized before it is built (the memory budget,
:mod:`adversary.memory`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

from ...budget import BudgetAllocation, _index_of
from ...memory import check_memory
from ._shares import as_exact, normalised, with_shares

__all__ = [
    "explicit",
    "level_share_grid",
    "level_shares",
    "query_share_grid",
    "query_shares",
    "rho_totals",
    "simplex_grid",
]

#: Bytes an allocation of the 2020 persons file takes (6 levels × 11 queries: 5.5 kB measured).
ALLOCATION_BYTES = 8_192


def _check_base(base) -> BudgetAllocation:
    if not isinstance(base, BudgetAllocation):
        raise TypeError(f"base must be a BudgetAllocation, got {type(base).__name__}")
    return base


def _text(value: Fraction) -> str:
    return f"{float(value):.6g}"


def _named(built: list[BudgetAllocation], names) -> list[BudgetAllocation]:
    """``built`` with ``names`` (if given) and distinct names checked."""
    if names is not None:
        names = list(names)
        if len(names) != len(built):
            raise ValueError(f"names must give {len(built)} names, got {len(names)}")
        built = [with_shares(a, str(n)) for a, n in zip(built, names, strict=True)]
    return explicit(built)


def _values(vector, length: int, name: str) -> tuple[Fraction, ...]:
    if isinstance(vector, str) or not isinstance(vector, Sequence):
        raise TypeError(f"{name} must be sequences of {length} numbers, got {vector!r}")
    if len(vector) != length:
        raise ValueError(f"{name} must have {length} entries each, got {len(vector)}")
    return tuple(as_exact(v, name) for v in vector)


def _chosen(keys, all_keys: tuple[str, ...], name: str) -> list[int]:
    if keys is None:
        return list(range(len(all_keys)))
    if isinstance(keys, str):
        keys = [keys]
    chosen = [_index_of(key, all_keys, name) for key in keys]
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"{name} must name distinct keys, at least one, got {keys!r}")
    return chosen


def _share_sets(vectors, chosen: list[int], total: int, name: str) -> list[dict[int, Fraction]]:
    """Each vector as {index: share}; vectors over every key are normalised exactly."""
    out = []
    for vector in vectors:
        values = _values(vector, len(chosen), name)
        if len(chosen) == total:
            values = normalised(values, name)
        out.append(dict(zip(chosen, values, strict=True)))
    if not out:
        raise ValueError(f"{name} must give at least one vector of shares")
    return out


def _label(base: BudgetAllocation, keys: tuple[str, ...], shares: dict[int, Fraction]) -> str:
    return f"{base.name} " + ",".join(f"{keys[i]}={_text(s)}" for i, s in shares.items())


def rho_totals(base: BudgetAllocation, totals, *, names=None) -> list[BudgetAllocation]:
    """``base`` at each total ρ in ``totals`` (shares kept); named ``"<base> rho=<total>"``."""
    _check_base(base)
    values = [as_exact(t, "totals") for t in totals]
    if not values:
        raise ValueError("totals must give at least one total rho")
    built = [with_shares(base, f"{base.name} rho={_text(t)}", rho_total=t) for t in values]
    return _named(built, names)


def level_shares(base: BudgetAllocation, shares, *, levels=None, names=None):
    """``base`` with each vector of ``shares`` as the shares of ``levels`` (default every level;
    the others take the rest in proportion, module docstring)."""
    _check_base(base)
    chosen = _chosen(levels, base.levels, "levels")
    sets = _share_sets(shares, chosen, len(base.levels), "level_shares")
    built = [with_shares(base, _label(base, base.levels, s), levels=s) for s in sets]
    return _named(built, names)


def query_shares(base: BudgetAllocation, level, shares, *, queries=None, names=None):
    """``base`` with each vector of ``shares`` as the shares of ``queries`` within ``level``
    (default every query; the others take the rest in proportion, module docstring)."""
    _check_base(base)
    i = _index_of(level, base.levels, "level")
    chosen = _chosen(queries, base.queries, "queries")
    sets = _share_sets(shares, chosen, len(base.queries), "query_shares")
    built = [
        with_shares(base, _label(base, base.queries, s) + f" at {base.levels[i]}", queries={i: s})
        for s in sets
    ]
    return _named(built, names)


def simplex_grid(parts: int, steps: int) -> list[tuple[Fraction, ...]]:
    """Every ``parts``-vector of positive multiples of ``1/steps`` summing to 1
    (``C(steps − 1, parts − 1)`` points, in lexicographic order of their cut points)."""
    for value, name in ((parts, "parts"), (steps, "steps")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if steps < parts:
        raise ValueError(f"steps must be at least {parts} (one step per share), got {steps}")
    check_memory(
        math.comb(steps - 1, parts - 1) * ALLOCATION_BYTES,
        f"a grid of {math.comb(steps - 1, parts - 1):,} allocations ({parts} shares, "
        f"steps={steps})",
    )
    points = []
    for cuts in itertools.combinations(range(1, steps), parts - 1):
        edges = (0, *cuts, steps)
        points.append(tuple(Fraction(b - a, steps) for a, b in itertools.pairwise(edges)))
    return points


def _grid(chosen: list[int], total: int, steps: int) -> list[tuple[Fraction, ...]]:
    """Grid points for the chosen shares; the others' total is one more coordinate."""
    rest = len(chosen) < total
    return [point[: len(chosen)] for point in simplex_grid(len(chosen) + rest, steps)]


def level_share_grid(base: BudgetAllocation, levels, steps: int, *, names=None):
    """:func:`level_shares` over :func:`simplex_grid` of the chosen ``levels`` (and the others'
    total, if any level is not chosen)."""
    _check_base(base)
    chosen = _chosen(levels, base.levels, "levels")
    grid = _grid(chosen, len(base.levels), steps)
    return level_shares(base, grid, levels=[base.levels[i] for i in chosen], names=names)


def query_share_grid(base: BudgetAllocation, level, queries, steps: int, *, names=None):
    """:func:`query_shares` within ``level`` over :func:`simplex_grid` of the chosen
    ``queries`` (and the others' total, if any query is not chosen)."""
    _check_base(base)
    chosen = _chosen(queries, base.queries, "queries")
    grid = _grid(chosen, len(base.queries), steps)
    return query_shares(base, level, grid, queries=[base.queries[i] for i in chosen], names=names)


def explicit(allocations) -> list[BudgetAllocation]:
    """``allocations`` as a list, checked: BudgetAllocations with distinct names and the same
    levels and queries (one family can be evaluated side by side)."""
    allocations = list(allocations)
    if not allocations:
        raise ValueError("allocations must hold at least one BudgetAllocation")
    for a in allocations:
        if not isinstance(a, BudgetAllocation):
            raise TypeError(f"allocations must be BudgetAllocations, got {type(a).__name__}")
    first = allocations[0]
    for a in allocations[1:]:
        if (a.levels, a.queries) != (first.levels, first.queries):
            raise ValueError(
                f"allocations must share levels and queries: {a.name!r} differs from {first.name!r}"
            )
    seen: set[str] = set()
    repeated = [a.name for a in allocations if a.name in seen or seen.add(a.name)]
    if repeated:
        raise ValueError(
            f"allocations must have distinct names; repeated: {', '.join(map(repr, repeated))} "
            "(give names=)"
        )
    return allocations
