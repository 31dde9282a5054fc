"""Integers that keep a total: the last step of TopDown's post-processing.

TopDown publishes integers whose sums still meet the constraints (controlled
rounding). For one sum constraint, the largest-remainder rule does it: round
every estimate down, then give one more to the estimates with the largest
fractional parts until the total is met. Each integer is within 1 of its
estimate, and non-negative estimates stay non-negative.
"""

from __future__ import annotations

import numpy as np

__all__ = ["round_keeping_total", "round_rows_keeping_totals"]


def round_keeping_total(values, total) -> np.ndarray:
    """Integers within 1 of ``values`` summing to ``total`` (largest remainders round up).

    ``values`` must sum to ``total`` up to rounding error (1e-6 relative);
    ties among equal fractional parts go to the first values.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError(f"values must be a vector of finite numbers, got {values!r}")
    if isinstance(total, bool) or float(total) != round(float(total)):
        raise ValueError(f"total must be an integer, got {total!r}")
    total = round(float(total))
    if abs(values.sum() - total) > 1e-6 * max(1.0, abs(total)):
        raise ValueError(f"values must sum to total {total}, got {values.sum()!r}")
    return round_rows_keeping_totals(values[None, :], np.array([total]))[0]


def round_rows_keeping_totals(values: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`round_keeping_total` for many rows at once (rows × units), unchecked."""
    floors = np.floor(values + 1e-9)
    remainder = np.rint(totals - floors.sum(axis=1)).astype(np.int64)
    order = np.argsort(-(values - floors), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(values.shape[1])[None, :], axis=1)
    return (floors + (ranks < remainder[:, None])).astype(np.int64)
