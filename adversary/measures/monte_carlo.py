"""The data holder's measures of any PyMC attack model by Monte Carlo over releases.

Kazan & Reiter's marginal posterior (3.3), marginal risk (3.4) and probability
of a correct decision (3.6) average the adversary's posterior over every
release the mechanism could produce from the truth. The scenario modules sum
that average exactly over a release grid; for a model no one has written such
a sum for (a user's own attack, or one with too many releases to sum), this
module estimates it the direct way:

1. **simulate** ``N`` release sets from the model's own generative process with
   every latent fixed at the truth (the observed variables' random graph with
   the latents replaced by the truth, vectorised over ``N`` copies — or
   ``pymc.do`` and one draw per set: the release mechanism exactly as the
   model declares it, with its exact discrete Gaussian sampler);
2. **infer**: for each simulated release set, the adversary's posterior of the
   event (default: "the target has its true value") and their Bayes decision
   for the target under 0-1 loss (3.5) — by exact enumeration
   (``method="exact"``) or by exact-Gibbs MCMC (``method="mcmc"``,
   :func:`adversary.inference.sample`);
3. **average**: the mean posterior estimates (3.3), divided by the prior
   probability of the event (3.4); the frequency of correct decisions (3.6).
   Standard errors are the sample standard deviation over ``√N`` (posterior)
   and the binomial ``√(q̃(1-q̃)/N)`` for the frequency of correct decisions,
   with ``q̃ = (k + 1/2)/(N + 1)`` for ``k`` correct (so it is not 0 when all
   ``N`` decisions agree); with ``N = 1`` they are infinite.

**Compiled once.** The exact path compiles the model's joint log-p once as a
function of the latents *and the observed values* (the observed constants are
replaced by inputs) and vectorises it over a batch of releases × a grid of
latent values, so every simulated release set costs one call on a slice of a
matrix, not a compilation. The MCMC path rebuilds the model with its observed
values in shared variables, freezes it (PyMC caches a frozen model's compiled
functions) and builds the exact Gibbs steps once; each release set then sets
the shared values and samples.

**Cost** (measured on the 2-core development machine, one run): the exact
path takes about 10–60 µs per simulated release set (mostly the exact noise
sampler) after 0.3–1 s of set-up — 20 000 release sets of the Dare County,
Granville County or a 3-cell model in under 2 s. The MCMC path with the
defaults (one chain, 200 tuning + 500 draws) takes about 0.15–0.3 s per
release set, about half of it per-call overhead of
:func:`adversary.inference.sample` (its start-point check compiles anew on
every call, and the DataTree is built); use it for a few hundred sets.

**Definitions.**

- ``truth`` names *every* free latent of the model with its true value (the
  data holder knows the whole truth; releases are drawn from it).
- ``target``: the latent scalar the adversary decides on (a variable name or an
  element label ``"name[i]"``); default: the model's first free variable (the
  target's cell ``X1`` in every scenario model).
- ``event``: what the posterior is the probability of; default
  ``{target: truth[target]}`` ("the target has the truth's value"). A mapping
  ``{name: value}`` (all must hold) or a callable, as in
  :func:`adversary.inference.posterior_probability`; for the exact path it is
  evaluated like a sampled posterior, with the grid cells as draws.
- the **decision** is the posterior mode of the target; a tie (equal posterior
  within a relative 1e-12) goes to the largest value, as the single-block
  decision (3.5) sends a tie to ``m + 1``. With MCMC it is the mode of the
  draws, which can differ from the Bayes decision when the posterior is close
  to a tie; the estimate is then that of an adversary deciding from that many
  draws.
- ``prior_of_truth``: the prior probability of the event. Computed exactly by
  enumerating the prior of the event's variables, their ancestors and any
  Potential that ties them to others (a mapping event names its variables; a
  callable event is taken to involve every latent). Variables declared after
  them do not enter: their conditional priors sum to one, and an improper one
  such as ``Uniform{k1, k1+1, …}`` (S4.1) counts as the same constant for every
  ``k1`` — so the block-group prior of ``X1 = m + 1`` is ``p``, as in the
  paper. Give ``prior_of_truth=`` where this enumeration cannot reach.

**Potentials.** Random draws ignore Potentials, so a model whose observed
likelihood lives in a ``pm.Potential`` cannot be simulated honestly: a
Potential that involves an observed variable is refused (``ValueError``). A
Potential on latents only is part of the prior: it enters the posteriors and
the prior of the event, and the truth must have finite log-p under it.
"""

from __future__ import annotations

import builtins
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pymc.model import modelcontext
from pymc.model.fgraph import ModelObservedRV, fgraph_from_model, model_from_fgraph
from pymc.model.transform.optimization import freeze_model
from pytensor.graph.replace import graph_replace, vectorize_graph
from pytensor.graph.traversal import ancestors

from .._validation import as_integers, as_probability
from ..distributions.support import support_bounds
from ..inference import assign_steps, event_indicator, marginal_pmf, posterior_probability
from ..inference import sample as mcmc_sample
from ..inference.enumeration import open_window
from .marginal import MarginalMeasures

__all__ = ["ReleasePosteriors", "monte_carlo_measures", "release_posteriors", "simulate_releases"]

METHODS = ("exact", "mcmc")

#: Standard errors in :attr:`MarginalMeasures.error_bound`, unless a caller says otherwise.
DEFAULT_SE_MULTIPLE = 4.0

