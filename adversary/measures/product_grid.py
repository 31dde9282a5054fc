"""Sums over independent finite laws: every combination of their values and its probability.

The noise of several independent releases, each tabulated within a cut-off
(:func:`~adversary.measures.noise.noise_table`), has a finite product law:
:func:`noise_grid` enumerates it (every noise vector and its probability,
with the omitted mass bounded by the sum of the tables'), and
:func:`product_law` any product of finite laws. Both size their arrays
before allocating them (:func:`adversary.memory.check_memory`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..memory import check_memory
from .noise import noise_table, support_points

__all__ = ["NoiseGrid", "noise_grid", "noise_laws", "product_law"]


@dataclass(frozen=True)
class NoiseGrid:
    """``noise`` (vectors × releases), their probabilities ``weight`` and the ``omitted_mass``."""

    noise: np.ndarray
    weight: np.ndarray
    omitted_mass: float


def noise_laws(mechanisms, tail_mass: float) -> tuple[list, float]:
    """``([(values, probabilities)] per mechanism, omitted mass)`` within ``tail_mass`` each."""
    pmfs = [noise_table(m, tail_mass) for m in mechanisms]
    return [support_points(pmf) for pmf in pmfs], float(sum(pmf.omitted_mass for pmf in pmfs))


def product_law(laws, what: str, bytes_per_point: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(points, probabilities)``: every combination of the laws' values (points × laws).

    Refused, naming ``what``, when the points with ``bytes_per_point`` more
    each would exceed the memory budget.
    """
    sizes = [len(values) for values, _ in laws]
    points = math.prod(sizes)
    check_memory(points * (8.0 * 2 * len(sizes) + 8.0 + bytes_per_point), what)
    index = np.indices(sizes).reshape(len(sizes), -1).T
    values = np.stack([laws[k][0][index[:, k]] for k in range(len(sizes))], axis=1)
    weight = np.prod([laws[k][1][index[:, k]] for k in range(len(sizes))], axis=0)
    return values, weight


def noise_grid(mechanisms, tail_mass: float, what: str, bytes_per_point: float = 0.0) -> NoiseGrid:
    """Every noise vector of independent ``mechanisms`` within the cut-offs (a product law)."""
    laws, omitted = noise_laws(mechanisms, tail_mass)
    noise, weight = product_law(laws, what, bytes_per_point)
    return NoiseGrid(noise, weight, omitted)
