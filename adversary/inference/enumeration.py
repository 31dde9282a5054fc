"""Exact posteriors of discrete models by enumeration over the latent support.

For a model whose free variables are all discrete, the posterior is
``p(latents | observed) ∝ exp(logp(model))`` on the product of the latents'
supports — the joint log-p of the model (priors, observed likelihoods,
Potentials) evaluated on every cell of the grid in vectorised batches and
normalised in log space. Kazan & Reiter's posteriors (3.1), (S1.1) and (S3.4)
are all of this form; this is the ground truth the samplers are tested
against (DESIGN §3).

Supports come from :func:`adversary.distributions.support_bounds` (a bound
that depends on another latent, ``X2 ≥ X1``, is taken at its extreme over that
latent's range; cells outside the true support have log-p ``-inf`` and get
probability 0). An unbounded side is truncated: either at a range the caller
states, or automatically, growing the range until the estimated posterior mass
beyond it is below ``tail_mass``. The estimate for each open edge is
``m_e r / (1 - r)`` with ``m_e`` the marginal mass of the edge slice and
``r = m_e / m_inner`` the ratio to its inner neighbour — exact as a bound when
the marginal's tail decays at least geometrically from the edge (e.g. a
log-concave marginal). :attr:`Enumeration.omitted_mass` reports the total.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pytensor.tensor as pt
import xarray as xr
from pymc.model import modelcontext
from pytensor.graph.replace import vectorize_graph
from pytensor.graph.traversal import ancestors

from .._validation import as_integers, as_probability
from ..distributions.support import support_bounds
from ._conditional import BatchedLogp, is_discrete, one_shot
from .start import repair_start

__all__ = ["Enumeration", "enumerate_posterior"]

_MAX_GROWTH_ROUNDS = 64
_CHUNK = 1 << 18


@dataclass(frozen=True)
class Enumeration:
    """The exact (or stated-truncation) posterior of a discrete model.

    Attributes
    ----------
    joint : xarray.DataArray
        Posterior probabilities, one dimension per latent scalar (named by the
        variable, ``"X1"``, or by element, ``"cells[2]"``), integer coordinates
        = the values enumerated; sums to 1.
    log_normaliser : float
        ``log Σ exp(logp)`` over the table: the log marginal likelihood of the
        observations when every prior is proper.
    omitted_mass : float
        Estimated posterior mass outside the table (0 when every latent has a
        finite support); see the module docstring.
    ranges : dict
        ``label -> (lowest, highest)`` value enumerated for each latent scalar.
    truncated : tuple
        Labels of the latents whose range was cut (by the caller or automatically).
    variables : dict
        ``variable name -> (element labels, dims)`` for vector-valued latents
        (scalars map to ``((name,), ())``).
    """

    joint: xr.DataArray
    log_normaliser: float
    omitted_mass: float
    ranges: dict
    truncated: tuple = ()
    variables: dict = field(default_factory=dict)

    def marginal(self, label: str) -> xr.DataArray:
        """Marginal posterior pmf of one latent scalar (a DataArray over its values)."""
        if label not in self.joint.dims:
            raise KeyError(
                f"var: {label!r} is not a latent in this table; have {list(self.joint.dims)}"
            )
        other = [d for d in self.joint.dims if d != label]
        return self.joint.sum(other).rename("probability")

    @property
    def marginals(self) -> dict[str, xr.DataArray]:
        """Every latent scalar's marginal pmf."""
        return {label: self.marginal(label) for label in self.joint.dims}


def _labels(name: str, shape: tuple) -> list[str]:
    if shape == ():
        return [name]
    return [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(shape)]


def _var_dims(model, name: str, shape: tuple) -> tuple:
    dims = model.named_vars_to_dims.get(name)
    if dims is not None and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{k}" for k in range(len(shape)))


def _tail(masses: np.ndarray, at_start: bool) -> float:
    """Geometric-tail estimate of the mass beyond one edge of a marginal (see module doc)."""
    if len(masses) < 2:
        return np.inf
    edge, inner = (masses[0], masses[1]) if at_start else (masses[-1], masses[-2])
    if edge == 0:
        return 0.0
    if not inner > edge:
        return np.inf
    r = edge / inner
    return float(edge * r / (1.0 - r))