_MAX_GROWTH_ROUNDS = 64
_BLOCK = 1 << 20  # largest (releases × cells) block evaluated in one call
_TIE_RTOL = 1e-12


# --- the model's parts ---------------------------------------------------------------------


def _latent_values(model) -> list:
    return [model.rvs_to_values[rv] for rv in model.free_RVs]


def _is_discrete(var) -> bool:
    return np.dtype(var.dtype).kind in "iub"


def _labels(name: str, shape: tuple) -> list[str]:
    if shape == ():
        return [name]
    return [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(shape)]


def _var_dims(model, name: str, shape: tuple) -> tuple:
    dims = model.named_vars_to_dims.get(name)
    if dims is not None and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{k}" for k in range(len(shape)))


def _check_potentials(model) -> None:
    """Refuse models whose releases are not observed distributions that can be drawn.

    A Potential that involves an observed variable is refused (draws ignore
    it); so is a model with no observed variable at all, such as one whose
    release enters only as a Potential on latents (an indicator of a
    post-processed count).
    """
    if not model.observed_RVs:
        hint = (
            f"; its Potentials {[p.name for p in model.potentials]} cannot be simulated — "
            "declare the releases as observed distributions"
            if model.potentials
            else ""
        )
        raise ValueError(f"model: has no observed variables (no releases to simulate){hint}")
    observed = set(model.observed_RVs) | {model.rvs_to_values[rv] for rv in model.observed_RVs}
    for potential in model.potentials:
        involved = observed & set(ancestors([potential]))
        if involved:
            names = sorted(v.name for v in involved if v in model.observed_RVs) or sorted(
                model.values_to_rvs[v].name for v in involved if v in model.values_to_rvs
            )
            raise ValueError(
                f"model: the Potential {potential.name!r} involves the observed variable(s) "
                f"{names}; releases drawn from the model ignore Potentials, so its likelihood "
                "cannot be simulated. Declare the release as an observed distribution instead."
            )


def _compile(model, outputs, inputs, compile_kwargs, *, one_shot=False):
    kwargs = dict(compile_kwargs or {})
    if one_shot:  # a few calls: PyTensor's FAST_COMPILE beats a numba compilation
        kwargs.setdefault("mode", "FAST_COMPILE")
    return model.compile_fn(
        outputs, inputs=inputs, point_fn=False, on_unused_input="ignore", **kwargs
    )


def _validated_truth(model, truth) -> dict[str, np.ndarray]:
    """``{latent name: value}`` for every free latent, with the variable's dtype and shape.

    Names and values are those of the random variables (``sigma``, not a
    transformed value variable such as ``sigma_log__``).
    """
    if not isinstance(truth, Mapping):
        raise TypeError(f"truth must be a mapping {{latent name: value}}, got {truth!r}")
    latents = {rv.name: rv for rv in model.free_RVs}
    point = model.initial_point()
    shapes = {rv.name: np.shape(point[model.rvs_to_values[rv].name]) for rv in model.free_RVs}
    given = {}
    for key, value in truth.items():
        name = key if isinstance(key, str) else getattr(key, "name", None)
        if name not in latents:
            raise ValueError(
                f"truth: {key!r} is not a free (latent) variable of the model; "
                f"latents are {sorted(latents)}"
            )
        rv = latents[name]
        if _is_discrete(rv):
            array = as_integers(value, f"truth[{name!r}]").astype(rv.dtype)
        else:
            array = np.asarray(value, dtype=rv.dtype)
            if not np.all(np.isfinite(array)):
                raise ValueError(f"truth[{name!r}] must be finite, got {value!r}")
        if array.shape != shapes[name]:
            raise ValueError(
                f"truth[{name!r}] must have shape {shapes[name]}, got shape {array.shape}"
            )
        given[name] = array
    missing = sorted(set(latents) - set(given))
    if missing:
        raise ValueError(
            f"truth: give a value for every free latent (releases are drawn from the whole "
            f"truth); missing {missing}"
        )
    truth = {rv.name: given[rv.name] for rv in model.free_RVs}
    _check_truth_in_support(model, truth)
    return truth


def _check_truth_in_support(model, truth: dict[str, np.ndarray]) -> None:
    """Every prior term (and latent-only Potential) must be finite at the truth."""
    constants = {rv: pt.constant(truth[rv.name]) for rv in model.free_RVs}
    terms = [*model.free_RVs, *model.potentials]
    graphs = [pt.sum(pm.logp(rv, constants[rv], warn_rvs=False)) for rv in model.free_RVs]
    graphs += [pt.sum(p) for p in model.potentials]
    graphs = graph_replace(graphs, constants, strict=False)
    fn = pytensor.function([], graphs, mode="FAST_COMPILE", on_unused_input="ignore")
    for term, logp in zip(terms, fn(), strict=True):
        if not np.isfinite(logp):
            shown = {k: v.tolist() for k, v in truth.items()}
            raise ValueError(
                f"truth: {shown} is outside the prior support ({term.name!r} has log-p {logp})"
            )


def _observed_data(model, rv) -> np.ndarray:
    data = model.rvs_to_values[rv]
    return np.asarray(data.get_value() if hasattr(data, "get_value") else data.data)


# --- simulating releases ------------------------------------------------------------------


