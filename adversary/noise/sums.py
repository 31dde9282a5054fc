"""The exact distribution of a sum of independent discrete Gaussians.

Kazan & Reiter's block-group attack (Sec. 3.2) releases ``y1*``, the sum of
the noisy counts of d other blocks, whose noise is a sum of d iid
``DG(0, σ²)``. Their approximation (3.7) and Proposition S2.1 replace it by
``DG(0, dσ²)``; :func:`sum_of_discrete_gaussians` gives the exact pmf, by
convolving d copies of the noise truncated to ``[-K, K]``.

Truncation: each copy keeps all but ``tail_mass / d`` of its mass, so the
tabulated sum misses at most ``tail_mass`` (reported as ``omitted_mass``).
Convolution by repeated squaring with ``numpy.convolve`` (exact sums of
products, relative rounding error a few ulp per step), or by FFT when the
table is long (absolute error ≲ 1e-16 of the largest probability; values that
round below zero are set to zero and counted in ``omitted_mass``).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_counts, as_positive, as_probability
from . import discrete_gaussian
from .finite_pmf import FinitePmf

__all__ = ["sum_of_copies", "sum_of_discrete_gaussians"]

# Above this many output points per convolution, use FFT instead of direct sums.
_DIRECT_LIMIT = 20_000


def _convolve(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    if min(a.size, b.size) * max(a.size, b.size) <= _DIRECT_LIMIT * 50:
        return np.convolve(a, b), 0.0
    from scipy import signal  # on use: scipy.signal alone takes about a second to import

    product = signal.fftconvolve(a, b)
    negative = product < 0
    rounded_away = float(-product[negative].sum())
    product[negative] = 0.0
    return product, rounded_away


def sum_of_discrete_gaussians(d, sigma2, tail_mass: float = 1e-15) -> FinitePmf:
    """Exact pmf of ``Z_1 + … + Z_d`` with ``Z_i ~ DG(0, σ²)`` iid, to within ``tail_mass``."""
    d = int(as_counts(d, "d"))
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    sigma2 = float(as_positive(sigma2, "sigma2"))
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    # Each truncated copy misses at most 2 P[Z > K]; the sum misses at most d times that.
    return sum_of_copies(discrete_gaussian.table(sigma2, tail_mass / d), d)


def sum_of_copies(one: FinitePmf, d: int) -> FinitePmf:
    """Pmf of the sum of ``d`` iid copies of the table ``one``, by repeated squaring.

    Its ``omitted_mass`` is ``d`` times the table's plus what the FFT's rounding
    of negative values to 0 removed.
    """
    omitted = d * one.omitted_mass
    result, power, remaining = None, one.probabilities, d
    while remaining:
        if remaining & 1:
            if result is None:
                result = power
            else:
                result, lost = _convolve(result, power)
                omitted += lost
        remaining >>= 1
        if remaining:
            power, lost = _convolve(power, power)
            omitted += lost
    return FinitePmf(start=one.start * d, probabilities=result, omitted_mass=omitted)
