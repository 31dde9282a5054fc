"""Averages over the releases a mechanism can produce from a known truth.

The data holder's marginal measures (Kazan & Reiter (3.3), (3.4)) average a
function of the release over the noise distribution. Here the noise is a
discrete Gaussian summed over ``[-K, K]``, with ``K`` from
:func:`adversary.noise.discrete_gaussian.cutoff` so that the omitted noise
values carry at most ``tail_mass`` of probability: for a function with values
in ``[0, 1]`` the sum is within ``tail_mass`` of the exact expectation.

For any other :class:`~adversary.noise.mechanisms.NoiseMechanism` the
scenarios sum over its table (:meth:`~adversary.noise.mechanisms.NoiseMechanism.table`,
whose ``omitted_mass`` bounds what is left out) with :func:`expectation_over_table`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..memory import rows_per_block
from ..noise import discrete_gaussian

__all__ = ["DEFAULT_TAIL_MASS", "expectation_over_noise", "expectation_over_table"]

#: Release probability a marginal sum may leave out, unless a caller says otherwise.
DEFAULT_TAIL_MASS = 1e-15


def expectation_over_noise(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray],
    sigma2: np.ndarray,
    tail_mass: float = DEFAULT_TAIL_MASS,
) -> np.ndarray:
    """``E[function(Z)]`` with ``Z ~ DG(0, σ²)``, for every element of ``sigma2``.

    ``function(z, at)`` receives a row of noise values ``z`` (shape ``(1, n)``)
    and a boolean mask ``at`` selecting the cases (elements of ``sigma2``'s
    shape) that share one σ²; it returns the function's values, shape
    ``(at.sum(), n)``. Cases with equal σ² share one noise grid.
    """
    sigma2 = np.asarray(sigma2, dtype=np.float64)
    out = np.zeros(sigma2.shape, dtype=np.float64)
    for value in np.unique(sigma2):
        at = sigma2 == value
        table = discrete_gaussian.table(value, tail_mass)
        z, weights = table.support, table.probabilities
        chunk = rows_per_block(int(at.sum()))
        total = np.zeros(int(at.sum()))
        for start in range(0, z.size, chunk):
            part = slice(start, start + chunk)
            total += function(z[None, part].astype(np.float64), at) @ weights[part]
        out[at] = total
    return out


def expectation_over_table(
    function: Callable[[slice], np.ndarray], masses: np.ndarray, n_cases: int
) -> np.ndarray:
    """``Σ_i masses[i] · function(i)`` for ``n_cases`` cases at once, in blocks of noise values.

    ``function(at)`` receives a slice of the noise values' indices and returns
    the function's values for every case there, shape ``(n_cases, len)``.
    """
    masses = np.asarray(masses, dtype=np.float64)
    total = np.zeros(n_cases)
    chunk = rows_per_block(n_cases)
    for start in range(0, masses.size, chunk):
        part = slice(start, start + chunk)
        total += function(part) @ masses[part]
    return total