def simulate_releases(model, truth: Mapping, releases: int, random_seed=None) -> dict:
    """``releases`` independent release sets drawn from ``model`` with its latents at ``truth``.

    Uses the model's own generative process: the observed variables' random
    graph with every latent replaced by its true value, vectorised over the
    release sets (one draw of the mechanism each, as ``pymc.draw`` of
    ``pymc.do(model, truth)`` would give one at a time). Returns
    ``{observed name: array of shape (releases, *shape)}`` with the observed
    data's dtype. Same ``random_seed``, same draws.
    """
    model = modelcontext(model)
    releases = _positive_int(releases, "releases")
    _check_potentials(model)
    truth = _validated_truth(model, truth)
    return _Simulator(model, truth, _generator(random_seed))(releases)


class _Simulator:
    """Release sets drawn from the truth, compiled once.

    The observed variables' graph is vectorised over a batch of copies of
    the truth (``pytensor.graph.replace.vectorize_graph``), so one call draws
    every release set, each with its own noise. Observed variables that do
    not depend on any latent cannot be batched that way; then each release
    set is one call of ``pymc.do(model, truth)``'s observed variables.
    """

    def __init__(self, model, truth, rng):
        if not model.observed_RVs:
            raise ValueError("model: has no observed variables (no releases to simulate)")
        observed = list(model.observed_RVs)
        self.names = [rv.name for rv in observed]
        self.dtypes = [model.rvs_to_values[rv].dtype for rv in observed]
        self.shapes = [np.shape(_observed_data(model, rv)) for rv in observed]
        seed = int(rng.integers(2**31))
        count = pt.scalar("releases", dtype="int64")
        replace = {
            rv: pt.alloc(pt.constant(truth[rv.name]), count, *np.shape(truth[rv.name]))
            for rv in model.free_RVs
        }
        outputs = vectorize_graph(observed, replace=replace)
        self.batched = all(o.ndim == rv.ndim + 1 for o, rv in zip(outputs, observed, strict=True))
        if not self.batched:
            intervened = pm.do(model, truth, make_interventions_shared=False)
            count, outputs = None, [intervened[name] for name in self.names]
        # Draws run in Python (the exact discrete Gaussian sampler): no numba compilation.
        self.fn = pm.pytensorf.compile(
            inputs=[] if count is None else [count],
            outputs=outputs,
            random_seed=seed,
            mode="FAST_COMPILE",
        )

    def __call__(self, releases: int) -> dict[str, np.ndarray]:
        try:
            if self.batched:
                draws = [np.asarray(d) for d in self.fn(np.int64(releases))]
            else:
                calls = (self.fn() for _ in range(releases))
                draws = [np.stack(v) for v in zip(*calls, strict=True)]
        except NotImplementedError as error:
            raise ValueError(
                f"model: cannot draw its observed variables {self.names} ({error}); the Monte "
                "Carlo measures need a release mechanism that can be sampled"
            ) from error
        out = {}
        for name, dtype, shape, draw in zip(
            self.names, self.dtypes, self.shapes, draws, strict=True
        ):
            if draw.shape[1:] != shape or len(draw) != releases:
                raise ValueError(
                    f"model: draws of {name!r} have shape {draw.shape[1:]}, its observed data "
                    f"{shape}"
                )
            cast = draw.astype(dtype)
            if not np.array_equal(cast, draw):
                raise ValueError(f"model: draws of {name!r} do not fit its observed dtype {dtype}")
            out[name] = cast
        return out


# --- exact posteriors for many releases from one compiled log-p ---------------------------


