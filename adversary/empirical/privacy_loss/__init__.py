"""Empirical privacy loss (Petti & Flaxman 2020) and its exact counterpart.

**Exact privacy loss.** A count ``x`` released as ``o = x + Z`` with integer
noise ``Z`` of known pmf ``p`` is compared with the neighbouring count
``x - s`` (``s`` = ``shift``, 1 for a count). With ``z = o - x`` the
noise value, the *privacy loss* of the output is

    L(z) = log P[M(D) = o] - log P[M(D') = o] = log p(z) - log p(z + s),

and the privacy loss random variable is ``L(Z)`` with ``Z ~ p`` (the output
drawn under D). For the discrete Gaussian ``DG(0, σ²)``,
``L(z) = (2zs + s²)/(2σ²)``, linear in z and unbounded (no pure ε); for the
two-sided geometric ``p(z) ∝ e^{-a|z|}``, ``L(z) = a(|z + s| - |z|)`` lies in
``[-as, as]`` (pure ``as``-DP). :class:`IntegerNoise` holds any such pmf
(through its log-pmf and a finite window holding all but ``omitted_mass``);
:func:`privacy_loss`, :func:`privacy_loss_distribution` and
:func:`max_privacy_loss` work for every one of them.

**The estimator.** Petti & Flaxman (2020, Methods, "Empirical Privacy Loss")
estimate the pmf of the residuals (DP count minus precise count) of C
exchangeable queries (their ``p̂_k = Σ_j 1[error_j = k]/C``), smooth it with a
Gaussian kernel density estimate ``p^KDE``, and define::

    EPL(x) = log(p^KDE(x) / p^KDE(x + 1)),      EPL = max_x |EPL(x)|

(their two displayed equations; Figure 1's caption). The residual of a count
is ``Z``, so ``EPL(x)`` estimates ``L(x)`` above, and EPL estimates
``max |L|`` over the evaluation range. Their code
(``aflaxman/dp_2020_census``, ``dp_2020_census/model.py``,
``empirical_privacy_loss``) fixes what the text leaves open, and
:func:`empirical_privacy_loss` exposes each choice as an argument:

* **bandwidth**: ``scipy.stats.gaussian_kde(errors, bw_method=0.1)``. A scalar
  ``bw_method`` is a *factor*: the kernel's standard deviation is ``0.1 ×`` the
  sample standard deviation (ddof 1), not 0.1 people. ``bandwidth_units="std"``
  (the default) reproduces that; ``"data"`` takes the bandwidth in the units
  of the statistic.
* **evaluation range**: ``B = multiplier · max(|P_{100-q}|, |P_q|)`` with
  ``P_q`` numpy's (linearly interpolated) q-th percentile of the residuals; the
  KDE is evaluated at the midpoints of ``numpy.arange(-B, B, 1)`` and EPL(x)
  compares consecutive midpoints. Every published EPL (main text and
  Table SA1) used ``q = 95``, ``multiplier = 1.0``, the defaults here (the
  function's own defaults there, 99 and 1.5, were not used).
* **number of residuals** C: the length of the sample given.

:func:`empirical_privacy_loss_two_sample` is the same estimator for samples
of any statistic under D and under D' (it reduces to the one-sample form for
a pure location shift); :func:`simulate_neighbouring_outputs` draws such
pairs from a mechanism, ``n_pairs`` of them.

**Table SA1** (the Geometric-mechanism validation, printed in the authors'
response to the referees of version 1 and in the Supplementary Methods
Appendix): :data:`SA1_PRINTED`, and the archived output of the notebook that
computed it (``008_appendix_calcs.ipynb``), :data:`SA1_NOTEBOOK`. The setting,
read from that notebook: C = 2663 residuals (the enumeration districts of
1940 Washington state), noise ``Geom(p) - Geom(p)`` with ``p = ε/2`` drawn by
numpy's legacy ``RandomState`` (seed 123435, ten replicates per ε, ε in the
order of the table), the estimator with bandwidth factor 0.1, ``q = 95``,
multiplier 1. :func:`petti_flaxman_sa1` redraws exactly that stream and
reproduces the notebook's output digit for digit; the printed table comes
from another run of the same setting (its numbers are not in the
repository), and agrees with the estimator's sampling distribution.

The exact privacy loss of that noise is ``-log(1 - ε/2) ≈ ε/2`` per count
(the text's ``G(ε/2)``), not ε: at C = 2663 the estimator's mean is about
twice the exact value, so the table's "EPL ≈ ε" is an upward bias of the
maximum of a noisy log-ratio of the same size as the loss itself, not
agreement with the mechanism (see ``tests/empirical``). With C large the
estimator converges to its own limit (:func:`kde_limit_privacy_loss`, the
exact pmf smoothed by the same kernel), which is close to the exact loss.

**Bayesian reading.** With prior probability ``π`` on D, an output with
privacy loss L has posterior ``P[D | o] = 1/(1 + (1-π)/π · e^{-L})``
(:func:`posterior_from_privacy_loss`): Kazan & Reiter's (3.1) is this with
``D: X1 = m + 1``, ``D': X1 = m`` and ``z = x1* - m - 1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from scipy import signal, special

from ..._validation import _as_real_array, as_integers, as_positive, as_probability
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import DiscreteGaussianNoise, DiscreteLaplaceNoise, NoiseMechanism

__all__ = [
    "SA1_NOTEBOOK",
    "SA1_NOTEBOOK_EPSILONS",
    "SA1_NOTEBOOK_SETTINGS",
    "SA1_PRINTED",
    "SA1_RESIDUALS",
    "SA1_SEED",
    "BandwidthUnits",
    "EmpiricalPrivacyLoss",
    "IntegerNoise",
    "PrivacyLossDistribution",
    "additive_mechanism",
    "empirical_privacy_loss",
    "empirical_privacy_loss_two_sample",
    "exact_empirical_privacy_loss",
    "kde_limit_privacy_loss",
    "kernel_bandwidth",
    "log_kde",
    "max_privacy_loss",
    "percentile_grid",
    "petti_flaxman_residuals",
    "petti_flaxman_sa1",
    "posterior_from_privacy_loss",
    "privacy_loss",
    "privacy_loss_distribution",
    "simulate_neighbouring_outputs",
]

DEFAULT_TAIL_MASS = 1e-15
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Direct kernel sums are done in blocks of at most this many terms.
_BLOCK_TERMS = 1 << 22
# The FFT lattice path: relative accuracy is kept by recomputing directly every
# point whose density is below this fraction of the largest one.
_FFT_RELATIVE_FLOOR = 1e-6
_FFT_MAX_LENGTH = 1 << 24


# --- argument checks ------------------------------------------------------------


def _as_samples(value, name: str, minimum: int = 2) -> np.ndarray:
    array = _as_real_array(value, name).astype(np.float64)
    if array.ndim != 1 or array.size < minimum:
        raise ValueError(f"{name} must be a 1-d array of at least {minimum} values, got {value!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return array


def _as_positive_scalar(value, name: str) -> float:
    return float(as_positive(value, name))


def _as_percentile(value, name: str) -> float:
    q = float(_as_real_array(value, name))
    if not 50.0 < q <= 100.0:
        raise ValueError(f"{name} must lie in (50, 100], got {value!r}")
    return q


def _as_integer_shift(value, name: str = "shift") -> int:
    shift = int(as_integers(value, name))
    if shift < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return shift


def _as_prior(value, name: str = "prior") -> np.ndarray:
    return as_probability(value, name)


# --- additive integer noise with a known pmf --------------------------------------


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


# --- the exact privacy loss ---------------------------------------------------------


def privacy_loss(z, noise: IntegerNoise, shift=1) -> np.ndarray:
    """``L(z) = log p(z) - log p(z + s)``: Petti & Flaxman's EPL(x), computed exactly.

    The output ``o = x + z`` of D (count x) against D' (count ``x - s``). ``+inf``
    where only D can produce the output, ``-inf`` where only D' can; ``z``
    impossible under both raises. For ``DG(0, σ²)`` this is ``(2zs + s²)/(2σ²)``.
    """
    shift = _as_integer_shift(shift)
    z = as_integers(z, "z")
    log_d = noise.logpmf(z)
    log_d_prime = noise.logpmf(z + shift)
    if np.any(np.isneginf(log_d) & np.isneginf(log_d_prime)):
        raise ValueError(f"z must be possible under D or D', got {z!r}")
    with np.errstate(invalid="ignore"):
        loss = log_d - log_d_prime
    return np.where(np.isneginf(log_d_prime), np.inf, np.where(np.isneginf(log_d), -np.inf, loss))


@dataclass(frozen=True)
class PrivacyLossDistribution:
    """The privacy loss random variable ``L(Z)``, ``Z ~ p``, tabulated on the window.

    ``z`` are the window's noise values with positive probability,
    ``loss = L(z)`` and ``probability = p(z)``; ``omitted_mass`` bounds the
    probability left out (every expectation below is off by at most that
    times the largest integrand on the omitted points).
    """

    z: np.ndarray
    loss: np.ndarray
    probability: np.ndarray
    omitted_mass: float
    shift: int

    def mean(self) -> float:
        """``E[L] = KL(M(D) ‖ M(D'))``; for ``DG(0, σ²)`` exactly ``s²/(2σ²)``."""
        finite = np.isfinite(self.loss)
        if np.any(~finite & (self.probability > 0)):
            return math.inf
        return float(self.loss @ self.probability / self.probability.sum())

    def variance(self) -> float:
        mean = self.mean()
        if not math.isfinite(mean):
            return math.nan
        return float((self.loss - mean) ** 2 @ self.probability / self.probability.sum())

    def maximum(self) -> float:
        """``max L`` over the window (the pure-DP ε of the pair when the window is the support)."""
        return float(np.max(self.loss))

    def delta(self, epsilon) -> np.ndarray:
        """``δ(ε) = E[(1 - e^{ε - L})₊] = Σ_o (P[M(D)=o] - e^ε P[M(D')=o])₊``.

        The smallest δ with which this pair of neighbours satisfies
        ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ`` for every S (the hockey-stick
        divergence), summed from the smallest terms; off by at most
        ``omitted_mass``. ``epsilon`` must be >= 0.
        """
        eps = _as_real_array(epsilon, "epsilon").astype(np.float64)
        if not np.all(np.isfinite(eps)) or np.any(eps < 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
        with np.errstate(over="ignore"):
            gap = -np.expm1(eps[..., None] - self.loss)  # 1 - e^{ε - L}
        terms = np.where(gap > 0, gap, 0.0) * self.probability
        return np.sort(terms, axis=-1).sum(axis=-1)


def privacy_loss_distribution(noise: IntegerNoise, shift=1) -> PrivacyLossDistribution:
    """The exact distribution of ``L(Z)``, ``Z ~ p``, on ``noise``'s window."""
    shift = _as_integer_shift(shift)
    z, probabilities = noise._table()
    keep = probabilities > 0
    z = z[keep]
    loss = privacy_loss(z, noise, shift)
    return PrivacyLossDistribution(z, loss, probabilities[keep], noise.omitted_mass, shift)


def max_privacy_loss(noise: IntegerNoise, lower, upper, shift=1) -> tuple[float, int]:
    """``max |L(z)|`` over the integers ``lower ≤ z ≤ upper``, and a maximising z.

    The exact counterpart of Petti & Flaxman's ``EPL = max_x |EPL(x)|`` over
    an evaluation range. Points impossible under both D and D' are skipped.
    """
    lower, upper = int(as_integers(lower, "lower")), int(as_integers(upper, "upper"))
    if upper < lower:
        raise ValueError(f"upper must be >= lower, got lower={lower}, upper={upper}")
    shift = _as_integer_shift(shift)
    z = np.arange(lower, upper + 1, dtype=np.int64)
    possible = np.isfinite(noise.logpmf(z)) | np.isfinite(noise.logpmf(z + shift))
    if not np.any(possible):
        raise ValueError(f"lower..upper holds no output possible under D or D': {lower}..{upper}")
    z = z[possible]
    magnitude = np.abs(privacy_loss(z, noise, shift))
    at = int(np.argmax(magnitude))
    return float(magnitude[at]), int(z[at])


def exact_empirical_privacy_loss(
    noise: IntegerNoise, range_percentile=95.0, range_multiplier=1.0, shift=1
) -> tuple[float, int, float]:
    """The population version of :func:`empirical_privacy_loss`'s target.

    ``B = multiplier · max(|Q(1 - q/100)|, |Q(q/100)|)`` with ``Q`` the noise's
    lower quantile (:meth:`IntegerNoise.quantile`), then
    :func:`max_privacy_loss` over the integers z with ``-B ≤ z`` and
    ``z + s ≤ B`` (both outputs compared lie in the range, as in the
    estimator). Returns ``(max |L|, argmax z, B)``.
    """
    q = _as_percentile(range_percentile, "range_percentile") / 100.0
    multiplier = _as_positive_scalar(range_multiplier, "range_multiplier")
    shift = _as_integer_shift(shift)
    bound = multiplier * float(np.max(np.abs(noise.quantile([1.0 - q, q]))))
    lower, upper = math.ceil(-bound), math.floor(bound) - shift
    if upper < lower:
        raise ValueError(
            f"range_percentile/range_multiplier give the range ±{bound:g}, narrower than one shift"
        )
    value, at = max_privacy_loss(noise, lower, upper, shift)
    return value, at, bound


def posterior_from_privacy_loss(loss, prior) -> np.ndarray:
    """``P[D | o] = expit(logit π + L)``: prior ``π`` on D, privacy loss L of the output.

    Posterior odds are prior odds times ``e^L``. Kazan & Reiter's posterior
    (3.1) is this with D: ``X1 = m + 1`` and L the loss at ``z = x1* - m - 1``;
    their risk (3.2) is the result divided by ``π``.
    """
    loss = _as_real_array(loss, "loss").astype(np.float64)
    if np.any(np.isnan(loss)):
        raise ValueError(f"loss must not be NaN, got {loss!r}")
    prior = _as_prior(prior)
    return special.expit(special.logit(prior) + loss)


# --- the kernel density estimate ----------------------------------------------------


class BandwidthUnits(StrEnum):
    """How the ``bandwidth`` argument is read."""

    #: a factor times the sample standard deviation (scipy's scalar
    #: ``bw_method``; Petti & Flaxman's 0.1)
    STD = "std"
    #: the kernel's standard deviation in the units of the statistic
    DATA = "data"


def _as_units(value) -> BandwidthUnits:
    try:
        return BandwidthUnits(str(value).lower())
    except ValueError:
        raise ValueError(f"bandwidth_units must be 'std' or 'data', got {value!r}") from None


def kernel_bandwidth(samples, bandwidth=0.1, bandwidth_units="std") -> float:
    """The kernel's standard deviation h.

    ``"std"``: ``bandwidth ×`` the sample standard deviation with ddof 1 (as
    ``scipy.stats.gaussian_kde(samples, bw_method=bandwidth)``); ``"data"``:
    ``bandwidth`` itself. Raises if h is not positive (e.g. all samples equal).
    """
    samples = _as_samples(samples, "samples")
    bandwidth = _as_positive_scalar(bandwidth, "bandwidth")
    units = _as_units(bandwidth_units)
    if units is BandwidthUnits.DATA:
        return bandwidth
    spread = float(np.std(samples, ddof=1))
    if not spread > 0:
        raise ValueError(
            "samples are all equal (an invariant?): their standard deviation is 0, so the "
            "'std' bandwidth is 0 and the KDE is undefined (Petti & Flaxman: EPL undefined)"
        )
    return bandwidth * spread


def _log_kde_direct(samples: np.ndarray, points: np.ndarray, h: float) -> np.ndarray:
    out = np.empty(points.shape, dtype=np.float64)
    flat_points, flat_out = points.reshape(-1), out.reshape(-1)
    block = max(1, _BLOCK_TERMS // samples.size)
    for start in range(0, flat_points.size, block):
        d = (flat_points[start : start + block, None] - samples[None, :]) / h
        flat_out[start : start + block] = special.logsumexp(-0.5 * d * d, axis=1)
    return out - math.log(samples.size) - math.log(h) - _LOG_SQRT_2PI


def log_kde(samples, points, h) -> np.ndarray:
    """``log p^KDE(x) = log (1/(n h)) Σ_i φ((x - s_i)/h)``, Gaussian kernel, exact sums.

    In log space (``logsumexp`` over the samples), so far tails stay finite.
    ``h`` is the kernel's standard deviation (see :func:`kernel_bandwidth`).
    """
    samples = _as_samples(samples, "samples", minimum=1)
    points = _as_real_array(points, "points").astype(np.float64)
    if not np.all(np.isfinite(points)):
        raise ValueError(f"points must be finite, got {points!r}")
    h = _as_positive_scalar(h, "h")
    return _log_kde_direct(samples, points, h)


def _log_kde_unit_grid(samples: np.ndarray, start: float, count: int, h: float) -> np.ndarray:
    """``log p^KDE(start + j)``, j < count; by FFT when the samples are integers.

    Integer samples on the unit grid make the KDE a convolution of the
    samples' histogram with the kernel sampled at integer offsets; points
    whose density falls below ``_FFT_RELATIVE_FLOOR`` of the largest (where
    the FFT's absolute error would matter) are recomputed by direct sums.
    """
    points = start + np.arange(count, dtype=np.float64)
    lowest, highest = float(samples.min()), float(samples.max())
    span = int(highest - lowest) + 1
    if not np.all(samples == np.round(samples)) or span + count > _FFT_MAX_LENGTH:
        return _log_kde_direct(samples, points, h)
    counts = np.bincount((samples - lowest).astype(np.int64), minlength=span).astype(np.float64)
    offsets = (start - lowest + np.arange(-(span - 1), count, dtype=np.float64)) / h
    kernel = np.exp(-0.5 * offsets * offsets)
    density = signal.fftconvolve(counts, kernel)[span - 1 : span - 1 + count]
    low = ~(density > _FFT_RELATIVE_FLOOR * density.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(density) - math.log(samples.size) - math.log(h) - _LOG_SQRT_2PI
    if np.any(low):
        out[low] = _log_kde_direct(samples, points[low], h)
    return out


def kde_limit_privacy_loss(noise: IntegerNoise, points, h, shift=1) -> np.ndarray:
    """``log (p ⊛ φ_h)(x) - log (p ⊛ φ_h)(x + s)``: the estimator's large-sample limit.

    As the number of residuals grows, ``p^KDE`` tends to the noise pmf
    smoothed by the same kernel; this is the EPL(x) that the estimator
    converges to, at ``points`` x with kernel standard deviation ``h``. Exact
    sums over the noise's window (error at most ``omitted_mass`` relative to
    the kernel's peak).
    """
    points = _as_real_array(points, "points").astype(np.float64)
    h = _as_positive_scalar(h, "h")
    shift = _as_integer_shift(shift)
    z, probabilities = noise._table()
    keep = probabilities > 0
    z, log_p = z[keep].astype(np.float64), np.log(probabilities[keep])

    def log_smoothed(x):
        flat = x.reshape(-1)
        out = np.empty(flat.size)
        block = max(1, _BLOCK_TERMS // z.size)
        for start in range(0, flat.size, block):
            d = (flat[start : start + block, None] - z[None, :]) / h
            out[start : start + block] = special.logsumexp(log_p - 0.5 * d * d, axis=1)
        return out.reshape(x.shape)

    return log_smoothed(points) - log_smoothed(points + shift)


# --- the estimator ----------------------------------------------------------------


def percentile_grid(samples, range_percentile=95.0, range_multiplier=1.0, step=1.0):
    """Petti & Flaxman's evaluation points and range bound ``B``.

    ``B = range_multiplier · max(|P_{100-q}|, |P_q|)`` (numpy's linear
    percentiles of ``samples``, q = ``range_percentile``); the points are the
    midpoints of consecutive ``numpy.arange(-B, B, step)``. Returns
    ``(points, B)``.
    """
    samples = _as_samples(samples, "samples")
    q = _as_percentile(range_percentile, "range_percentile")
    multiplier = _as_positive_scalar(range_multiplier, "range_multiplier")
    step = _as_positive_scalar(step, "step")
    low, high = np.percentile(samples, [100.0 - q, q])
    bound = multiplier * max(abs(float(low)), abs(float(high)))
    edges = np.arange(-bound, bound, step)
    return 0.5 * (edges[:-1] + edges[1:]), bound


@dataclass(frozen=True)
class EmpiricalPrivacyLoss:
    """EPL(x) on the evaluation points and its maximum absolute value.

    ``points`` are the x at which ``loss = EPL(x)`` is evaluated (compared
    with ``x + shift``); ``bandwidth`` the kernel's standard deviation used;
    ``bound`` the half-width B of the evaluation range (NaN when points were
    given); ``n_samples`` the number of residuals (or of pairs).
    """

    points: np.ndarray
    loss: np.ndarray
    bandwidth: float
    bound: float
    n_samples: int
    shift: float
    settings: dict

    @property
    def value(self) -> float:
        """``EPL = max_x |EPL(x)|`` (Petti & Flaxman)."""
        return float(np.max(np.abs(self.loss)))

    @property
    def argmax(self) -> float:
        """The x attaining the maximum."""
        return float(self.points[int(np.argmax(np.abs(self.loss)))])


def empirical_privacy_loss(
    residuals,
    *,
    bandwidth=0.1,
    bandwidth_units="std",
    range_percentile=95.0,
    range_multiplier=1.0,
    shift=1.0,
) -> EmpiricalPrivacyLoss:
    """Petti & Flaxman's EPL from residuals (DP value minus precise value).

    ``EPL(x) = log p^KDE(x) - log p^KDE(x + shift)`` at the midpoints of
    ``numpy.arange(-B, B, shift)`` except the last (:func:`percentile_grid`),
    ``EPL = max_x |EPL(x)|``: their two displayed equations, with their code's
    evaluation range. Arguments (Petti & Flaxman's published settings are the
    defaults):

    bandwidth, bandwidth_units
        Kernel standard deviation: ``0.1 × sd(residuals)`` by default
        (:func:`kernel_bandwidth`).
    range_percentile, range_multiplier
        q in (50, 100] and the multiplier of the range ``B``.
    shift
        The neighbouring databases' difference in the statistic (1 for a
        count); also the grid step.

    The number of residuals C is ``len(residuals)``. Integer residuals use
    an FFT of their histogram (same sums, verified against direct sums to
    1e-12 relative in the tests); otherwise the sums are direct. Raises if the
    residuals are all equal (an invariant: the KDE is degenerate) or the range
    holds fewer than two points.
    """
    residuals = _as_samples(residuals, "residuals")
    shift = _as_positive_scalar(shift, "shift")
    units = _as_units(bandwidth_units)
    if not np.std(residuals) > 0:
        raise ValueError(
            "residuals are all equal (an invariant?): the KDE is degenerate and EPL undefined "
            "(Petti & Flaxman: the state-level EPL of an invariant total is infinite)"
        )
    h = kernel_bandwidth(residuals, bandwidth, units)
    points, bound = percentile_grid(residuals, range_percentile, range_multiplier, shift)
    if points.size < 2:
        raise ValueError(
            f"range_percentile/range_multiplier give the range ±{bound:g}, too narrow for two "
            f"evaluation points {shift:g} apart"
        )
    if shift == 1.0:
        log_density = _log_kde_unit_grid(residuals, float(points[0]), points.size, h)
    else:
        log_density = _log_kde_direct(residuals, points, h)
    loss = log_density[:-1] - log_density[1:]
    settings = {
        "bandwidth": float(bandwidth),
        "bandwidth_units": units.value,
        "range_percentile": float(range_percentile),
        "range_multiplier": float(range_multiplier),
    }
    return EmpiricalPrivacyLoss(points[:-1], loss, h, bound, residuals.size, shift, settings)


def empirical_privacy_loss_two_sample(
    samples, neighbour_samples, points, *, bandwidth=0.1, bandwidth_units="std"
) -> EmpiricalPrivacyLoss:
    """EPL from samples of a statistic under D and under its neighbour D'.

    ``EPL(o) = log p^KDE_D(o) - log p^KDE_D'(o)`` at the given ``points``
    (outputs), ``EPL = max |EPL(o)|``. Both densities use one kernel: with
    ``"std"`` units its standard deviation is ``bandwidth ×`` the root mean
    square of the two samples' standard deviations, so that for
    ``neighbour_samples = samples - s`` this is :func:`empirical_privacy_loss`
    of ``samples`` at ``points - x``. Points are required: choose them inside
    both samples' range (e.g. from :func:`percentile_grid`).
    """
    samples = _as_samples(samples, "samples")
    neighbour_samples = _as_samples(neighbour_samples, "neighbour_samples")
    points = _as_samples(points, "points", minimum=1)
    bandwidth = _as_positive_scalar(bandwidth, "bandwidth")
    units = _as_units(bandwidth_units)
    if units is BandwidthUnits.DATA:
        h = bandwidth
    else:
        spread = math.sqrt(0.5 * (np.var(samples, ddof=1) + np.var(neighbour_samples, ddof=1)))
        if not spread > 0:
            raise ValueError("samples and neighbour_samples are all equal: the KDE is undefined")
        h = bandwidth * spread
    loss = _log_kde_direct(samples, points, h) - _log_kde_direct(neighbour_samples, points, h)
    settings = {"bandwidth": bandwidth, "bandwidth_units": units.value}
    n = min(samples.size, neighbour_samples.size)
    return EmpiricalPrivacyLoss(points, loss, h, math.nan, n, math.nan, settings)


def additive_mechanism(sample_noise: Callable) -> Callable:
    """``M(x) = x + Z``: ``sample_noise(size, rng)`` draws the noise.

    For example ``additive_mechanism(noise.sample)`` for an
    :class:`IntegerNoise`, or ``lambda size, rng: discrete_gaussian.sample(σ², size, rng)``
    for exact discrete Gaussian draws.
    """

    def mechanism(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return values + np.asarray(sample_noise(values.shape, rng))

    return mechanism


def simulate_neighbouring_outputs(
    mechanism: Callable, value, neighbour_value, n_pairs: int, rng=None
) -> tuple[np.ndarray, np.ndarray]:
    """``n_pairs`` independent outputs of ``mechanism`` on D and on D'.

    ``mechanism(values, rng)`` maps an array of true statistics to outputs
    (see :func:`additive_mechanism`); D's statistic is ``value``, D''s
    ``neighbour_value``. The D outputs are drawn first, then the D' outputs,
    from one generator (``rng``: a seed or a ``numpy.random.Generator``).
    """
    n = int(as_integers(n_pairs, "n_pairs"))
    if n < 2:
        raise ValueError(f"n_pairs must be >= 2, got {n_pairs!r}")
    generator = np.random.default_rng(rng)
    value = _as_real_array(value, "value")
    neighbour_value = _as_real_array(neighbour_value, "neighbour_value")
    outputs = mechanism(np.full(n, value), generator)
    neighbour_outputs = mechanism(np.full(n, neighbour_value), generator)
    return np.asarray(outputs), np.asarray(neighbour_outputs)


# --- Petti & Flaxman's Table SA1 ------------------------------------------------------

#: Table SA1 as printed (authors' response to the referees, Gates Open Research
#: 3:1722, version 2; Supplementary Methods Appendix, zenodo 3727242), and the
#: archived output of ``008_appendix_calcs.ipynb`` (aflaxman/dp_2020_census,
#: commit 424dc20), the notebook that computes it: the same summary, rounded to
#: 4 decimals, for the ε it printed (the rows 0.15–0.25 are elided in the
#: archived output). ε ↦ (printed, notebook), each (mean EPL, 2.5th percentile,
#: 97.5th percentile) over replicates, or ``None`` where that source has no row.
_SA1_SOURCES: dict[float, tuple[tuple | None, tuple | None]] = {
    0.001: ((0.0010, 0.0008, 0.0013), (0.0010, 0.0008, 0.0011)),
    0.005: ((0.0048, 0.0039, 0.0068), (0.0045, 0.0037, 0.0053)),
    0.01: ((0.0099, 0.0076, 0.0130), (0.0092, 0.0082, 0.0112)),
    0.05: ((0.0490, 0.0390, 0.0673), (0.0477, 0.0388, 0.0561)),
    0.1: ((0.0980, 0.0752, 0.1262), (0.1015, 0.0823, 0.1368)),
    0.15: ((0.1475, 0.1181, 0.1941), None),
    0.2: ((0.1988, 0.1521, 0.2639), None),
    0.3: (None, (0.2823, 0.2292, 0.3909)),
    0.35: (None, (0.3326, 0.2769, 0.4564)),
    0.4: (None, (0.3407, 0.2869, 0.4290)),
    0.45: (None, (0.3788, 0.3171, 0.4216)),
    0.5: (None, (0.3786, 0.3376, 0.4182)),
}
#: Table SA1 as printed: ε ↦ (mean EPL, 2.5th percentile, 97.5th percentile).
SA1_PRINTED: dict[float, tuple[float, float, float]] = {
    epsilon: printed for epsilon, (printed, _) in _SA1_SOURCES.items() if printed is not None
}
#: The archived notebook output of Table SA1, in the same form.
SA1_NOTEBOOK: dict[float, tuple[float, float, float]] = {
    epsilon: kept for epsilon, (_, kept) in _SA1_SOURCES.items() if kept is not None
}
#: ε values of the notebook's loop, in the order their noise was drawn.
SA1_NOTEBOOK_EPSILONS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
SA1_SEED = 123435
SA1_RESIDUALS = 2663
SA1_NOTEBOOK_SETTINGS = {
    "bandwidth": 0.1,
    "bandwidth_units": "std",
    "range_percentile": 95.0,
    "range_multiplier": 1.0,
}


def petti_flaxman_residuals(epsilon, n, random_state) -> np.ndarray:
    """Residuals of their ``GDPC(ε/2, counts)``: ``Geom(ε/2) - Geom(ε/2)``, n of each.

    Drawn with numpy's legacy ``RandomState.geometric`` (a frozen stream), so
    that a given seed reproduces their notebooks. The law is
    :meth:`IntegerNoise.two_sided_geometric` with decay ``-log(1 - ε/2)``.
    """
    epsilon = _as_positive_scalar(epsilon, "epsilon")
    if not epsilon < 2:
        raise ValueError(f"epsilon must be < 2 (p = epsilon/2 < 1), got {epsilon!r}")
    if not isinstance(random_state, np.random.RandomState):
        random_state = np.random.RandomState(random_state)
    p = epsilon / 2.0
    first = random_state.geometric(p, size=n)
    second = random_state.geometric(p, size=n)
    return (first - second).astype(np.float64)


def petti_flaxman_sa1(
    epsilons: Sequence[float] = SA1_NOTEBOOK_EPSILONS,
    n_replicates: int = 10,
    seed=SA1_SEED,
    n_residuals: int = SA1_RESIDUALS,
    evaluate: Sequence[float] | None = None,
    **settings,
) -> dict[float, np.ndarray]:
    """Replicate EPLs of the Geometric mechanism, drawn as in Table SA1's notebook.

    For each ε in ``epsilons`` (in order) and each replicate, ``n_residuals``
    residuals from :func:`petti_flaxman_residuals` with one legacy
    ``RandomState(seed)``, and their :func:`empirical_privacy_loss` with
    ``settings`` (default :data:`SA1_NOTEBOOK_SETTINGS`). Only the ε in
    ``evaluate`` (default all) are estimated; the others' draws are made and
    discarded so that the stream stays aligned. Returns ε ↦ array of
    replicate EPLs; the table's columns are their mean and
    ``numpy.percentile(…, [2.5, 97.5])``.
    """
    options = dict(SA1_NOTEBOOK_SETTINGS) | settings
    n_replicates = int(as_integers(n_replicates, "n_replicates"))
    if n_replicates < 1:
        raise ValueError(f"n_replicates must be >= 1, got {n_replicates}")
    state = np.random.RandomState(seed)
    wanted = set(epsilons if evaluate is None else evaluate)
    results: dict[float, np.ndarray] = {}
    for epsilon in epsilons:
        values = []
        for _ in range(n_replicates):
            residuals = petti_flaxman_residuals(epsilon, n_residuals, state)
            if epsilon in wanted:
                values.append(empirical_privacy_loss(residuals, **options).value)
        if epsilon in wanted:
            results[epsilon] = np.array(values)
    return results
