"""Integers that keep a total: the last step of TopDown's post-processing.

TopDown publishes integers whose sums still meet the constraints (controlled
rounding). For one sum constraint, the largest-remainder rule does it: round
every estimate down, then give one more to the estimates with the largest
fractional parts until the total is met. Each integer is within 1 of its
estimate, and non-negative estimates stay non-negative. Values and totals
must be of magnitude at most 2**53
(:data:`~adversary._validation.MAX_EXACT_COUNT`), where float64 still holds
every integer.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_exact_reals

__all__ = ["round_keeping_total", "round_rows_keeping_totals"]


def round_keeping_total(values, total) -> np.ndarray:
    """Integers within 1 of ``values`` summing to ``total`` (largest remainders round up).

    ``values`` must sum to ``total`` up to rounding error (1e-6 relative);
    ties among equal fractional parts go to the first values.
    """
    values = as_exact_reals(values, "values")
    if values.ndim != 1:
        raise ValueError(f"values must be a vector, got shape {values.shape}")
    total = as_exact_reals(total, "total")
    if total.ndim != 0 or total != np.round(total):
        raise ValueError(f"total must be an integer, got {total.tolist()!r}")
    if abs(values.sum() - total) > 1e-6 * max(1.0, abs(float(total))):
        raise ValueError(f"values must sum to total {int(total)}, got {float(values.sum())!r}")
    return round_rows_keeping_totals(values[None, :], total[None])[0]


def round_rows_keeping_totals(values: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`round_keeping_total` for many rows at once (rows × units), unchecked."""
    floors = np.floor(values + 1e-9)
    remainder = np.rint(totals - floors.sum(axis=1)).astype(np.int64)
    order = np.argsort(-(values - floors), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(values.shape[1])[None, :], axis=1)
    return (floors + (ranks < remainder[:, None])).astype(np.int64)
