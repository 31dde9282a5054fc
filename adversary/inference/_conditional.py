"""Shared machinery: the model's log-p evaluated for many candidate values at once.

A full conditional of a discrete variable ``X`` given everything else is
``p(X = k | rest) ∝ exp(logp(model at X = k))``; only the log-p terms whose
graph contains ``X``'s value variable (its own prior, its children's
likelihoods, Potentials that mention it) change with ``k``, so we compile just
their sum and vectorise it over a batch of candidate values with
``pytensor.graph.replace.vectorize_graph`` — one compiled call per batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.replace import vectorize_graph
from pytensor.graph.traversal import ancestors

from ..distributions.support import support_bounds

__all__ = [
    "BatchedLogp",
    "BoundsFunction",
    "draw_index",
    "is_discrete",
    "logp_terms",
]

_DISCRETE_KINDS = ("i", "u")


def is_discrete(var) -> bool:
    """True for an integer-valued (or boolean) PyTensor variable."""
    return np.dtype(var.dtype).kind in (*_DISCRETE_KINDS, "b")


def logp_terms(model, depends_on: Sequence | None = None):
    """The model's log-p terms summed to scalars; optionally only those mentioning ``depends_on``.

    Terms are those of ``model.logp()``: every free and observed variable and
    every Potential, so the sum over all of them is the model's joint log-p.
    """
    factors = model.logp(sum=False)
    terms = [pt.cast(f.sum(), "float64") for f in factors]
    if depends_on is None:
        return terms
    targets = set(depends_on)
    return [t for t in terms if targets & set(ancestors([t]))]


class BatchedLogp:
    """``logp(candidates..., point)`` for a batch of candidate values of some value variables.

    ``value_vars`` are replaced by inputs with one extra leading (batch)
    dimension; ``outputs`` (default: the sum of the terms mentioning them) are
    vectorised over it. Calling with ``(candidate arrays, point)`` returns
    float64 arrays of length ``n`` (the common batch size), one per output.
    """

    def __init__(self, model, value_vars, *, outputs=None, compile_kwargs=None):
        self.value_vars = list(value_vars)
        if outputs is None:
            terms = logp_terms(model, self.value_vars)
            outputs = [sum(terms, start=pt.constant(0.0, dtype="float64"))]
        self.n_outputs = len(outputs)
        self.batched = [
            pt.tensor(name=f"{v.name}_candidates", dtype=v.dtype, shape=(None, *v.type.shape))
            for v in self.value_vars
        ]
        vectorised = vectorize_graph(
            list(outputs), replace=dict(zip(self.value_vars, self.batched, strict=True))
        )
        self.others = [v for v in model.value_vars if v not in self.value_vars]
        self.other_names = [v.name for v in self.others]
        self._dtypes = [v.dtype for v in self.value_vars]
        self.fn = model.compile_fn(
            vectorised,
            inputs=[*self.batched, *self.others],
            point_fn=False,
            on_unused_input="ignore",
            **(compile_kwargs or {}),
        )

    def __call__(self, candidates, point) -> list[np.ndarray]:
        args = [np.asarray(c, dtype=d) for c, d in zip(candidates, self._dtypes, strict=True)]
        args += [point[name] for name in self.other_names]
        n = len(args[0])
        out = self.fn(*args)
        return [np.broadcast_to(np.asarray(o, dtype=np.float64), (n,)) for o in out]


class BoundsFunction:
    """The support bounds of one free variable given the other variables' values.

    Returns ``(lower, upper)`` int64 arrays of the variable's shape, with the
    int64 minimum/maximum standing in for an unbounded side.
    """

    LOW = np.iinfo(np.int64).min // 4
    HIGH = np.iinfo(np.int64).max // 4

    def __init__(self, model, value_var, *, compile_kwargs=None):
        rv = model.values_to_rvs[value_var]
        lower, upper = support_bounds(rv)
        self.shape_graph = rv.shape
        self.has_lower, self.has_upper = lower is not None, upper is not None
        graphs = [g for g in (lower, upper) if g is not None]
        self.others = [v for v in model.value_vars if v is not value_var]
        self.other_names = [v.name for v in self.others]
        self.fn = None
        if graphs:
            graphs = model.replace_rvs_by_values(graphs)
            self.fn = model.compile_fn(
                graphs,
                inputs=self.others,
                point_fn=False,
                on_unused_input="ignore",
                **(compile_kwargs or {}),
            )

    @property
    def bounded(self) -> bool:
        return self.has_lower and self.has_upper

    def __call__(self, point, shape) -> tuple[np.ndarray, np.ndarray]:
        values = [] if self.fn is None else list(self.fn(*[point[n] for n in self.other_names]))
        lower = values.pop(0) if self.has_lower else self.LOW
        upper = values.pop(0) if self.has_upper else self.HIGH
        return (
            np.broadcast_to(np.asarray(lower, dtype=np.int64), shape),
            np.broadcast_to(np.asarray(upper, dtype=np.int64), shape),
        )


def draw_index(log_weights: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn with probability ∝ ``exp(log_weights)`` (exact inverse-CDF draw).

    Raises ``FloatingPointError`` if a weight is NaN or all weights are zero.
    """
    top = np.max(log_weights)
    if np.isnan(top) or np.any(np.isnan(log_weights)):
        raise FloatingPointError("log-p is NaN for a candidate value")
    if not np.isfinite(top):
        raise FloatingPointError("every candidate value has log-p -inf (or +inf)")
    cumulative = np.cumsum(np.exp(log_weights - top))
    u = rng.random() * cumulative[-1]
    return min(int(np.searchsorted(cumulative, u, side="right")), len(log_weights) - 1)
