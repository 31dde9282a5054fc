"""A release with any additive noise: ``X* = mu + Z``, ``Z`` from a :class:`NoiseMechanism`.

:func:`NoiseRelease` declares a noisy count in a PyMC model whose noise is a
:class:`~adversary.noise.mechanisms.NoiseMechanism` — discrete Laplace,
truncated geometric, cell-key p-table, a tabulated pmf, or the discrete
Gaussian (for which :class:`~adversary.distributions.DiscreteGaussian` is the
native choice, and what the scenario models use). Its log-p is the
mechanism's own log-pmf written in PyTensor:

* discrete Gaussian: ``-z²/(2σ²) - log Z(σ²)`` (the theta-series normaliser of
  :func:`~adversary.distributions.log_normaliser`);
* discrete Laplace: ``-|z|/b + log((1 - q)/(1 + q))``, ``q = e^{-1/b}``;
* bounded noise: a lookup in the table of ``logpmf`` over the whole support
  (the analytic log-pmf, finite even where the pmf underflows), ``-inf``
  outside it — exact;
* any other (unbounded) mechanism: the same lookup on its table at
  :data:`TABLE_TAIL_MASS` (``-inf`` beyond it: the likelihood of a release that
  far out is taken as 0).

Random draws call the mechanism's exact sampler. ``mechanism`` may be a
sequence, one mechanism per element of the last axis of ``mu`` (a release
per level or per cell, each with its own noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytensor.tensor as pt

from ..noise.mechanisms import DiscreteGaussianNoise, DiscreteLaplaceNoise, NoiseMechanism
from .discrete_gaussian import log_normaliser
from .tabulated_noise import shifted_noise

__all__ = ["TABLE_TAIL_MASS", "NoiseRelease", "symbolic_logpmf"]

#: Tail mass left out when an unbounded mechanism without a closed form is tabulated.
TABLE_TAIL_MASS = 1e-15


def _mechanisms(mechanism) -> tuple[NoiseMechanism, ...] | NoiseMechanism:
    if isinstance(mechanism, NoiseMechanism):
        return mechanism
    if isinstance(mechanism, str) or not isinstance(mechanism, Sequence) or not mechanism:
        raise TypeError(
            "mechanism must be a NoiseMechanism or a non-empty sequence of them (one per "
            f"element of the last axis), got {mechanism!r}"
        )
    for m in mechanism:
        if not isinstance(m, NoiseMechanism):
            raise TypeError(f"mechanism must hold NoiseMechanism objects, got {m!r}")
    return tuple(mechanism)


def symbolic_logpmf(mechanism: NoiseMechanism, z):
    """``log P[Z = z]`` as a PyTensor graph of the integer tensor ``z`` (float64)."""
    z = pt.cast(pt.as_tensor_variable(z), "int64")
    if isinstance(mechanism, DiscreteGaussianNoise):
        sigma2 = np.float64(mechanism.sigma2)
        zf = pt.cast(z, "float64")
        return -(zf**2) / (np.float64(2.0) * sigma2) - log_normaliser(sigma2)
    if isinstance(mechanism, DiscreteLaplaceNoise):
        q = math.exp(-1.0 / mechanism.scale)
        constant = np.float64(math.log(-math.expm1(-1.0 / mechanism.scale)) - math.log1p(q))
        return -pt.abs(pt.cast(z, "float64")) / np.float64(mechanism.scale) + constant
    if mechanism.bounded:
        lower, upper = mechanism.support
    else:
        reach = mechanism.cutoff(TABLE_TAIL_MASS)
        lower, upper = -reach, reach
    values = mechanism.logpmf(np.arange(lower, upper + 1))
    table = pt.as_tensor_variable(np.asarray(values, dtype=np.float64))
    size = upper - lower + 1
    index = z - np.int64(lower)
    inside = pt.and_(pt.ge(index, 0), pt.lt(index, size))
    return pt.switch(inside, table[pt.clip(index, 0, size - 1)], np.float64(-np.inf))


def _mode(mechanism: NoiseMechanism) -> int:
    """The most probable noise value (0 for the symmetric mechanisms)."""
    if mechanism.symmetric:
        return 0
    table = mechanism.table(0.0 if mechanism.bounded else TABLE_TAIL_MASS)
    return int(table.support[np.argmax(table.probabilities)])


def _draw(mechanism: NoiseMechanism, shape: tuple, rng) -> np.ndarray:
    """Exact draws of shape ``shape`` (``()`` for one) as int64."""
    if shape == ():
        return np.asarray(mechanism.sample(None, rng), dtype=np.int64)
    return np.asarray(mechanism.sample(shape, rng), dtype=np.int64)


def NoiseRelease(name: str, mu, mechanism, **kwargs):
    """``name = mu + Z`` with ``Z`` from ``mechanism`` (one, or one per element of the last axis).

    Parameters
    ----------
    name : str
        The variable's name.
    mu : int or integer tensor
        The true count(s).
    mechanism : NoiseMechanism or sequence of NoiseMechanism
        The noise; a sequence gives element ``k`` of the last axis its own.
    **kwargs
        Passed to :class:`pymc.CustomDist` (``observed``, ``dims``, ``initval``, …).
    """
    mechanisms = _mechanisms(mechanism)
    single = isinstance(mechanisms, NoiseMechanism)
    if single:
        offset = np.int64(_mode(mechanisms))
    else:
        offset = np.array([_mode(m) for m in mechanisms], dtype=np.int64)

    def logp(value, mu):
        z = pt.cast(value, "int64") - pt.cast(mu, "int64")
        if single:
            return symbolic_logpmf(mechanisms, z)
        parts = [symbolic_logpmf(m, z[..., k]) for k, m in enumerate(mechanisms)]
        return pt.stack(parts, axis=-1)

    def random(mu, rng=None, size=None):
        mu = np.asarray(mu)
        shape = tuple(size) if size is not None else mu.shape
        mu = np.broadcast_to(mu, shape).astype(np.int64)
        if single:
            return mu + _draw(mechanisms, shape, rng)
        if not shape or shape[-1] != len(mechanisms):
            raise ValueError(
                f"{name}: one mechanism per element of the last axis ({len(mechanisms)}), "
                f"but the draw has shape {shape}"
            )
        noise = np.empty(shape, dtype=np.int64)
        for k, m in enumerate(mechanisms):
            noise[..., k] = _draw(m, shape[:-1], rng)
        return mu + noise

    return shifted_noise(name, mu, logp, random, offset, **kwargs)
