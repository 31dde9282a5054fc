"""Privacy-loss accounting: zero-concentrated DP (zCDP) ↔ (ε, δ)-DP.

A mechanism is ρ-zCDP when the Rényi divergence of order α between its output
distributions on neighbouring inputs is at most ρα for every α > 1
(Bun & Steinke 2016, Def. 1.1). Agencies usually report the (ε, δ)-DP
guarantee this implies. Two conversions are provided, both valid for every
δ in (0, 1):

``"bun-steinke"``
    Bun & Steinke (2016), Prop. 1.3: ρ-zCDP implies (ε, δ)-DP with
    ``ε = ρ + 2√(ρ log(1/δ))``; equivalently ``δ = exp(-(ε - ρ)²/(4ρ))`` for
    ε > ρ (and only the trivial δ = 1 for ε ≤ ρ). This is the conversion of
    Kazan & Reiter's Theorem 1.
``"cks"`` (the default)
    Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential
    Privacy", Prop. 12 / Cor. 13: ρ-zCDP implies (ε, δ)-DP with

        δ = inf_{α>1} exp((α-1)(αρ - ε)) / (α-1) · (1 - 1/α)^α,

    or, solved for ε at fixed δ,

        ε = inf_{α>1} αρ + (log(1/δ) - log α)/(α-1) + log(1 - 1/α).

    For every α the second form is at most ``αρ + log(1/δ)/(α-1)``, whose
    infimum is the Bun–Steinke ε, so this conversion is never looser. It is
    the one the 2020 Disclosure Avoidance System uses (its
    ``programs/engine/curve.py`` cites Cor. 13): the Census Bureau's reported
    ε = 17.14 at δ = 1e-10 for the PL 94-171 persons file is this conversion
    at the production ρ = (542/339)² ≈ 2.5562 (see :mod:`adversary.budget`).

Both infima are computed exactly: the optimal α solves a one-dimensional
equation with a unique root (the derivative of the objective changes sign
once), found by vectorised bisection on ``log(α - 1)`` from a bracket proved
valid below, and the objective is evaluated in log space with forms that stay
accurate for α near 1 and for α up to 1e30.

Pure ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4):
:func:`rho_from_pure_dp`.

All functions broadcast their arguments like numpy ufuncs and return a numpy
float (0-d input) or array; a bad argument raises :class:`ValueError` whose
message starts with the argument's name.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from ._validation import as_member, as_nonnegative, as_positive, as_probability, scalar_or_array

__all__ = [
    "Conversion",
    "as_conversion",
    "delta_from_zcdp",
    "epsilon_from_zcdp",
    "log_delta_from_zcdp",
    "rho_from_pure_dp",
]

# Bisection on s = log(α - 1): each step halves the bracket; the widest bracket
# used below is a few times ρ + ε + 70 wide, so 200 steps reach adjacent floats.
_BISECTION_STEPS = 200


class Conversion(StrEnum):
    """A zCDP → (ε, δ)-DP conversion, named after its authors."""

    BUN_STEINKE = "bun-steinke"
    CKS = "cks"

    @property
    def citation(self) -> str:
        return _CITATIONS[self]


_CITATIONS = {
    Conversion.BUN_STEINKE: "Bun & Steinke (2016), Prop. 1.3: eps = rho + 2 sqrt(rho log(1/delta))",
    Conversion.CKS: "Canonne, Kamath & Steinke (2020), Cor. 13 (optimised over the Renyi order)",
}


def as_conversion(value, name: str = "conversion") -> Conversion:
    """Parse a conversion name: ``"cks"`` or ``"bun-steinke"`` (also ``bun_steinke``)."""
    return as_member(Conversion, value, name, lambda text: text.lower().replace("_", "-"))


def _bisect_increasing(f, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Root of ``f``, increasing in s, with ``f(lo) < 0 < f(hi)`` elementwise."""
    lo, hi = lo.copy(), hi.copy()
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            break
        above = f(mid) > 0
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return 0.5 * (lo + hi)


def _log1p_inv_t(s: np.ndarray) -> np.ndarray:
    """``log(1 + 1/t) = -log(1 - 1/α)`` for ``t = α - 1 = e^s``, overflow-free."""
    neg = np.minimum(s, 0.0)  # t <= 1: log(1 + t) - log t
    pos = np.maximum(s, 0.0)  # t >= 1: log1p(1/t)
    return np.where(s < 0, np.log1p(np.exp(neg)) - neg, np.log1p(np.exp(-pos)))


# --- Canonne, Kamath & Steinke (2020), Corollary 13 --------------------------


