"""The discrete Gaussian ``DG(0, σ²)`` on the integers: ``P[Z = z] ∝ exp(-z²/(2σ²))``.

Every function is vectorised over ``z`` and ``sigma2`` (numpy broadcasting)
and works in log space.

Normaliser. ``Z(σ²) = Σ_k exp(-k²/(2σ²))`` is a Jacobi theta value. Poisson
summation gives two exact series, ``Z = 1 + 2 Σ_{n≥1} q^{n²}`` with
``q = exp(-1/(2σ²))`` and ``Z = √(2πσ²) (1 + 2 Σ_{n≥1} q̃^{n²})`` with
``q̃ = exp(-2π²σ²)``. Because ``log q · log q̃ = π²``, the smaller of the two
ratios is at most ``e^{-π}`` for every σ², and keeping ``n ≤ N_TERMS`` terms
of that series leaves a relative truncation error of at most
``2 e^{-π (N_TERMS+1)²} / (1 - e^{-π})`` (:data:`NORMALISER_TRUNCATION_BOUND`,
about 4e-34 — far below float64 resolution), whatever σ² is.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validation import as_integers, as_positive, as_probability

__all__ = [
    "NORMALISER_TRUNCATION_BOUND",
    "N_TERMS",
    "cutoff",
    "log_normaliser",
    "logpmf",
    "pmf",
    "sf",
    "tail_bound",
    "variance",
]

N_TERMS = 4
NORMALISER_TRUNCATION_BOUND = 2.0 * np.exp(-np.pi * (N_TERMS + 1) ** 2) / (1.0 - np.exp(-np.pi))


def _theta_parts(sigma2: np.ndarray):
    """The faster of the two theta series for each σ².

    Returns ``(log_prefactor, a, dual)`` with ``Z = exp(log_prefactor) · (1 + 2 Σ e^{-a n²})``
    and ``dual`` true where the Poisson-dual series is used.
    """
    a_direct = 1.0 / (2.0 * sigma2)
    a_dual = 2.0 * np.pi**2 * sigma2
    dual = a_dual > a_direct
    a = np.where(dual, a_dual, a_direct)
    log_prefactor = np.where(dual, 0.5 * np.log(2.0 * np.pi * sigma2), 0.0)
    return log_prefactor, a, dual


def _series_sums(a: np.ndarray):
    """``Σ_{n=1}^{N_TERMS} e^{-a n²}`` and ``Σ n² e^{-a n²}`` (a ≥ π, so both converge fast)."""
    n = np.arange(1, N_TERMS + 1, dtype=np.float64)
    terms = np.exp(-a[..., None] * n**2)
    return terms.sum(axis=-1), (n**2 * terms).sum(axis=-1)


def log_normaliser(sigma2) -> np.ndarray:
    """``log Σ_k exp(-k²/(2σ²))`` with relative error ≤ :data:`NORMALISER_TRUNCATION_BOUND`."""
    sigma2 = as_positive(sigma2, "sigma2")
    log_prefactor, a, _ = _theta_parts(sigma2)
    s0, _ = _series_sums(a)
    return log_prefactor + np.log1p(2.0 * s0)


def logpmf(z, sigma2) -> np.ndarray:
    """``log P[Z = z]`` for ``Z ~ DG(0, σ²)``; ``z`` must be integer-valued."""
    z = as_integers(z, "z").astype(np.float64)
    sigma2 = as_positive(sigma2, "sigma2")
    return -(z**2) / (2.0 * sigma2) - log_normaliser(sigma2)


def pmf(z, sigma2) -> np.ndarray:
    """``P[Z = z]`` for ``Z ~ DG(0, σ²)``."""
    return np.exp(logpmf(z, sigma2))


def variance(sigma2) -> np.ndarray:
    """``Var Z = Σ k² e^{-k²/(2σ²)} / Z``, from the same theta series as the normaliser.

    Direct series: ``2 Σ n² q^{n²} / (1 + 2 Σ q^{n²})``. Dual series
    (``d log Z / d(1/(2σ²))``): ``σ² - 4π²σ⁴ · 2 Σ n² q̃^{n²} / (1 + 2 Σ q̃^{n²})``.
    Always ``< σ²`` (Canonne, Kamath & Steinke 2020, Prop. 5).
    """
    sigma2 = as_positive(sigma2, "sigma2")
    _, a, dual = _theta_parts(sigma2)
    s0, s2 = _series_sums(a)
    ratio = 2.0 * s2 / (1.0 + 2.0 * s0)
    return np.where(dual, sigma2 - 4.0 * np.pi**2 * sigma2**2 * ratio, ratio)


def tail_bound(k, sigma2) -> np.ndarray:
    """A rigorous upper bound on ``P[Z ≥ k]`` for integer ``k ≥ 1``.

    ``Σ_{j≥k} e^{-j²/(2σ²)} ≤ e^{-k²/(2σ²)} + ∫_k^∞ e^{-x²/(2σ²)} dx`` and
    ``Z ≥ max(1, √(2πσ²))`` (both theta series have positive terms).
    """
    k = as_integers(k, "k").astype(np.float64)
    if np.any(k < 1):
        raise ValueError(f"k must be >= 1, got {k!r}")
    sigma2 = as_positive(sigma2, "sigma2")
    sigma = np.sqrt(sigma2)
    upper = np.exp(-(k**2) / (2.0 * sigma2)) + sigma * np.sqrt(np.pi / 2.0) * special.erfc(
        k / (sigma * np.sqrt(2.0))
    )
    return upper / np.maximum(1.0, np.sqrt(2.0 * np.pi) * sigma)


def cutoff(sigma2, tail_mass=1e-15) -> np.ndarray:
    """Smallest ``K ≥ 0`` with ``P[|Z| > K] ≤ tail_mass`` by :func:`tail_bound`.

    Sums over the noise restricted to ``[-K, K]`` then miss at most ``tail_mass``
    of probability; callers report ``K`` and the bound with their results.
    """
    sigma2 = as_positive(sigma2, "sigma2")
    tail_mass = as_probability(tail_mass, "tail_mass")
    sigma2, tail_mass = np.broadcast_arrays(sigma2, tail_mass)
    # Start below the Gaussian quantile and walk up; a few steps at most.
    start = np.sqrt(2.0 * sigma2 * np.maximum(np.log(1.0 / tail_mass) - 5.0, 0.0))
    k = np.maximum(np.floor(start) - 1.0, 0.0).astype(np.int64)
    while True:
        short = 2.0 * tail_bound(k + 1, sigma2) > tail_mass
        if not np.any(short):
            return k
        k = k + short * np.maximum(1, (0.01 * np.sqrt(sigma2)).astype(np.int64))


def sf(k, sigma2) -> np.ndarray:
    """``P[Z ≥ k]`` for ``Z ~ DG(0, σ²)``, by summing the pmf out to the tail cut-off.

    Uses symmetry ``P[Z ≥ k] = 1 - P[Z ≥ 1 - k]`` for ``k ≤ 0`` so that only
    upper tails are summed (small terms first, no cancellation); the summed
    range omits mass below 1e-300 relative to the normaliser.
    """
    k = as_integers(k, "k")
    sigma2 = as_positive(sigma2, "sigma2")
    k, sigma2 = np.broadcast_arrays(k, sigma2)
    out = np.empty(k.shape, dtype=np.float64)
    for s2 in np.unique(sigma2):
        at = sigma2 == s2
        ks = k[at]
        upper = np.where(ks >= 1, ks, 1 - ks)
        reach = int(np.ceil(np.sqrt(2.0 * s2 * 700.0))) + 1
        grid = np.arange(1, reach + 1)
        weights = pmf(grid, s2)
        tails = np.cumsum(weights[::-1])[::-1]  # tails[j-1] = P[Z ≥ j]
        upper_tail = np.where(upper <= reach, tails[np.minimum(upper, reach) - 1], 0.0)
        out[at] = np.where(ks >= 1, upper_tail, 1.0 - upper_tail)
    return out
