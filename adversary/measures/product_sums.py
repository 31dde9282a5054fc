"""The data holder's sums over a product release grid without a (releases × cells) array.

When a model's release scalars are independent given its latents
(:func:`~adversary.measures.tabulated_likelihood.factorises`), the release grid
of :func:`~adversary.measures.exact.exact_measures` is a product of windows and
the joint log-p of every (release set, cell) a sum of table entries. Then the
sums (3.3), (3.6) and the latent windows' omitted mass are added up release set
by release set in one compiled pass (:func:`~._fused_kernel.grid_sums`), from
the tables of each scalar's likelihood over its window and the latent grid's
cells — the numbers the chunked route computes from its matrices, in a tenth of
the time on grids of 10⁴–10⁵ release sets. Where the last release scalar
depends on some latents only (a block's release, of its own count), a release
set costs the cells of those latents, not the whole latent grid.

The release sets summed are the same (the grid less its least probable sets,
:func:`~adversary.measures.exact.kept_releases`), and so are the latent windows:
grown, as :meth:`~adversary.inference.grid.LatentGrid.run` grows them, until
every release set's estimated posterior mass outside is within
``latent_tail_mass`` — first for the release sets on the grid's edges (the
extreme ones, which need the widest windows), then for all, in a pass that
widens them further if some release set needs it.
"""

from __future__ import annotations

import math

import numpy as np

from ..inference.grid import MAX_GROWTH_ROUNDS, not_proper, widen
from ._fused_kernel import IMPOSSIBLE, NAN, RULES, grid_sums
from .attack_model import event_on_cells
from .decision import _ROUNDING_ULPS, TIE_TOLERANCE
from .tabulated_likelihood import TabulatedLogp

__all__ = ["PRODUCT_TABLE_LIMIT", "ProductSums", "product_sums", "product_sums_take"]

# Log posteriors of a target's values lie in [-745, 0] (float64), so their tie tolerance
# is TIE_TOLERANCE itself (tie_tolerance's rounding allowance is below it there): a value
# ties with the mode when its posterior is at least e^-TIE_TOLERANCE times the mode's.
assert _ROUNDING_ULPS * np.finfo(np.float64).eps * 746.0 < TIE_TOLERANCE
_TIE_RATIO = math.exp(-TIE_TOLERANCE)

#: The largest tables (release values × latent cells, in floats) summed in one pass; larger
#: grids take the chunked route, whose memory is bounded by its blocks.
PRODUCT_TABLE_LIMIT = 1 << 23


class ProductSums:
    """What :func:`product_sums` returns: the three sums, the release sets summed and the
    probability the grid leaves out (its windows' and the dropped sets')."""

    def __init__(self, sums, summed: int, omitted: float):
        self.posterior, self.credit, self.latent_error = (float(x) for x in sums)
        self.summed, self.omitted = summed, omitted


def product_sums_take(engine, grown) -> bool:
    """Whether :func:`product_sums` computes ``engine``'s sums on the windows ``grown``."""
    return grown.by_scalar is not None and isinstance(engine.grid.logp, TabulatedLogp)


def product_sums(engine, grown, kept, omitted, stated, latent_tail_mass, max_cells):
    """The sums over the kept release sets of the product grid ``grown`` (module docstring).

    ``engine``: the model's :class:`~adversary.measures.release_posteriors.ReleasePosteriors`
    (with tables, :func:`product_sums_take`); ``kept``: which release sets are summed, in
    grid order;
    ``stated``: the attack's truth, target, event and tie rule. ``None`` when the latent grid
    grows past :data:`PRODUCT_TABLE_LIMIT` (the caller takes the chunked route).
    """
    grid = engine.grid
    release_logp = np.ascontiguousarray(np.concatenate(grown.by_scalar), dtype=np.float64)
    offsets = np.cumsum([0] + [len(b) for b in grown.by_scalar]).astype(np.int64)
    event = event_on_cells(engine.model, stated.event)
    axis = grid.all_labels.index(stated.target)
    auto: dict = {}
    every = np.flatnonzero(kept)  # the release sets summed, by their positions on the grid
    summing = None  # the release sets of this pass: the grid's edges while windows may grow
    for _ in range(MAX_GROWTH_ROUNDS):
        ranges, cut, _shape = grid.sized_ranges(stated.truth, auto, max_cells)
        if summing is None:
            summing = np.flatnonzero(kept & _on_edges(grown)) if any(cut.values()) else every
        candidates, flat = grid.cells(ranges)
        if len(release_logp) * len(flat) > PRODUCT_TABLE_LIMIT:
            return None
        lowest = ranges[stated.target][0]
        sides = [(label, side) for label, sides in cut.items() for side in sides]
        side_cells, side_starts = _side_cells(grid, ranges, flat, sides)
        tables = _tables(engine, candidates, grown)
        status, sums, tails, summed = grid_sums(
            release_logp,
            tables,
            offsets,
            summing,
            np.ascontiguousarray(grid.logp.prior(candidates), dtype=np.float64),
            np.asarray(event(grid.values_by_variable(flat)), dtype=np.float64),
            (flat[:, axis] - lowest).astype(np.int64),
            ranges[stated.target][1] - lowest + 1,
            _true_index(stated.true_target, ranges[stated.target]),
            side_cells,
            side_starts,
            RULES[stated.tie_rule],
            _TIE_RATIO,
            *_last_scalar_groups(tables[offsets[-2] :], _shape),
        )
        if status == NAN:
            raise FloatingPointError("model: its log-p is NaN on some cell of the grid")
        if status == IMPOSSIBLE:
            raise ValueError(
                f"model: every cell of the latent grid {ranges} has log-p -inf (or +inf) for "
                "some observations; a release set is impossible under the model (a release "
                "drawn from the truth should not be: the model's random draws and its log-p "
                "disagree)"
            )
        if widen(auto, cut, dict(zip(sides, tails, strict=True)), latent_tail_mass):
            continue
        if summing is every:
            return ProductSums(sums, summed, omitted)
        summing = every  # the windows suffice for the edges: every release set, to confirm
    raise not_proper(ranges, latent_tail_mass)


