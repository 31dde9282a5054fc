"""Roles: latents that share one compiled conditional.

A Gibbs update of a latent ``X_j`` needs ``log p(model at X_j = k)`` for
every candidate ``k``, up to a constant in ``k``: the terms of the log-p that
mention ``X_j`` (its Markov blanket) suffice. Latents that play the same part
in the model — the persons of a block, each with its own prior and all in the
same released counts — would each compile the same graph. Instead they form a
*role*: one compiled function takes all of the role's values stacked in one
array and scores a batch of them; updating ``X_j`` passes the current values
with ``X_j``'s slot set to each candidate. The terms are those mentioning
any member: the ones that do not mention ``X_j`` are constant in its
candidates and cancel in the conditional, so each update is still an exact
draw from ``X_j``'s full conditional.

Two latents share a role when they have the same dtype and shape and the
same *shared* terms (terms that mention them and some other latent); a
term mentioning a latent alone (its prior) is private. Chains such as
``X_1 – X_2 – X_3`` therefore keep one function per latent (their shared
terms differ), so no update evaluates a long chain's terms. Compile time is
one function per role, not per latent; each update costs the role's terms,
which for the persons of a block is the released counts plus one prior
lookup per person.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pytensor.graph.traversal import ancestors

from ._conditional import BatchedLogp, logp_terms

__all__ = ["Role", "compile_roles", "partition_roles"]


def partition_roles(model, value_vars, shapes: dict, terms) -> list[list]:
    """``value_vars`` grouped by (dtype, shape, shared terms), in their order of appearance.

    ``shapes`` maps each variable's name to its value's shape; ``terms`` are
    the model's log-p terms (:func:`~adversary.inference._conditional.logp_terms`).
    """
    latents = set(model.value_vars)
    mentions = [latents & set(ancestors([term])) for term in terms]
    groups: dict[tuple, list] = {}
    for v in value_vars:
        shared = frozenset(i for i, m in enumerate(mentions) if v in m and len(m) > 1)
        groups.setdefault((v.dtype, shapes[v.name], shared), []).append(v)
    return list(groups.values())


@dataclass
class Role:
    """Latents updated through one compiled function, and their current values.

    ``current`` (shape ``(members, *shape)``) mirrors the chain's point while
    a sweep runs: :meth:`load` fills it, :meth:`set` keeps it in step with
    each update.
    """

    names: list[str]
    logp: BatchedLogp
    current: np.ndarray | None = field(default=None, repr=False)

    def load(self, point) -> None:
        dtype = self.logp._dtypes[0]
        self.current = np.stack([np.asarray(point[name], dtype=dtype) for name in self.names])

    def set(self, slot: int, element: int, value: int) -> None:
        self.current.reshape(len(self.names), -1)[slot, element] = value

    def scores(self, slot: int, element: int, candidates: np.ndarray, point) -> np.ndarray:
        """Log-p (up to a constant) with member ``slot``'s element set to each candidate."""
        batch = np.repeat(self.current[None], len(candidates), axis=0)
        batch.reshape(len(candidates), len(self.names), -1)[:, slot, element] = candidates
        (logp,) = self.logp([batch], point)
        return logp


def compile_roles(model, value_vars, shapes: dict, *, compile_kwargs=None) -> dict:
    """``{name: (role, slot)}`` for ``value_vars``: one compiled :class:`Role` per role."""
    terms = logp_terms(model)
    placed = {}
    for members in partition_roles(model, value_vars, shapes, terms):
        logp = BatchedLogp(model, members, compile_kwargs=compile_kwargs, stacked=True, terms=terms)
        role = Role([v.name for v in members], logp)
        for slot, v in enumerate(members):
            placed[v.name] = (role, slot)
    return placed