class _Bounds:
    """Support bounds of each latent element, at their extremes over the parents' ranges."""

    def __init__(self, model, value_vars, compile_kwargs):
        self.entries = []
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
                fn = _compile(model, graphs, batched, compile_kwargs, one_shot=True)
            self.entries.append((v.name, [s for s, _ in sides], fn, parents, depends))

    def __call__(self, name, ranges, labels, shapes):
        """``(lows, highs)``: one bound (or ``None``) per element of latent ``name``."""
        entry = next(e for e in self.entries if e[0] == name)
        _, sides, fn, parents, depends = entry
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
    """

    def __init__(self, model, value_vars, logp, data, compile_kwargs):
        self.value_vars, self.data = list(value_vars), list(data)
        cells = [pt.tensor(dtype=v.dtype, shape=(1, None, *v.type.shape)) for v in self.value_vars]
        rows = [pt.tensor(dtype=d.dtype, shape=(None, 1, *d.type.shape)) for d in self.data]
        replace = dict(zip(self.value_vars + self.data, cells + rows, strict=True))
        out = vectorize_graph(pt.cast(logp, "float64"), replace=replace)
        # Called a few times on large batches: no numba compilation.
        self.fn = _compile(model, [out], cells + rows, compile_kwargs, one_shot=True)
        self.fn.trust_input = True
        self._dtypes = [v.dtype for v in self.value_vars] + [d.dtype for d in self.data]

    def __call__(self, cells: list[np.ndarray], rows: list[np.ndarray], n_rows: int) -> np.ndarray:
        args = [np.asarray(a, dtype=d) for a, d in zip([*cells, *rows], self._dtypes, strict=True)]
        (out,) = self.fn(*args)
        n_cells = len(cells[0][0]) if cells else 1
        return np.broadcast_to(np.asarray(out, dtype=np.float64), (n_rows, n_cells))


def _tail(edge: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Geometric-tail estimate ``m_e r/(1-r)`` of the mass past an edge, per row (enumerate's)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = edge / inner
        estimate = np.where(inner > edge, edge * ratio / (1.0 - ratio), np.inf)
    return np.where(edge == 0, 0.0, estimate)


@dataclass
class _GridResult:
    """Per-row reductions of the normalised posterior on the final grid."""

    ranges: dict
    event: np.ndarray  # (rows,) posterior probability of the event
    target: np.ndarray | None  # (rows, n values) posterior pmf of the target
    target_values: np.ndarray | None
    omitted: np.ndarray  # (rows,) estimated posterior mass outside the grid
    truth_logp: np.ndarray  # (rows,) log-p at the truth cell


class _Grid:
    """Exact posteriors of a discrete model on a latent grid shared by many rows of data."""

    def __init__(self, model, value_vars, logp, data, compile_kwargs):
        self.model = model
        self.value_vars = list(value_vars)
        for v in self.value_vars:
            if not _is_discrete(v):
                raise TypeError(
                    f"model: exact enumeration needs discrete latents; {v.name!r} has dtype "
                    f"{v.dtype} (use method='mcmc')"
                )
        point = model.initial_point()
        self.shapes = {v.name: tuple(np.shape(point[v.name])) for v in self.value_vars}
        self.labels = {v.name: _labels(v.name, self.shapes[v.name]) for v in self.value_vars}
        self.all_labels = [lb for v in self.value_vars for lb in self.labels[v.name]]
        self.bounds = _Bounds(model, self.value_vars, compile_kwargs)
        self.logp = _GridLogp(model, self.value_vars, logp, data, compile_kwargs)

    def _ranges(self, centre, auto):
        ranges, open_sides = {}, {}
        for v in self.value_vars:
            lows, highs = self.bounds(v.name, ranges, self.labels, self.shapes)
            current = np.asarray(centre[v.name]).reshape(-1)
            for k, label in builtins.enumerate(self.labels[v.name]):
                lo, hi, sides = lows[k], highs[k], set()
                if lo is None or hi is None:
                    lo, hi, low_open, high_open = open_window(auto, label, current[k], lo, hi)
                    sides |= {"low"} if low_open else set()
                    sides |= {"high"} if high_open else set()
                if hi < lo:
                    raise ValueError(f"model: the support of {label!r} is empty ({lo}..{hi})")
                ranges[label] = (int(lo), int(hi))
                open_sides[label] = sides
        return ranges, open_sides

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

    def event_mask(self, event, flat) -> np.ndarray:
        """The event on every cell, evaluated as on a sampled posterior with the cells as draws."""
        if event is None:
            return np.zeros(len(flat), dtype=bool)
        data, column = {}, 0
        for v in self.value_vars:
            k = len(self.labels[v.name])
            shape = self.shapes[v.name]
            values = flat[:, column : column + k].reshape(1, len(flat), *shape)
            data[v.name] = (("chain", "draw", *_var_dims(self.model, v.name, shape)), values)
            column += k
        posterior = xr.Dataset(data, coords={"chain": [0], "draw": np.arange(len(flat))})
        return event_indicator(posterior, event).values.reshape(-1) > 0.5

    def run(
        self,
        rows: list[np.ndarray],
        n_rows: int,
        *,
        centre,
        event,
        target: str | None,
        tail_mass: float,
        max_cells: int,
    ) -> _GridResult:
        """Grow the grid until every row's estimated omitted mass is small; reduce each row."""
        auto: dict[str, list[int]] = {}
        for _ in range(_MAX_GROWTH_ROUNDS):
            ranges, open_sides = self._ranges(centre, auto)
            grid_shape = tuple(ranges[lb][1] - ranges[lb][0] + 1 for lb in self.all_labels)
            n_cells = math.prod(grid_shape)
            if n_cells > max_cells:
                raise ValueError(
                    f"max_cells: the latent grid needs {n_cells} cells (ranges {ranges}), more "
                    f"than max_cells={max_cells}; raise it or use method='mcmc'"
                )
            result, tails = self._reduce(
                rows, n_rows, ranges, open_sides, grid_shape, centre, event, target
            )
            n_auto = max(1, sum(len(s) for s in open_sides.values()))
            grow = [key for key, t in tails.items() if np.max(t) > tail_mass / n_auto]
            if not grow:
                return result
            for label, side in grow:
                window = auto[label]
                width = max(window[1] - window[0] + 1, 16)
                if side == "low":
                    window[0] -= width
                else:
                    window[1] += width
        raise ValueError(
            f"tail_mass: the automatic ranges {ranges} still leave more than {tail_mass} of some "
            f"posterior outside after {_MAX_GROWTH_ROUNDS} enlargements; is the posterior proper?"
        )

    def _reduce(self, rows, n_rows, ranges, open_sides, grid_shape, centre, event, target):
        candidates, flat = self.cells(ranges)
        n_cells = len(flat)
        mask = self.event_mask(event, flat).astype(np.float64)
        truth_cell = int(
            np.ravel_multi_index(
                tuple(
                    int(np.asarray(centre[v.name]).reshape(-1)[k]) - ranges[lb][0]
                    for v in self.value_vars
                    for k, lb in builtins.enumerate(self.labels[v.name])
                ),
                grid_shape,
            )
        )
        axes = {lb: a for a, lb in builtins.enumerate(self.all_labels)}
        event_p = np.empty(n_rows)
        omitted = np.zeros(n_rows)
        truth_logp = np.empty(n_rows)
        target_pmf = None
        if target is not None:
            target_pmf = np.empty((n_rows, grid_shape[axes[target]]))
        tails = {(lb, s): np.zeros(n_rows) for lb, sides in open_sides.items() for s in sides}
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
            if np.isnan(log_joint).any():
                raise FloatingPointError("model: its log-p is NaN on some cell of the grid")
            top = log_joint.max(axis=1, keepdims=True)
            if not np.all(np.isfinite(top)):
                raise ValueError(
                    "model: a release set drawn from the truth has log-p -inf (or +inf) on every "
                    f"cell of the latent grid {ranges}; the model's random draws and its log-p "
                    "disagree"
                )
            prob = np.exp(log_joint - top)
            prob /= prob.sum(axis=1, keepdims=True)
            event_p[start:stop] = prob @ mask
            truth_logp[start:stop] = log_joint[:, truth_cell]
            shaped = prob.reshape(b, *grid_shape)
            for label, axis in axes.items():
                want_tail = bool(open_sides[label])
                if not want_tail and label != target:
                    continue
                others = tuple(1 + a for a in range(len(grid_shape)) if a != axis)
                marginal = shaped.sum(axis=others)
                if label == target:
                    target_pmf[start:stop] = marginal
                for side in open_sides[label]:
                    if marginal.shape[1] < 2:
                        estimate = np.full(b, np.inf)
                    elif side == "low":
                        estimate = _tail(marginal[:, 0], marginal[:, 1])
                    else:
                        estimate = _tail(marginal[:, -1], marginal[:, -2])
                    tails[(label, side)][start:stop] = estimate
        for t in tails.values():
            omitted += t
        values = None
        if target is not None:
            values = np.arange(ranges[target][0], ranges[target][1] + 1)
        return _GridResult(ranges, event_p, target_pmf, values, omitted, truth_logp), tails


