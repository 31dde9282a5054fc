"""Turning user arguments into PyTensor parameters, validating the numeric ones.

A number (or array) is checked with :mod:`adversary._validation`, so a bad
value raises at model-building time with the argument's name; a PyTensor
variable (e.g. another random variable, ``X2 ≥ X1``) is passed through, cast to
an explicit dtype, and checked only inside the log-p graph.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.distribution import Discrete
from pytensor.graph.basic import Variable
from pytensor.tensor.random.op import RandomVariable

from .._validation import as_integers, as_positive, as_probability
from ..noise.conventions import as_convention, noise_variance

__all__ = [
    "IntegerDiscrete",
    "as_integer_param",
    "as_probability_param",
    "as_variance_param",
    "checked_observed",
    "integer_rv",
    "is_symbolic",
    "resolve_sigma2",
]


def is_symbolic(value) -> bool:
    """True for a PyTensor variable (a graph, not a number)."""
    return isinstance(value, Variable)


def as_integer_param(value, name: str):
    """An integer-valued parameter (a count or bound) as an int64 tensor."""
    if is_symbolic(value):
        value = pt.as_tensor_variable(value)
        if value.dtype.startswith(("int", "uint")):
            return pt.cast(value, "int64")
        if value.dtype == "bool":
            raise TypeError(f"{name} must be numeric, got a boolean tensor {value}")
        # A float graph (e.g. a Deterministic): keep its values, use int64 downstream.
        return pt.cast(pt.round(value), "int64")
    return pt.as_tensor_variable(as_integers(value, name))


def as_variance_param(value, name: str = "sigma2"):
    """A strictly positive float64 parameter (σ²)."""
    if is_symbolic(value):
        return pt.cast(pt.as_tensor_variable(value), "float64")
    return pt.as_tensor_variable(as_positive(value, name))


def as_probability_param(value, name: str = "p"):
    """A probability strictly inside (0, 1), as float64."""
    if is_symbolic(value):
        return pt.cast(pt.as_tensor_variable(value), "float64")
    return pt.as_tensor_variable(as_probability(value, name))


def resolve_sigma2(sigma2, rho, convention):
    """σ² from exactly one of ``sigma2`` or ``rho`` (with its named convention).

    ``σ² = Δ²/(2ρ)``: ``1/(2ρ)`` under ``"paper"`` (Kazan & Reiter's likelihood
    ``e^{-ρ(x*-x)²}``) and ``1/ρ`` under ``"das"`` (the 2020 production
    noise; :mod:`adversary.noise.conventions`).
    """
    if (sigma2 is None) == (rho is None):
        raise TypeError("give exactly one of sigma2 or rho (with convention), not both or neither")
    if sigma2 is not None:
        return as_variance_param(sigma2, "sigma2")
    if is_symbolic(rho):
        delta2 = np.float64(as_convention(convention).l2_sensitivity ** 2)
        return (delta2 / np.float64(2.0)) / pt.cast(pt.as_tensor_variable(rho), "float64")
    return pt.as_tensor_variable(np.asarray(noise_variance(rho, convention), dtype=np.float64))


def checked_observed(observed, name: str) -> None:
    """Refuse observed data an int64 variable would silently truncate (2.9 read as 2).

    NaN and ±inf are refused too (an infinite release gave a posterior equal to
    the prior, NaN an error deep in PyTensor); masked values are left to PyMC's
    imputation, and a PyTensor variable is not checked.
    """
    if observed is None or is_symbolic(observed):
        return
    what = f"observed (of {name!r})"
    values = np.ma.asarray(observed).compressed()
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        raise ValueError(f"{what} must be finite (a release count), got {observed!r}")
    as_integers(values, what)


class IntegerDiscrete(Discrete):
    """A PyMC discrete distribution of int64 values that checks its observed data first."""

    def __new__(cls, name, *args, observed=None, **kwargs):
        checked_observed(observed, name)
        return super().__new__(cls, name, *args, observed=observed, **kwargs)


def integer_rv(signature: str, print_name: tuple[str, str]):
    """Decorator: a draw function ``name(rng, *params, size)`` becomes the int64 op ``name``.

    The op's class is ``<print_name[0]>RV`` of the function's module: bind it
    there under that name (``FooRV = type(foo)``) so that it pickles by
    reference (to sampling processes) and the numba and support dispatches
    can register it.
    """

    def op_of(draw):
        op_type = type(
            f"{print_name[0]}RV",
            (RandomVariable,),
            {
                "__module__": draw.__module__,
                "name": draw.__name__,
                "signature": signature,
                "dtype": "int64",
                "_print_name": print_name,
                "rng_fn": classmethod(lambda cls, rng, *args: draw(rng, *args)),
            },
        )
        return op_type()

    return op_of
