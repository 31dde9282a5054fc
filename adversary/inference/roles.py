"""Roles: latents that share one compiled conditional.

A Gibbs update of a latent ``X_j`` needs ``log p(model at X_j = k)`` for
every candidate ``k``, up to a constant in ``k``: the terms of the log-p that
mention ``X_j`` (its Markov blanket) suffice. Latents that play the same part
in the model — the persons of a block, each with its own prior and all in the
same released counts — would each compile the same graph. Instead they form a
*role*: one compiled function takes all of the role's values stacked in one
array and the index (slot) of the latent being updated, and scores a batch of
candidate stacks; updating ``X_j`` passes the current values with ``X_j``'s
slot set to each candidate.

Its terms are the role's *shared* terms (those mentioning a member and some
other latent: the released counts) and the *private* terms (those mentioning
one member alone: its prior). When every member's private terms are the same
graph of its own value (the same prior), they are evaluated once, for the
slot's member only; otherwise every member's are included, those of the
other members being constant in the candidates. Either way the scores differ
from ``X_j``'s full conditional by a constant, so each update is an exact draw.

Two latents share a role when they have the same dtype and shape and the same
shared terms. Chains such as ``X_1 – X_2 – X_3`` therefore keep one function
per latent (their shared terms differ), so no update evaluates a long chain's
terms. Compile time is one function per role, not per latent.

The model's data — observed values, constant parameters such as ρ — are the
compiled function's inputs, not constants folded into it
(:func:`data_as_inputs`): it depends on the model's structure only, so
PyTensor's on-disk cache serves it to any later process sampling the same
structure with other releases.

A role whose terms mention no latent outside it (a lone Bernoulli beside a
continuous model, an attack's one target given its releases) scores the
same candidate stacks the same way at every point: it keeps each stack's
scores (up to :data:`_FIXED_SCORE_SETS` stacks) and calls its function once
per stack, not once per update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import equal_computations
from pytensor.graph.replace import clone_replace, graph_replace, vectorize_graph
from pytensor.graph.traversal import ancestors
from pytensor.tensor.variable import TensorConstant

from ._conditional import logp_terms
from .tiered import compile_kernel

__all__ = [
    "Role",
    "RoleLogp",
    "compile_roles",
    "partition_roles",
    "term_mentions",
]

#: Candidate stacks whose scores a role closed to the other latents keeps (RoleLogp).
_FIXED_SCORE_SETS = 64


def term_mentions(model, terms) -> list[set]:
    """For each log-p term, the set of the model's value variables its graph contains."""
    latents = set(model.value_vars)
    return [latents & set(ancestors([term])) for term in terms]


def partition_roles(value_vars, shapes: dict, mentions) -> list[list]:
    """``value_vars`` grouped by (dtype, shape, shared terms), in their order of appearance.

    ``shapes`` maps each variable's name to its value's shape; ``mentions``
    is :func:`term_mentions` of the model's log-p terms.
    """
    groups: dict[tuple, list] = {}
    for v in value_vars:
        shared = frozenset(i for i, m in enumerate(mentions) if v in m and len(m) > 1)
        groups.setdefault((v.dtype, shapes[v.name], shared), []).append(v)
    return list(groups.values())


class RoleLogp:
    """``logp(stacked candidates, slot, point)`` of one role, compiled once (module docstring)."""

    def __init__(self, model, members, terms, mentions, *, compile_kwargs=None):
        first = members[0]
        self.dtype = first.dtype
        self.block = pt.tensor(
            name="role_values", dtype=first.dtype, shape=(None, len(members), *first.type.shape)
        )
        self.slot = pt.scalar(name="slot", dtype="int64")
        member_set = set(members)
        mine = [i for i, m in enumerate(mentions) if m & member_set]
        private = {v: [terms[i] for i in mine if mentions[i] == {v}] for v in members}
        replace = {v: self.block[:, i] for i, v in enumerate(members)}
        self.private_once = _same_graphs(private, members)
        if self.private_once:
            # One member's private terms, on a placeholder that takes the slot's value.
            placeholder = first.type()
            template = clone_replace(private[first], replace={first: placeholder})
            outputs = [terms[i] for i in mine if len(mentions[i]) > 1] + list(template)
            replace[placeholder] = self.block[:, self.slot]
        else:
            outputs = [terms[i] for i in mine]
        total = sum(outputs, start=pt.constant(0.0, dtype="float64"))
        total, data, self._data = data_as_inputs(model, total)
        (vectorised,) = vectorize_graph([total], replace=replace)
        self.others = [v for v in model.value_vars if v not in member_set]
        self.other_names = [v.name for v in self.others]
        self._other_dtypes = [v.dtype for v in self.others]
        # trust_input: inputs must be exact, so the slot is a 0-d int64 array.
        self.fn = compile_kernel(
            model, [vectorised], [self.block, self.slot, *self.others, *data], compile_kwargs
        )
        self._slots = [np.array(i, dtype=np.int64) for i in range(len(members))]
        # Scores by (slot, candidate stacks), for a role whose terms mention no latent outside
        # it and no shared variable (which set_data could change): its scores are then a
        # function of the stacks alone (a lone latent's: its prior times the likelihood of the
        # data, the same at every point), so each is computed once; None otherwise.
        closed = not any(
            v in self.others or isinstance(v, SharedVariable) for v in ancestors([vectorised])
        )
        self._fixed_scores: dict | None = {} if closed else None

    def __call__(self, block: np.ndarray, slot: int, point) -> np.ndarray:
        if self._fixed_scores is not None:
            key = (slot, block.shape, block.tobytes())
            known = self._fixed_scores.get(key)
            if known is not None:
                return known.copy()
        args = [
            np.asarray(point[name], dtype=d)
            for name, d in zip(self.other_names, self._other_dtypes, strict=True)
        ]
        (logp,) = self.fn(block, self._slots[slot], *args, *self._data)
        if logp.dtype != np.float64 or logp.shape != (len(block),):
            logp = np.broadcast_to(np.asarray(logp, dtype=np.float64), (len(block),))
        if self._fixed_scores is not None and len(self._fixed_scores) < _FIXED_SCORE_SETS:
            self._fixed_scores[key] = np.array(logp)
        return logp