def _cks_log_delta(rho: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``log δ`` of CKS Cor. 13, minimised over α = 1 + e^s.

    With t = α - 1 the objective is
    ``log δ_α = t(αρ - ε) + α log(1 - 1/α) - log t = t(αρ - ε) - t log(1 + 1/t) - log(1 + t)``
    and its derivative ``(2α - 1)ρ - ε + log(1 - 1/α)`` (CKS eq. (19)) is
    increasing in α, from -∞ at α → 1 to +∞: a unique minimiser. Bracket in
    s = log t: at ``s_lo = min(0, ε - 3ρ) - 1`` the derivative is at most
    ``3ρ - ε + s_lo < 0``; at ``t_hi = max(1, (ε + 1)/(2ρ))`` it is at least
    ``(1 + 2t)ρ - ε - 1/t > ρ > 0`` (using ``log(1 - 1/α) >= -1/t``).
    """

    log_rho = np.log(rho)

    def derivative(s):
        # (2α - 1)ρ - ε + log(1 - 1/α) with α - 1 = e^s; tρ as e^{s + log ρ}
        return rho + 2.0 * np.exp(s + log_rho) - eps - _log1p_inv_t(s)

    s_lo = np.minimum(0.0, eps - 3.0 * rho) - 1.0
    s_hi = np.maximum(0.0, np.log1p(eps) - np.log(2.0) - log_rho)
    s = _bisect_increasing(derivative, s_lo, s_hi)
    t = np.exp(s)
    alpha_rho = rho + np.exp(s + log_rho)
    log_delta = t * (alpha_rho - eps - _log1p_inv_t(s)) - np.log1p(t)
    return np.minimum(log_delta, 0.0)  # δ <= 1 always


def _cks_epsilon(rho: np.ndarray, log_inv_delta: np.ndarray) -> np.ndarray:
    """ε of CKS Cor. 13 at ``L = log(1/δ)``, minimised over α = 1 + t.

    ``ε_α = αρ + (L - log α)/(α - 1) + log(1 - 1/α)``; its derivative in α is
    ``ρ - (L - log α)/(α - 1)²``, whose sign is that of
    ``g(t) = ρt² + log(1 + t) - L``, increasing in t: a unique minimiser.
    Bracket: ``g(t_hi) = log(1 + t_hi) > 0`` at ``t_hi = √(L/ρ)``, and
    ``g(t_lo) <= ρt² + t - L <= -L/2 < 0`` at ``t_lo = min(√(L/(4ρ)), L/4)``.
    """
    big_l = log_inv_delta
    log_rho, log_l = np.log(rho), np.log(big_l)

    def g(s):
        return np.exp(2.0 * s + log_rho) + np.log1p(np.exp(s)) - big_l

    s_lo = np.minimum(0.5 * (log_l - np.log(4.0) - log_rho), log_l - np.log(4.0))
    s_hi = 0.5 * (log_l - log_rho)
    s = _bisect_increasing(g, s_lo, s_hi)
    t = np.exp(s)
    alpha_rho = rho + np.exp(s + log_rho)
    eps = alpha_rho + (big_l - np.log1p(t)) / t - _log1p_inv_t(s)
    return np.maximum(eps, 0.0)  # any ε >= 0 will do once δ >= δ(ρ, 0)


# --- Bun & Steinke (2016), Proposition 1.3 -----------------------------------


def _bun_steinke_epsilon(rho: np.ndarray, log_inv_delta: np.ndarray) -> np.ndarray:
    return rho + 2.0 * np.sqrt(rho * log_inv_delta)


def _bun_steinke_log_delta(rho: np.ndarray, eps: np.ndarray) -> np.ndarray:
    # P[privacy loss > ε] <= exp((α-1)(αρ - ε)), minimised at α = (ε + ρ)/(2ρ),
    # which exceeds 1 only when ε > ρ; otherwise the infimum is δ = 1.
    return np.where(eps > rho, -((eps - rho) ** 2) / (4.0 * rho), 0.0)


# --- public API ---------------------------------------------------------------


def epsilon_from_zcdp(rho, delta, conversion: str | Conversion = "cks"):
    """Smallest ε such that ρ-zCDP implies (ε, δ)-DP under ``conversion``.

    ``"cks"``: Canonne, Kamath & Steinke (2020), Cor. 13, optimised over α
    (clamped at 0 when δ is so large that every ε >= 0 works).
    ``"bun-steinke"``: Bun & Steinke (2016), Prop. 1.3,
    ``ε = ρ + 2√(ρ log(1/δ))``.

    ``rho`` must be finite and > 0; ``delta`` strictly inside (0, 1). The two
    broadcast against each other.
    """
    rho = as_positive(rho, "rho")
    delta = as_probability(delta, "delta")
    conversion = as_conversion(conversion)
    rho, delta = np.broadcast_arrays(rho, delta)
    log_inv_delta = -np.log(delta)
    if conversion is Conversion.BUN_STEINKE:
        return scalar_or_array(_bun_steinke_epsilon(rho, log_inv_delta))
    return scalar_or_array(_cks_epsilon(rho, log_inv_delta))


def log_delta_from_zcdp(rho, epsilon, conversion: str | Conversion = "cks"):
    """``log δ`` for the smallest δ such that ρ-zCDP implies (ε, δ)-DP.

    In log space so that tiny δ (say 1e-300 and below) stay exact. ``"cks"``:
    CKS (2020), Cor. 13; ``"bun-steinke"``: Bun & Steinke (2016), Prop. 1.3
    solved for δ, ``log δ = -(ε - ρ)²/(4ρ)`` for ε > ρ, else 0. ``rho`` must
    be finite and > 0, ``epsilon`` finite and >= 0.
    """
    rho = as_positive(rho, "rho")
    epsilon = as_nonnegative(epsilon, "epsilon")
    conversion = as_conversion(conversion)
    rho, epsilon = np.broadcast_arrays(rho, epsilon)
    if conversion is Conversion.BUN_STEINKE:
        return scalar_or_array(_bun_steinke_log_delta(rho, epsilon))
    return scalar_or_array(_cks_log_delta(rho, epsilon))


def delta_from_zcdp(rho, epsilon, conversion: str | Conversion = "cks"):
    """Smallest δ such that ρ-zCDP implies (ε, δ)-DP: ``exp`` of :func:`log_delta_from_zcdp`.

    The inverse of :func:`epsilon_from_zcdp` in ε for the same conversion
    (for δ below ``delta_from_zcdp(rho, 0)``, where ε is positive).
    """
    return np.exp(log_delta_from_zcdp(rho, epsilon, conversion))


def rho_from_pure_dp(epsilon):
    """ρ = ε²/2: ε-DP implies ρ-zCDP (Bun & Steinke 2016, Prop. 1.4).

    ``epsilon`` must be finite and > 0.
    """
    epsilon = as_positive(epsilon, "epsilon")
    return scalar_or_array(0.5 * epsilon**2)
