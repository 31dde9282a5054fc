"""The Gaussian kernel density estimate of Petti & Flaxman's estimator, and its limit.

``log p^KDE(x) = log (1/(n h)) Σ_i φ((x - s_i)/h)`` in log space (exact sums,
so far tails stay finite), with the kernel's standard deviation ``h`` read as
Petti & Flaxman's code reads its bandwidth (:func:`kernel_bandwidth`);
integer samples on the unit grid are summed by FFT. :func:`kde_limit_privacy_loss`
is the estimator's large-sample limit: the exact pmf smoothed by the same
kernel.
"""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np
from scipy import signal, special

from ..._validation import _as_real_array
from ._checks import _as_integer_shift, _as_positive_scalar, _as_samples
from .integer_noise import IntegerNoise

__all__ = ["BandwidthUnits", "kde_limit_privacy_loss", "kernel_bandwidth", "log_kde"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Direct kernel sums are done in blocks of at most this many terms.
_BLOCK_TERMS = 1 << 22
# The FFT lattice path: relative accuracy is kept by recomputing directly every
# point whose density is below this fraction of the largest one.
_FFT_RELATIVE_FLOOR = 1e-6
_FFT_MAX_LENGTH = 1 << 24


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
