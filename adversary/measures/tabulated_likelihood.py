"""The joint log-p on (release sets) × (latent cells) from per-release tables of the likelihood.

The data holder's measures need the adversary's joint log-p for every release
set of a grid (or a simulation) and every cell of a latent grid (Kazan &
Reiter (3.1) for each release, averaged in (3.3)–(3.6)). Evaluating the
model's log-p graph on that whole matrix costs one pass of every op per
(release set, cell). When each release scalar's log-p depends on that scalar
only — every observed variable draws its elements independently given the
latents (a scalar-core distribution such as ``DiscreteGaussian`` or
``NoiseRelease``) and no observed variable feeds another — the log-likelihood
is a sum over release scalars ``k`` of ``ℓ_k(x*_k | cell)``, so it is enough to
evaluate the graph once per (release *value*, cell) — a table ``T[v, cell,
k]`` over the few values the scalars take — and to add up table entries for
each release set:

    log p(cell, x*) = log π(cell) + Σ_k T[x*_k, cell, k].

:class:`TabulatedLogp` does that with the same call signature as the latent
grid's compiled log-p (:class:`~adversary.inference.grid.LatentGrid`), and
:func:`factorises` says whether a model qualifies.
"""

from __future__ import annotations

import math

import numpy as np
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.replace import graph_replace, vectorize_graph
from pytensor.graph.traversal import ancestors

from ..inference._conditional import one_shot
from ..inference.safe import counted_as_integers

__all__ = ["TabulatedLogp", "factorises"]


def factorises(model) -> bool:
    """Whether every observed scalar's log-p depends on that scalar alone (module docstring)."""
    observed = list(model.observed_RVs)
    if not observed:
        return False
    for rv in observed:
        op = rv.owner.op if rv.owner is not None else None
        if getattr(op, "ndim_supp", None) != 0:
            return False
        others = set(observed) - {rv}
        if others & set(ancestors(rv.owner.inputs)):
            return False
    involved = set(observed) | {model.rvs_to_values[rv] for rv in observed}
    return not any(involved & set(ancestors([p])) for p in model.potentials)


