"""Petti & Flaxman's (2020) empirical privacy loss (EPL) estimator from samples.

Petti & Flaxman (2020, Methods, "Empirical Privacy Loss") estimate the pmf of
the residuals (DP count minus precise count) of C exchangeable queries (their
``p̂_k = Σ_j 1[error_j = k]/C``), smooth it with a Gaussian kernel density
estimate ``p^KDE`` (:mod:`.kde`), and define::

    EPL(x) = log(p^KDE(x) / p^KDE(x + 1)),      EPL = max_x |EPL(x)|

(their two displayed equations; Figure 1's caption). The residual of a count
is the noise ``Z``, so ``EPL(x)`` estimates the exact privacy loss ``L(x)``
(:func:`~.exact.privacy_loss`), and EPL estimates ``max |L|`` over the
evaluation range. Their code (``aflaxman/dp_2020_census``,
``dp_2020_census/model.py``, ``empirical_privacy_loss``) fixes what the text
leaves open, and :func:`empirical_privacy_loss` exposes each choice as an
argument:

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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..._validation import _as_real_array, as_integers
from ._checks import _as_percentile, _as_positive_scalar, _as_samples
from .kde import (
    BandwidthUnits,
    _as_units,
    _log_kde_direct,
    _log_kde_unit_grid,
    kernel_bandwidth,
)

__all__ = [
    "EmpiricalPrivacyLoss",
    "additive_mechanism",
    "empirical_privacy_loss",
    "empirical_privacy_loss_two_sample",
    "percentile_grid",
    "simulate_neighbouring_outputs",
]


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
    :class:`~.integer_noise.IntegerNoise`, or
    ``lambda size, rng: discrete_gaussian.sample(σ², size, rng)`` for exact
    discrete Gaussian draws.
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
