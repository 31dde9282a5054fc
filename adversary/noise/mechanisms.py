"""Additive integer noise mechanisms behind one interface.

A release is ``x* = x + Z`` with ``Z`` drawn from a distribution on the
integers. :class:`NoiseMechanism` is what a scenario needs from ``Z``, whatever
it is: its log-pmf and pmf, its tails, exact draws, its variance, a rigorous
cut-off for sums over the noise, its support, and the privacy guarantee it
gives, where it gives one. The mechanisms:

:class:`DiscreteGaussianNoise`
    ``DG(0, σ²)``, the 2020 Census's (Kazan & Reiter 2023; Canonne, Kamath &
    Steinke 2020, "CKS" below): the adapter around
    :mod:`adversary.noise.discrete_gaussian`. ρ-zCDP.
:class:`DiscreteLaplaceNoise`
    The two-sided geometric ``P[Z = z] ∝ exp(-|z|/b)`` (Ghosh, Roughgarden &
    Sundararajan 2012; Bach 2020, eq. (5); Petti & Flaxman 2020, the 2018 TopDown
    test). Pure ε-DP with ``ε = Δ/b``.
:class:`TruncatedGeometricNoise`
    The two-sided geometric restricted to ``{-E, …, E}`` and renormalised.
    ``(Δ/b, δ)``-DP with ``δ = P[Z > E - Δ]``; never pure ε-DP (Bach 2020, Sec. 2.3).
:class:`CellKeyNoise`
    The cell-key method's maximum-entropy p-table for a variance V and a bound E
    (Bach 2020, Sec. 3.2 and footnote 15; Giessing 2016; the ESS ``ptable``
    tool): ``p_z ∝ exp(-μz²)`` on ``{-E, …, E}`` with μ ≥ 0 solved so that the
    variance is V, which exists iff ``0 < V ≤ E(E+1)/3`` (the uniform table's
    variance; derivation in the class). Not ε-DP and not zCDP; (ε, δ)-DP with
    the exact δ of ``dp_delta``. The tests reproduce Bach's printed numbers:
    footnote 14's ``p1 = 20/(2E+1)³`` for uniform noise exactly, Sec. 3.2's
    ``p1 ≃ O(10⁻⁷)`` at E = 5, V = 2 (1.52e-7) and "practically zero" at
    E = 10, V ≤ 4 (≤ 5.3e-16), and footnote 35's averaging rate (exact
    0.7317 against the 741 and 725 of 1000 samples it reports).
:class:`FinitePmfNoise`
    Any pmf a user tabulates on a finite run of integers.

Conventions shared by all of them:

* ``sf(k) = P[Z ≥ k]`` and ``cdf(k) = P[Z ≤ k]`` — as in
  :mod:`~adversary.noise.discrete_gaussian`, *not* scipy's ``P[Z > k]``.
* ``logpmf`` is ``-inf`` off the support (never NaN); ``pmf`` is 0 there.
* ``cutoff(tail_mass)`` is the smallest ``K ≥ 0`` for which a rigorous upper
  bound on ``P[|Z| > K]`` is at most ``tail_mass``; ``table(tail_mass)`` is the
  pmf on ``[-K, K]`` as a :class:`~adversary.noise.finite_pmf.FinitePmf` whose
  ``omitted_mass`` is that bound. Bounded mechanisms accept ``tail_mass = 0``.
* ``sample(size, rng)`` draws exactly from the distribution with the stored
  float parameters (every Bernoulli decided in integer arithmetic, as in
  :mod:`~adversary.noise.exact_sampling`), takes a seed or a
  ``numpy.random.Generator``, and returns a Python ``int`` for ``size=None``.
* Accounting: :meth:`~NoiseMechanism.zcdp_rho` and
  :meth:`~NoiseMechanism.pure_epsilon` return ``None`` where the mechanism
  gives no such guarantee. ``sensitivity`` is how far one person moves the
  released value (1 for a count under Kazan & Reiter's add/remove
  neighbours): the L2 sensitivity for the discrete Gaussian (√2 for the
  DAS's replace-one histograms), an integer L1 sensitivity for the others
  (2 for replace-one histograms, as in Petti & Flaxman's ``G(ε/2)``).
* Each mechanism is a frozen dataclass: immutable, comparable and hashable,
  so it can key a dict or label a sweep. Parameters are scalars; a sweep is a
  list of mechanisms.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from scipy import optimize

from .._validation import _as_real_array, as_counts, as_integers, as_positive
from . import discrete_gaussian as _dg
from .conventions import NoiseConvention, as_convention, noise_variance
from .exact_sampling import (
    _MASK64,
    _TWO64,
    _as_generator,
    _as_size,
    _make_bernoulli_exp,
    _make_sampler,
    _word_source,
)
from .exact_sampling import sample as _dg_sample
from .finite_pmf import FinitePmf
from .sums import _convolve, sum_of_discrete_gaussians

__all__ = [
    "MAX_BOUND",
    "MAX_SCALE",
    "TAIL_MARGIN",
    "CellKeyNoise",
    "DiscreteGaussianNoise",
    "DiscreteLaplaceNoise",
    "FinitePmfNoise",
    "NoiseMechanism",
    "TruncatedGeometricNoise",
    "cell_key_max_variance",
]

#: Largest bound E of a bounded mechanism (its table has 2E + 1 entries).
MAX_BOUND = 10**6
#: Largest discrete Laplace scale b: draws fit in int64 (``P[|Z| ≥ 2⁶³] < e^{-9000}``).
MAX_SCALE = 1e15
#: Tail sums computed in floating point are multiplied by ``1 + TAIL_MARGIN``
#: before they are compared with ``tail_mass`` in ``cutoff``: their relative
#: rounding error is far below it, so the comparison is rigorous.
TAIL_MARGIN = 1e-12

_WORDS_PER_DRAW = 16
_BLOCK = 512


# --- argument checks ----------------------------------------------------------------------


def _scalar_positive(value, name: str) -> float:
    array = as_positive(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got an array of shape {array.shape}")
    return float(array)


def _scalar_integer(value, name: str, minimum: int) -> int:
    array = as_integers(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got an array of shape {array.shape}")
    if int(array) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(array)


def _as_tail_mass(value, bounded: bool) -> float:
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


def _as_epsilon(value) -> float:
    array = _as_real_array(value, "epsilon").astype(np.float64)
    if array.ndim != 0 or not np.isfinite(array) or array < 0:
        raise ValueError(f"epsilon must be a finite scalar >= 0, got {value!r}")
    return float(array)


# --- exact sampling helpers ---------------------------------------------------------------


def _make_uniform_below(t: int, next_word):
    """Exact uniform integers in ``[0, t)``: Lemire's method for ``t ≤ 2⁶⁴``, else rejection."""
    if t <= _TWO64:
        floor = _TWO64 % t  # a product whose low word is below this is rejected

        def uniform() -> int:
            while True:
                m = next_word() * t
                if m & _MASK64 >= floor:
                    return m >> 64

        return uniform
    bits = t.bit_length()
    words = (bits + 63) // 64
    extra = 64 * words - bits

    def uniform_big() -> int:
        while True:  # accept with probability > 1/2
            x = 0
            for _ in range(words):
                x = (x << 64) | next_word()
            x >>= extra
            if x < t:
                return x

    return uniform_big


