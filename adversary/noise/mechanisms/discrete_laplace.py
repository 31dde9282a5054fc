"""The discrete Laplace (two-sided geometric) noise as a :class:`~.base.NoiseMechanism`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..._validation import as_integers, scalar_integer, scalar_positive
from .base import TAIL_MARGIN, NoiseMechanism, _draw, _make_laplace_draw
from .checks import as_scale, as_sensitivity, as_tail_mass

__all__ = ["DiscreteLaplaceNoise"]


@dataclass(frozen=True)
class DiscreteLaplaceNoise(NoiseMechanism):
    """The two-sided geometric ``P[Z = z] = (1-q)/(1+q) · q^{|z|}``, ``q = exp(-1/b)``.

    Sources: Ghosh, Roughgarden & Sundararajan (2012); Bach (2020), eq. (5)
    with ``b = 1/ε``; Petti & Flaxman (2020), the TopDown test's ``G(z)`` with
    ``z = 1/b`` (they add ``G(ε/2)``: replace-one neighbours move a histogram
    by L1 distance 2). Closed forms: normaliser ``(1-q)/(1+q)``; variance
    ``2q/(1-q)²``; ``P[Z ≥ k] = q^k/(1+q)`` for ``k ≥ 1``; ``P[|Z| > K] =
    2q^{K+1}/(1+q)``. ε-DP with ``ε = Δ/b`` for an integer query of L1
    sensitivity Δ, hence ``ε²/2``-zCDP (Bun & Steinke 2016, Prop. 1.4: implied,
    not tight). Exact draws: CKS Algorithm 2 with ``b`` as the exact fraction
    of its float.

    Petti & Flaxman print the variance as ``(1 - e^{-z})²/(2e^{-z})``: that is
    the reciprocal of ``2e^{-z}/(1 - e^{-z})²``, the variance of their own pmf
    (checked in the tests).
    """

    scale: float
    sensitivity: int = 1

    name = "discrete_laplace"
    citation = "Bach (2020) eq. (5); Petti & Flaxman (2020); CKS (2020) Algorithm 2"

    _field_checks = (("scale", as_scale), ("sensitivity", as_sensitivity))

    @classmethod
    def from_epsilon(cls, epsilon, sensitivity=1) -> DiscreteLaplaceNoise:
        """The ε-DP two-sided geometric for sensitivity Δ: ``b = Δ/ε``."""
        epsilon = scalar_positive(epsilon, "epsilon")
        sensitivity = scalar_integer(sensitivity, "sensitivity", 1)
        return cls(sensitivity / epsilon, sensitivity)

    @classmethod
    def from_variance(cls, variance, sensitivity=1) -> DiscreteLaplaceNoise:
        """The two-sided geometric with ``2q/(1-q)² = variance``.

        ``q = V/(V + 1 + √(2V+1))`` and ``1 - q = (1 + √(2V+1))/(V + 1 + √(2V+1))``
        (the root of ``Vq² - 2(V+1)q + V = 0`` in (0, 1), written without cancellation).
        """
        v = scalar_positive(variance, "variance")
        root = math.sqrt(2.0 * v + 1.0)
        one_minus_q = (1.0 + root) / (v + 1.0 + root)
        return cls(-1.0 / math.log1p(-one_minus_q), sensitivity)

    @property
    def label(self) -> str:
        return f"discrete Laplace (scale={self.scale:.6g})"

    @cached_property
    def _q(self) -> float:
        return math.exp(-1.0 / self.scale)

    @cached_property
    def _one_minus_q(self) -> float:
        return -math.expm1(-1.0 / self.scale)

    @property
    def variance(self) -> float:
        return 2.0 * self._q / self._one_minus_q**2

    def logpmf(self, z):
        z = as_integers(z, "z")
        with np.errstate(over="ignore"):
            decay = np.abs(z).astype(np.float64) / self.scale
        return -decay + (math.log(self._one_minus_q) - math.log1p(self._q))

    def pmf(self, z):
        z = as_integers(z, "z")
        with np.errstate(over="ignore"):
            decay = np.abs(z).astype(np.float64) / self.scale
        return np.exp(-decay) * (self._one_minus_q / (1.0 + self._q))

    def _upper_tail(self, first: np.ndarray) -> np.ndarray:
        """``P[Z ≥ first] = q^first/(1+q)`` for integer-valued ``first ≥ 1``."""
        with np.errstate(over="ignore"):
            decay = np.asarray(first, dtype=np.float64) / self.scale
        return np.exp(-decay) / (1.0 + self._q)

    def _sf_float(self, k: np.ndarray) -> np.ndarray:
        upper = self._upper_tail(np.where(k >= 1, k, 1.0 - k))
        return np.where(k >= 1, upper, 1.0 - upper)

    def sf(self, k):
        return self._sf_float(as_integers(k, "k").astype(np.float64))

    def cdf(self, k):
        return self._sf_float(-as_integers(k, "k").astype(np.float64))  # symmetry

    def outside_mass(self, reach) -> float:
        reach = scalar_integer(reach, "reach", 0)
        return 2.0 * float(self._upper_tail(np.asarray(reach + 1))) * (1.0 + TAIL_MARGIN)

    def cutoff(self, tail_mass=1e-15) -> int:
        """Smallest K with ``2q^{K+1}/(1+q) ≤ tail_mass`` (closed form, checked both ways)."""
        tail_mass = as_tail_mass(tail_mass, bounded=False)
        estimate = self.scale * (math.log(2.0 / tail_mass) - math.log1p(self._q)) - 1.0
        reach = max(0, math.ceil(estimate))
        while self.outside_mass(reach) > tail_mass:
            reach += 1
        while reach > 0 and self.outside_mass(reach - 1) <= tail_mass:
            reach -= 1
        return reach

    def sample(self, size=None, rng=None):
        scale = Fraction(self.scale)
        return _draw(lambda next_word: _make_laplace_draw(scale, next_word), size, rng)

    def pure_epsilon(self) -> float:
        return self.sensitivity / self.scale

    def zcdp_rho(self) -> float:
        return 0.5 * self.pure_epsilon() ** 2
