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


@numba_core_rv_funcify.register(DiscreteGaussianRV)
def _numba_discrete_gaussian(op, node):
    @numba_basic.numba_njit
    def random(rng, mu, sigma2):
        with numba.objmode(out="int64"):
            out = _draw_discrete_gaussian(rng, mu, sigma2)
        return out

    return random, _CACHE_KEY


@numba_core_rv_funcify.register(ImproperUniformRV)
def _numba_improper_uniform(op, node):
    @numba_basic.numba_njit
    def random(rng, lower):
        with numba.objmode(out="int64"):
            out = _raise_improper(rng, lower)
        return out

    return random, _CACHE_KEY


@numba_core_rv_funcify.register(BernoulliCountRV)
def _numba_bernoulli_count(op, node):
    @numba_basic.numba_njit
    def random(rng, known, p):
        return known + (1 if rng.uniform() < p else 0)

    return random, _CACHE_KEY


@numba_core_rv_funcify.register(BoundedUniformRV)
def _numba_bounded_uniform(op, node):
    @numba_basic.numba_njit
    def random(rng, lower, upper):
        if upper < lower:
            raise ValueError("BoundedUniform needs lower <= upper")
        return rng.integers(lower, upper + 1)

    return random, _CACHE_KEY


@numba_core_rv_funcify.register(PointMassRV)
def _numba_point_mass(op, node):
    @numba_basic.numba_njit
    def random(rng, value):
        return value

    return random, _CACHE_KEY


@numba_core_rv_funcify.register(FinitePmfRV)
def _numba_finite_pmf(op, node):
    @numba_basic.numba_njit
    def random(rng, support, log_probs):
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

    return random, _CACHE_KEY