def _make_laplace_draw(scale: Fraction, next_word):
    """One exact draw of ``P[Y = y] ∝ exp(-|y|/b)``, ``b = t/s``, per call (CKS Algorithm 2)."""
    t, s = scale.numerator, scale.denominator
    bernoulli_exp, bernoulli_exp_minus_one = _make_bernoulli_exp(next_word)
    uniform = _make_uniform_below(t, next_word)

    def draw() -> int:
        while True:
            u = uniform()  # U uniform on {0, …, t-1}, kept with probability exp(-U/t)
            if u and not bernoulli_exp(u, t):
                continue
            v = 0  # V: P[V = v] ∝ e^{-v}
            while bernoulli_exp_minus_one():
                v += 1
            y = (u + t * v) // s  # U + tV has P ∝ e^{-x/t}; ⌊x/s⌋ has P ∝ e^{-y s/t}
            if next_word() >> 63:  # the sign; -0 is rejected
                if y == 0:
                    continue
                return -y
            return y

    return draw


def _draw(make_draw, size, rng):
    """Call ``make_draw(next_word)()`` ``size`` times on 64-bit words drawn from ``rng``."""
    shape = _as_size(size)
    generator = _as_generator(rng)
    count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
    block = 64 if shape is None else min(max(count * _WORDS_PER_DRAW, _BLOCK), 128 * _BLOCK)
    draw = make_draw(_word_source(generator, block).__next__)
    if shape is None:
        return draw()
    return np.fromiter((draw() for _ in range(count)), dtype=np.int64, count=count).reshape(shape)