def open_window(auto: dict, label: str, current, lo, hi) -> tuple[int, int, bool, bool]:
    """Fill the open sides of a latent's range from its automatic window.

    ``auto[label]`` is a window ``[low, high]`` that starts as ``current ± 8``
    (clamped into the bounds that exist) and that callers grow until the
    omitted mass is small. Returns the range and which sides were open.
    """
    if label not in auto:
        centre = int(current)
        centre = centre if lo is None else max(centre, lo)
        centre = centre if hi is None else min(centre, hi)
        auto[label] = [centre - 8, centre + 8]
    window = auto[label]
    low_open, high_open = lo is None, hi is None
    if low_open:
        lo = window[0]
    if high_open:
        window[1] = max(window[1], lo)
        hi = window[1]
    return lo, hi, low_open, high_open


def enumerate_posterior(
    model=None,
    *,
    vars=None,
    truncation: Mapping | None = None,
    tail_mass: float = 1e-12,
    max_cells: int = 20_000_000,
    compile_kwargs: dict | None = None,
) -> Enumeration:
    """Exact posterior of a model whose free variables are all discrete.

    Parameters
    ----------
    model : pymc.Model, optional
        Default: the model on the context stack. Observed variables and
        Potentials enter through the model's joint log-p.
    vars : sequence of names or variables, optional
        Latents to keep in the table (the others are summed out); default all.
    truncation : mapping, optional
        ``{name or element label: (lowest, highest)}`` — a stated range for an
        unbounded latent (or to narrow a bounded one). The mass left outside is
        still estimated and reported.
    tail_mass : float in (0, 1)
        For unbounded latents without a stated range: grow the range until
        the estimated omitted posterior mass is at most this.
    max_cells : int
        Refuse grids with more cells than this.

    Returns
    -------
    Enumeration
        ``joint`` (labelled DataArray), marginals, ``omitted_mass``, ``ranges``.
    """
    model = modelcontext(model)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    if isinstance(max_cells, bool) or not isinstance(max_cells, int | np.integer) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {max_cells!r}")
    if truncation is not None and not isinstance(truncation, Mapping):
        raise TypeError(
            f"truncation must be a mapping {{name: (lowest, highest)}}, got {truncation!r}"
        )
    if not model.free_RVs:
        raise ValueError("model: has no free (latent) variables to enumerate")
    for rv in model.free_RVs:
        if not is_discrete(rv):
            raise TypeError(
                f"model: enumerate_posterior needs discrete latents; {rv.name!r} has dtype "
                f"{rv.dtype} "
                "(use adversary.inference.sample for models with continuous variables)"
            )

    start = model.initial_point()
    if any(None in support_bounds(rv) for rv in model.free_RVs):
        # Automatic windows start around a feasible point.
        start, _ = repair_start(model, start, compile_kwargs=compile_kwargs)
    value_vars = [model.rvs_to_values[rv] for rv in model.free_RVs]
    shapes = {v.name: tuple(np.shape(start[v.name])) for v in value_vars}
    labels = {v.name: _labels(v.name, shapes[v.name]) for v in value_vars}
    all_labels = [label for v in value_vars for label in labels[v.name]]
    variables = {
        v.name: (tuple(labels[v.name]), _var_dims(model, v.name, shapes[v.name]))
        for v in value_vars
    }

    keep = _kept_labels(vars, value_vars, labels)
    stated = _stated_ranges(truncation, value_vars, labels)

    # Symbolic bounds of each latent, in value-variable terms.
    bounds = {v.name: _LatentBounds(model, v, value_vars, compile_kwargs) for v in value_vars}
    batched = BatchedLogp(model, value_vars, outputs=[model.logp()], compile_kwargs=compile_kwargs)
    auto: dict[str, list[int]] = {}  # label -> automatic window [low, high]
    for _ in range(_MAX_GROWTH_ROUNDS):
        ranges, open_sides = {}, {}
        for v in value_vars:
            lows, highs = bounds[v.name](ranges, labels, shapes)
            current = np.asarray(start[v.name]).reshape(-1)
            for k, label in builtins.enumerate(labels[v.name]):
                lo, hi, sides = lows[k], highs[k], set()
                if label in stated:
                    if lo is None or stated[label][0] > lo:
                        sides.add("stated-low")
                    if hi is None or stated[label][1] < hi:
                        sides.add("stated-high")
                    lo, hi = stated[label]
                elif lo is None or hi is None:
                    lo, hi, low_open, high_open = open_window(auto, label, current[k], lo, hi)
                    sides |= {"auto-low"} if low_open else set()
                    sides |= {"auto-high"} if high_open else set()
                if hi < lo:
                    raise ValueError(f"model: the support of {label!r} is empty ({lo}..{hi})")
                ranges[label] = (int(lo), int(hi))
                open_sides[label] = sides
        cells = math.prod(hi - lo + 1 for lo, hi in ranges.values())
        if cells > max_cells:
            raise ValueError(
                f"max_cells: the grid needs {cells} cells (ranges {ranges}), more than "
                f"max_cells={max_cells}; state narrower ranges with truncation= or raise max_cells "
                "(an automatic range that keeps growing may mean an improper posterior)"
            )
        log_joint = _evaluate(batched, value_vars, labels, shapes, ranges, all_labels)
        finite = np.isfinite(log_joint)
        if not finite.any():
            raise ValueError(
                f"model: every cell of the grid {ranges} has log-p -inf; the observations are "
                "impossible under the prior (or state a range that contains the posterior)"
            )
        log_norm = float(np.logaddexp.reduce(log_joint[finite]))
        prob = np.exp(log_joint - log_norm)
        tails, grow = {}, []
        for axis, label in builtins.enumerate(all_labels):
            marginal = prob.sum(axis=tuple(a for a in range(prob.ndim) if a != axis))
            for side in open_sides[label]:
                estimate = _tail(marginal, side.endswith("low"))
                tails[(label, side)] = estimate
                if side.startswith("auto") and estimate > tail_mass / max(1, _n_auto(open_sides)):
                    grow.append((label, side))
        if not grow:
            break
        for label, side in grow:
            window = auto[label]
            width = max(window[1] - window[0] + 1, 16)
            if side == "auto-low":
                window[0] -= width
            else:
                window[1] += width
    else:
        raise ValueError(
            f"tail_mass: the automatic ranges {ranges} still leave more than {tail_mass} of the "
            f"posterior outside after {_MAX_GROWTH_ROUNDS} enlargements; is the posterior proper?"
        )

    coords = {label: np.arange(lo, hi + 1, dtype=np.int64) for label, (lo, hi) in ranges.items()}
    joint = xr.DataArray(prob, dims=all_labels, coords=coords, name="probability")
    dropped = [label for label in all_labels if label not in keep]
    if dropped:
        joint = joint.sum(dropped)
    omitted = float(sum(tails.values()))
    truncated = tuple(sorted({label for (label, _), _ in tails.items()}))
    return Enumeration(
        joint=joint,
        log_normaliser=log_norm,
        omitted_mass=omitted,
        ranges={label: ranges[label] for label in all_labels},
        truncated=truncated,
        variables=variables,
    )