class TabulatedLogp:
    """``(rows × cells)`` joint log-p from the prior and tables of each release scalar's log-p.

    ``model``'s observed values are replaced by ``data`` (symbolic stand-ins,
    one per observed variable, in the model's order) through ``replace``;
    ``value_vars`` are its latents' value variables. Called as the latent
    grid's log-p — candidate cells ``(1, cells, *shape)`` per latent, rows
    ``(rows, 1, *shape)`` per observed variable — it returns the ``(rows,
    cells)`` matrix.
    """

    def __init__(self, model, value_vars, replace, data, compile_kwargs):
        latents = [model.values_to_rvs[v] for v in value_vars]
        prior = model.logp(vars=[*latents, *model.potentials])
        terms = graph_replace(
            model.logp(vars=list(model.observed_RVs), sum=False), replace, strict=False
        )
        prior, *terms = counted_as_integers([prior, *terms])
        self._shapes = [tuple(d.type.shape) for d in data]
        cells = [pt.tensor(dtype=v.dtype, shape=(1, None, *v.type.shape)) for v in value_vars]
        values = [pt.tensor(dtype=d.dtype, shape=(None, 1, *d.type.shape)) for d in data]
        batched = dict(zip([*value_vars, *data], cells + values, strict=True))
        prior = vectorize_graph(pt.cast(prior, "float64"), replace=batched)
        tables = vectorize_graph([pt.cast(t, "float64") for t in terms], replace=batched)
        options = {"point_fn": False, "on_unused_input": "ignore", **one_shot(compile_kwargs)}
        self._prior = model.compile_fn([prior], inputs=cells, **options)
        self._tables = model.compile_fn(tables, inputs=cells + values, **options)
        self._cell_dtypes = [v.dtype for v in value_vars]
        self._data_dtypes = [d.dtype for d in data]
        # What the functions read besides their inputs (σ², a prior's probabilities): the key
        # of the last evaluation kept, with the cells (_Evaluated).
        self._shared = [v for v in ancestors([prior, *tables]) if isinstance(v, SharedVariable)]
        self._last: _Evaluated | None = None

    def shared_inputs(self) -> list:
        """The shared variables the prior and the tables read besides their inputs."""
        return list(self._shared)

    def __call__(self, cells: list[np.ndarray], rows: list[np.ndarray], n_rows: int) -> np.ndarray:
        """The joint log-p: the prior's plus :meth:`likelihood`."""
        total = self.likelihood(cells, rows, n_rows)
        total += self._evaluated(cells, None).prior
        return total

    def prior(self, cells: list[np.ndarray]) -> np.ndarray:
        """The prior log-p of each cell, ``(cells,)``."""
        return self._evaluated(cells, None).prior[0]

    def _evaluated(
        self, cells: list[np.ndarray], span: tuple[int, int] | None, margin: float = 0.0
    ) -> _Evaluated:
        """The prior and the tables over at least ``span`` at ``cells`` and the shared values
        now: the last evaluation's where it covers them, else a new one over ``span``
        widened by ``margin`` times its width (at least 8) each side, so that a span grown
        a little later needs no new call."""
        cells = [np.asarray(c, dtype=d) for c, d in zip(cells, self._cell_dtypes, strict=True)]
        key = (
            tuple(c.tobytes() for c in cells),
            tuple(np.asarray(v.get_value(borrow=True)).tobytes() for v in self._shared),
        )
        last = self._last if self._last is not None and self._last.key == key else None
        if last is None:
            (prior,) = self._prior(*cells)
            last = _Evaluated(key, np.asarray(prior, dtype=np.float64).reshape(1, -1))
        if span is not None and not last.covers(span):
            lowest, highest = span
            extra = max(8, math.ceil(margin * (highest - lowest + 1))) if margin else 0
            lowest, highest = lowest - extra, highest + extra
            last.set_tables(lowest, self._evaluate_tables(cells, np.arange(lowest, highest + 1)))
        self._last = last
        return last

    def tables(
        self, cells: list[np.ndarray], span: np.ndarray, margin: float = 0.0
    ) -> list[np.ndarray]:
        """Per observed variable, ``(len(span), cells, scalars)``: each of its scalars' log-p
        of each value of ``span`` (consecutive integers) given each cell; ``margin``: as
        for :meth:`_evaluated` (a caller about to ask for a wider span)."""
        lowest, highest = int(span[0]), int(span[-1])
        evaluated = self._evaluated(cells, (lowest, highest), margin)
        start = lowest - evaluated.lowest
        return [t[start : start + len(span)] for t in evaluated.tables]

    def _evaluate_tables(self, cells: list[np.ndarray], span: np.ndarray) -> list[np.ndarray]:
        n_cells = cells[0].shape[1]
        values = [
            np.broadcast_to(span.reshape(-1, 1, *(1,) * len(s)), (len(span), 1, *s)).astype(d)
            for s, d in zip(self._shapes, self._data_dtypes, strict=True)
        ]
        return [
            np.broadcast_to(
                np.asarray(table, dtype=np.float64), (len(span), n_cells, *shape)
            ).reshape(len(span), n_cells, -1)
            for table, shape in zip(self._tables(*cells, *values), self._shapes, strict=True)
        ]

    def likelihood(self, cells: list[np.ndarray], rows: list[np.ndarray], n_rows: int):
        """``(rows, cells)``: the releases' log-p given each cell, summed from the tables."""
        total = part = None
        flat = [np.asarray(r).reshape(n_rows, -1) for r in rows]
        span = (min(int(f.min()) for f in flat), max(int(f.max()) for f in flat))
        evaluated = self._evaluated(cells, span, margin=1.0)  # the next block's may differ
        for f, by_scalar in zip(flat, evaluated.by_scalar, strict=True):
            # Row v + k·width of ``by_scalar``: scalar k's log-p of the value lowest + v.
            index = (f - evaluated.lowest) + evaluated.width * np.arange(f.shape[1])
            for k in range(index.shape[1]):
                if total is None:
                    total = np.take(by_scalar, index[:, k], axis=0, mode="clip")
                    part = np.empty_like(total)
                else:
                    total += np.take(by_scalar, index[:, k], axis=0, out=part, mode="clip")
        return total


class _Evaluated:
    """One evaluation of a :class:`TabulatedLogp`: its key (cells and shared values), the
    prior ``(1, cells)``, and the tables from ``lowest`` (each observed variable's, and the
    same rows scalar by scalar: ``by_scalar[v + k·width]`` is scalar k's log-p of
    ``lowest + v``)."""

    def __init__(self, key, prior: np.ndarray):
        self.key, self.prior = key, prior
        self.lowest: int | None = None
        self.tables: list[np.ndarray] = []
        self.by_scalar: list[np.ndarray] = []
        self.width = 0

    def covers(self, span: tuple[int, int]) -> bool:
        return self.lowest is not None and (
            self.lowest <= span[0] and span[1] < self.lowest + self.width
        )

    def set_tables(self, lowest: int, tables: list[np.ndarray]) -> None:
        self.lowest, self.tables, self.width = lowest, tables, len(tables[0])
        n_cells = tables[0].shape[1]
        self.by_scalar = [
            np.ascontiguousarray(np.moveaxis(t, 2, 0)).reshape(-1, n_cells) for t in tables
        ]