# --- the interface ------------------------------------------------------------------------


class NoiseMechanism(ABC):
    """An additive noise ``Z`` on the integers: what every scenario asks of its noise.

    Subclasses are frozen dataclasses with scalar parameters. Methods taking
    ``z`` or ``k`` are vectorised over them (numpy broadcasting) and reject
    non-integer values with a :class:`ValueError` naming the argument.
    """

    #: Short machine-readable name, e.g. ``"discrete_laplace"``.
    name: str = "noise"
    #: Where the mechanism comes from.
    citation: str = ""

    @property
    @abstractmethod
    def label(self) -> str:
        """Human-readable name with the parameters, for legends and coordinates."""

    @property
    @abstractmethod
    def support(self) -> tuple[int | None, int | None]:
        """``(lowest, highest)`` value ``Z`` can take; ``None`` on an unbounded side."""

    @property
    def bounded(self) -> bool:
        """True when ``Z`` takes finitely many values."""
        lower, upper = self.support
        return lower is not None and upper is not None

    @property
    def symmetric(self) -> bool:
        """True when ``P[Z = z] = P[Z = -z]`` for every z."""
        return True

    @property
    def mean(self) -> float:
        return 0.0

    @property
    @abstractmethod
    def variance(self) -> float:
        """``Var Z``."""

    @abstractmethod
    def logpmf(self, z) -> np.ndarray:
        """``log P[Z = z]``; ``-inf`` off the support."""

    def pmf(self, z) -> np.ndarray:
        """``P[Z = z]``; 0 off the support."""
        return np.exp(self.logpmf(z))

    @abstractmethod
    def sf(self, k) -> np.ndarray:
        """``P[Z ≥ k]`` (note: ≥, as in :func:`adversary.noise.discrete_gaussian.sf`)."""

    @abstractmethod
    def cdf(self, k) -> np.ndarray:
        """``P[Z ≤ k]``."""

    @abstractmethod
    def cutoff(self, tail_mass: float = 1e-15) -> int:
        """Smallest ``K ≥ 0`` whose rigorous bound on ``P[|Z| > K]`` is ``≤ tail_mass``."""

    @abstractmethod
    def outside_mass(self, reach: int) -> float:
        """A rigorous upper bound on ``P[|Z| > reach]`` (what ``cutoff`` compares)."""

    @abstractmethod
    def sample(self, size=None, rng=None):
        """Exact draws: an ``int`` for ``size=None``, else an int64 array of shape ``size``."""

    def zcdp_rho(self) -> float | None:
        """ρ such that the mechanism is ρ-zCDP for its ``sensitivity``; ``None`` if it is not."""
        return None

    def pure_epsilon(self) -> float | None:
        """ε such that the mechanism is ε-DP for its ``sensitivity``; ``None`` if it is not."""
        return None

    def table(self, tail_mass: float = 1e-15) -> FinitePmf:
        """The pmf on ``[-K, K]``, ``K = cutoff(tail_mass)``, with the omitted mass bounded.

        ``omitted_mass`` is :meth:`outside_mass` at ``K`` (at most ``tail_mass``;
        exactly 0 for a bounded mechanism at ``tail_mass = 0``). Feed it to
        :func:`adversary.distributions.TabulatedNoise` or to sums over the noise.
        """
        reach = self.cutoff(tail_mass)
        z = np.arange(-reach, reach + 1)
        return FinitePmf(
            start=-reach, probabilities=self.pmf(z), omitted_mass=self.outside_mass(reach)
        )

    def sum_table(self, d, tail_mass: float = 1e-15) -> FinitePmf:
        """Pmf of ``Z_1 + … + Z_d`` (iid copies), to within ``tail_mass``.

        As :func:`adversary.noise.sums.sum_of_discrete_gaussians`, for any
        mechanism: each copy is cut at ``cutoff(tail_mass / d)`` and the tables
        are convolved by repeated squaring; ``omitted_mass`` bounds what the
        truncation (and any FFT rounding) left out.
        """
        d = as_counts(d, "d")
        if d.ndim != 0 or int(d) < 1:
            raise ValueError(f"d must be an integer >= 1, got {d!r}")
        d = int(d)
        tail_mass = _as_tail_mass(tail_mass, self.bounded)
        one = self.table(tail_mass / d)
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


