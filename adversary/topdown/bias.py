"""JASON's bias measure of post-processed counts (2022, Sec. 6.3.3, eq. 6-2 and 6-3).

Over ``N`` runs of noise and post-processing, the squared errors of a unit's
published count ``p̂_i`` against its true count ``p`` split by sign,

    σ₊² = (1/N) Σ_{p̂_i ≥ p} (p̂_i − p)²,   σ₋² = (1/N) Σ_{p̂_i < p} (p̂_i − p)²,

and ``B = (σ₊² − σ₋²)/(σ₊² + σ₋²)`` in [−1, 1]: 0 for symmetric errors, 1
when every error is upward. :func:`windowed_mean` is the report's red line,
the mean of ``B`` over the nearest ``window`` units by population;
:func:`block_size_bin` the bins of block size by which JASON (Table 8-11)
reports.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import as_exact_reals

__all__ = ["BLOCK_SIZE_BINS", "bias_measure", "block_size_bin", "windowed_mean"]

#: JASON (2022) Table 8-11's bins of block size (persons in the block).
BLOCK_SIZE_BINS = ("<10", "10-49", "50-99", "100-249", ">=250")
_BIN_EDGES = np.array([10, 50, 100, 250])


def block_size_bin(sizes) -> pd.Categorical:
    """Table 8-11 bin (``"<10"`` … ``">=250"``) of each block size."""
    codes = np.searchsorted(_BIN_EDGES, np.asarray(sizes), side="right")
    return pd.Categorical.from_codes(codes, categories=list(BLOCK_SIZE_BINS), ordered=True)


def bias_measure(published, truth) -> dict[str, np.ndarray]:
    """``{"sigma2", "sigma2_plus", "sigma2_minus", "B"}`` per unit; ``published`` is runs × units.

    A unit whose every run is exact has ``B`` NaN (0/0): no error to measure.
    """
    published = as_exact_reals(published, "published")
    truth = as_exact_reals(truth, "truth")
    if (
        truth.ndim != 1
        or published.ndim != 2
        or published.shape[1:] != truth.shape
        or published.shape[0] == 0
    ):
        raise ValueError(
            f"published must be runs (>= 1) × units with units matching truth (a vector, "
            f"shape {truth.shape}), got {published.shape}"
        )
    error = published - truth[None, :]
    plus = np.mean(np.where(error >= 0, error**2, 0.0), axis=0)
    minus = np.mean(np.where(error < 0, error**2, 0.0), axis=0)
    total = plus + minus
    with np.errstate(invalid="ignore"):
        bias = (plus - minus) / total
    return {"sigma2": total, "sigma2_plus": plus, "sigma2_minus": minus, "B": bias}


def windowed_mean(values, key, window: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted key, mean of values over the nearest window units by key)``, ignoring NaN
    values (units without a measure, like ``B`` of a unit never wrong)."""
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"values must be numbers (NaN for none), got {values!r}") from None
    if values.ndim != 1 or np.any(np.isinf(values)):
        raise ValueError(f"values must be a vector of finite numbers or NaN, got {values.shape}")
    key = as_exact_reals(key, "key", limit=np.finfo(np.float64).max)
    if key.shape != values.shape:
        raise ValueError(f"key must hold one value per value ({values.size}), got {key.shape}")
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    order = np.argsort(key, kind="stable")
    ordered = values[order]
    half = window // 2
    means = np.array(
        [
            np.nanmean(ordered[max(0, i - half) : i - half + window])
            if np.any(np.isfinite(ordered[max(0, i - half) : i - half + window]))
            else np.nan
            for i in range(ordered.size)
        ]
    )
    return key[order], means
