"""Exact moves for constrained counts and small groups of latents.

- :class:`TransferGibbs` — a vector of counts whose total is known (a
  ``pm.Multinomial`` or ``pm.DirichletMultinomial`` histogram: the persons of
  a block per cell). Updating one count alone would break the total, so every
  single-element conditional has one value and the chain would never move.
  Instead an update picks two cells ``a ≠ b`` (independently of the state) and
  draws ``n_a`` from its exact conditional given ``n_a + n_b = s`` and
  everything else, over ``n_a ∈ {0, …, s}`` — persons moving between the two
  cells, one unit (a person changing cell) or several at once. Each update is
  a Gibbs update of a one-dimensional conditional, so it satisfies detailed
  balance; the pair is chosen without looking at the state, so the mixture
  over pairs does too. A sweep pairs every cell, in random order, with a
  random other cell.
- :class:`BlockGibbs` — a small group of discrete latents updated jointly: one
  exact draw from their joint full conditional over every combination of
  their values (the product of their support ranges), scored in one
  vectorised call. A joint Gibbs update satisfies detailed balance; it helps
  where latents are strongly dependent (``X1`` and ``X2 ≥ X1`` of the
  block-group attack), which one-at-a-time updates cross slowly.
"""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
from pymc.blocking import PointType, StatsType
from pymc.distributions.multivariate import DirichletMultinomialRV
from pytensor.tensor.random.basic import MultinomialRV

from ._conditional import BatchedLogp, draw_index
from .steps import _ExactGibbs, _positive_int

__all__ = ["BlockGibbs", "TransferGibbs", "has_known_total"]

_KNOWN_TOTAL = (MultinomialRV, DirichletMultinomialRV)


def has_known_total(rv) -> bool:
    """True for a count vector whose total is a parameter (multinomial-type distributions)."""
    return isinstance(getattr(rv.owner, "op", None), _KNOWN_TOTAL)


class TransferGibbs(_ExactGibbs):
    """Exact pair updates of count vectors with a known total (module docstring).

    The cells are the last axis of each variable; every other index is a
    separate vector (its own total). Stats: ``{var}_candidates`` (values of
    ``n_a`` scored, summed over the sweep) and ``{var}_moved`` (persons moved).
    """

    name = "transfer_gibbs"
    _stat_suffixes: ClassVar[dict] = {"candidates": (np.int64, []), "moved": (np.int64, [])}

    def step(self, point: PointType) -> tuple[PointType, StatsType]:
        self._plan()
        point = dict(point)
        stats = {}
        for role in self._role_list:
            role.load(point)
        for name in self._names:
            role, slot = self._roles[name]
            value = np.array(point[name], dtype=np.int64, copy=True)
            point[name] = value
            rows = value.reshape(-1, value.shape[-1]) if value.ndim else value.reshape(1, 1)
            cells = rows.shape[1]
            scored = moved = 0
            for row in range(rows.shape[0] if cells > 1 else 0):
                for a in self.rng.permutation(cells):
                    b = (a + 1 + int(self.rng.integers(cells - 1))) % cells
                    total = int(rows[row, a] + rows[row, b])
                    if total == 0:
                        continue  # nothing to move: the conditional has one value
                    n_a = np.arange(total + 1, dtype=np.int64)
                    elements = (row * cells + a, row * cells + b)
                    logp = role.scores(slot, elements, np.stack([n_a, total - n_a], 1), point)
                    try:
                        new = int(n_a[draw_index(logp, self.rng)])
                    except FloatingPointError as error:
                        raise self._fail(name, elements[0], value, str(error)) from None
                    moved += abs(new - int(rows[row, a]))
                    rows[row, a], rows[row, b] = new, total - new
                    role.set(slot, elements[0], new)
                    role.set(slot, elements[1], total - new)
                    scored += total + 1
            stats[f"{name}_candidates"] = scored
            stats[f"{name}_moved"] = moved
        return point, [stats]


