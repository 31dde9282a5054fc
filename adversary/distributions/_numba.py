"""Numba implementations of the random draws, for PyTensor's default (numba) linker.

Without these, PyTensor runs each ``rng_fn`` through its object-mode fallback
and warns on every compile. The simple priors are drawn natively; the discrete
Gaussian calls layer 1's exact sampler (pure Python integer arithmetic) from an
object-mode block, with the same generator, so draws are identical to the
``rng_fn`` path; the improper uniform raises its error the same way.
"""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path

import numba
import numpy as np
from pytensor.link.numba.dispatch import basic as numba_basic
from pytensor.link.numba.dispatch.random import numba_core_rv_funcify

from .discrete_gaussian import DiscreteGaussianRV
from .priors import BernoulliCountRV, BoundedUniformRV, FinitePmfRV, ImproperUniformRV, PointMassRV

# PyTensor caches compiled draws on disk under this key: any edit to this file
# (or to the object-mode callees below, which live in the modules hashed here)
# must change it, or a stale compiled function would be reused.
_SOURCES = [Path(__file__), Path(__file__).with_name("discrete_gaussian.py")]
_SOURCES.append(Path(__file__).with_name("priors.py"))
_CACHE_KEY = int(sha256(b"".join(p.read_bytes() for p in _SOURCES)).hexdigest()[:15], 16)


def _draw_discrete_gaussian(rng, mu, sigma2) -> int:
    return int(DiscreteGaussianRV.rng_fn(rng, np.asarray(mu), np.asarray(sigma2), None))


def _raise_improper(rng, lower) -> int:
    return int(ImproperUniformRV.rng_fn(rng, np.asarray(lower), None))


def _draws(rv_type):
    """Register the decorated function, compiled by numba, as the draw of ``rv_type``'s op."""

    def register(random):
        compiled = numba_basic.numba_njit(random)
        numba_core_rv_funcify.register(rv_type)(lambda op, node: (compiled, _CACHE_KEY))
        return compiled

    return register


@_draws(DiscreteGaussianRV)
def _discrete_gaussian(rng, mu, sigma2):
    with numba.objmode(out="int64"):
        out = _draw_discrete_gaussian(rng, mu, sigma2)
    return out


@_draws(ImproperUniformRV)
def _improper_uniform(rng, lower):
    with numba.objmode(out="int64"):
        out = _raise_improper(rng, lower)
    return out


@_draws(BernoulliCountRV)
def _bernoulli_count(rng, known, p):
    return known + (1 if rng.uniform() < p else 0)


@_draws(BoundedUniformRV)
def _bounded_uniform(rng, lower, upper):
    if upper < lower:
        raise ValueError("BoundedUniform needs lower <= upper")
    return rng.integers(lower, upper + 1)


@_draws(PointMassRV)
def _point_mass(rng, value):
    return value


@_draws(FinitePmfRV)
def _finite_pmf(rng, support, log_probs):
    weights = np.exp(log_probs)
    u = rng.uniform() * weights.sum()
    total = 0.0
    last = 0
    for i in range(len(weights)):
        if weights[i] > 0:
            last = i
        total += weights[i]
        if u < total:
            return support[i]
    return support[last]
