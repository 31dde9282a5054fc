"""Additive integer noise ``Z`` with a known pmf, the noise whose privacy loss is computed.

:class:`IntegerNoise` holds any such pmf (the discrete Gaussian, the two-sided
geometric, any :class:`~adversary.noise.mechanisms.NoiseMechanism` or table)
through its log-pmf and a finite window holding all but ``omitted_mass`` of
the probability, over which distributions and tests are tabulated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..._validation import _as_real_array, as_integers, as_probability
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import DiscreteGaussianNoise, DiscreteLaplaceNoise, NoiseMechanism
from ._checks import _as_positive_scalar

__all__ = ["DEFAULT_TAIL_MASS", "IntegerNoise"]

DEFAULT_TAIL_MASS = 1e-15


@dataclass(frozen=True)
class IntegerNoise:
    """Additive integer noise ``Z`` known through its log-pmf.

    ``log_pmf`` maps an int64 array to ``log P[Z = z]`` (``-inf`` off the
    support); ``[lower, upper]`` is a window holding all but ``omitted_mass``
    of the probability, over which distributions and tests are tabulated.
    Build one with :meth:`from_mechanism` (any
    :class:`~adversary.noise.mechanisms.NoiseMechanism`), :meth:`discrete_gaussian`,
    :meth:`two_sided_geometric`, :meth:`from_log_pmf` or :meth:`from_finite_pmf`.
    """

    log_pmf: Callable[[np.ndarray], np.ndarray]
    lower: int
    upper: int
    omitted_mass: float = 0.0
    name: str = "custom"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if not callable(self.log_pmf):
            raise TypeError(f"log_pmf must be callable, got {self.log_pmf!r}")
        lower, upper = int(as_integers(self.lower, "lower")), int(as_integers(self.upper, "upper"))
        if upper < lower:
            raise ValueError(f"upper must be >= lower, got lower={lower}, upper={upper}")
        if upper - lower > 50_000_000:
            raise ValueError(f"upper - lower must be at most 5e7, got {upper - lower}")
        omitted = float(_as_real_array(self.omitted_mass, "omitted_mass"))
        if not 0.0 <= omitted < 1.0:
            raise ValueError(f"omitted_mass must lie in [0, 1), got {self.omitted_mass!r}")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "omitted_mass", omitted)

    # constructors

    @classmethod
    def from_mechanism(
        cls, mechanism: NoiseMechanism, tail_mass: float = DEFAULT_TAIL_MASS, name=None
    ) -> IntegerNoise:
        """Any :class:`~adversary.noise.mechanisms.NoiseMechanism` on its window.

        The window is ``[-K, K]`` with ``K = mechanism.cutoff(tail_mass)`` (the
        whole support of bounded noise when ``tail_mass`` is 0); ``omitted_mass``
        is the mechanism's rigorous bound on ``P[|Z| > K]``; ``log_pmf`` its own.
        """
        if not isinstance(mechanism, NoiseMechanism):
            raise TypeError(f"mechanism must be a NoiseMechanism, got {mechanism!r}")
        reach = int(mechanism.cutoff(tail_mass))
        return cls(
            log_pmf=mechanism.logpmf,
            lower=-reach,
            upper=reach,
            omitted_mass=float(mechanism.outside_mass(reach)),
            name=mechanism.label if name is None else name,
        )

    @classmethod
    def discrete_gaussian(cls, sigma2, tail_mass: float = DEFAULT_TAIL_MASS) -> IntegerNoise:
        """``DG(0, σ²)`` (:class:`~adversary.noise.DiscreteGaussianNoise`) on ``[-K, K]``.

        ``K`` is :func:`~adversary.noise.discrete_gaussian.cutoff` at
        ``tail_mass``; ``omitted_mass`` is the rigorous bound ``2 P[Z > K]``.
        """
        sigma2 = _as_positive_scalar(sigma2, "sigma2")
        tail_mass = float(as_probability(tail_mass, "tail_mass"))
        return cls.from_mechanism(
            DiscreteGaussianNoise(sigma2), tail_mass, f"discrete Gaussian (sigma2={sigma2:g})"
        )

    @classmethod
    def two_sided_geometric(cls, decay, tail_mass: float = DEFAULT_TAIL_MASS) -> IntegerNoise:
        """``P[Z = z] = tanh(a/2) e^{-a|z|}`` with ``a`` = ``decay`` > 0.

        Petti & Flaxman's ``G(a)`` (their display ``Pr[G(z)=k] = (1-e^{-z})
        e^{-z|k|}/(1+e^{-z})``), the discrete Laplace
        (:class:`~adversary.noise.mechanisms.DiscreteLaplaceNoise` with scale
        ``1/a``). Their code draws it as ``Geom(p) - Geom(p)``, which is this
        law with ``a = -log(1 - p)``. ``P[|Z| > K] = 2 e^{-a(K+1)}/(1 + e^{-a})``;
        ``K`` is the smallest with (a rigorous bound on) that at most ``tail_mass``.
        """
        a = _as_positive_scalar(decay, "decay")
        tail_mass = float(as_probability(tail_mass, "tail_mass"))
        return cls.from_mechanism(
            DiscreteLaplaceNoise(1.0 / a), tail_mass, f"two-sided geometric (decay={a:g})"
        )

    @classmethod
    def from_log_pmf(
        cls, log_pmf, lower, upper, omitted_mass: float = 0.0, name: str = "custom"
    ) -> IntegerNoise:
        """Any integer noise: a log-pmf callable and a window ``[lower, upper]``."""
        return cls(log_pmf, lower, upper, omitted_mass, name)

    @classmethod
    def from_finite_pmf(cls, table: FinitePmf, name: str = "tabulated") -> IntegerNoise:
        """A :class:`~adversary.noise.finite_pmf.FinitePmf` (e.g. a sum of discrete Gaussians)."""
        return cls(
            table.logpmf,
            int(table.start),
            int(table.start + table.probabilities.size - 1),
            float(table.omitted_mass),
            name,
        )

    # the pmf on its window

    @property
    def support(self) -> np.ndarray:
        """The integers of the window, ``lower … upper``."""
        return np.arange(self.lower, self.upper + 1, dtype=np.int64)

    def logpmf(self, z) -> np.ndarray:
        """``log P[Z = z]``; ``z`` must be integer-valued."""
        z = as_integers(z, "z")
        with np.errstate(divide="ignore"):
            return np.asarray(self.log_pmf(z), dtype=np.float64)

    def pmf(self, z) -> np.ndarray:
        """``P[Z = z]``."""
        return np.exp(self.logpmf(z))

    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        if "table" not in self._cache:
            z = self.support
            probabilities = self.pmf(z)
            if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
                raise ValueError(f"log_pmf of {self.name} gives invalid probabilities")
            self._cache["table"] = (z, probabilities)
        return self._cache["table"]

    def quantile(self, q) -> np.ndarray:
        """Smallest window point ``z`` with ``P[Z ≤ z] ≥ q`` (the lower quantile).

        Computed on the window, renormalised: off by at most ``omitted_mass``
        in probability.
        """
        q = _as_real_array(q, "q").astype(np.float64)
        if np.any((q < 0) | (q > 1)):
            raise ValueError(f"q must lie in [0, 1], got {q!r}")
        z, probabilities = self._table()
        cdf = np.cumsum(probabilities) / probabilities.sum()
        index = np.minimum(np.searchsorted(cdf, q, side="left"), z.size - 1)
        return z[index]

    def sample(self, size, rng=None) -> np.ndarray:
        """Draws by inversion of the window's cdf (for simulation, not for releases).

        The law drawn is the pmf renormalised on the window (total variation
        at most ``omitted_mass`` from the noise) up to floating-point rounding
        of the cdf. The discrete Gaussian's exact sampler is
        :func:`adversary.noise.discrete_gaussian.sample`.
        """
        rng = np.random.default_rng(rng)
        z, probabilities = self._table()
        cdf = np.cumsum(probabilities)
        cdf /= cdf[-1]
        u = rng.random(size)
        return z[np.minimum(np.searchsorted(cdf, u, side="right"), z.size - 1)]