# --- discrete Gaussian ---------------------------------------------------------------------


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

    def __post_init__(self):
        object.__setattr__(self, "sigma2", _scalar_positive(self.sigma2, "sigma2"))
        object.__setattr__(self, "sensitivity", _scalar_positive(self.sensitivity, "sensitivity"))

    @classmethod
    def from_rho(cls, rho, convention: str | NoiseConvention = "paper") -> DiscreteGaussianNoise:
        """The ρ-zCDP discrete Gaussian under a named neighbour convention.

        ``"paper"``: σ² = 1/(2ρ), Δ = 1; ``"das"``: σ² = 1/ρ, Δ = √2
        (:mod:`.conventions`).
        """
        convention = as_convention(convention)
        sigma2 = float(noise_variance(_scalar_positive(rho, "rho"), convention))
        return cls(sigma2, convention.l2_sensitivity)

    @classmethod
    def from_variance(cls, variance, sensitivity=1.0) -> DiscreteGaussianNoise:
        """The discrete Gaussian whose variance (not σ²) equals ``variance``.

        ``Var Z`` is strictly increasing in σ² and below it (CKS Prop. 5);
        solved by bracketing and Brent's method on ``log σ²``.
        """
        target = _scalar_positive(variance, "variance")

        def gap(log_s2):
            return float(_dg.variance(math.exp(log_s2))) / target - 1.0

        lo = math.log(target)
        if gap(lo) >= 0.0:  # σ² ≫ 1: Var Z equals σ² in float64
            return cls(target, sensitivity)
        hi = lo + 1.0
        while gap(hi) < 0.0:
            lo, hi = hi, hi + 2.0 * (hi - lo)
        root = optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        return cls(math.exp(root), sensitivity)

    @property
    def label(self) -> str:
        return f"discrete Gaussian (sigma2={self.sigma2:.6g})"

    @property
    def support(self):
        return (None, None)

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
        return int(_dg.cutoff(self.sigma2, _as_tail_mass(tail_mass, bounded=False)))

    def outside_mass(self, reach) -> float:
        reach = _scalar_integer(reach, "reach", 0)
        return float(2.0 * _dg.tail_bound(reach + 1, self.sigma2))

    def sample(self, size=None, rng=None):
        return _dg_sample(self.sigma2, size, rng)

    def zcdp_rho(self) -> float:
        return self.sensitivity**2 / (2.0 * self.sigma2)

    def sum_table(self, d, tail_mass=1e-15) -> FinitePmf:
        return sum_of_discrete_gaussians(d, self.sigma2, tail_mass)


# --- discrete Laplace (two-sided geometric) -------------------------------------------------


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

    def __post_init__(self):
        scale = _scalar_positive(self.scale, "scale")
        if scale > MAX_SCALE:
            raise ValueError(f"scale must be at most {MAX_SCALE:g} (draws are int64), got {scale}")
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "sensitivity", _scalar_integer(self.sensitivity, "sensitivity", 1))

    @classmethod
    def from_epsilon(cls, epsilon, sensitivity=1) -> DiscreteLaplaceNoise:
        """The ε-DP two-sided geometric for sensitivity Δ: ``b = Δ/ε``."""
        epsilon = _scalar_positive(epsilon, "epsilon")
        sensitivity = _scalar_integer(sensitivity, "sensitivity", 1)
        return cls(sensitivity / epsilon, sensitivity)

    @classmethod
    def from_variance(cls, variance, sensitivity=1) -> DiscreteLaplaceNoise:
        """The two-sided geometric with ``2q/(1-q)² = variance``.

        ``q = V/(V + 1 + √(2V+1))`` and ``1 - q = (1 + √(2V+1))/(V + 1 + √(2V+1))``
        (the root of ``Vq² - 2(V+1)q + V = 0`` in (0, 1), written without cancellation).
        """
        v = _scalar_positive(variance, "variance")
        root = math.sqrt(2.0 * v + 1.0)
        one_minus_q = (1.0 + root) / (v + 1.0 + root)
        return cls(-1.0 / math.log1p(-one_minus_q), sensitivity)

    @property
    def label(self) -> str:
        return f"discrete Laplace (scale={self.scale:.6g})"

    @property
    def support(self):
        return (None, None)

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
        reach = _scalar_integer(reach, "reach", 0)
        return 2.0 * float(self._upper_tail(np.asarray(reach + 1))) * (1.0 + TAIL_MARGIN)

    def cutoff(self, tail_mass=1e-15) -> int:
        """Smallest K with ``2q^{K+1}/(1+q) ≤ tail_mass`` (closed form, checked both ways)."""
        tail_mass = _as_tail_mass(tail_mass, bounded=False)
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


