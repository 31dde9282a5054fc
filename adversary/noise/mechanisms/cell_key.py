"""The cell-key method's maximum-entropy p-table (Bach 2020): bounded noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..._validation import as_integers, scalar_integer, scalar_positive
from ..exact_sampling import _make_sampler
from .base import _SymmetricBoundedNoise
from .checks import as_bound, as_sensitivity

__all__ = ["CellKeyNoise", "cell_key_max_variance"]


def cell_key_max_variance(bound) -> float:
    """``E(E+1)/3``: the largest variance of a cell-key p-table with bound E (the uniform one)."""
    bound = scalar_integer(bound, "bound", 1)
    return bound * (bound + 1) / 3.0


def _cell_key_variance(mu: float, bound: int) -> float:
    """``Σ z² e^{-μz²} / Σ e^{-μz²}`` over ``|z| ≤ E``, for ``μ ≥ 0`` (positive terms only)."""
    k = np.arange(bound + 1, dtype=np.float64)
    w = np.exp(-mu * k * k)
    return 2.0 * math.fsum(k * k * w) / (1.0 + 2.0 * math.fsum(w[1:]))


@dataclass(frozen=True)
class CellKeyNoise(_SymmetricBoundedNoise):
    """The cell-key method's maximum-entropy p-table for variance V and bound E.

    Bach (2020), Sec. 3.2 and footnote 15: the p-table generator recommended
    for the 2021 EU census (the ESS ``ptable`` tool; Giessing 2016) maximises
    entropy under the sole constraints of zero mean, variance V and
    ``|z| ≤ E``. Derivation: maximise ``-Σ p log p`` on ``{-E, …, E}`` subject
    to ``Σp = 1``, ``Σzp = 0``, ``Σz²p ≤ V`` (the tool's constraint is an
    inequality). The objective is strictly concave, so the maximiser is
    unique; the Karush–Kuhn–Tucker conditions give

        p_z ∝ exp(-μ z² - νz),  μ ≥ 0,  μ (V - Σz²p) = 0,

    and symmetry of the constraints with uniqueness forces ν = 0. ``μ = 0`` is
    the uniform table, of variance ``E(E+1)/3``; for ``μ > 0`` the variance
    equals V, and ``dVar/dμ = -Var(Z²) < 0``, so ``Var`` falls strictly from
    ``E(E+1)/3`` to 0 as μ runs over ``[0, ∞)``. Hence:

    * a table with variance exactly V exists iff ``0 < V ≤ E(E+1)/3``
      (``E ≥ 1``), with a unique multiplier μ, found here by Brent's method
      on ``log μ`` to a relative error of a few ulp;
    * for ``V > E(E+1)/3`` the tool returns the uniform table, whose variance
      is *not* V: this class raises instead. Bach states the bound: the
      p-table "converges to the uniform distribution with maximum variance
      ``V = E(E+1)/3``". (Without the inequality, ``Var = V`` with ``μ < 0``
      would reach up to ``E²``, but those tables rise towards ``±E``: not a
      cell-key p-table.)

    So the table is a discrete Gaussian with ``σ² = 1/(2μ)`` truncated to
    ``[-E, E]`` (uniform when μ = 0), and is drawn exactly that way: from the
    uniform on ``{-E, …, E}`` kept with probability ``e^{-μu²}`` when
    ``μE² ≤ 1``, else from the exact ``DG(0, 1/(2μ))`` sampler kept when
    ``|z| ≤ E`` (acceptance above 1/3 either way).

    Scope. This is the p-table row for original counts of at least E, where it
    is additive and symmetric. The ``ptable`` tool re-solves rows for smaller
    counts so that no output is negative (and blocks outputs ``1 … js``), and
    zeroes probabilities below 1e-7; neither is modelled here. In the
    cell-key method the noise of a cell is a function of the cell's key, so
    the same cell released twice carries the same noise.

    Privacy: not ε-DP and not zCDP (bounded support, Bach 2020, Sec. 2.3), so
    :meth:`pure_epsilon` and :meth:`zcdp_rho` are ``None``; it is (ε, δ)-DP
    for every ε with δ = :meth:`dp_delta` (Bach 2020, Sec. 2.3, citing
    Bailie & Chien 2019).
    """

    target_variance: float
    bound: int
    sensitivity: int = 1

    name = "cell_key"
    citation = "Bach (2020) Sec. 3.2, footnote 15; Giessing (2016); ESS ptable tool"

    def __post_init__(self):
        bound = as_bound(self.bound)
        if bound < 1:
            raise ValueError(
                f"bound must be an integer >= 1 (E = 0 leaves no room for noise), "
                f"got {self.bound!r}"
            )
        v = scalar_positive(self.target_variance, "target_variance")
        limit = bound * (bound + 1) / 3.0
        if v > limit * (1.0 + 4.0 * np.finfo(float).eps):
            raise ValueError(
                f"target_variance must be at most E(E+1)/3 = {limit:g} for bound E = {bound}, "
                f"the variance of the uniform p-table (Bach 2020, Sec. 3.2); got {v!r}"
            )
        self._set_fields(
            target_variance=v, bound=bound, sensitivity=as_sensitivity(self.sensitivity)
        )

    @cached_property
    def multiplier(self) -> float:
        """μ ≥ 0 with ``p_z ∝ exp(-μ z²)`` and variance V (0 for the uniform table)."""
        v, bound = self.target_variance, self.bound
        if v >= bound * (bound + 1) / 3.0:
            return 0.0

        def gap(log_mu):
            return _cell_key_variance(math.exp(log_mu), bound) / v - 1.0

        # For μ ≥ 1, Var ≤ 2e^{-μ}(1 + 4e^{-3} + 9e^{-8} + …) < 2.5e^{-μ}: μ = log(2.5/V) is above.
        hi = math.log(max(1.0, math.log(2.5 / v))) if v < 2.5 else 0.0
        while gap(hi) > 0.0:
            hi += 1.0
        lo = hi - 1.0
        while gap(lo) < 0.0:
            lo -= 1.0
        from scipy import optimize  # on use: scipy.optimize is slow to import

        return math.exp(optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))

    @property
    def label(self) -> str:
        return f"cell key (V={self.target_variance:.6g}, E={self.bound})"

    @cached_property
    def _log_weights(self) -> np.ndarray:
        k = np.arange(self.bound + 1, dtype=np.float64)
        return -self.multiplier * k * k

    def logpmf(self, z):
        z = as_integers(z, "z")
        inside = np.abs(z) <= self.bound
        zf = np.where(inside, z, 0).astype(np.float64)
        return np.where(inside, -self.multiplier * zf * zf - self._log_normaliser, -np.inf)

    def _exact_draw_parts(self):
        # μE² ≤ 1: a uniform proposal kept with probability e^{-μu²}; else the discrete
        # Gaussian DG(0, c/(2a)) kept within E.
        mu = Fraction(self.multiplier)
        a, c = mu.numerator, mu.denominator
        uniform = a * self.bound * self.bound <= c  # always when μ = 0 (a = 0)
        return (
            (lambda u: a * u * u),
            c,
            uniform,
            lambda words: _make_sampler(Fraction(c, 2 * a), words),
        )
