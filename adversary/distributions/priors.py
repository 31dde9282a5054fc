"""Priors for counts, as PyMC distributions with integer (int64) values.

The adversary's knowledge in Kazan & Reiter is a prior on small counts:

- :class:`BernoulliCount` — the target's cell: ``X1 ∈ {x_{1,-t}, x_{1,-t}+1}``
  with ``P[X1 = x_{1,-t}+1] = p`` (Sec. 3.1).
- :class:`ImproperUniform` — ``X2 | X1 = k1 ~ Uniform{k1, k1+1, …}``, the
  default block-group prior (Sec. 3.2, (S3.4)); log-p 0 on the support.
- :class:`BoundedUniform` — ``Uniform{lower, …, upper}`` (S4 uses ``{k1..10}``).
- :class:`PointMass` — a count known exactly (S4: point masses at 1 and 25).
- :class:`FinitePmf` — any pmf on a finite set of integers.

Every one declares a feasible ``support_point`` (a value with positive prior
probability) so that samplers start inside the support, and bounds may be
tensors, e.g. ``ImproperUniform("X2", lower=X1)``. A bound that is a number is
validated when the distribution is created; a tensor bound that leaves no
feasible value (``lower > upper``) gives log-p ``-inf`` rather than an error,
so a model can express ``P[X2 | X1] = 0``. The support of each distribution is
also registered with :func:`adversary.distributions.support.support_bounds`,
which the exact Gibbs steps of :mod:`adversary.inference` use.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.shape_utils import rv_size_is_none

from .._validation import as_integers
from ._params import (
    IntegerDiscrete,
    as_integer_param,
    as_probability_param,
    integer_rv,
    is_symbolic,
)

__all__ = [
    "BernoulliCount",
    "BoundedUniform",
    "FinitePmf",
    "ImproperDistributionError",
    "ImproperUniform",
    "PointMass",
]

_NEG_INF = np.float64(-np.inf)
_ZERO = np.float64(0.0)


class ImproperDistributionError(ValueError):
    """Raised when a random draw is requested from an improper prior."""


def _fill(point, size):
    # Always a new node: PyMC's initial-point rewrite mishandles a support point that *is*
    # another variable (e.g. ``lower=X1``) and would then draw X1 from its prior instead.
    point = pt.cast(point, "int64").copy()
    return point if rv_size_is_none(size) else pt.broadcast_to(point, size)


def _at_first_parameter(rv, size, first, *rest):
    """A support point at the first parameter (a lower bound, or the value of a point mass)."""
    return _fill(first, size)


def _shape(size, *params):
    if size is not None:
        return tuple(size)
    return np.broadcast_shapes(*(np.shape(p) for p in params))


# --- Bernoulli target prior --------------------------------------------------------------


@integer_rv("(),()->()", ("BernoulliCount", "\\operatorname{BernoulliCount}"))
def bernoulli_count(rng, known, p, size):
    shape = _shape(size, known, p)
    return np.broadcast_to(known, shape) + (rng.random(shape) < p).astype(np.int64)


BernoulliCountRV = type(bernoulli_count)


class BernoulliCount(IntegerDiscrete):
    r"""``X = known + B``, ``B ~ Bernoulli(p)``: the target prior of Sec. 3.1.

    ``X1 ∈ {x_{1,-t}, x_{1,-t} + 1}`` with ``P[X1 = x_{1,-t} + 1] = p`` — the
    adversary knows everyone in the cell except the target, who is in it with
    prior probability ``p``.

    Parameters
    ----------
    known : int or integer tensor
        ``x_{1,-t}``, the count the adversary knows without the target.
    p : float in (0, 1) or tensor
        Prior probability that the target is in the cell.
    """

    rv_op = bernoulli_count

    @classmethod
    def dist(cls, known, p, **kwargs):
        return super().dist(
            [as_integer_param(known, "known"), as_probability_param(p, "p")], **kwargs
        )

    def support_point(rv, size, known, p):
        # The prior mode: feasible whatever p is.
        return _fill(known + pt.cast(pt.gt(p, np.float64(0.5)), "int64"), size)

    def logp(value, known, p):
        return pt.switch(
            pt.eq(value, known + 1),
            pt.log(p),
            pt.switch(pt.eq(value, known), pt.log1p(-p), _NEG_INF),
        )


# --- Improper uniform on {lower, lower + 1, ...} -----------------------------------------


@integer_rv("()->()", ("ImproperUniform", "\\operatorname{Uniform}\\{k, k+1, \\ldots\\}"))
def improper_uniform(rng, lower, size):
    raise ImproperDistributionError(
        "ImproperUniform has infinite total mass and cannot be sampled: prior (and prior "
        "predictive) draws need a proper prior such as BoundedUniform. Posterior sampling "
        "(adversary.inference.sample) and enumeration do not draw from the prior."
    )


ImproperUniformRV = type(improper_uniform)


class ImproperUniform(IntegerDiscrete):
    r"""The improper uniform on ``{lower, lower + 1, …}``: log-p 0 there, ``-inf`` below.

    Kazan & Reiter's default block-group prior ``X2 | X1 = k1 ~ Uniform{k1, k1+1, …}``
    (Sec. 3.2, (S3.4)): ``ImproperUniform("X2", lower=X1)``. The resulting
    posterior is proper when the likelihood of ``X2`` decays (a discrete
    Gaussian release of it). Random draws are impossible and raise
    :class:`ImproperDistributionError`.

    Parameters
    ----------
    lower : int or integer tensor
        Smallest value in the support.
    """

    rv_op = improper_uniform

    @classmethod
    def dist(cls, lower=0, **kwargs):
        return super().dist([as_integer_param(lower, "lower")], **kwargs)

    support_point = _at_first_parameter

    def logp(value, lower):
        return pt.switch(pt.ge(value, lower), _ZERO, _NEG_INF)


# --- Bounded uniform on {lower, ..., upper} ----------------------------------------------


@integer_rv("(),()->()", ("BoundedUniform", "\\operatorname{Uniform}\\{l, \\ldots, u\\}"))
def bounded_uniform(rng, lower, upper, size):
    if np.any(np.asarray(lower) > np.asarray(upper)):
        raise ValueError(f"BoundedUniform needs lower <= upper, got {lower} and {upper}")
    return rng.integers(lower, np.asarray(upper) + 1, size=size, dtype=np.int64)


BoundedUniformRV = type(bounded_uniform)


class BoundedUniform(IntegerDiscrete):
    r"""Uniform on ``{lower, lower + 1, …, upper}`` (both included).

    Kazan & Reiter S4 use ``X2 | X1 = k1 ~ Uniform{k1, …, 10}``:
    ``BoundedUniform("X2", lower=X1, upper=10)``. Where a tensor bound makes
    the support empty (``lower > upper``) the log-p is ``-inf``.
    """

    rv_op = bounded_uniform

    @classmethod
    def dist(cls, lower, upper, **kwargs):
        if not is_symbolic(lower) and not is_symbolic(upper):
            lo, hi = as_integers(lower, "lower"), as_integers(upper, "upper")
            if np.any(lo > hi):
                raise ValueError(f"upper must be >= lower, got lower={lower!r}, upper={upper!r}")
        return super().dist(
            [as_integer_param(lower, "lower"), as_integer_param(upper, "upper")], **kwargs
        )

    support_point = _at_first_parameter

    def logp(value, lower, upper):
        size = pt.cast(upper - lower + 1, "float64")
        inside = pt.and_(pt.ge(value, lower), pt.le(value, upper))
        return pt.switch(inside, -pt.log(pt.maximum(size, np.float64(1.0))), _NEG_INF)


# --- Point mass --------------------------------------------------------------------------


@integer_rv("()->()", ("PointMass", "\\delta"))
def point_mass(rng, value, size):
    return np.array(np.broadcast_to(value, _shape(size, value)), dtype=np.int64)


PointMassRV = type(point_mass)


class PointMass(IntegerDiscrete):
    r"""All prior mass on one integer ``value`` (a count the adversary knows exactly)."""

    rv_op = point_mass

    @classmethod
    def dist(cls, value, **kwargs):
        return super().dist([as_integer_param(value, "value")], **kwargs)

    support_point = _at_first_parameter

    def logp(value, at):
        return pt.switch(pt.eq(value, at), _ZERO, _NEG_INF)


# --- Any pmf on a finite set of integers --------------------------------------------------


@integer_rv("(n),(n)->()", ("FinitePmf", "\\operatorname{Pmf}"))
def finite_pmf(rng, support, log_probs, size):
    support, log_probs = np.asarray(support), np.asarray(log_probs)
    n = support.shape[-1]
    shape = (
        tuple(size)
        if size is not None
        else np.broadcast_shapes(support.shape[:-1], log_probs.shape[:-1])
    )
    support = np.broadcast_to(support, (*shape, n))
    cdf = np.cumsum(np.exp(np.broadcast_to(log_probs, (*shape, n))), axis=-1)
    u = rng.random(shape) * cdf[..., -1]
    index = np.minimum((u[..., None] >= cdf).sum(axis=-1), n - 1)
    return np.take_along_axis(support, index[..., None], axis=-1)[..., 0]


FinitePmfRV = type(finite_pmf)


def _validated_pmf(support, probs):
    if isinstance(support, Mapping):
        if probs is not None:
            raise TypeError("give the pmf either as a mapping or as support and probs, not both")
        support, probs = list(support.keys()), list(support.values())
    if probs is None:
        raise TypeError("probs is required when support is not a mapping {value: probability}")
    values = as_integers(support, "support")
    weights = np.asarray(probs, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"support must be a non-empty 1-d sequence of integers, got {support!r}")
    if weights.shape != values.shape:
        raise ValueError(f"probs must have one entry per support value, got {probs!r}")
    if len(np.unique(values)) != len(values):
        raise ValueError(f"support must not repeat values, got {support!r}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(f"probs must be finite, >= 0 and not all 0, got {probs!r}")
    if abs(weights.sum() - 1.0) > 1e-9:
        raise ValueError(f"probs must sum to 1 (within 1e-9), got sum {weights.sum()!r}")
    order = np.argsort(values)
    values, weights = values[order], weights[order] / weights.sum()
    with np.errstate(divide="ignore"):
        log_weights = np.log(weights)
    return values, log_weights


class FinitePmf(IntegerDiscrete):
    r"""A user pmf on a finite set of integers.

    ``FinitePmf("X2", support=[1, 2, 3], probs=[0.2, 0.5, 0.3])`` or
    ``FinitePmf("X2", {1: 0.2, 2: 0.5, 3: 0.3})``. Values may have probability 0
    (log-p ``-inf``); values outside the support have log-p ``-inf``.
    """

    rv_op = finite_pmf

    @classmethod
    def dist(cls, support, probs=None, **kwargs):
        values, log_weights = _validated_pmf(support, probs)
        return super().dist(
            [pt.as_tensor_variable(values), pt.as_tensor_variable(log_weights)], **kwargs
        )

    def support_point(rv, size, support, log_probs):
        # A most probable value (the largest if tied): feasible by construction.
        best = pt.eq(log_probs, pt.max(log_probs, axis=-1, keepdims=True))
        point = pt.max(pt.switch(best, support, np.iinfo(np.int64).min), axis=-1)
        return _fill(point, size)

    def logp(value, support, log_probs):
        matches = pt.eq(value[..., None], support)
        return pt.max(pt.switch(matches, log_probs, _NEG_INF), axis=-1)