def _with_shared_observations(model):
    """A copy of ``model`` whose observed values are new shared variables, and those.

    Only the observed-data input of each ``ModelObservedRV`` node is changed:
    a constant elsewhere in the graph that happens to equal an observed value
    (``mu = 3 + X`` with an observation 3) stays a constant.
    """
    fgraph, _ = fgraph_from_model(model)
    for node in list(fgraph.apply_nodes):
        if isinstance(node.op, ModelObservedRV):
            data = node.inputs[1]
            name = node.outputs[0].name
            value = data.get_value() if hasattr(data, "get_value") else np.asarray(data.data)
            variable = pytensor.shared(value, name=f"{name}_release", shape=data.type.shape)
            fgraph.change_node_input(node, 1, variable, import_missing=True)
    copy = model_from_fgraph(fgraph, mutate_fgraph=True)
    return copy, {rv.name: copy.rvs_to_values[rv] for rv in copy.observed_RVs}


def _observed_inputs(model):
    """A copy of ``model``, its joint log-p with each observed value a symbolic input, and those."""
    if not model.observed_RVs:
        raise ValueError("model: has no observed variables (no releases to condition on)")
    copy, shared = _with_shared_observations(model)
    inputs = {
        name: pt.tensor(name=f"{name}_release", dtype=v.dtype, shape=v.type.shape)
        for name, v in shared.items()
    }
    replace = {shared[name]: inputs[name] for name in shared}
    logp = graph_replace(copy.logp(), replace, strict=False)
    return copy, logp, [inputs[rv.name] for rv in copy.observed_RVs]


class ReleasePosteriors:
    """The adversary's exact posterior for many release sets, from one compiled log-p.

    ``ReleasePosteriors(model)`` compiles the model's joint log-p (priors,
    releases, latent Potentials) as a function of the latents and of the
    observed values; calling it with ``{observed name: array (n, *shape)}``
    returns, for each of the ``n`` release sets, the posterior probability of
    ``event``, the posterior pmf of ``target`` and the estimated posterior mass
    outside the latent grid (unbounded latents get automatic windows, grown
    for all release sets together until every one's estimate is below
    ``tail_mass``, as :func:`adversary.inference.enumerate_posterior` does for one).
    """

    def __init__(self, model=None, *, compile_kwargs: dict | None = None):
        model = modelcontext(model)
        if not model.free_RVs:
            raise ValueError("model: has no free (latent) variables")
        self.model, logp, inputs = _observed_inputs(model)
        self.observed = [rv.name for rv in self.model.observed_RVs]
        self._inputs = inputs
        self._shapes = [np.shape(_observed_data(self.model, rv)) for rv in self.model.observed_RVs]
        self.grid = _Grid(self.model, _latent_values(self.model), logp, inputs, compile_kwargs)

    def __call__(
        self,
        releases: Mapping,
        event=None,
        target: str | None = None,
        *,
        centre: Mapping | None = None,
        tail_mass: float = 1e-12,
        max_cells: int = 20_000_000,
    ) -> xr.Dataset:
        """Per release set: ``event`` posterior, ``target`` pmf, ``omitted_mass``.

        ``centre`` (default: the model's initial point) is where automatic
        windows start; the Monte Carlo path passes the truth.
        """
        tail_mass = float(as_probability(tail_mass, "tail_mass"))
        rows, n = self._rows(releases)
        centre = self.model.initial_point() if centre is None else centre
        if target is not None and target not in self.grid.all_labels:
            raise ValueError(
                f"target: {target!r} is not a latent scalar; have {self.grid.all_labels}"
            )
        result = self.grid.run(
            rows,
            n,
            centre=centre,
            event=event,
            target=target,
            tail_mass=tail_mass,
            max_cells=max_cells,
        )
        data = {
            "omitted_mass": ("release", result.omitted),
            "log_p_at_centre": ("release", result.truth_logp),
        }
        if event is not None:
            data["event_posterior"] = ("release", result.event)
        coords = {"release": np.arange(n)}
        if target is not None:
            data["target_posterior"] = (("release", target), result.target)
            coords[target] = result.target_values
        return xr.Dataset(
            data,
            coords=coords,
            attrs={"ranges": {k: list(v) for k, v in result.ranges.items()}},
        )

    def _rows(self, releases: Mapping) -> tuple[list[np.ndarray], int]:
        if not isinstance(releases, Mapping):
            raise TypeError(
                f"releases must be a mapping {{observed name: array}}, got {type(releases)}"
            )
        unknown = sorted(set(releases) - set(self.observed))
        missing = sorted(set(self.observed) - set(releases))
        if unknown or missing:
            raise ValueError(
                f"releases: need exactly the observed variables {self.observed}; "
                f"unknown {unknown}, missing {missing}"
            )
        rows, n = [], None
        for name, symbolic, shape in zip(self.observed, self._inputs, self._shapes, strict=True):
            array = np.asarray(releases[name])
            if array.shape[1:] != shape:
                raise ValueError(
                    f"releases[{name!r}] must have shape (n, *{shape}), got {array.shape}"
                )
            cast = array.astype(symbolic.dtype)
            if not np.array_equal(cast, array):
                raise ValueError(f"releases[{name!r}] does not fit the dtype {symbolic.dtype}")
            if n is not None and len(cast) != n:
                raise ValueError("releases: every observed variable needs the same number of sets")
            n = len(cast)
            rows.append(cast)
        if not n:
            raise ValueError("releases: no release sets given")
        return rows, n


