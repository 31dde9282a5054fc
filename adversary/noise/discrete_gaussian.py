"""The discrete Gaussian ``DG(0, σ²)`` on the integers: ``P[Z = z] ∝ exp(-z²/(2σ²))``.

Every function is vectorised over ``z`` and ``sigma2`` (numpy broadcasting).
:func:`logpmf` and :func:`log_normaliser` work in log space; :func:`pmf`,
:func:`sf` and :func:`cdf` divide by ``Z`` itself instead, which keeps a few
ulp of relative accuracy where subtracting a large ``log Z`` would not.

Normaliser. ``Z(σ²) = Σ_k exp(-k²/(2σ²))`` is a Jacobi theta value. Poisson
summation gives two exact series, ``Z = 1 + 2 Σ_{n≥1} q^{n²}`` with
``q = exp(-1/(2σ²))`` and ``Z = √(2πσ²) (1 + 2 Σ_{n≥1} q̃^{n²})`` with
``q̃ = exp(-2π²σ²)``. Because ``log q · log q̃ = π²``, the smaller of the two
ratios is at most ``e^{-π}`` for every σ², and keeping ``n ≤ N_TERMS`` terms
of that series leaves a relative truncation error of at most
``2 e^{-π (N_TERMS+1)²} / (1 - e^{-π})`` (:data:`NORMALISER_TRUNCATION_BOUND`,
about 4e-34 — far below float64 resolution), whatever σ² is.

Tails. :func:`sf` and :func:`cdf` sum the pmf exactly on a grid for
``σ² < SF_GRID_MAX_SIGMA2`` and use the midpoint Euler–Maclaurin formula with
``SF_EM_TERMS`` correction terms above it, so their cost does not grow with σ.

Sampling. :func:`sample` draws exactly (Canonne, Kamath & Steinke 2020,
Algorithms 1–3); see :mod:`adversary.noise.exact_sampling`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validation import as_integers, as_positive, as_probability
from ..memory import TABLE_ARRAYS, check_noise_table
from .exact_sampling import sample
from .finite_pmf import FinitePmf

__all__ = [
    "NORMALISER_TRUNCATION_BOUND",
    "N_TERMS",
    "SF_EM_ERROR_BOUND",
    "SF_EM_TERMS",
    "SF_GRID_MAX_SIGMA2",
    "cdf",
    "cutoff",
    "log_normaliser",
    "logpmf",
    "pmf",
    "sample",
    "sf",
    "table",
    "tail_bound",
    "variance",
]

N_TERMS = 4
# Noise values whose pmf :func:`table` computes at once.
_TABLE_BLOCK = 2**20
NORMALISER_TRUNCATION_BOUND = 2.0 * np.exp(-np.pi * (N_TERMS + 1) ** 2) / (1.0 - np.exp(-np.pi))


def _theta_parts(sigma2: np.ndarray):
    """The faster of the two theta series for each σ².

    Returns ``(log_prefactor, a, dual)`` with ``Z = exp(log_prefactor) · (1 + 2 Σ e^{-a n²})``
    and ``dual`` true where the Poisson-dual series is used.
    """
    with np.errstate(over="ignore"):  # a = inf for extreme σ²: the terms are then exactly 0
        a_direct = 1.0 / (2.0 * sigma2)
        a_dual = 2.0 * np.pi**2 * sigma2
    dual = a_dual > a_direct
    a = np.where(dual, a_dual, a_direct)
    log_prefactor = np.where(dual, 0.5 * (np.log(2.0 * np.pi) + np.log(sigma2)), 0.0)
    return log_prefactor, a, dual


def _series_sums(a: np.ndarray):
    """``Σ_{n=1}^{N_TERMS} e^{-a n²}`` and ``Σ n² e^{-a n²}`` (a ≥ π, so both converge fast)."""
    n = np.arange(1, N_TERMS + 1, dtype=np.float64)
    with np.errstate(over="ignore"):  # a n² = inf for a near the float maximum: the term is 0
        terms = np.exp(-a[..., None] * n**2)
    return terms.sum(axis=-1), (n**2 * terms).sum(axis=-1)


def log_normaliser(sigma2) -> np.ndarray:
    """``log Σ_k exp(-k²/(2σ²))`` with relative error ≤ :data:`NORMALISER_TRUNCATION_BOUND`."""
    sigma2 = as_positive(sigma2, "sigma2")
    log_prefactor, a, _ = _theta_parts(sigma2)
    s0, _ = _series_sums(a)
    return log_prefactor + np.log1p(2.0 * s0)


def _normaliser(sigma2: np.ndarray) -> np.ndarray:
    """``Z(σ²)`` itself (finite for every float σ²), accurate to a few ulp.

    Dividing by ``Z`` keeps the relative accuracy that subtracting a large
    ``log Z`` would lose (``log Z ≈ 14`` at σ² = 1e12 has an ulp of 2e-15).
    """
    _, a, dual = _theta_parts(sigma2)
    s0, _ = _series_sums(a)
    return np.where(dual, np.sqrt(2.0 * np.pi) * np.sqrt(sigma2), 1.0) * (1.0 + 2.0 * s0)


def logpmf(z, sigma2) -> np.ndarray:
    """``log P[Z = z]`` for ``Z ~ DG(0, σ²)``; ``z`` must be integer-valued."""
    z = as_integers(z, "z").astype(np.float64)
    sigma2 = as_positive(sigma2, "sigma2")
    return -0.5 * (z**2 / sigma2) - log_normaliser(sigma2)


def pmf(z, sigma2) -> np.ndarray:
    """``P[Z = z]`` for ``Z ~ DG(0, σ²)``, as ``exp(-z²/(2σ²)) / Z`` (not through logs)."""
    z = as_integers(z, "z").astype(np.float64)
    sigma2 = as_positive(sigma2, "sigma2")
    with np.errstate(over="ignore"):  # z²/σ² = inf for a subnormal σ²: the pmf is 0 there
        return np.exp(-0.5 * (z**2 / sigma2)) / _normaliser(sigma2)


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
    # For σ² ≥ 10³ the dual terms underflow to exactly 0; capping σ² in the
    # correction avoids ∞·0 for σ² beyond 1e154.
    capped = np.minimum(sigma2, 1e3)
    return np.where(dual, sigma2 - 4.0 * np.pi**2 * capped**2 * ratio, ratio)


def tail_bound(k, sigma2) -> np.ndarray:
    """A rigorous upper bound on ``P[Z ≥ k]`` for integer ``k ≥ 1``.

    ``Σ_{j≥k} e^{-j²/(2σ²)} ≤ e^{-k²/(2σ²)} + ∫_k^∞ e^{-x²/(2σ²)} dx`` and
    ``Z ≥ max(1, √(2πσ²))`` (both theta series have positive terms).
    """
    k = as_integers(k, "k").astype(np.float64)
    if np.any(k < 1):
        raise ValueError(f"k must be >= 1, got {k!r}")
    sigma2 = as_positive(sigma2, "sigma2")
    from scipy import special  # on use: scipy.special (and its linalg) is slow to import

    sigma = np.sqrt(sigma2)
    upper = np.exp(-(k**2) / (2.0 * sigma2)) + sigma * np.sqrt(np.pi / 2.0) * special.erfc(
        k / (sigma * np.sqrt(2.0))
    )
    return upper / np.maximum(1.0, np.sqrt(2.0 * np.pi) * sigma)


def cutoff(sigma2, tail_mass=1e-15) -> np.ndarray:
    """Smallest ``K ≥ 0`` with ``P[|Z| > K] ≤ tail_mass`` by :func:`tail_bound`.

    That is, the smallest ``K`` with ``2 · tail_bound(K + 1, σ²) ≤ tail_mass``
    (the bound decreases in ``K``). Sums over the noise restricted to
    ``[-K, K]`` then miss at most ``tail_mass`` of probability; callers report
    ``K`` and the bound with their results.
    """
    sigma2 = as_positive(sigma2, "sigma2")
    tail_mass = as_probability(tail_mass, "tail_mass")
    sigma2, tail_mass = np.broadcast_arrays(sigma2, tail_mass)

    def enough(k):
        return 2.0 * tail_bound(k + 1, sigma2) <= tail_mass

    # Start below the Gaussian quantile, bracket the answer in (lo, hi] by
    # steps that double, then bisect. ``lo = -1`` stands for "K = 0 may do".
    start = np.sqrt(2.0 * sigma2 * np.maximum(np.log(1.0 / tail_mass) - 5.0, 0.0))
    if np.any(start > 2.0**60):
        raise ValueError(
            f"sigma2 is too large for a 64-bit integer cut-off, got {np.max(sigma2):g}"
        )
    hi = np.maximum(np.floor(start) - 1.0, 0.0).astype(np.int64)
    done = enough(hi)
    lo = np.where(done, -1, hi)
    step = np.maximum(1, (0.01 * np.sqrt(sigma2)).astype(np.int64))
    while not np.all(done):
        lo = np.where(done, lo, hi)
        hi = np.where(done, hi, hi + step)
        step = step * 2
        done = enough(hi)
    active = hi - lo > 1
    while np.any(active):
        mid = np.maximum((lo + hi) // 2, 0)
        ok = enough(mid)
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid, lo)
        active = hi - lo > 1
    return hi


#: ``sf`` sums the pmf on a grid below this σ² and uses Euler–Maclaurin above.
SF_GRID_MAX_SIGMA2 = 1e4
#: Number of Euler–Maclaurin correction terms ``m = 1 … SF_EM_TERMS``.
SF_EM_TERMS = 8
#: Bound on the relative error of the Euler–Maclaurin tail sum (before
#: floating-point rounding) for ``σ² ≥ SF_GRID_MAX_SIGMA2`` and
#: ``(k - ½)/σ ≤ 40``; beyond that the tail is below ``e^{-800}`` and ``sf``
#: returns 0. Computed in ``tests/noise/test_discrete_gaussian.py``.
SF_EM_ERROR_BOUND = 2e-19

# Midpoint Euler–Maclaurin coefficients c_m = -B_{2m}(½)/(2m)! = (1 - 2^{1-2m}) B_{2m}/(2m)!,
# from the exact Bernoulli numbers B_2, B_4, …, B_16.
_BERNOULLI_EVEN = [
    Fraction(1, 6),
    Fraction(-1, 30),
    Fraction(1, 42),
    Fraction(-1, 30),
    Fraction(5, 66),
    Fraction(-691, 2730),
    Fraction(7, 6),
    Fraction(-3617, 510),
]
_EM_COEFFICIENTS = np.array(
    [
        float((1 - Fraction(1, 2 ** (2 * m - 1))) * b / math.factorial(2 * m))
        for m, b in enumerate(_BERNOULLI_EVEN[:SF_EM_TERMS], start=1)
    ]
)
# Beyond (k - ½)/σ = 40 the upper tail is below e^{-800}: exactly 0 in float64.
_EM_MAX_U = 40.0
# The grid reaches K with every omitted tail below e^{-760}·(1 + σ) < 1e-326.
_GRID_LOG_REACH = 760.0


def table(sigma2, tail_mass=1e-15, copies: int = 1) -> FinitePmf:
    """``DG(0, σ²)`` tabulated on ``[-K, K]``, ``K = cutoff(σ², tail_mass)``.

    ``omitted_mass`` is the rigorous bound ``2 · tail_bound(K + 1, σ²)`` on
    ``P[|Z| > K]``. A table that, with the arrays a sum over it derives
    (:data:`adversary.memory.TABLE_ARRAYS`), would exceed the memory budget
    is refused before it is allocated; ``copies`` is the number of such
    tables the caller holds at once.
    """
    sigma2 = as_positive(sigma2, "sigma2")
    if sigma2.ndim != 0:
        raise ValueError(f"sigma2 must be a scalar, got an array of shape {sigma2.shape}")
    sigma2 = float(sigma2)
    reach = int(cutoff(sigma2, tail_mass))
    check_noise_table(
        reach, f"the discrete Gaussian noise DG(0, σ² = {sigma2:.3g})", TABLE_ARRAYS * copies
    )
    probabilities = np.empty(2 * reach + 1)
    for first in range(0, probabilities.size, _TABLE_BLOCK):
        z = np.arange(first, min(first + _TABLE_BLOCK, probabilities.size)) - reach
        probabilities[first : first + z.size] = pmf(z, sigma2)
    return FinitePmf(
        start=-reach,
        probabilities=probabilities,
        omitted_mass=2.0 * float(tail_bound(reach + 1, sigma2)),
    )


def _upper_tail_em(a: np.ndarray, sigma2: np.ndarray) -> np.ndarray:
    """``P[Z ≥ a + ½]`` by midpoint Euler–Maclaurin, for ``σ² ≥ SF_GRID_MAX_SIGMA2``, ``a ≥ ½``.

    With ``f(x) = e^{-x²/(2σ²)}``, ``u = a/σ`` and ``f^{(n)}(x) = (-1)^n σ^{-n} He_n(u) f(a)``
    at ``x = a``: ``Σ_{j ≥ a+½} f(j) = ∫_a^∞ f + Σ_{m ≤ p} c_m f^{(2m-1)}(a) + R``,
    ``|R| ≤ |B_{2p}|/(2p)! ∫_a^∞ |f^{(2p)}|``, ``p = SF_EM_TERMS``. Divided by
    ``Z = √(2πσ²)`` (the dual theta terms are below e^{-190000} here):
    ``P[Z ≥ a + ½] = f(a) [erfcx(u/√2)/2 - Σ_m c_m σ^{-2m} He_{2m-1}(u)/√(2π)] + R/Z``.
    """
    from scipy import special  # on use: scipy.special (and its linalg) is slow to import

    sigma = np.sqrt(sigma2)
    u = np.minimum(a / sigma, _EM_MAX_U)
    inv_sigma2 = 1.0 / sigma2
    # Odd probabilists' Hermite polynomials by He_{n+1} = u He_n - n He_{n-1}.
    he_prev, he = np.ones_like(u), u  # He_0, He_1
    correction = np.zeros_like(u)
    power = inv_sigma2  # σ^{-2m}
    for m in range(1, SF_EM_TERMS + 1):
        n = 2 * m - 1
        correction += _EM_COEFFICIENTS[m - 1] * power * he
        he_prev, he = he, u * he - n * he_prev  # He_{n+1}
        he_prev, he = he, u * he - (n + 1) * he_prev  # He_{n+2}
        power = power * inv_sigma2
    bracket = 0.5 * special.erfcx(u / np.sqrt(2.0)) - correction / np.sqrt(2.0 * np.pi)
    tail = np.exp(-0.5 * (a * a / sigma2)) * bracket
    return np.where(a / sigma > _EM_MAX_U, 0.0, tail)


def _upper_tail_grid(first: np.ndarray, s2: float) -> np.ndarray:
    """``P[Z ≥ first]`` for integers ``first ≥ 1`` (floats), one σ², by summing the pmf."""
    reach = int(np.ceil(np.sqrt(2.0 * s2 * _GRID_LOG_REACH))) + 1
    grid = np.arange(1, reach + 1)
    weights = pmf(grid, s2)
    tails = np.cumsum(weights[::-1])[::-1]  # tails[j-1] = P[Z ≥ j], small terms first
    inside = first <= reach
    index = np.where(inside, first, 1.0).astype(np.int64) - 1
    return np.where(inside, tails[index], 0.0)


def _sf_float(k: np.ndarray, sigma2: np.ndarray) -> np.ndarray:
    """``P[Z ≥ k]`` for integer-valued float ``k`` (any magnitude) and σ² > 0."""
    k, sigma2 = np.broadcast_arrays(k, sigma2)
    first = np.where(k >= 1, k, 1.0 - k)  # ≥ 1: only upper tails are summed
    upper = np.empty(k.shape, dtype=np.float64)
    em = sigma2 >= SF_GRID_MAX_SIGMA2
    if np.any(em):
        upper[em] = _upper_tail_em(first[em] - 0.5, sigma2[em])
    for s2 in np.unique(sigma2[~em]):
        at = sigma2 == s2
        upper[at] = _upper_tail_grid(first[at], float(s2))
    return np.where(k >= 1, upper, 1.0 - upper)


def sf(k, sigma2) -> np.ndarray:
    """``P[Z ≥ k]`` for ``Z ~ DG(0, σ²)``, vectorised over ``k`` and ``sigma2``.

    Only upper tails ``T(j) = P[Z ≥ j]``, ``j ≥ 1``, are computed, small terms
    first; ``P[Z ≥ k] = 1 - T(1 - k)`` for ``k ≤ 0`` by symmetry.

    * ``σ² < SF_GRID_MAX_SIGMA2`` (1e4): the pmf is summed on ``1 … K`` with
      ``K ≈ √(1520 σ²)`` (at most ~3 900 points per distinct σ²); the omitted
      tail is below 1e-326, so the only error is rounding in the sum.
    * ``σ² ≥ SF_GRID_MAX_SIGMA2``: midpoint Euler–Maclaurin for
      ``Σ_{j≥k} e^{-j²/(2σ²)}`` with ``SF_EM_TERMS`` (8) correction terms,
      the integral as ``e^{-x²/2} erfcx(x/√2)`` so far tails keep their
      relative accuracy down to the float64 underflow; cost independent of σ.
      Relative truncation error ≤ :data:`SF_EM_ERROR_BOUND` (2e-19).

    In both, floating-point rounding adds a relative error of a few ulp plus
    about ``eps · k²/(2σ²)`` (the conditioning of ``e^{-k²/(2σ²)}`` for a
    float σ², as in :func:`pmf`): against 50-digit sums the tests find at most
    3 ulp where ``k² < 2σ²`` and ``eps · k²/(2σ²)`` beyond, for σ² from 1e-3
    to 1e12. Results for ``k ≤ 0`` are within 3e-16 absolute.
    """
    k = as_integers(k, "k").astype(np.float64)
    sigma2 = as_positive(sigma2, "sigma2")
    return _sf_float(k, sigma2)


def cdf(k, sigma2) -> np.ndarray:
    """``P[Z ≤ k] = P[Z ≥ -k]`` for ``Z ~ DG(0, σ²)`` (symmetry); accuracy as :func:`sf`."""
    k = as_integers(k, "k").astype(np.float64)
    sigma2 = as_positive(sigma2, "sigma2")
    return _sf_float(-k, sigma2)