def data_as_inputs(model, graph):
    """``graph`` with the model's data made inputs: ``(graph, inputs, their values)``.

    The data are the observed values and the constant parameters of the
    model's distributions (a release, ρ or σ², a prior's probabilities). As
    inputs rather than constants they are not folded into the compiled kernel,
    so the kernel depends on the model's structure only, and PyTensor's
    on-disk cache (``base_compiledir``) serves it to any later process whose
    model differs only in its data.
    """
    data = [model.rvs_to_values[rv] for rv in model.observed_RVs]
    for rv in model.basic_RVs:
        params = getattr(rv.owner.op, "dist_params", None)
        for param in params(rv.owner) if params is not None else []:
            roots = [v for v in ancestors([param]) if v.owner is None]
            if all(isinstance(v, TensorConstant) for v in roots):  # a parameter of data only
                data.extend(roots)
    # PyMC's log-p holds copies of these constants (a node rebuilt on value variables, a
    # parameter broadcast and folded), so they are matched by dtype and value.
    keys = {_constant_key(c) for c in data if isinstance(c, TensorConstant)}
    constants = [
        c for c in ancestors([graph]) if isinstance(c, TensorConstant) and _constant_key(c) in keys
    ]
    if not constants:
        return graph, [], ()
    inputs = [c.type(name=f"data_{i}") for i, c in enumerate(constants)]
    (graph,) = graph_replace([graph], dict(zip(constants, inputs, strict=True)), strict=False)
    values = tuple(np.array(c.data, dtype=c.dtype) for c in constants)
    return graph, inputs, values


def _constant_key(constant) -> tuple:
    return (constant.dtype, constant.data.tobytes())


def _same_graphs(private: dict, members) -> bool:
    """True if every member's private terms are the first member's, with its own value."""
    first = members[0]
    reference = private[first]
    return all(
        len(private[v]) == len(reference)
        and equal_computations(reference, private[v], in_xs=[first], in_ys=[v])
        for v in members[1:]
    )


@dataclass
class Role:
    """Latents updated through one compiled function, and their current values.

    ``current`` (shape ``(members, *shape)``) mirrors the chain's point while
    a sweep runs: :meth:`load` fills it, :meth:`set` keeps it in step with
    each update. Element ``e`` of member ``slot`` is ``flat[slot * size + e]``.
    """

    names: list[str]
    logp: RoleLogp
    current: np.ndarray | None = field(default=None, repr=False)

    def load(self, point) -> None:
        dtype = self.logp.dtype
        if len(self.names) == 1:
            self.current = np.array(point[self.names[0]], dtype=dtype)[None]
        else:
            self.current = np.stack([np.asarray(point[name], dtype=dtype) for name in self.names])
        self._flat = self.current.reshape(-1)
        self._size = self._flat.size // len(self.names)

    def set(self, slot: int, element: int, value: int) -> None:
        self._flat[slot * self._size + element] = value

    def scores(self, slot: int, elements: tuple, values: np.ndarray, point) -> np.ndarray:
        """Log-p (up to a constant) with member ``slot``'s ``elements`` set to each row.

        ``values`` has shape ``(candidates, len(elements))``; the other
        elements and members keep their current values.
        """
        batch = np.repeat(self.current[None], len(values), axis=0)
        flat = batch.reshape(len(values), -1)
        start = slot * self._size
        for column, element in enumerate(elements):
            flat[:, start + element] = values[:, column]
        return self.logp(batch, slot, point)


def compile_roles(model, value_vars, shapes: dict, *, compile_kwargs=None) -> dict:
    """``{name: (role, slot)}`` for ``value_vars``: one compiled :class:`Role` per role."""
    terms = logp_terms(model)
    mentions = term_mentions(model, terms)
    placed = {}
    for members in partition_roles(value_vars, shapes, mentions):
        logp = RoleLogp(model, members, terms, mentions, compile_kwargs=compile_kwargs)
        role = Role([v.name for v in members], logp)
        for slot, v in enumerate(members):
            placed[v.name] = (role, slot)
    return placed