def release_posteriors(model, releases: Mapping, event=None, target=None, **kwargs) -> xr.Dataset:
    """One-off :class:`ReleasePosteriors` call (compile, then evaluate every release set)."""
    compile_kwargs = kwargs.pop("compile_kwargs", None)
    return ReleasePosteriors(model, compile_kwargs=compile_kwargs)(
        releases, event, target, **kwargs
    )


# --- the prior of the event ---------------------------------------------------------------


def _event_variables(model, event) -> set[str] | None:
    """Latent names a mapping event mentions (``None``: unknown, i.e. a callable)."""
    if not isinstance(event, Mapping):
        return None
    names = set()
    for key in event:
        name = key if isinstance(key, str) else getattr(key, "name", key)
        names.add(str(name).split("[", 1)[0])
    return names


def _prior_closure(model, names: set[str] | None) -> list:
    """Free RVs whose prior determines the event's: ancestors and Potential-coupled latents."""
    free = list(model.free_RVs)
    if names is None:
        return free
    chosen = {rv for rv in free if rv.name in names}
    while True:
        grown = set(chosen)
        for rv in chosen:
            grown |= {a for a in ancestors([rv]) if a in free}
        for potential in model.potentials:
            involved = {a for a in ancestors([potential]) if a in free}
            if involved & grown:
                grown |= involved
        if grown == chosen:
            return [rv for rv in free if rv in chosen]
        chosen = grown


def _prior_of_event(model, truth, event, tail_mass, max_cells, compile_kwargs) -> dict:
    """``P[event]`` under the prior, by enumerating the prior of the event's closure."""
    rvs = _prior_closure(model, _event_variables(model, event))
    potentials = [
        p
        for p in model.potentials
        if {a for a in ancestors([p]) if a in model.free_RVs} <= set(rvs)
    ]
    logp = model.logp(vars=[*rvs, *potentials])
    value_vars = [model.rvs_to_values[rv] for rv in rvs]
    try:
        grid = _Grid(model, value_vars, logp, [], compile_kwargs)
        result = grid.run(
            [], 1, centre=truth, event=event, target=None, tail_mass=tail_mass, max_cells=max_cells
        )
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"prior_of_truth: cannot enumerate the prior of the event over "
            f"{[rv.name for rv in rvs]} ({error}); give prior_of_truth= instead"
        ) from error
    return {
        "prior_of_truth": float(result.event[0]),
        "variables": [rv.name for rv in rvs],
        "omitted_mass": float(result.omitted[0]),
    }


# --- the measures -------------------------------------------------------------------------


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _generator(random_seed) -> np.random.Generator:
    if isinstance(random_seed, np.random.Generator):
        return random_seed
    return np.random.default_rng(random_seed)


def _scalar_labels(model, truth) -> list[str]:
    return [lb for rv in model.free_RVs for lb in _labels(rv.name, np.shape(truth[rv.name]))]


def _target_label(model, truth, target) -> str:
    """The decision's latent scalar: checked, discrete; default the first free variable."""
    if target is None:
        first = model.free_RVs[0]
        if np.shape(truth[first.name]) != ():
            raise ValueError(
                f"target: the first latent {first.name!r} is not a scalar; name one latent "
                "scalar (a variable or an element label such as 'name[0]') as target="
            )
        name = first.name
    else:
        name = target if isinstance(target, str) else getattr(target, "name", None)
        labels = _scalar_labels(model, truth)
        if name not in labels:
            raise ValueError(f"target: {target!r} is not a latent scalar; have {labels}")
    rv = model[name.split("[", 1)[0]]
    if not _is_discrete(rv):
        raise ValueError(
            f"target: {name!r} is continuous; the 0-1 decision (3.5) needs a discrete target "
            "(name one as target=)"
        )
    return name