def _last_scalar_groups(rows: np.ndarray, shape: tuple) -> tuple[np.ndarray, int]:
    """``(group per cell, groups)``: cells on which the last release scalar's likelihood rows
    are equal, those sharing their values of the latents it depends on (e.g. a block's
    release, of the block's count alone), found from the rows themselves."""
    grid = rows.reshape(len(rows), *shape)
    relevant = [
        axis
        for axis in range(len(shape))
        if not np.array_equal(grid, np.broadcast_to(grid.take([0], axis=axis + 1), grid.shape))
    ]
    if len(relevant) == len(shape):
        return np.arange(math.prod(shape), dtype=np.int64), math.prod(shape)
    index = np.indices(shape).reshape(len(shape), -1)
    dims = tuple(shape[a] for a in relevant)
    groups = np.ravel_multi_index(tuple(index[a] for a in relevant), dims) if relevant else 0
    return np.broadcast_to(groups, index.shape[1:]).astype(np.int64), math.prod(dims)


def _on_edges(grown) -> np.ndarray:
    """Which release sets of the grid (in its order) have a scalar at an end of its window:
    the extreme releases, whose posteriors reach farthest, summed first to size the latent
    windows before every release set is."""
    shape = tuple(hi - lo + 1 for lo, hi in grown.windows)
    edges = np.zeros(shape, dtype=bool)
    for axis in range(len(shape)):
        index = [slice(None)] * len(shape)
        for end in (0, -1):
            index[axis] = end
            edges[tuple(index)] = True
    return edges.reshape(-1)


def _tables(engine, candidates, grown) -> np.ndarray:
    """``(Σ window widths, cells)``: each release scalar's log-likelihood rows over its window,
    the scalars in the grid's order (which need not be the engine's)."""
    lowest = min(lo for lo, _ in grown.windows)
    span = np.arange(lowest, max(hi for _, hi in grown.windows) + 1)
    by_name = dict(zip(engine.observed, engine.grid.logp.tables(candidates, span), strict=True))
    columns = [
        by_name[name][:, :, j] for name in grown.shapes for j in range(by_name[name].shape[2])
    ]
    rows = [
        column[lo - lowest : hi - lowest + 1]
        for column, (lo, hi) in zip(columns, grown.windows, strict=True)
    ]
    return np.ascontiguousarray(np.concatenate(rows), dtype=np.float64)


def _side_cells(grid, ranges, flat, sides) -> tuple[np.ndarray, np.ndarray]:
    """``(cells, starts)``: each cut side's edge cells, then its inner neighbours' (none for a
    window one value wide: its tail is then infinite, as the grid's), side after side; group
    ``g``'s cells are ``cells[starts[g]:starts[g + 1]]``."""
    groups = []
    for label, side in sides:
        values = flat[:, grid.all_labels.index(label)]
        lo, hi = ranges[label]
        edge, inner = (lo, lo + 1) if side == "low" else (hi, hi - 1)
        groups.append(np.flatnonzero(values == edge))
        groups.append(np.flatnonzero(values == inner) if hi > lo else np.zeros(0, np.int64))
    starts = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    cells = np.concatenate(groups).astype(np.int64) if groups else np.zeros(0, np.int64)
    return cells, starts


def _true_index(true_value: int, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    return int(true_value - lo) if lo <= true_value <= hi else -1