def _n_auto(open_sides) -> int:
    return sum(1 for sides in open_sides.values() for s in sides if s.startswith("auto"))


def _kept_labels(vars, value_vars, labels) -> set[str]:
    all_labels = {label for v in value_vars for label in labels[v.name]}
    if vars is None:
        return all_labels
    if isinstance(vars, str) or not hasattr(vars, "__iter__"):
        vars = [vars]
    keep = set()
    for item in vars:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if name in labels:
            keep.update(labels[name])
        elif name in all_labels:
            keep.add(name)
        else:
            raise ValueError(
                f"vars: {item!r} is not a free variable of the model; have {sorted(labels)}"
            )
    return keep


def _stated_ranges(truncation, value_vars, labels) -> dict[str, tuple[int, int]]:
    stated = {}
    for key, value in (truncation or {}).items():
        name = key if isinstance(key, str) else getattr(key, "name", None)
        try:
            lo, hi = (int(x) for x in as_integers(value, f"truncation[{name!r}]").reshape(-1))
        except ValueError as error:
            if "integer" in str(error):
                raise
            raise ValueError(
                f"truncation[{name!r}] must be a pair (lowest, highest), got {value!r}"
            ) from None
        if hi < lo:
            raise ValueError(f"truncation[{name!r}] must have lowest <= highest, got {value!r}")
        if name in labels:
            for label in labels[name]:
                stated[label] = (lo, hi)
        elif any(name in labels[v.name] for v in value_vars):
            stated[name] = (lo, hi)
        else:
            raise ValueError(f"truncation: {key!r} is not a free variable of the model")
    return stated


