"""The discrete Gaussian ``DG(0, σ²)`` as a :class:`~.base.NoiseMechanism`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..._validation import scalar_integer, scalar_positive
from .. import discrete_gaussian as _dg
from ..conventions import NoiseConvention, as_convention, noise_variance
from ..exact_sampling import sample as _dg_sample
from ..finite_pmf import FinitePmf
from ..sums import sum_of_discrete_gaussians
from .base import NoiseMechanism
from .checks import as_tail_mass, positive

__all__ = ["DiscreteGaussianNoise"]


@dataclass(frozen=True)
class DiscreteGaussianNoise(NoiseMechanism):
    """``DG(0, σ²)``: ``P[Z = z] ∝ exp(-z²/(2σ²))`` — the adapter around :mod:`.discrete_gaussian`.

    Kazan & Reiter (2023), Sec. 2; Canonne, Kamath & Steinke (2020). With
    ``sensitivity`` Δ (L2) the mechanism is ``Δ²/(2σ²)``-zCDP (CKS Thm. 14);
    :meth:`from_rho` sets σ² and Δ from a named convention. Every method
    delegates to the module, so results are identical to calling it directly;
    ``cutoff`` is :func:`~.discrete_gaussian.cutoff` (smallest K by its
    rigorous tail bound).
    """

    sigma2: float
    sensitivity: float = 1.0

    name = "discrete_gaussian"
    citation = "Canonne, Kamath & Steinke (2020); Kazan & Reiter (2023)"

    _field_checks = (("sigma2", positive("sigma2")), ("sensitivity", positive("sensitivity")))

    @classmethod
    def from_rho(cls, rho, convention: str | NoiseConvention = "paper") -> DiscreteGaussianNoise:
        """The ρ-zCDP discrete Gaussian under a named neighbour convention.

        ``"paper"``: σ² = 1/(2ρ), Δ = 1; ``"das"``: σ² = 1/ρ, Δ = √2
        (:mod:`adversary.noise.conventions`).
        """
        convention = as_convention(convention)
        sigma2 = float(noise_variance(scalar_positive(rho, "rho"), convention))
        return cls(sigma2, convention.l2_sensitivity)

    @classmethod
    def from_variance(cls, variance, sensitivity=1.0) -> DiscreteGaussianNoise:
        """The discrete Gaussian whose variance (not σ²) equals ``variance``.

        ``Var Z`` is strictly increasing in σ² and below it (CKS Prop. 5);
        solved by bracketing and Brent's method on ``log σ²``.
        """
        target = scalar_positive(variance, "variance")

        def gap(log_s2):
            return float(_dg.variance(math.exp(log_s2))) / target - 1.0

        lo = math.log(target)
        if gap(lo) >= 0.0:  # σ² ≫ 1: Var Z equals σ² in float64
            return cls(target, sensitivity)
        hi = lo + 1.0
        while gap(hi) < 0.0:
            lo, hi = hi, hi + 2.0 * (hi - lo)
        from scipy import optimize  # on use: scipy.optimize is slow to import

        root = optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        return cls(math.exp(root), sensitivity)

    @property
    def label(self) -> str:
        return f"discrete Gaussian (sigma2={self.sigma2:.6g})"

    @property
    def variance(self) -> float:
        return float(_dg.variance(self.sigma2))

    def logpmf(self, z):
        return _dg.logpmf(z, self.sigma2)

    def pmf(self, z):
        return _dg.pmf(z, self.sigma2)

    def sf(self, k):
        return _dg.sf(k, self.sigma2)

    def cdf(self, k):
        return _dg.cdf(k, self.sigma2)

    def cutoff(self, tail_mass=1e-15) -> int:
        return _cutoff(self.sigma2, as_tail_mass(tail_mass, bounded=False))

    def outside_mass(self, reach) -> float:
        reach = scalar_integer(reach, "reach", 0)
        return float(2.0 * _dg.tail_bound(reach + 1, self.sigma2))

    def sample(self, size=None, rng=None):
        return _dg_sample(self.sigma2, size, rng)

    def zcdp_rho(self) -> float:
        return self.sensitivity**2 / (2.0 * self.sigma2)

    def table(self, tail_mass=1e-15) -> FinitePmf:
        return _dg.table(self.sigma2, as_tail_mass(tail_mass, bounded=False))

    def sum_table(self, d, tail_mass=1e-15) -> FinitePmf:
        return sum_of_discrete_gaussians(d, self.sigma2, tail_mass)


@lru_cache(maxsize=4096)
def _cutoff(sigma2: float, tail_mass: float) -> int:
    """:func:`adversary.noise.discrete_gaussian.cutoff` of one (σ², tail mass), remembered:
    scenarios ask for the same few cut-offs once per block or release (about 0.4 ms each)."""
    return int(_dg.cutoff(sigma2, tail_mass))
