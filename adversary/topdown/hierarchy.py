"""TopDown on a small geographic hierarchy: each level fitted to the one above it.

A hierarchy is a tree of units (``parents[i]`` the parent of unit ``i``, −1
for the root; parents listed before their children), e.g. a block group and
its blocks, or a county, its tracts and their blocks. Each unit has a noisy
measurement of one count (or of a vector of cell counts: then every cell is
post-processed on its own). :func:`topdown` works as the Census Bureau's
algorithm does, top down (JASON 2022, Sec. 5.1, 6.3.1): the root is the
invariant (or its measurement, made a non-negative integer); then, parent by
parent, the children's estimates are the non-negative weighted least squares
fit to their measurements that sums to the parent's published value
(the point JASON's iteration reaches, found by its KKT conditions and one
sort, for many measurement vectors at once: :func:`~.solver.nonnegative_sum_fit`),
rounded to integers that keep that sum (the largest-remainder rule of
:func:`~.rounding.round_keeping_total`). :func:`topdown_many` post-processes
many measurement vectors at once. The result is consistent at every
level, non-negative and integer, like the published PL 94-171 tables.
Measurements and invariants must be of magnitude at most 2**53
(:data:`~adversary._validation.MAX_EXACT_COUNT`): the estimates are found in
float64 and rounded, and float64 holds every integer only up to 2**53.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_exact_reals
from ..memory import check_memory
from .rounding import round_rows_keeping_totals
from .solver import check_variances, nonnegative_sum_fit

__all__ = [
    "check_parents",
    "children_of",
    "consistency_constraints",
    "topdown",
    "topdown_many",
]


def check_parents(parents) -> np.ndarray:
    """``parents`` as an int array: one root (−1) first, every other parent listed earlier."""
    parents = np.asarray(parents)
    if parents.ndim != 1 or parents.size == 0 or not np.issubdtype(parents.dtype, np.integer):
        raise ValueError(
            f"parents must be a non-empty vector of unit indices, got {parents.dtype} "
            f"of shape {parents.shape}"
        )
    if parents[0] != -1 or np.any(parents[1:] < 0):
        raise ValueError("parents: unit 0 must be the root (parent -1) and the only one")
    if np.any(parents[1:] >= np.arange(1, parents.size)):
        raise ValueError("parents: every unit's parent must be listed before it")
    return parents.astype(np.int64)


def children_of(parents) -> dict[int, np.ndarray]:
    """``{parent: its children's indices}`` for every unit with children (one sort)."""
    parents = check_parents(parents)
    order = np.argsort(parents, kind="stable")
    ordered = parents[order]
    starts = np.flatnonzero(np.diff(ordered)) + 1
    units = ordered[np.concatenate([[0], starts])]
    groups = np.split(order, starts)
    return {int(unit): group for unit, group in zip(units, groups, strict=True) if unit >= 0}


def consistency_constraints(parents, invariant=None) -> tuple[np.ndarray, np.ndarray]:
    """``(B, c)`` of the whole tree for one joint least-squares solve (:mod:`.solver`).

    One column per parent, ``parent − Σ children = 0``, and with ``invariant``
    one more, ``root = invariant``: the constraints TopDown meets level by
    level, for solving all levels at once (JASON 2022, Sec. 6.3.4).
    """
    parents = check_parents(parents)
    families = children_of(parents)
    if invariant is not None:
        invariant = float(_invariant(invariant, (1,), rounded=False)[0])
    size = len(families) + (invariant is not None)
    check_memory(8.0 * parents.size * size, f"parents ({parents.size} units × {size} constraints)")
    constraints, totals = np.zeros((parents.size, size)), np.zeros(size)
    for column, (parent, children) in enumerate(families.items()):
        constraints[parent, column], constraints[children, column] = 1.0, -1.0
    if invariant is not None:
        constraints[0, -1], totals[-1] = 1.0, invariant
    return constraints, totals


def _invariant(invariant, shape: tuple, rounded: bool) -> np.ndarray:
    """The root's true count(s) of ``shape`` (or one for all): ≥ 0, at most 2**53, and
    integers when the result is ``rounded``."""
    invariant = as_exact_reals(invariant, "invariant")
    if invariant.shape not in ((), (1,), shape):
        raise ValueError(
            f"invariant must be one count or one per row {shape}, got shape {invariant.shape}"
        )
    if np.any(invariant < 0) or (rounded and np.any(invariant != np.round(invariant))):
        raise ValueError(
            f"invariant must be counts >= 0{' (integers)' if rounded else ''}, "
            f"got {float(invariant.reshape(-1)[0])!r}"
        )
    return np.broadcast_to(invariant.reshape(-1), shape)


def topdown(noisy, variances, parents, invariant=None, *, rounded: bool = True) -> np.ndarray:
    """Post-processed counts of every unit: consistent, non-negative and (by default) integer.

    ``noisy`` has shape ``(units,)`` or ``(units, cells)`` (every cell on its
    own); ``variances`` one noise variance per unit (or one for all), the
    least-squares weights' inverse; ``invariant`` the root's true count(s),
    published exactly, or ``None`` (the root's measurement, at least 0,
    rounded). ``rounded=False`` keeps the real-valued least-squares estimates.
    """
    parents = check_parents(parents)
    noisy = as_exact_reals(noisy, "noisy")
    if noisy.shape[:1] != parents.shape or noisy.ndim > 2:
        raise ValueError(
            f"noisy must hold one measurement (or cell vector) per unit ({parents.size}), "
            f"got shape {noisy.shape}"
        )
    rows = noisy.reshape(parents.size, -1).T
    if invariant is not None:
        invariant = as_exact_reals(invariant, "invariant").reshape(-1)
        if invariant.shape != rows.shape[:1]:
            raise ValueError(
                f"invariant must be {rows.shape[0]} count(s), one per cell, "
                f"got shape {invariant.shape}"
            )
    result = topdown_many(rows, variances, parents, invariant, rounded=rounded)
    return result.T.reshape(noisy.shape)


def topdown_many(rows, variances, parents, invariant=None, *, rounded: bool = True) -> np.ndarray:
    """:func:`topdown` of many measurement vectors at once: ``rows`` is rows × units.

    ``invariant``: the root's true count per row (or one for all), or ``None``.
    """
    parents = check_parents(parents)
    if not isinstance(rounded, bool | np.bool_):
        raise TypeError(f"rounded must be True or False, got {rounded!r}")
    rows = as_exact_reals(rows, "rows")
    if rows.ndim != 2 or rows.shape[1] != parents.size:
        raise ValueError(
            f"rows must be measurements, rows × {parents.size} units, got shape {rows.shape}"
        )
    variances = check_variances(variances, parents.size, "unit")
    result = np.zeros_like(rows)
    if invariant is None:
        root = np.maximum(rows[:, 0], 0.0)
        result[:, 0] = np.round(root) if rounded else root
    else:
        result[:, 0] = _invariant(invariant, rows.shape[:1], rounded)
    for parent, children in children_of(parents).items():
        fitted = nonnegative_sum_fit(rows[:, children], variances[children], result[:, parent])
        if rounded:
            fitted = round_rows_keeping_totals(fitted, result[:, parent])
        result[:, children] = fitted
    return result.astype(np.int64) if rounded else result