# --- bounded mechanisms ------------------------------------------------------------------------


class _FiniteSupportNoise(NoiseMechanism):
    """Shared code for noise on ``{lower, …, upper}``: everything from one pmf table.

    Subclasses provide ``_lower``, ``_upper`` and ``_probabilities`` (the pmf on
    the run, summing to 1 up to rounding) and may override ``logpmf`` with an
    analytic form that stays finite where the pmf underflows.
    """

    _lower: int
    _upper: int

    @property
    @abstractmethod
    def _probabilities(self) -> np.ndarray: ...

    @property
    def support(self):
        return (self._lower, self._upper)

    @cached_property
    def _upper_tails(self) -> np.ndarray:
        """``[P[Z ≥ lower + i]]``, summed from the small end."""
        return np.cumsum(self._probabilities[::-1])[::-1]

    @cached_property
    def _lower_tails(self) -> np.ndarray:
        """``[P[Z ≤ lower + i]]``, summed from the small end."""
        return np.cumsum(self._probabilities)

    def pmf(self, z):
        z = as_integers(z, "z")
        index = z - self._lower
        size = self._probabilities.size
        inside = (index >= 0) & (index < size)
        return np.where(inside, self._probabilities[np.clip(index, 0, size - 1)], 0.0)

    def logpmf(self, z):
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(z))

    def sf(self, k):
        k = as_integers(k, "k")
        index = k - self._lower
        size = self._probabilities.size
        tails = self._upper_tails[np.clip(index, 0, size - 1)]
        return np.where(index <= 0, 1.0, np.where(index >= size, 0.0, tails))

    def cdf(self, k):
        k = as_integers(k, "k")
        index = k - self._lower
        size = self._probabilities.size
        tails = self._lower_tails[np.clip(index, 0, size - 1)]
        return np.where(index >= size - 1, 1.0, np.where(index < 0, 0.0, tails))

    @property
    def mean(self) -> float:
        if self.symmetric:
            return 0.0
        z = np.arange(self._lower, self._upper + 1, dtype=np.float64)
        return float(z @ self._probabilities)

    @property
    def variance(self) -> float:
        z = np.arange(self._lower, self._upper + 1, dtype=np.float64) - self.mean
        return float(z**2 @ self._probabilities)

    @property
    def _extent(self) -> int:
        return max(abs(self._lower), abs(self._upper))

    def _outside(self, reach: np.ndarray) -> np.ndarray:
        """``P[Z < -reach] + P[Z > reach]`` from the tail sums (no margin)."""
        return self.cdf(-reach - 1) + self.sf(reach + 1)

    def outside_mass(self, reach) -> float:
        reach = _scalar_integer(reach, "reach", 0)
        if reach >= self._extent:
            return 0.0
        return float(self._outside(np.asarray(reach))) * (1.0 + TAIL_MARGIN)

    def cutoff(self, tail_mass=1e-15) -> int:
        """Smallest ``K ≤ max(|lower|, |upper|)`` leaving at most ``tail_mass`` outside ``[-K, K]``.

        ``tail_mass = 0`` gives the whole support (even where far tails underflow).
        """
        tail_mass = _as_tail_mass(tail_mass, bounded=True)
        if tail_mass == 0.0:
            return self._extent
        reaches = np.arange(self._extent + 1)
        outside = self._outside(reaches) * (1.0 + TAIL_MARGIN)
        outside[-1] = 0.0
        return int(np.argmax(outside <= tail_mass))

    def dp_delta(self, epsilon) -> float:
        """Smallest δ for which adding ``Z`` to a count is (ε, δ)-DP.

        Neighbouring counts differ by ``d ∈ {1, …, sensitivity}``; δ is the
        largest hockey-stick divergence ``Σ_z max(0, P[Z = z] - e^ε P[Z = z - d])``
        over ``d`` and both directions — exact, a finite sum. Outputs one
        neighbour can produce and the other cannot contribute their full
        mass, which is why bounded noise always has ``δ > 0``
        (Bach 2020, Sec. 2.3).
        """
        epsilon = _as_epsilon(epsilon)
        p = self._probabilities
        worst = 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            factor = math.exp(epsilon) if epsilon < 700 else np.inf
            for d in range(1, int(self.sensitivity) + 1):
                padded = np.concatenate([np.zeros(d), p, np.zeros(d)])
                here, shifted = padded[d:], padded[:-d]  # P[Z = z], P[Z = z - d]
                for a, b in ((here, shifted), (shifted, here)):
                    excess = np.where(b > 0, np.maximum(a - factor * b, 0.0), a)
                    worst = max(worst, math.fsum(excess))
        return min(worst, 1.0)


