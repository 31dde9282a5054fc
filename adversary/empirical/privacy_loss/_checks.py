"""Argument checks shared by the privacy-loss modules (each names the argument it refuses)."""

from __future__ import annotations

import numpy as np

from ..._validation import _as_real_array, as_integers, as_positive, as_probability


def _as_samples(value, name: str, minimum: int = 2) -> np.ndarray:
    array = _as_real_array(value, name).astype(np.float64)
    if array.ndim != 1 or array.size < minimum:
        raise ValueError(f"{name} must be a 1-d array of at least {minimum} values, got {value!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return array


def _as_positive_scalar(value, name: str) -> float:
    return float(as_positive(value, name))


def _as_percentile(value, name: str) -> float:
    q = float(_as_real_array(value, name))
    if not 50.0 < q <= 100.0:
        raise ValueError(f"{name} must lie in (50, 100], got {value!r}")
    return q


def _as_integer_shift(value, name: str = "shift") -> int:
    shift = int(as_integers(value, name))
    if shift < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return shift


def _as_prior(value, name: str = "prior") -> np.ndarray:
    return as_probability(value, name)
