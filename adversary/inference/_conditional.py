"""Shared machinery: the model's log-p evaluated for many candidate values at once.

A full conditional of a discrete variable ``X`` given everything else is
``p(X = k | rest) ∝ exp(logp(model at X = k))``; only the log-p terms whose
graph contains ``X``'s value variable (its own prior, its children's
likelihoods, Potentials that mention it) change with ``k``, so we compile just
their sum and vectorise it over a batch of candidate values with
``pytensor.graph.replace.vectorize_graph`` — one compiled call per batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from weakref import WeakKeyDictionary

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.replace import vectorize_graph
from pytensor.graph.traversal import ancestors

from ..distributions.support import support_bounds
from .lean_vm import lean_mode
from .safe import counted_as_integers, safe_compile_kwargs
from .tiered import compile_kernel

__all__ = [
    "BatchedLogp",
    "BoundsFunction",
    "draw_index",
    "is_discrete",
    "logp_terms",
    "one_shot",
]

_DISCRETE_KINDS = ("i", "u")

# Per model: (what its log-p was derived from, the log-p factors); see _logp_factors.
_FACTORS: WeakKeyDictionary = WeakKeyDictionary()


def one_shot(compile_kwargs: dict | None) -> dict:
    """Compile options for a function called a few times, or a few hundred (an exact
    measure's likelihood tables, once per ρ of a scan): PyTensor's FAST_COMPILE rewrites on
    its Python VM, elementwise nodes called directly (:func:`.lean_vm.lean_mode`).

    Numba compilation of a small graph costs far more than running it a few
    times in Python; a mode the caller chose explicitly is kept.
    """
    return safe_compile_kwargs(compile_kwargs, lean_mode("fast_compile"))


def is_discrete(var) -> bool:
    """True for an integer-valued (or boolean) PyTensor variable."""
    return np.dtype(var.dtype).kind in (*_DISCRETE_KINDS, "b")


def logp_terms(model, depends_on: Sequence | None = None):
    """The model's log-p terms summed to scalars; optionally only those mentioning ``depends_on``.

    Terms are those of ``model.logp()``: every free and observed variable and
    every Potential, so the sum over all of them is the model's joint log-p.
    """
    terms = [pt.cast(f.sum(), "float64") for f in _logp_factors(model)]
    if depends_on is None:
        return terms
    targets = set(depends_on)
    return [t for t in terms if targets & set(ancestors([t]))]


def _logp_factors(model) -> list:
    """``model.logp(sum=False)`` counted as integers, derived once per model as it stands.

    Deriving the log-p graph costs about 0.3 s on a 12-person block, and the start check,
    the step's roles and the start repair each need it. The model's variables, Potentials
    and transforms are the key: a model changed since (a variable added) derives anew.
    """
    variables = (*model.value_vars, *model.free_RVs, *model.observed_RVs, *model.potentials)
    signature = (
        tuple(map(id, variables)),
        tuple(map(id, model.rvs_to_transforms.values())),
    )
    cached = _FACTORS.get(model)
    if cached is None or cached[0] != signature:
        cached = (signature, counted_as_integers(model.logp(sum=False)))
        _FACTORS[model] = cached
    return cached[1]


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
        self._dtypes = [v.dtype for v in self.value_vars]
        replace = dict(zip(self.value_vars, self.batched, strict=True))
        vectorised = vectorize_graph(list(outputs), replace=replace)
        self.others = [v for v in model.value_vars if v not in self.value_vars]
        self.other_names = [v.name for v in self.others]
        self._other_dtypes = [v.dtype for v in self.others]
        # Inputs are converted to the exact dtypes below (the kernel trusts them).
        self.fn = compile_kernel(model, vectorised, [*self.batched, *self.others], compile_kwargs)

    def __call__(self, candidates, point) -> list[np.ndarray]:
        args = [np.asarray(c, dtype=d) for c, d in zip(candidates, self._dtypes, strict=True)]
        args += [
            np.asarray(point[name], dtype=d)
            for name, d in zip(self.other_names, self._other_dtypes, strict=True)
        ]
        n = len(args[0])
        out = self.fn(*args)
        for i, o in enumerate(out):
            if o.dtype != np.float64 or o.shape != (n,):
                out[i] = np.broadcast_to(np.asarray(o, dtype=np.float64), (n,))
        return out


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
        self.fn = None
        self._constant = None
        self._by_shape = {}
        self._lookup = None
        if graphs:
            graphs = model.replace_rvs_by_values(graphs)
            needed = set(ancestors(graphs))
            self.others = [v for v in model.value_vars if v is not value_var and v in needed]
            self.other_names = [v.name for v in self.others]
            if all(any(g is v for v in self.others) for g in graphs):
                # Bounds that are other variables' values (X2 >= X1): read, not computed.
                self._lookup = [g.name for g in graphs]
                return
            self._other_dtypes = [v.dtype for v in self.others]
            # Bounds that depend on no other variable are evaluated once: no need for numba.
            options = compile_kwargs if self.others else one_shot(compile_kwargs)
            self.fn = compile_kernel(model, graphs, self.others, options)
            if not self.others:
                self._constant = list(self.fn())

    @property
    def bounded(self) -> bool:
        return self.has_lower and self.has_upper

    def __call__(self, point, shape) -> tuple[np.ndarray, np.ndarray]:
        if self._lookup is not None:
            return self._bounds([point[name] for name in self._lookup], shape)
        if self.fn is not None and self._constant is None:
            names = zip(self.other_names, self._other_dtypes, strict=True)
            return self._bounds(
                list(self.fn(*[np.asarray(point[n], dtype=d) for n, d in names])), shape
            )
        if shape not in self._by_shape:  # bounds that never change: computed once per shape
            self._by_shape[shape] = self._bounds(list(self._constant or []), shape)
        return self._by_shape[shape]

    def _bounds(self, values: list, shape) -> tuple[np.ndarray, np.ndarray]:
        lower = values.pop(0) if self.has_lower else self.LOW
        upper = values.pop(0) if self.has_upper else self.HIGH
        lower, upper = np.asarray(lower, dtype=np.int64), np.asarray(upper, dtype=np.int64)
        return (
            lower if lower.shape == shape else np.broadcast_to(lower, shape),
            upper if upper.shape == shape else np.broadcast_to(upper, shape),
        )


_SMALL = 16  # below this many candidates a Python loop beats numpy's per-call overhead


def draw_index(log_weights: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn with probability ∝ ``exp(log_weights)`` (exact inverse-CDF draw).

    Raises ``FloatingPointError`` if a weight is NaN or all weights are zero.
    """
    weights, total = exp_weights(log_weights)
    if isinstance(weights, list):
        u, running = rng.random() * total, 0.0
        for index, weight in enumerate(weights):
            running += weight
            if u < running:
                return index
        return len(weights) - 1
    cumulative = weights.cumsum()
    index = int(cumulative.searchsorted(rng.random() * float(cumulative[-1]), side="right"))
    return min(index, len(weights) - 1)


def exp_weights(log_weights: np.ndarray) -> tuple[list | np.ndarray, float]:
    """``(exp(log_weights - max), their total)``: a list when short (a Python loop beats
    numpy's per-call overhead below :data:`_SMALL` values), else an array.

    Raises ``FloatingPointError`` if a log-weight is NaN or none is finite.
    """
    if len(log_weights) <= _SMALL:
        logs = log_weights.tolist()
        if any(x != x for x in logs):
            raise FloatingPointError("log-p is NaN for a candidate value")
        top = max(logs)
        _check_top(top)
        weights = [math.exp(x - top) for x in logs]
        return weights, sum(weights)
    top = float(log_weights.max())
    _check_top(top)
    weights = np.exp(log_weights - top)
    total = float(weights.sum())
    if math.isnan(total):  # a NaN below the maximum
        raise FloatingPointError("log-p is NaN for a candidate value")
    return weights, total


def _check_top(top: float) -> None:
    if math.isnan(top):
        raise FloatingPointError("log-p is NaN for a candidate value")
    if not math.isfinite(top):
        raise FloatingPointError("every candidate value has log-p -inf (or +inf)")
