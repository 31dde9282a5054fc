"""The interface every additive noise mechanism implements, and the code they share.

:class:`NoiseMechanism` is what a scenario asks of its noise (see the package
:mod:`adversary.noise.mechanisms` for the conventions); ``_FiniteSupportNoise``
holds what the bounded mechanisms share (everything from one pmf table). Also here: the
exact-sampling helpers (uniform integers, the discrete Laplace
of CKS Algorithm 2) the mechanisms draw with.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from fractions import Fraction
from functools import cached_property
from typing import ClassVar

import numpy as np

from ..._validation import as_counts, as_generator, as_integers, scalar_integer
from ...memory import check_noise_table
from ..exact_sampling import (
    _MASK64,
    _TWO64,
    _as_size,
    _make_bernoulli_exp,
    _word_source,
)
from ..finite_pmf import FinitePmf
from ..sums import sum_of_copies
from .checks import as_epsilon, as_tail_mass

__all__ = ["TAIL_MARGIN", "NoiseMechanism"]

#: Tail sums computed in floating point are multiplied by ``1 + TAIL_MARGIN``
#: before they are compared with ``tail_mass`` in ``cutoff``: their relative
#: rounding error is far below it, so the comparison is rigorous.
TAIL_MARGIN = 1e-12

_WORDS_PER_DRAW = 16
_BLOCK = 512


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


def _make_truncated_draw(bound: int, next_word, cost, denominator: int, uniform, unbounded):
    """An exact draw of the noise ``∝ exp(-cost(z)/denominator)`` on ``{-E, …, E}``.

    With ``uniform`` (the right choice when the weights stay above about
    ``e^{-1}``), a uniform proposal on ``{-E, …, E}`` kept with probability
    ``exp(-cost(u)/denominator)`` (CKS's exact Bernoulli); else draws of
    ``unbounded(next_word)`` (the untruncated noise) kept when within ``E``.
    """
    if uniform:
        bernoulli_exp, _ = _make_bernoulli_exp(next_word)
        uniform_below = _make_uniform_below(2 * bound + 1, next_word)

        def draw():
            while True:
                u = uniform_below() - bound
                if bernoulli_exp(cost(u), denominator):
                    return u

        return draw
    untruncated = unbounded(next_word)

    def draw_truncated():
        while True:
            z = untruncated()
            if -bound <= z <= bound:
                return z

    return draw_truncated


def _draw(make_draw, size, rng):
    """Call ``make_draw(next_word)()`` ``size`` times on 64-bit words drawn from ``rng``."""
    shape = _as_size(size)
    generator = as_generator(rng, "rng")
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

    #: ``(field, check)`` pairs: each field's value is replaced by ``check(value)`` on creation.
    _field_checks: ClassVar[tuple] = ()

    def __post_init__(self):
        self._set_fields(
            **{field: check(getattr(self, field)) for field, check in self._field_checks}
        )

    def _set_fields(self, **checked) -> None:
        """Store validated values in the frozen dataclass's fields."""
        for field, value in checked.items():
            object.__setattr__(self, field, value)

    @property
    @abstractmethod
    def label(self) -> str:
        """Human-readable name with the parameters, for legends and coordinates."""

    @property
    def support(self) -> tuple[int | None, int | None]:
        """``(lowest, highest)`` value ``Z`` can take; ``None`` on an unbounded side.

        Unbounded on both sides unless a mechanism says otherwise.
        """
        return (None, None)

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
        check_noise_table(reach, self.label)
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
        tail_mass = as_tail_mass(tail_mass, self.bounded)
        return sum_of_copies(self.table(tail_mass / d), d)


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
        reach = scalar_integer(reach, "reach", 0)
        if reach >= self._extent:
            return 0.0
        return float(self._outside(np.asarray(reach))) * (1.0 + TAIL_MARGIN)

    def cutoff(self, tail_mass=1e-15) -> int:
        """Smallest ``K ≤ max(|lower|, |upper|)`` leaving at most ``tail_mass`` outside ``[-K, K]``.

        ``tail_mass = 0`` gives the whole support (even where far tails underflow).
        """
        tail_mass = as_tail_mass(tail_mass, bounded=True)
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
        epsilon = as_epsilon(epsilon)
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


class _SymmetricBoundedNoise(_FiniteSupportNoise):
    """Noise on ``{-bound, …, bound}`` with ``P[Z = z] ∝ exp(w(|z|))``.

    Subclasses give the field ``bound`` and ``_log_weights`` = ``w(0), …, w(bound)``.
    """

    bound: int

    @property
    @abstractmethod
    def _log_weights(self) -> np.ndarray: ...

    @property
    def _lower(self) -> int:
        return -self.bound

    @property
    def _upper(self) -> int:
        return self.bound

    @cached_property
    def _probabilities(self) -> np.ndarray:
        return _symmetric_table(self._log_weights)

    @cached_property
    def _log_normaliser(self) -> float:
        return _symmetric_log_normaliser(self._log_weights)

    @abstractmethod
    def _exact_draw_parts(self) -> tuple:
        """``(cost, denominator, uniform, unbounded)`` of :func:`_make_truncated_draw`."""

    def sample(self, size=None, rng=None):
        cost, denominator, uniform, unbounded = self._exact_draw_parts()

        def make(next_word):
            return _make_truncated_draw(
                self.bound, next_word, cost, denominator, uniform, unbounded
            )

        return _draw(make, size, rng)