class BlockGibbs(_ExactGibbs):
    """Exact joint update of a small group of bounded discrete latents (module docstring).

    The candidates are every combination of the group's scalar elements, each
    over its support range. A range bounded by another member (``X2 ≥ X1``)
    is taken at that member's extremes, so it holds every feasible value when
    the bound is monotone in the member (combinations outside the true
    support score ``-inf``).

    Parameters
    ----------
    vars : the latents to update together (default: every discrete free variable).
    max_candidates : int
        Refuse (with an error) a group with more combinations than this.
    model, rng, blocked, initial_point, compile_kwargs : as for PyMC steps.

    Stats: ``block_candidates`` — the number of combinations scored.
    """

    name = "block_gibbs"
    _stat_suffixes: ClassVar[dict] = {}

    def __init__(self, vars=None, *, max_candidates: int = 100_000, **kwargs):
        self.max_candidates = _positive_int(max_candidates, "max_candidates")
        super().__init__(vars, **kwargs)
        self.stats_dtypes_shapes = {"block_candidates": (np.int64, [])}
        self.stats_dtypes = [{"block_candidates": np.int64}]
        for name, bounds in self._bounds.items():
            if not bounds.bounded:
                raise ValueError(
                    f"vars: {name!r} has no finite upper and lower support bound; "
                    "BlockGibbs enumerates every combination of bounded latents"
                )

    def _compile(self, model, value_vars, compile_kwargs) -> None:
        self._joint = BatchedLogp(model, value_vars, compile_kwargs=compile_kwargs)
        self._compile_bounds(model, value_vars, compile_kwargs)

    def _kernels(self) -> list:
        return [self._joint.fn, *self._bound_kernels()]

    def _ranges(self, point) -> list[np.ndarray]:
        """Each scalar element's candidate values, member bounds taken at their extremes."""
        ranges, known = [], {}
        for name in self._names:
            shape = self._shapes[name]
            parents = [n for n in self._bounds[name].other_names if n in known]
            lows, highs = [], []
            for corner in itertools.product(*[known[n] for n in parents]):
                at = {**point, **dict(zip(parents, corner, strict=True))}
                lower, upper = self._bounds[name](at, shape)
                lows.append(lower.reshape(-1))
                highs.append(upper.reshape(-1))
            low, high = np.min(lows, axis=0), np.max(highs, axis=0)
            known[name] = [
                np.asarray(low.reshape(shape), dtype=np.int64),
                np.asarray(high.reshape(shape), dtype=np.int64),
            ]
            ranges += [
                np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in zip(low, high, strict=True)
            ]
        return ranges

    def step(self, point: PointType) -> tuple[PointType, StatsType]:
        self._plan()
        point = dict(point)
        ranges = self._ranges(point)
        count = int(np.prod([len(r) for r in ranges]))
        if count > self.max_candidates:
            raise ValueError(
                f"max_candidates: the block {self._names} has {count} combinations, more than "
                f"max_candidates={self.max_candidates}"
            )
        if count == 0:
            raise self._fail(self._names[0], 0, np.asarray(point[self._names[0]]), "empty range")
        grid = np.stack([g.reshape(-1) for g in np.meshgrid(*ranges, indexing="ij")], axis=-1)
        candidates, column = [], 0
        for name in self._names:
            size = int(np.prod(self._shapes[name], dtype=np.int64))
            candidates.append(grid[:, column : column + size].reshape(count, *self._shapes[name]))
            column += size
        (logp,) = self._joint(candidates, point)
        try:
            chosen = draw_index(logp, self.rng)
        except FloatingPointError as error:
            value = np.asarray(point[self._names[0]])
            raise self._fail(self._names[0], 0, value, str(error)) from None
        for name, values in zip(self._names, candidates, strict=True):
            point[name] = np.array(values[chosen], dtype=np.int64)
        return point, [{"block_candidates": count}]