def _symmetric_table(log_weights_nonnegative: np.ndarray) -> np.ndarray:
    """The pmf on ``{-E, …, E}`` from ``log w(|z|)`` for ``|z| = 0 … E`` (largest is at 0)."""
    weights = np.exp(log_weights_nonnegative - log_weights_nonnegative.max())
    full = np.concatenate([weights[:0:-1], weights])
    return full / math.fsum(full)


def _symmetric_log_normaliser(log_weights_nonnegative: np.ndarray) -> float:
    top = float(log_weights_nonnegative.max())
    w = np.exp(log_weights_nonnegative - top)
    return top + math.log(w[0] + 2.0 * math.fsum(w[1:]))


@dataclass(frozen=True)
class TruncatedGeometricNoise(_FiniteSupportNoise):
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

    def __post_init__(self):
        scale = _scalar_positive(self.scale, "scale")
        if scale > MAX_SCALE:
            raise ValueError(f"scale must be at most {MAX_SCALE:g}, got {scale}")
        bound = _scalar_integer(self.bound, "bound", 0)
        if bound > MAX_BOUND:
            raise ValueError(f"bound must be at most {MAX_BOUND}, got {bound}")
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "bound", bound)
        object.__setattr__(self, "sensitivity", _scalar_integer(self.sensitivity, "sensitivity", 1))

    @classmethod
    def from_variance(cls, variance, bound, sensitivity=1) -> TruncatedGeometricNoise:
        """The scale b giving ``Var Z = variance``; needs ``0 < variance < E(E+1)/3``.

        ``Var Z`` rises strictly with b (``Cov(Z², |Z|) > 0`` in this exponential
        family) from 0 to the uniform's ``E(E+1)/3`` as ``b → ∞``; solved on ``log(1/b)``.
        """
        v = _scalar_positive(variance, "variance")
        bound = _scalar_integer(bound, "bound", 1)
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
        root = optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        return cls(math.exp(-root), bound, sensitivity)

    @classmethod
    def from_epsilon(cls, epsilon, bound, sensitivity=1) -> TruncatedGeometricNoise:
        """Scale ``b = Δ/ε``: (ε, P[Z > E - Δ])-DP."""
        epsilon = _scalar_positive(epsilon, "epsilon")
        sensitivity = _scalar_integer(sensitivity, "sensitivity", 1)
        return cls(sensitivity / epsilon, bound, sensitivity)

    @property
    def label(self) -> str:
        return f"truncated geometric (scale={self.scale:.6g}, E={self.bound})"

    @property
    def _lower(self) -> int:
        return -self.bound

    @property
    def _upper(self) -> int:
        return self.bound

    @cached_property
    def _log_weights(self) -> np.ndarray:
        return -np.arange(self.bound + 1, dtype=np.float64) / self.scale

    @cached_property
    def _probabilities(self) -> np.ndarray:
        return _symmetric_table(self._log_weights)

    @cached_property
    def _log_normaliser(self) -> float:
        return _symmetric_log_normaliser(self._log_weights)

    def logpmf(self, z):
        z = as_integers(z, "z")
        inside = np.abs(z) <= self.bound
        with np.errstate(over="ignore"):
            value = -(np.abs(z).astype(np.float64) / self.scale) - self._log_normaliser
        return np.where(inside, value, -np.inf)

    def sample(self, size=None, rng=None):
        scale, bound = Fraction(self.scale), self.bound
        t, s = scale.numerator, scale.denominator

        def make(next_word):
            if bound * s <= t:  # E ≤ b: uniform proposal, kept with probability e^{-|u| s/t}
                bernoulli_exp, _ = _make_bernoulli_exp(next_word)
                uniform = _make_uniform_below(2 * bound + 1, next_word)

                def draw():
                    while True:
                        u = uniform() - bound
                        if bernoulli_exp(abs(u) * s, t):
                            return u

                return draw
            laplace = _make_laplace_draw(scale, next_word)

            def draw_truncated():
                while True:
                    y = laplace()
                    if -bound <= y <= bound:
                        return y

            return draw_truncated

        return _draw(make, size, rng)

    def epsilon_delta(self) -> tuple[float, float]:
        """``(ε, δ) = (Δ/b, P[Z > E - Δ])``: the guarantee, δ the smallest for that ε."""
        return self.sensitivity / self.scale, float(self.sf(self.bound - self.sensitivity + 1))


