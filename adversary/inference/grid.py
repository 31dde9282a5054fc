"""A discrete model's log-p on a grid of latent values, for one or many rows of observations.

The exact posterior of a model whose latents are all discrete is its joint
log-p on the product of the latents' supports, normalised (Kazan & Reiter's
(3.1), (S1.1) and (S3.4) are all of this form). :class:`LatentGrid` compiles
that log-p once, as a function of the latents and, optionally, of symbolic
stand-ins for the observed values, and evaluates it vectorised on
``(rows of observations) × (cells of the grid)``: one row for
:func:`~adversary.inference.enumerate_posterior`, every release set of a
release grid or a simulation for the data holder's measures
(:mod:`adversary.measures`).

**Ranges.** Each latent element's range comes from its support bounds
(:func:`adversary.distributions.support_bounds`; a bound that depends on
another latent, ``X2 ≥ X1``, is taken at its extreme over that latent's
range, and cells outside the true support get log-p ``-inf``). A side with
no bound is cut: at a range the caller states, or automatically — a window
around a centre that grows until the estimated posterior mass beyond it is
small for every row. The estimate for an open edge is ``m_e r / (1 - r)``
with ``m_e`` the marginal mass of the edge slice and ``r = m_e / m_inner`` its
ratio to the inner neighbour: a bound when the marginal's tail decays at
least geometrically from the edge (e.g. a log-concave marginal).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.replace import vectorize_graph
from pytensor.graph.traversal import ancestors

from ..distributions.support import support_bounds
from ._conditional import is_discrete, one_shot
from .safe import counted_as_integers
from .tiered import compile_kernel

__all__ = [
    "MAX_GROWTH_ROUNDS",
    "GridResult",
    "LatentGrid",
    "geometric_tail",
    "not_proper",
    "scalar_labels",
    "variable_dims",
    "widen",
]

MAX_GROWTH_ROUNDS = 64
_BLOCK = 1 << 20  # largest (rows × cells) block evaluated in one call
_FIRST_HALF_WIDTH = 8  # an automatic window starts at the centre ± this


def scalar_labels(name: str, shape: tuple) -> list[str]:
    """Labels of a latent's scalar elements: ``name`` for a scalar, ``name[i,j]`` otherwise."""
    if shape == ():
        return [name]
    return [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(shape)]


def variable_dims(model, name: str, shape: tuple) -> tuple:
    """A variable's dimension names: the model's ``dims``, else PyMC's ``name_dim_k``."""
    dims = model.named_vars_to_dims.get(name)
    if dims is not None and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{k}" for k in range(len(shape)))


