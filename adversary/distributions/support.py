"""The integer support of a discrete random variable, as symbolic bounds.

:func:`support_bounds` returns ``(lower, upper)`` PyTensor graphs (either may be
``None`` for an unbounded side) built from the variable's own parameters, so a
bound may depend on other random variables (``X2 ≥ X1``). The exact Gibbs
steps and :func:`adversary.inference.enumerate_posterior` use these bounds to choose
candidate values; the model's log-p remains the authority (values inside the
bounds may still have log-p ``-inf``).

Registered: the priors of :mod:`adversary.distributions` and PyMC's
Bernoulli, Categorical, DiscreteUniform, Binomial, BetaBinomial, Poisson,
NegativeBinomial and Geometric. Any other discrete variable is treated as
unbounded on both sides. Register more with ``register_support_bounds(OpType)``.
"""

from __future__ import annotations

from functools import singledispatch

import pytensor.tensor as pt
import pytensor.tensor.random.basic as ptr
from pymc.distributions.discrete import DiscreteUniformRV

from .discrete_gaussian import DiscreteGaussianRV
from .priors import BernoulliCountRV, BoundedUniformRV, FinitePmfRV, ImproperUniformRV, PointMassRV

__all__ = ["register_support_bounds", "support_bounds"]


@singledispatch
def _op_bounds(op, params):
    raise NotImplementedError


def register_support_bounds(op_type):
    """Decorator: ``fn(op, params) -> (lower | None, upper | None)`` for ``op_type``."""
    return _op_bounds.register(op_type)


def support_bounds(rv):
    """``(lower, upper)`` integer graphs bounding ``rv``'s support; ``None`` = unbounded.

    The graphs refer to ``rv``'s parameters (random variables, not value
    variables); replace them with ``model.replace_rvs_by_values`` to evaluate.
    """
    node = rv.owner
    op = getattr(node, "op", None)
    try:
        params = op.dist_params(node)
        lower, upper = _op_bounds(op, params)
    except (AttributeError, NotImplementedError):
        return None, None
    return (
        None if lower is None else pt.cast(lower, "int64"),
        None if upper is None else pt.cast(upper, "int64"),
    )


@register_support_bounds(BernoulliCountRV)
def _(op, params):
    known, _ = params
    return known, known + 1


@register_support_bounds(ImproperUniformRV)
def _(op, params):
    (lower,) = params
    return lower, None


@register_support_bounds(BoundedUniformRV)
@register_support_bounds(DiscreteUniformRV)
def _(op, params):
    lower, upper = params
    return lower, upper


@register_support_bounds(PointMassRV)
def _(op, params):
    (value,) = params
    return value, value


@register_support_bounds(FinitePmfRV)
def _(op, params):
    support, _ = params
    return pt.min(support, axis=-1), pt.max(support, axis=-1)


@register_support_bounds(DiscreteGaussianRV)
def _(op, params):
    return None, None


@register_support_bounds(ptr.BernoulliRV)
def _(op, params):
    return pt.constant(0, dtype="int64"), pt.constant(1, dtype="int64")


@register_support_bounds(ptr.CategoricalRV)
def _(op, params):
    (p,) = params
    return pt.constant(0, dtype="int64"), p.shape[-1] - 1


@register_support_bounds(ptr.BinomialRV)
@register_support_bounds(ptr.BetaBinomialRV)
def _(op, params):
    return pt.constant(0, dtype="int64"), params[0]


@register_support_bounds(ptr.PoissonRV)
@register_support_bounds(ptr.NegBinomialRV)
def _(op, params):
    return pt.constant(0, dtype="int64"), None


@register_support_bounds(ptr.GeometricRV)
def _(op, params):
    return pt.constant(1, dtype="int64"), None
