"""The post-processing function f of S6: least-squares share, clipped and rounded (S6.2)-(S6.3).

Computed in exact integer arithmetic, in numpy (:func:`post_process`) and as a
PyTensor graph (:func:`post_process_graph`) for the PyMC model. Ties of the
rounding (``x̄1`` halfway between two integers) go up.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_counts, as_integers

__all__ = ["post_process", "post_process_graph"]

# Inputs of f are kept below this magnitude so that 2·(d x1* - y1* + x̃2) + d + 1 fits in int64.
_MAX_INPUT = 2**30


def scalar_count(value, name: str, minimum: int = 0) -> int:
    """A single integer ``>= minimum`` (d, x2, x̃2, m), with the argument named on error."""
    array = as_counts(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a single integer, got {value!r}")
    if array < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if array >= _MAX_INPUT:
        raise ValueError(f"{name} must be below 2**30, got {value!r}")
    return int(array)


def rounded_share(numerator, d: int, x2_tilde) -> np.ndarray:
    """``clip(⌊N/(d+1) + 1/2⌋, 0, x̃2)`` in integer arithmetic, ``N = d x1* - y1* + x̃2``.

    ``⌊N/D + 1/2⌋ = ⌊(2N + D)/(2D)⌋``, and numpy's ``//`` on integers is floor
    division for negative numerators too. Rounding before clipping gives the
    same result as (S6.3)'s clip-then-round, because 0 and ``x̃2`` are integers.
    """
    denominator = d + 1
    rounded = (2 * numerator + denominator) // (2 * denominator)
    return np.clip(rounded, 0, x2_tilde)


def post_process(x1_star, y1_star, x2_tilde, d) -> np.ndarray:
    """The post-processing function ``f(x1*, y1*, x̃2)`` of (S6.2)–(S6.3), as int64.

    ``x̄1 = (d x1* + (x̃2 - y1*))/(d + 1)`` (S6.2), clipped to ``[0, x̃2]`` and
    rounded to the nearest integer, ties upwards (``⌊x̄1 + 1/2⌋``). Exact
    integer arithmetic; broadcasts ``x1_star``, ``y1_star`` and ``x2_tilde``.
    ``d`` is the number of other blocks in the block group (``>= 1``).
    """
    x1_star = as_integers(x1_star, "x1_star")
    y1_star = as_integers(y1_star, "y1_star")
    x2_tilde = as_counts(x2_tilde, "x2_tilde")
    d = scalar_count(d, "d", minimum=1)
    for name, array in (("x1_star", x1_star), ("y1_star", y1_star), ("x2_tilde", x2_tilde)):
        if np.any(np.abs(array) >= _MAX_INPUT):
            raise ValueError(f"{name} must be below 2**30 in magnitude, got {array!r}")
    return rounded_share(d * x1_star - y1_star + x2_tilde, d, x2_tilde)


def post_process_graph(x1_star, y1_star, x2_tilde, d: int):
    """:func:`post_process` as a PyTensor int64 graph (same integer arithmetic, ties up).

    ``clip(⌊(2N + d + 1) / (2(d + 1))⌋, 0, x̃2)`` with ``N = d x1* - y1* + x̃2``;
    PyTensor's integer ``//`` is floor division, as numpy's.
    """
    import pytensor.tensor as pt

    x1_star = pt.cast(pt.as_tensor_variable(x1_star), "int64")
    y1_star = pt.cast(pt.as_tensor_variable(y1_star), "int64")
    x2_tilde = pt.cast(pt.as_tensor_variable(x2_tilde), "int64")
    denominator = np.int64(d + 1)
    numerator = np.int64(d) * x1_star - y1_star + x2_tilde
    rounded = (np.int64(2) * numerator + denominator) // (np.int64(2) * denominator)
    return pt.clip(rounded, np.int64(0), x2_tilde)
