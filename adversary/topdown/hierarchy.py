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
(:func:`~.solver.nonnegative_wls`), rounded to integers that keep that sum
(:func:`~.rounding.round_keeping_total`). The result is consistent at every
level, non-negative and integer, like the published PL 94-171 tables.
"""

from __future__ import annotations

import numpy as np

from .rounding import round_keeping_total
from .solver import nonnegative_wls

__all__ = ["check_parents", "children_of", "topdown"]


def check_parents(parents) -> np.ndarray:
    """``parents`` as an int array: one root (−1) first, every other parent listed earlier."""
    parents = np.asarray(parents)
    if parents.ndim != 1 or parents.size == 0 or not np.issubdtype(parents.dtype, np.integer):
        raise ValueError(f"parents must be a non-empty vector of unit indices, got {parents!r}")
    if parents[0] != -1 or np.any(parents[1:] < 0):
        raise ValueError("parents: unit 0 must be the root (parent -1) and the only one")
    if np.any(parents[1:] >= np.arange(1, parents.size)):
        raise ValueError("parents: every unit's parent must be listed before it")
    return parents.astype(np.int64)


def children_of(parents: np.ndarray) -> dict[int, np.ndarray]:
    """``{parent: its children's indices}`` for every unit with children."""
    return {int(unit): np.flatnonzero(parents == unit) for unit in np.unique(parents[parents >= 0])}


def topdown(noisy, variances, parents, invariant=None, *, rounded: bool = True) -> np.ndarray:
    """Post-processed counts of every unit: consistent, non-negative and (by default) integer.

    ``noisy`` has shape ``(units,)`` or ``(units, cells)``; ``variances`` one
    noise variance per unit (or one for all), the least-squares weights'
    inverse; ``invariant`` the root's true count(s), published exactly, or
    ``None`` (the root's measurement, at least 0, rounded). ``rounded=False``
    keeps the real-valued least-squares estimates.
    """
    parents = check_parents(parents)
    noisy = np.asarray(noisy, dtype=np.float64)
    if noisy.shape[:1] != parents.shape or noisy.ndim > 2:
        raise ValueError(
            f"noisy must hold one measurement (or cell vector) per unit ({parents.size}), "
            f"got shape {noisy.shape}"
        )
    cells = noisy.reshape(parents.size, -1)
    variances = np.broadcast_to(np.asarray(variances, dtype=np.float64), parents.shape)
    if invariant is None:
        root = np.maximum(cells[0], 0.0)
        root = np.round(root) if rounded else root
    else:
        root = np.asarray(invariant, dtype=np.float64).reshape(-1)
        if root.shape != cells[0].shape or np.any(root < 0):
            raise ValueError(f"invariant must be {cells.shape[1]} count(s) >= 0, got {invariant!r}")
    result = np.zeros_like(cells)
    result[0] = root
    for parent, children in children_of(parents).items():
        for cell in range(cells.shape[1]):
            fitted = nonnegative_wls(
                cells[children, cell],
                variances[children],
                np.ones((children.size, 1)),
                [result[parent, cell]],
            )
            if rounded:
                fitted = round_keeping_total(fitted, result[parent, cell])
            result[children, cell] = fitted
    result = result.reshape(noisy.shape)
    return result.astype(np.int64) if rounded else result
