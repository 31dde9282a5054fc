"""The two-sided geometric truncated to ``{-E, …, E}``: bounded noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..._validation import as_integers, scalar_integer, scalar_positive
from .base import _make_laplace_draw, _SymmetricBoundedNoise
from .checks import as_bound, as_scale, as_sensitivity

__all__ = ["TruncatedGeometricNoise"]


@dataclass(frozen=True)
class TruncatedGeometricNoise(_SymmetricBoundedNoise):
    """The two-sided geometric truncated to ``{-E, …, E}``: ``P[Z = z] ∝ exp(-|z|/b)``, ``|z| ≤ E``.

    Normaliser ``Σ_{|z|≤E} q^{|z|} = (1 + q - 2q^{E+1})/(1 - q)``, ``q = e^{-1/b}``.
    Truncated Laplace noise is one of the bounded mechanisms Rinott et al.
    (2018) compare and Bach (2020, Sec. 2.3 and 4.1) discusses.

    Privacy: bounded noise is never ε-DP on unbounded counts (Bach 2020, Sec.
    2.3: the output ``x + E`` is impossible from the neighbour ``x - 1``), so
    :meth:`pure_epsilon` and :meth:`zcdp_rho` are ``None``. Inside the support the
    log-ratio of neighbouring outputs is at most ``Δ/b``, and the outputs only
    one neighbour reaches carry ``P[Z > E - Δ]``: the mechanism is
    ``(Δ/b, P[Z > E - Δ])``-DP (:meth:`epsilon_delta`), and that δ is the
    smallest at ``ε = Δ/b`` (:meth:`dp_delta`). Exact draws: from the uniform
    on ``{-E, …, E}`` kept with probability ``e^{-|u|/b}`` when ``E ≤ b``, else
    from :class:`DiscreteLaplaceNoise` kept when ``|y| ≤ E`` (acceptance above
    1/4 either way).
    """

    scale: float
    bound: int
    sensitivity: int = 1

    name = "truncated_geometric"
    citation = "Bach (2020) Sec. 2.3; Rinott, O'Keefe, Shlomo & Skinner (2018)"

    _field_checks = (("scale", as_scale), ("bound", as_bound), ("sensitivity", as_sensitivity))

    @classmethod
    def from_variance(cls, variance, bound, sensitivity=1) -> TruncatedGeometricNoise:
        """The scale b giving ``Var Z = variance``; needs ``0 < variance < E(E+1)/3``.

        ``Var Z`` rises strictly with b (``Cov(Z², |Z|) > 0`` in this exponential
        family) from 0 to the uniform's ``E(E+1)/3`` as ``b → ∞``; solved on ``log(1/b)``.
        """
        v = scalar_positive(variance, "variance")
        bound = scalar_integer(bound, "bound", 1)
        limit = bound * (bound + 1) / 3.0
        if v >= limit:
            raise ValueError(
                f"variance must be below E(E+1)/3 = {limit:g} for bound E = {bound} "
                f"(the uniform limit b -> inf), got {variance!r}"
            )

        def gap(log_rate):
            return _truncated_geometric_variance(math.exp(log_rate), bound) / v - 1.0

        hi = max(0.0, math.log(math.log(11.0 / v))) if v < 11.0 / math.e else 0.0
        while gap(hi) > 0.0:
            hi += 1.0
        lo = hi - 1.0
        while gap(lo) < 0.0:
            lo -= 1.0
        from scipy import optimize  # on use: scipy.optimize is slow to import

        root = optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        return cls(math.exp(-root), bound, sensitivity)

    @classmethod
    def from_epsilon(cls, epsilon, bound, sensitivity=1) -> TruncatedGeometricNoise:
        """Scale ``b = Δ/ε``: (ε, P[Z > E - Δ])-DP."""
        epsilon = scalar_positive(epsilon, "epsilon")
        sensitivity = scalar_integer(sensitivity, "sensitivity", 1)
        return cls(sensitivity / epsilon, bound, sensitivity)

    @property
    def label(self) -> str:
        return f"truncated geometric (scale={self.scale:.6g}, E={self.bound})"

    @cached_property
    def _log_weights(self) -> np.ndarray:
        return -np.arange(self.bound + 1, dtype=np.float64) / self.scale

    def logpmf(self, z):
        z = as_integers(z, "z")
        inside = np.abs(z) <= self.bound
        with np.errstate(over="ignore"):
            value = -(np.abs(z).astype(np.float64) / self.scale) - self._log_normaliser
        return np.where(inside, value, -np.inf)

    def _exact_draw_parts(self):
        # E ≤ b: a uniform proposal kept with probability e^{-|u| s/t}; else the discrete
        # Laplace kept within E.
        scale = Fraction(self.scale)
        t, s = scale.numerator, scale.denominator
        laplace = lambda words: _make_laplace_draw(scale, words)  # noqa: E731
        return (lambda u: abs(u) * s), t, self.bound * s <= t, laplace

    def epsilon_delta(self) -> tuple[float, float]:
        """``(ε, δ) = (Δ/b, P[Z > E - Δ])``: the guarantee, δ the smallest for that ε."""
        return self.sensitivity / self.scale, float(self.sf(self.bound - self.sensitivity + 1))


def _truncated_geometric_variance(rate: float, bound: int) -> float:
    """``Σ z² e^{-rate|z|} / Σ e^{-rate|z|}`` over ``|z| ≤ E`` (positive terms only)."""
    k = np.arange(bound + 1, dtype=np.float64)
    w = np.exp(-rate * k)
    return 2.0 * math.fsum(k * k * w) / (1.0 + 2.0 * math.fsum(w[1:]))
