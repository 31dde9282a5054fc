"""Every noise vector of a small hierarchy, and the tables TopDown publishes from each.

The hierarchy's units (a block group and its blocks, or a county, its tracts
and their blocks) each have one noisy measurement of the count of the
target's cell. Within the noise tables' cut-offs (each unit's omitted mass at
most ``tail_mass``; in all at most the sum) there are finitely many noise
vectors, so the law of the published table given the truth is a finite sum:
the exact likelihood of a published table, up to the omitted mass.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ...measures.noise import noise_table, support_points
from ...memory import check_memory

__all__ = ["MAX_NOISE_VECTORS", "NoiseGrid", "grid_size", "noise_grid", "table_ids"]

#: The largest grid enumerated: beyond it, a stated error.
MAX_NOISE_VECTORS = 2_000_000


@dataclass(frozen=True)
class NoiseGrid:
    """``noise`` (vectors × units), their probabilities ``weight`` and the ``omitted_mass``."""

    noise: np.ndarray
    weight: np.ndarray
    omitted_mass: float


def grid_size(mechanisms, tail_mass: float) -> int:
    """How many noise vectors :func:`noise_grid` would enumerate."""
    return math.prod(len(support_points(noise_table(m, tail_mass))[0]) for m in mechanisms)


def noise_grid(mechanisms, tail_mass: float) -> NoiseGrid:
    """The product of the units' noise tables; refused (naming ``tail_mass``) when too large."""
    pmfs = [noise_table(m, tail_mass) for m in mechanisms]
    tables = [support_points(pmf) for pmf in pmfs]
    sizes = [len(values) for values, _ in tables]
    vectors = math.prod(sizes)
    if vectors > MAX_NOISE_VECTORS:
        raise ValueError(
            f"tail_mass: the hierarchy's noise grid would have {vectors:,} vectors "
            f"(more than {MAX_NOISE_VECTORS:,}); raise tail_mass, use fewer units or simulate"
        )
    check_memory(8.0 * vectors * (4 * len(sizes) + 8), "the hierarchy's noise grid")
    index = np.indices(sizes).reshape(len(sizes), -1).T
    noise = np.stack([tables[u][0][index[:, u]] for u in range(len(sizes))], axis=1)
    weight = np.prod([tables[u][1][index[:, u]] for u in range(len(sizes))], axis=0)
    return NoiseGrid(noise, weight, float(sum(pmf.omitted_mass for pmf in pmfs)))


def table_ids(*tables: np.ndarray) -> tuple[int, list[np.ndarray]]:
    """One id per distinct published table across all the arrays (rows × units)."""
    stacked = np.concatenate(tables, axis=0)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    bounds = np.cumsum([0] + [len(t) for t in tables])
    return int(inverse.max()) + 1, [inverse[a:b] for a, b in itertools.pairwise(bounds)]