def _truncated_geometric_variance(rate: float, bound: int) -> float:
    """``Σ z² e^{-rate|z|} / Σ e^{-rate|z|}`` over ``|z| ≤ E`` (positive terms only)."""
    k = np.arange(bound + 1, dtype=np.float64)
    w = np.exp(-rate * k)
    return 2.0 * math.fsum(k * k * w) / (1.0 + 2.0 * math.fsum(w[1:]))


def cell_key_max_variance(bound) -> float:
    """``E(E+1)/3``: the largest variance of a cell-key p-table with bound E (the uniform one)."""
    bound = _scalar_integer(bound, "bound", 1)
    return bound * (bound + 1) / 3.0


def _cell_key_variance(mu: float, bound: int) -> float:
    """``Σ z² e^{-μz²} / Σ e^{-μz²}`` over ``|z| ≤ E``, for ``μ ≥ 0`` (positive terms only)."""
    k = np.arange(bound + 1, dtype=np.float64)
    w = np.exp(-mu * k * k)
    return 2.0 * math.fsum(k * k * w) / (1.0 + 2.0 * math.fsum(w[1:]))


@dataclass(frozen=True)
class CellKeyNoise(_FiniteSupportNoise):
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
        bound = _scalar_integer(self.bound, "bound", 0)
        if bound < 1:
            raise ValueError(
                f"bound must be an integer >= 1 (E = 0 leaves no room for noise), "
                f"got {self.bound!r}"
            )
        if bound > MAX_BOUND:
            raise ValueError(f"bound must be at most {MAX_BOUND}, got {bound}")
        v = _scalar_positive(self.target_variance, "target_variance")
        limit = bound * (bound + 1) / 3.0
        if v > limit * (1.0 + 4.0 * np.finfo(float).eps):
            raise ValueError(
                f"target_variance must be at most E(E+1)/3 = {limit:g} for bound E = {bound}, "
                f"the variance of the uniform p-table (Bach 2020, Sec. 3.2); got {v!r}"
            )
        object.__setattr__(self, "target_variance", v)
        object.__setattr__(self, "bound", bound)
        object.__setattr__(self, "sensitivity", _scalar_integer(self.sensitivity, "sensitivity", 1))

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
        return math.exp(optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))

    @property
    def label(self) -> str:
        return f"cell key (V={self.target_variance:.6g}, E={self.bound})"

    @property
    def _lower(self) -> int:
        return -self.bound

    @property
    def _upper(self) -> int:
        return self.bound

    @cached_property
    def _log_weights(self) -> np.ndarray:
        k = np.arange(self.bound + 1, dtype=np.float64)
        return -self.multiplier * k * k

    @cached_property
    def _probabilities(self) -> np.ndarray:
        return _symmetric_table(self._log_weights)

    @cached_property
    def _log_normaliser(self) -> float:
        return _symmetric_log_normaliser(self._log_weights)

    def logpmf(self, z):
        z = as_integers(z, "z")
        inside = np.abs(z) <= self.bound
        zf = np.where(inside, z, 0).astype(np.float64)
        return np.where(inside, -self.multiplier * zf * zf - self._log_normaliser, -np.inf)

    def sample(self, size=None, rng=None):
        mu, bound = Fraction(self.multiplier), self.bound
        a, c = mu.numerator, mu.denominator

        def make(next_word):
            if a * bound * bound <= c:  # μE² ≤ 1: uniform proposal, kept with prob e^{-μu²}
                bernoulli_exp, _ = _make_bernoulli_exp(next_word)
                uniform = _make_uniform_below(2 * bound + 1, next_word)

                def draw():
                    while True:
                        u = uniform() - bound
                        if bernoulli_exp(a * u * u, c):
                            return u

                return draw
            gaussian = _make_sampler(Fraction(c, 2 * a), next_word)

            def draw_truncated():
                while True:
                    z = gaussian()
                    if -bound <= z <= bound:
                        return z

            return draw_truncated

        return _draw(make, size, rng)