def _label_value(truth, label: str) -> int | float:
    if label in truth:
        return truth[label].item()
    name, index = label[:-1].split("[", 1)
    return truth[name][tuple(int(i) for i in index.split(","))].item()


def _validated_event(model, truth, event, target):
    if event is None:
        return {target: _label_value(truth, target)}
    if isinstance(event, Mapping):
        if not event:
            raise ValueError("event: an empty mapping is not an event")
        labels = set(_scalar_labels(model, truth))
        for key in event:
            name = key if isinstance(key, str) else getattr(key, "name", key)
            if name not in truth and name not in labels:
                raise ValueError(
                    f"event: {key!r} is not a latent of the model; have {sorted(labels)}"
                )
        return {(k if isinstance(k, str) else k.name): v for k, v in event.items()}
    if callable(event):
        return event
    raise TypeError(f"event must be a mapping {{name: value}} or a callable, got {event!r}")


def _decide(pmf: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Posterior mode per row; ties (within a relative 1e-12) go to the largest value."""
    best = pmf.max(axis=1, keepdims=True)
    tied = pmf >= best * (1.0 - _TIE_RTOL)
    last = pmf.shape[1] - 1 - np.argmax(tied[:, ::-1], axis=1)
    return values[last]


def _shared_observations(model):
    """A frozen copy of ``model`` whose observed values are shared variables, and those.

    Frozen (:func:`pymc.model.transform.optimization.freeze_model`), the copy
    caches its graphs and compiled functions, so repeated sampling with new
    observed values does not recompile.
    """
    copy, _ = _with_shared_observations(model)
    frozen = freeze_model(copy)
    return frozen, {rv.name: frozen.rvs_to_values[rv] for rv in frozen.observed_RVs}


def _mcmc_posteriors(
    model, simulated, event, target, rng, *, draws, tune, chains, sample_kwargs, compile_kwargs
):
    copy, shared = _shared_observations(model)
    steps = assign_steps(copy, compile_kwargs=compile_kwargs)
    if any(not _is_discrete(v) for v in copy.value_vars):
        provided, selected = pm.sampling.mcmc.assign_step_methods(copy, step=steps)
        steps = pm.sampling.mcmc.instantiate_steppers(
            copy, provided, selected, compile_kwargs=compile_kwargs
        )
        steps = steps if isinstance(steps, list) else [steps]
    n = len(next(iter(simulated.values())))
    seeds = rng.integers(2**31, size=n)
    event_p = np.empty(n)
    decisions = np.empty(n, dtype=np.float64)
    quiet = logging.getLogger("pymc")
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    options = {"compute_convergence_checks": False, **(sample_kwargs or {})}
    try:
        for r in range(n):
            for name, variable in shared.items():
                variable.set_value(np.asarray(simulated[name][r], dtype=variable.dtype))
            tree = mcmc_sample(
                copy,
                draws=draws,
                tune=tune,
                chains=chains,
                cores=1,
                random_seed=int(seeds[r]),
                progressbar=False,
                step=steps,
                compile_kwargs=compile_kwargs,
                **options,
            )
            event_p[r] = posterior_probability(tree, event)
            pmf = marginal_pmf(tree, target)
            decisions[r] = _decide(pmf.values[None], pmf[target].values)[0]
    finally:
        quiet.setLevel(level)
    return event_p, decisions


def monte_carlo_measures(
    model,
    truth: Mapping,
    event: Mapping | Callable | None = None,
    *,
    target: str | None = None,
    releases: int = 1000,
    method: str = "exact",
    random_seed=None,
    prior_of_truth: float | None = None,
    se_multiple: float = DEFAULT_SE_MULTIPLE,
    tail_mass: float = 1e-12,
    max_cells: int = 20_000_000,
    draws: int = 500,
    tune: int = 200,
    chains: int = 1,
    sample_kwargs: Mapping | None = None,
    compile_kwargs: dict | None = None,
) -> MarginalMeasures:
    """Marginal posterior (3.3), marginal risk (3.4) and correct decisions (3.6) by simulation.

    Draws ``releases`` release sets from ``model`` with its latents at
    ``truth``, computes the adversary's posterior of ``event`` and Bayes
    decision (3.5) about ``target`` for each (exactly, or by MCMC), and
    averages. See the module docstring for the definitions.

    Parameters
    ----------
    model : pymc.Model
        Any attack model: latents (the adversary's unknowns, with their prior)
        and observed variables (the releases, with a mechanism that can be
        sampled). A Potential may involve latents only.
    truth : mapping
        ``{latent name: true value}`` for every free latent.
    event : mapping or callable, optional
        Default ``{target: truth[target]}``.
    target : str, optional
        Latent scalar (name or ``"name[i]"``) of the decision; default the
        first free latent.
    releases : int >= 1
        Number of simulated release sets ``N``.
    method : {"exact", "mcmc"}
        Per release: exact enumeration on a latent grid (discrete latents) or
        :func:`adversary.inference.sample` with ``draws``, ``tune``, ``chains``
        (and ``sample_kwargs``), its steps built once.
    random_seed : int, numpy Generator or None
        Same seed, same numbers.
    prior_of_truth : float in (0, 1], optional
        ``P[event]`` under the prior; default: enumerated exactly.
    se_multiple : float > 0
        ``error_bound = se_multiple × max(SE of (3.3), SE of (3.6))`` plus, for
        the exact path, the largest estimated posterior mass outside the grid.
    tail_mass, max_cells :
        As for :func:`adversary.inference.enumerate_posterior` (exact path and prior).

    Returns
    -------
    MarginalMeasures
        ``method="monte-carlo"``; ``details`` holds ``standard_errors``
        (``marginal_posterior``, ``marginal_risk``,
        ``correct_decision_probability``), ``se_multiple``, ``releases``,
        ``inference`` (``"exact"``/``"mcmc"``), ``target``, the per-release
        ``event_posterior`` and ``decision`` arrays, ``seconds_per_release``
        (simulation + inference, after the one-off ``setup_seconds``), and for
        the exact path the latent ``ranges``. ``omitted_mass`` is the largest
        estimated posterior mass outside the latent grid over the simulated
        release sets (exact path; 0 for MCMC, whose windows are bounded by
        :func:`~adversary.inference.sample`'s ``tail_mass`` per update).
    """
    model = modelcontext(model)
    releases = _positive_int(releases, "releases")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    se_multiple = float(se_multiple)
    if not se_multiple > 0 or not np.isfinite(se_multiple):
        raise ValueError(f"se_multiple must be a positive number, got {se_multiple!r}")
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    if prior_of_truth is not None:
        prior_of_truth = float(prior_of_truth)
        if not 0 < prior_of_truth <= 1:
            raise ValueError(f"prior_of_truth must be in (0, 1], got {prior_of_truth!r}")
    for name, value in (("draws", draws), ("chains", chains)):
        _positive_int(value, name)
    if isinstance(tune, bool) or not isinstance(tune, int | np.integer) or tune < 0:
        raise ValueError(f"tune must be an integer >= 0, got {tune!r}")
    if not model.free_RVs:
        raise ValueError("model: has no free (latent) variables")
    _check_potentials(model)
    truth = _validated_truth(model, truth)
    target = _target_label(model, truth, target)
    event = _validated_event(model, truth, event, target)
    true_target = _label_value(truth, target)
    rng = _generator(random_seed)

    setup = time.perf_counter()
    prior_details = {}
    if prior_of_truth is None:
        prior_details = _prior_of_event(model, truth, event, tail_mass, max_cells, compile_kwargs)
        prior_of_truth = prior_details["prior_of_truth"]
        if not prior_of_truth > 0:
            raise ValueError(
                "event: has prior probability 0, so its marginal risk (3.4) is undefined"
            )
    simulator = _Simulator(model, truth, rng)
    engine = None
    if method == "exact":
        engine = ReleasePosteriors(model, compile_kwargs=compile_kwargs)
    setup_seconds = time.perf_counter() - setup

    start = time.perf_counter()
    simulated = simulator(releases)
    simulated_at = time.perf_counter()
    details: dict = {}
    if method == "exact":
        table = engine(
            simulated,
            event,
            target,
            centre=truth,
            tail_mass=tail_mass,
            max_cells=max_cells,
        )
        if not np.all(np.isfinite(table["log_p_at_centre"].values)):
            raise ValueError(
                "model: a release set drawn from the truth has probability 0 at the truth; the "
                "model's random draws and its log-p disagree"
            )
        event_p = table["event_posterior"].values
        pmf = table["target_posterior"]
        decisions = _decide(pmf.values, pmf[target].values)
        omitted = float(table["omitted_mass"].max())
        details["ranges"] = table.attrs["ranges"]
    else:
        event_p, decisions = _mcmc_posteriors(
            model,
            simulated,
            event,
            target,
            rng,
            draws=int(draws),
            tune=int(tune),
            chains=int(chains),
            sample_kwargs=sample_kwargs,
            compile_kwargs=compile_kwargs,
        )
        omitted = 0.0
    finished = time.perf_counter()

    n = releases
    correct = decisions == true_target
    posterior_mean = float(event_p.mean())
    q = float(correct.mean())
    if n > 1:
        se_post = float(event_p.std(ddof=1) / math.sqrt(n))
        # Binomial SE at (k + 1/2)/(n + 1): never 0 when every decision agrees.
        q_se = (correct.sum() + 0.5) / (n + 1.0)
        se_decision = math.sqrt(q_se * (1.0 - q_se) / n)
    else:
        se_post = se_decision = math.inf
    details.update(
        {
            "inference": method,
            "releases": n,
            "target": target,
            "event": event if isinstance(event, Mapping) else repr(event),
            "standard_errors": {
                "marginal_posterior": se_post,
                "marginal_risk": se_post / prior_of_truth,
                "correct_decision_probability": se_decision,
            },
            "se_multiple": se_multiple,
            "event_posterior": event_p,
            "decision": decisions,
            "setup_seconds": setup_seconds,
            "simulation_seconds": simulated_at - start,
            "inference_seconds": finished - simulated_at,
            "seconds_per_release": (finished - start) / n,
        }
    )
    if prior_details:
        details["prior"] = {k: v for k, v in prior_details.items() if k != "prior_of_truth"}
    return MarginalMeasures(
        marginal_posterior=posterior_mean,
        marginal_risk=posterior_mean / prior_of_truth,
        correct_decision_probability=q,
        prior_of_truth=prior_of_truth,
        omitted_mass=omitted,
        error_bound=se_multiple * max(se_post, se_decision) + omitted,
        method="monte-carlo",
        details=details,
    )
