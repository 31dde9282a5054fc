"""The checks of the noise mechanisms' parameters, each raising a ``ValueError`` naming it."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..._validation import _as_real_array, scalar_integer, scalar_positive

__all__ = [
    "MAX_BOUND",
    "MAX_SCALE",
    "as_bound",
    "as_epsilon",
    "as_scale",
    "as_sensitivity",
    "as_tail_mass",
    "positive",
]

#: Largest bound E of a bounded mechanism (its table has 2E + 1 entries).
MAX_BOUND = 10**6
#: Largest discrete Laplace scale b: draws fit in int64 (``P[|Z| ≥ 2⁶³] < e^{-9000}``).
MAX_SCALE = 1e15


def as_tail_mass(value, bounded: bool) -> float:
    """A tail mass in (0, 1), or 0 for bounded noise (its whole table)."""
    array = _as_real_array(value, "tail_mass").astype(np.float64)
    if array.ndim != 0:
        raise ValueError(f"tail_mass must be a scalar, got an array of shape {array.shape}")
    mass = float(array)
    if bounded and mass == 0.0:
        return 0.0
    if not 0.0 < mass < 1.0:
        allowed = "in [0, 1)" if bounded else "strictly between 0 and 1 (the noise is unbounded)"
        raise ValueError(f"tail_mass must lie {allowed}, got {value!r}")
    return mass


def as_scale(value) -> float:
    """A noise scale ``b``: a positive number at most :data:`MAX_SCALE` (draws are int64)."""
    scale = scalar_positive(value, "scale")
    if scale > MAX_SCALE:
        raise ValueError(f"scale must be at most {MAX_SCALE:g} (draws are int64), got {scale}")
    return scale


def as_bound(value) -> int:
    """A bounded mechanism's bound ``E``: an integer in ``[0, MAX_BOUND]``."""
    bound = scalar_integer(value, "bound", 0)
    if bound > MAX_BOUND:
        raise ValueError(f"bound must be at most {MAX_BOUND}, got {bound}")
    return bound


def as_sensitivity(value) -> int:
    """An integer sensitivity ``Δ >= 1``."""
    return scalar_integer(value, "sensitivity", 1)


def as_epsilon(value) -> float:
    """A privacy-loss ``ε``: a finite number >= 0."""
    array = _as_real_array(value, "epsilon").astype(np.float64)
    if array.ndim != 0 or not np.isfinite(array) or array < 0:
        raise ValueError(f"epsilon must be a finite scalar >= 0, got {value!r}")
    return float(array)


def positive(name: str):
    """The check of a parameter ``name`` that is one finite number > 0."""
    return partial(scalar_positive, name=name)