# --- any finite pmf --------------------------------------------------------------------------


@dataclass(frozen=True)
class FinitePmfNoise(_FiniteSupportNoise):
    """Noise with a pmf a user tabulates: ``P[Z = start + i] ∝ probabilities[i]``.

    The weights are normalised (divided by their sum) and zero weights at
    either end are dropped, so ``support`` is tight. They are stored as a
    tuple, which keeps the mechanism hashable. Draws are exact for the stored
    binary values: every weight is an exact multiple of a common power of two,
    and an exactly uniform integer below their total picks the value. Not
    assumed symmetric or centred (``mean`` is computed). DP: as every bounded
    noise, not ε-DP; (ε, δ) by :meth:`dp_delta`.
    """

    start: int
    probabilities: tuple
    sensitivity: int = 1

    name = "finite_pmf"
    citation = "user-supplied table"

    def __post_init__(self):
        start = _scalar_integer(self.start, "start", -(2**62))
        weights = _as_real_array(self.probabilities, "probabilities").astype(np.float64)
        if weights.ndim != 1 or weights.size == 0:
            raise ValueError("probabilities must be a non-empty 1-d sequence")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("probabilities must be finite and >= 0")
        nonzero = np.flatnonzero(weights)
        if nonzero.size == 0:
            raise ValueError("probabilities must have a positive sum")
        weights = weights[nonzero[0] : nonzero[-1] + 1]
        start += int(nonzero[0])
        if weights.size > 2 * MAX_BOUND + 1:
            raise ValueError(f"probabilities must have at most {2 * MAX_BOUND + 1} entries")
        weights = weights / math.fsum(weights)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "probabilities", tuple(float(w) for w in weights))
        object.__setattr__(self, "sensitivity", _scalar_integer(self.sensitivity, "sensitivity", 1))

    @classmethod
    def from_table(cls, table: FinitePmf, sensitivity=1) -> FinitePmfNoise:
        """From a :class:`FinitePmf`; its ``omitted_mass`` is dropped (renormalised)."""
        if not isinstance(table, FinitePmf):
            raise TypeError(f"table must be a FinitePmf, got {table!r}")
        return cls(table.start, table.probabilities, sensitivity)

    @property
    def label(self) -> str:
        return f"finite pmf on [{self._lower}, {self._upper}]"

    @property
    def _lower(self) -> int:
        return self.start

    @property
    def _upper(self) -> int:
        return self.start + len(self.probabilities) - 1

    @cached_property
    def _probabilities(self) -> np.ndarray:
        return np.array(self.probabilities, dtype=np.float64)

    @cached_property
    def symmetric(self) -> bool:
        p = self._probabilities
        return self._lower == -self._upper and bool(np.array_equal(p, p[::-1]))

    def sample(self, size=None, rng=None):
        fractions = [Fraction(w) for w in self.probabilities]
        denominator = max(f.denominator for f in fractions)  # all powers of two
        cumulative, total = [], 0
        for f in fractions:
            total += f.numerator * (denominator // f.denominator)
            cumulative.append(total)
        start = self.start

        def make(next_word):
            uniform = _make_uniform_below(total, next_word)

            def draw():
                return start + bisect_right(cumulative, uniform())

            return draw

        return _draw(make, size, rng)