def geometric_tail(edge, inner) -> np.ndarray:
    """Estimated mass past an edge: ``m_e r/(1 - r)``, ``r = m_e/m_inner`` (inf if not decaying)."""
    edge, inner = np.asarray(edge, dtype=np.float64), np.asarray(inner, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tiny inner: inf
        ratio = edge / inner
        estimate = np.where(inner > edge, edge * ratio / (1.0 - ratio), np.inf)
    return np.where(edge == 0, 0.0, estimate)


class _LatentBounds:
    """Support bounds of each latent element, at their extremes over the parents' ranges."""

    def __init__(self, model, value_vars, compile_kwargs):
        self.entries = {}
        self.graphs = []  # every bound's graph (for the shared variables they read)
        for v in value_vars:
            lower, upper = support_bounds(model.values_to_rvs[v])
            sides = [(side, g) for side, g in (("lower", lower), ("upper", upper)) if g is not None]
            fn, parents, depends = None, [], []
            if sides:
                graphs = model.replace_rvs_by_values([g for _, g in sides])
                found = set(ancestors(graphs))
                parents = [p for p in value_vars if p is not v and p in found]
                depends = [any(p in set(ancestors([g])) for p in parents) for g in graphs]
                batched = [pt.tensor(dtype=p.dtype, shape=(None, *p.type.shape)) for p in parents]
                if parents:
                    graphs = vectorize_graph(
                        graphs, replace=dict(zip(parents, batched, strict=True))
                    )
                self.graphs.extend(graphs)
                fn = model.compile_fn(
                    graphs,
                    inputs=batched,
                    point_fn=False,
                    on_unused_input="ignore",
                    **one_shot(compile_kwargs),
                )
            self.entries[v.name] = ([s for s, _ in sides], fn, parents, depends)

    def __call__(self, name, ranges, labels, shapes):
        """``(lows, highs)``: one bound (or ``None``) per element of latent ``name``."""
        sides, fn, parents, depends = self.entries[name]
        size = math.prod(shapes[name])
        result = {"lower": [None] * size, "upper": [None] * size}
        if fn is None:
            return result["lower"], result["upper"]
        args = []
        if parents:
            parent_labels = [label for p in parents for label in labels[p.name]]
            grids = [np.arange(ranges[lb][0], ranges[lb][1] + 1) for lb in parent_labels]
            flat = [m.reshape(-1) for m in np.meshgrid(*grids, indexing="ij")]
            column = 0
            for p in parents:
                k = len(labels[p.name])
                cells = np.stack(flat[column : column + k], axis=-1)
                args.append(cells.reshape(len(cells), *shapes[p.name]).astype(p.dtype))
                column += k
        for side, dep, value in zip(sides, depends, fn(*args), strict=True):
            value = np.asarray(value)
            if dep:
                value = value.min(axis=0) if side == "lower" else value.max(axis=0)
            result[side] = [int(x) for x in np.broadcast_to(value, shapes[name]).reshape(-1)]
        return result["lower"], result["upper"]


class _GridLogp:
    """A log-p graph compiled once, evaluated on (rows of data) × (cells of a latent grid).

    ``value_vars`` (latents) become inputs of shape ``(1, cells, *shape)``,
    ``data`` (symbolic stand-ins for observed values) inputs of shape
    ``(rows, 1, *shape)``; the output is the ``(rows, cells)`` matrix of log-p.
    It is compiled on its first call (a caller may replace it by an equivalent
    evaluation, e.g. from likelihood tables, without paying for its compile).
    """

    def __init__(self, model, value_vars, logp, data, compile_kwargs):
        self._model, self._compile_kwargs = model, compile_kwargs
        self._inputs = [
            *(pt.tensor(dtype=v.dtype, shape=(1, None, *v.type.shape)) for v in value_vars),
            *(pt.tensor(dtype=d.dtype, shape=(None, 1, *d.type.shape)) for d in data),
        ]
        replace = dict(zip([*value_vars, *data], self._inputs, strict=True))
        self._out = vectorize_graph(pt.cast(logp, "float64"), replace=replace)
        self._dtypes = [v.dtype for v in value_vars] + [d.dtype for d in data]

    def shared_inputs(self) -> list:
        """The shared variables the log-p reads besides its inputs."""
        return [v for v in ancestors([self._out]) if isinstance(v, SharedVariable)]

    @cached_property
    def fn(self):
        # Called a few times on large batches: no numba compilation.
        return compile_kernel(
            self._model, [self._out], self._inputs, one_shot(self._compile_kwargs)
        )

    def __call__(self, cells: list[np.ndarray], rows: list[np.ndarray], n_rows: int) -> np.ndarray:
        args = [np.asarray(a, dtype=d) for a, d in zip([*cells, *rows], self._dtypes, strict=True)]
        (out,) = self.fn(*args)
        n_cells = len(cells[0][0]) if cells else 1
        return np.broadcast_to(np.asarray(out, dtype=np.float64), (n_rows, n_cells))


@dataclass
class GridResult:
    """Per-row reductions of the normalised posterior on the final grid.

    ``tails`` maps ``(label, side)`` (side ``"low"``/``"high"``) of every cut
    side to its per-row estimate of the posterior mass beyond it; ``joint`` is
    the whole table (one row only, when asked for).
    """

    ranges: dict
    tails: dict
    log_normaliser: np.ndarray
    centre_logp: np.ndarray
    event: np.ndarray | None = None
    target: np.ndarray | None = None
    target_values: np.ndarray | None = None
    joint: np.ndarray | None = None
    stated_sides: set = field(default_factory=set)

    @property
    def omitted(self) -> np.ndarray:
        """Per row: the estimated posterior mass outside the grid (0 with nothing cut)."""
        total = np.zeros_like(self.log_normaliser)
        for estimate in self.tails.values():
            total = total + estimate
        return total


class LatentGrid:
    """The exact posterior of a discrete model on a latent grid shared by many rows of data.

    ``logp`` (default: the model's joint log-p) is a graph of the value
    variables of ``latents`` (default: every free variable) and of ``data``,
    symbolic stand-ins for the observed values (none: the model's own
    observations, one row).
    """

    def __init__(self, model, logp=None, data=(), compile_kwargs=None, latents=None):
        self.model = model
        latents = model.free_RVs if latents is None else latents
        self.value_vars = [model.rvs_to_values[rv] for rv in latents]
        for v in self.value_vars:
            if not is_discrete(v):
                raise TypeError(
                    f"model: exact enumeration needs discrete latents; {v.name!r} has dtype "
                    f"{v.dtype} (use MCMC: adversary.inference.sample)"
                )
        point = model.initial_point()
        self.shapes = {v.name: tuple(np.shape(point[v.name])) for v in self.value_vars}
        self.labels = {v.name: scalar_labels(v.name, self.shapes[v.name]) for v in self.value_vars}
        self.all_labels = [lb for v in self.value_vars for lb in self.labels[v.name]]
        self.bounds = _LatentBounds(model, self.value_vars, compile_kwargs)
        (logp,) = counted_as_integers([model.logp() if logp is None else logp])
        self.logp = _GridLogp(model, self.value_vars, logp, list(data), compile_kwargs)
        self._shared = None  # what state() reads, found on its first call

    def state(self) -> tuple:
        """The values of the shared variables its log-p and bounds read: what it computes
        depends on its arguments and these alone."""
        if self._shared is None:
            bounds = [v for v in ancestors(self.bounds.graphs) if isinstance(v, SharedVariable)]
            self._shared = [*self.logp.shared_inputs(), *bounds]
        return tuple(np.asarray(v.get_value(borrow=True)).tobytes() for v in self._shared)

    # --- ranges ----------------------------------------------------------------------------

    def _ranges(self, centre, auto, stated):
        ranges, cut = {}, {}
        for v in self.value_vars:
            lows, highs = self.bounds(v.name, ranges, self.labels, self.shapes)
            current = np.asarray(centre[v.name]).reshape(-1)
            for k, label in enumerate(self.labels[v.name]):
                lo, hi, sides = lows[k], highs[k], {}
                if label in stated:
                    if lo is None or stated[label][0] > lo:
                        sides["low"] = False
                    if hi is None or stated[label][1] < hi:
                        sides["high"] = False
                    lo, hi = stated[label]
                elif lo is None or hi is None:
                    lo, hi, sides = _automatic(auto, label, current[k], lo, hi)
                if hi < lo:
                    raise ValueError(f"model: the support of {label!r} is empty ({lo}..{hi})")
                ranges[label] = (int(lo), int(hi))
                cut[label] = sides
        return ranges, cut

    def cells(self, ranges):
        """The grid's cells: one candidate array ``(1, cells, *shape)`` per latent, and values."""
        grids = [np.arange(ranges[lb][0], ranges[lb][1] + 1) for lb in self.all_labels]
        flat = np.stack([m.reshape(-1) for m in np.meshgrid(*grids, indexing="ij")], axis=-1)
        candidates, column = [], 0
        for v in self.value_vars:
            k = len(self.labels[v.name])
            shape = self.shapes[v.name]
            candidates.append(flat[:, column : column + k].reshape(1, len(flat), *shape))
            column += k
        return candidates, flat

    def values_by_variable(self, flat) -> dict[str, np.ndarray]:
        """``{latent: array (cells, *shape)}`` of the grid's cells ``flat``."""
        out, column = {}, 0
        for v in self.value_vars:
            k = len(self.labels[v.name])
            out[v.name] = flat[:, column : column + k].reshape(len(flat), *self.shapes[v.name])
            column += k
        return out

    # --- evaluation ------------------------------------------------------------------------

    def run(
        self,
        rows: list[np.ndarray],
        n_rows: int,
        *,
        centre,
        tail_mass: float,
        max_cells: int,
        stated: dict | None = None,
        event: Callable | None = None,
        target: str | None = None,
        keep_joint: bool = False,
        impossible: str = "the observations are impossible under the prior",
        start: dict | None = None,
    ) -> GridResult:
        """Grow the automatic windows until every row's estimated omitted mass is small.

        ``rows``: one array ``(n_rows, *shape)`` per data input; ``centre``:
        ``{latent: value}`` where automatic windows start; ``stated``:
        ``{label: (lowest, highest)}`` ranges the caller fixes (their cut
        sides are estimated, not grown); ``event``: a function of
        :meth:`values_by_variable` giving a boolean per cell, whose posterior
        probability each row gets; ``target``: a latent label whose posterior
        pmf each row gets; ``impossible``: what a row whose cells all have
        log-p ``-inf`` means, for the error; ``start``: ``{label: (lowest, highest)}``
        where automatic windows start instead of ``centre ± 8`` (e.g. the ranges a
        previous batch of rows grew to: they are still grown if these rows need more).
        """
        stated = stated or {}
        auto: dict[str, list[int]] = {
            lb: [int(lo), int(hi)] for lb, (lo, hi) in (start or {}).items()
        }
        for _ in range(MAX_GROWTH_ROUNDS):
            ranges, cut, grid_shape = self.sized_ranges(centre, auto, max_cells, stated)
            result = self._reduce(
                rows, n_rows, ranges, cut, grid_shape, centre, event, target, keep_joint, impossible
            )
            largest = {key: np.max(estimate) for key, estimate in result.tails.items()}
            if not widen(auto, cut, largest, tail_mass):
                return result
        raise not_proper(ranges, tail_mass)

    def sized_ranges(self, centre, auto, max_cells, stated=None):
        """``(ranges, cut sides, grid shape)`` of the current windows (:meth:`run`), refusing
        a grid of more than ``max_cells`` cells."""
        ranges, cut = self._ranges(centre, auto, stated or {})
        grid_shape = tuple(ranges[lb][1] - ranges[lb][0] + 1 for lb in self.all_labels)
        n_cells = math.prod(grid_shape)
        if n_cells > max_cells:
            raise ValueError(
                f"max_cells: the latent grid needs {n_cells} cells (ranges {ranges}), more "
                f"than max_cells={max_cells}; state narrower ranges, raise max_cells or use "
                "MCMC (an automatic range that keeps growing may mean an improper posterior)"
            )
        return ranges, cut, grid_shape

    def _centre_cell(self, centre, ranges, grid_shape) -> int | None:
        index = []
        for v in self.value_vars:
            values = np.asarray(centre[v.name]).reshape(-1)
            for k, label in enumerate(self.labels[v.name]):
                lo, hi = ranges[label]
                if not lo <= int(values[k]) <= hi:
                    return None
                index.append(int(values[k]) - lo)
        return int(np.ravel_multi_index(tuple(index), grid_shape))

    def _reduce(self, rows, n_rows, ranges, cut, grid_shape, centre, event, target, keep, why):
        candidates, flat = self.cells(ranges)
        n_cells = len(flat)
        mask = None
        if event is not None:
            mask = np.asarray(event(self.values_by_variable(flat)), dtype=np.float64)
        centre_cell = self._centre_cell(centre, ranges, grid_shape)
        axes = {lb: a for a, lb in enumerate(self.all_labels)}
        out = GridResult(
            ranges=ranges,
            tails={(lb, s): np.zeros(n_rows) for lb, sides in cut.items() for s in sides},
            log_normaliser=np.empty(n_rows),
            centre_logp=np.full(n_rows, np.nan),
            event=None if mask is None else np.empty(n_rows),
            target=None if target is None else np.empty((n_rows, grid_shape[axes[target]])),
            target_values=None if target is None else np.arange(*_span(ranges[target])),
            stated_sides={(lb, s) for lb, sides in cut.items() for s, g in sides.items() if not g},
        )
        step = max(1, _BLOCK // n_cells)
        for start in range(0, n_rows, step):
            stop = min(n_rows, start + step)
            b = stop - start
            block = [r[start:stop, None] for r in rows]
            log_joint = np.empty((b, n_cells))
            cell_step = max(1, _BLOCK // b)
            for c0 in range(0, n_cells, cell_step):
                c1 = min(n_cells, c0 + cell_step)
                log_joint[:, c0:c1] = self.logp([c[:, c0:c1] for c in candidates], block, b)
            top = log_joint.max(axis=1, keepdims=True)  # NaN where a row has a NaN
            if np.isnan(top).any():
                raise FloatingPointError("model: its log-p is NaN on some cell of the grid")
            if not np.all(np.isfinite(top)):
                raise ValueError(
                    f"model: every cell of the latent grid {ranges} has log-p -inf (or +inf) "
                    f"for some observations; {why}"
                )
            if centre_cell is not None:
                out.centre_logp[start:stop] = log_joint[:, centre_cell]
            prob = np.exp(np.subtract(log_joint, top, out=log_joint), out=log_joint)
            total = prob.sum(axis=1, keepdims=True)
            prob /= total
            out.log_normaliser[start:stop] = (top + np.log(total))[:, 0]
            if mask is not None:
                out.event[start:stop] = prob @ mask
            shaped = prob.reshape(b, *grid_shape)
            if keep:
                out.joint = shaped[0]
            for label, axis in axes.items():
                if not cut[label] and label != target:
                    continue
                others = tuple(1 + a for a in range(len(grid_shape)) if a != axis)
                marginal = shaped.sum(axis=others)
                if label == target:
                    out.target[start:stop] = marginal
                for side in cut[label]:
                    if marginal.shape[1] < 2:
                        estimate = np.full(b, np.inf)
                    elif side == "low":
                        estimate = geometric_tail(marginal[:, 0], marginal[:, 1])
                    else:
                        estimate = geometric_tail(marginal[:, -1], marginal[:, -2])
                    out.tails[(label, side)][start:stop] = estimate
        return out


def widen(auto: dict, cut: dict, largest: dict, tail_mass: float) -> bool:
    """Widen each automatic window whose side's largest estimated tail (``largest``, by
    ``(label, side)``) exceeds its share of ``tail_mass``; whether any was."""
    grown = [(lb, side) for lb, sides in cut.items() for side, g in sides.items() if g]
    allowed = tail_mass / max(1, len(grown))
    grow = [key for key in grown if largest[key] > allowed]
    for label, side in grow:
        window = auto[label]
        width = max(window[1] - window[0] + 1, 2 * _FIRST_HALF_WIDTH)
        if side == "low":
            window[0] -= width
        else:
            window[1] += width
    return bool(grow)


def not_proper(ranges, tail_mass) -> ValueError:
    """The error of windows still growing after every round."""
    return ValueError(
        f"tail_mass: the automatic ranges {ranges} still leave more than {tail_mass} of some "
        f"posterior outside after {MAX_GROWTH_ROUNDS} enlargements; is the posterior proper?"
    )


def _span(bounds: tuple[int, int]) -> tuple[int, int]:
    return bounds[0], bounds[1] + 1


def _automatic(auto: dict, label: str, current, lo, hi) -> tuple[int, int, dict]:
    """Fill the open sides of a latent's range from its automatic window (grown by the caller).

    The window starts as ``current ± 8``, clamped into the bounds that exist.
    Returns the range and ``{side: True}`` for each side that is open (grown).
    """
    if label not in auto:
        centre = int(current)
        centre = centre if lo is None else max(centre, lo)
        centre = centre if hi is None else min(centre, hi)
        auto[label] = [centre - _FIRST_HALF_WIDTH, centre + _FIRST_HALF_WIDTH]
    window = auto[label]
    sides = {}
    if lo is None:
        lo = window[0]
        sides["low"] = True
    if hi is None:
        window[1] = max(window[1], lo)
        hi = window[1]
        sides["high"] = True
    return lo, hi, sides