class _LatentBounds:
    """Per-element extreme support bounds of one latent over its parents' enumerated ranges."""

    def __init__(self, model, v, value_vars, compile_kwargs):
        self.shape_name = v.name
        lower, upper = support_bounds(model.values_to_rvs[v])
        sides = [(side, g) for side, g in (("lower", lower), ("upper", upper)) if g is not None]
        self.sides = [side for side, _ in sides]
        graphs = model.replace_rvs_by_values([g for _, g in sides]) if sides else []
        self.parents = [
            p for p in value_vars if p is not v and any(p in set(ancestors([g])) for g in graphs)
        ]
        self.depends = [any(p in set(ancestors([g])) for p in self.parents) for g in graphs]
        self.fn = None
        if graphs:
            batched = [pt.tensor(dtype=p.dtype, shape=(None, *p.type.shape)) for p in self.parents]
            if self.parents:
                graphs = vectorize_graph(
                    graphs, replace=dict(zip(self.parents, batched, strict=True))
                )
            self.fn = model.compile_fn(
                graphs,
                inputs=batched,
                point_fn=False,
                on_unused_input="ignore",
                **one_shot(compile_kwargs),
            )

    def __call__(self, ranges, labels, shapes):
        shape = shapes[self.shape_name]
        size = int(np.prod(shape, dtype=np.int64))
        result = {"lower": [None] * size, "upper": [None] * size}
        if self.fn is None:
            return result["lower"], result["upper"]
        args = []
        if self.parents:
            parent_labels = [label for p in self.parents for label in labels[p.name]]
            grids = [np.arange(ranges[lb][0], ranges[lb][1] + 1) for lb in parent_labels]
            flat = [m.reshape(-1) for m in np.meshgrid(*grids, indexing="ij")]
            column = 0
            for p in self.parents:
                k = len(labels[p.name])
                cells = np.stack(flat[column : column + k], axis=-1)
                args.append(cells.reshape(len(cells), *shapes[p.name]).astype(p.dtype))
                column += k
        for side, depends, value in zip(self.sides, self.depends, self.fn(*args), strict=True):
            value = np.asarray(value)
            if depends:  # leading batch axis over the parents' grid: take the extreme
                value = value.min(axis=0) if side == "lower" else value.max(axis=0)
            result[side] = [int(x) for x in np.broadcast_to(value, shape).reshape(-1)]
        return result["lower"], result["upper"]


def _evaluate(batched, value_vars, labels, shapes, ranges, all_labels) -> np.ndarray:
    """Joint log-p on the full grid, shaped one axis per label."""
    grid_shape = tuple(ranges[label][1] - ranges[label][0] + 1 for label in all_labels)
    lows = np.array([ranges[label][0] for label in all_labels], dtype=np.int64)
    n = math.prod(grid_shape)
    out = np.empty(n, dtype=np.float64)
    for start in range(0, n, _CHUNK):
        index = np.arange(start, min(n, start + _CHUNK))
        cells = np.stack(np.unravel_index(index, grid_shape), axis=-1) + lows
        candidates, column = [], 0
        for v in value_vars:
            k = len(labels[v.name])
            candidates.append(cells[:, column : column + k].reshape(len(index), *shapes[v.name]))
            column += k
        (out[index],) = batched(candidates, {})
    return out.reshape(grid_shape)
