"""Feasible starting points for discrete models: check, and repair when needed.

PyMC checks the start point only for NUTS; a discrete chain started where the
log-p is ``-inf`` never moves under Gibbs-type updates. :func:`repair_start`
finds a feasible point instead (or raises a clear error):

1. the given point, if every log-p term is finite;
2. else the same point with the discrete variables at their support points;
3. else a coordinate-wise search over the discrete variables that minimises
   the number of non-finite log-p terms and, among those, maximises the sum of
   the finite ones, over windows of growing radius around the current value
   (clipped to each variable's support bounds). Continuous variables are not
   moved.
"""

from __future__ import annotations

import logging
import weakref

import numpy as np
from pymc.exceptions import SamplingError
from pymc.model import modelcontext

from ._conditional import (
    BatchedLogp,
    BoundsFunction,
    _logp_factors,
    is_discrete,
    logp_terms,
    one_shot,
)
from .safe import safe_compile_kwargs

__all__ = ["StartRepairer", "is_feasible", "repair_start"]

_log = logging.getLogger("adversary")
# Per model: {(its log-p terms, compile options): StartRepairer} (StartRepairer.of).
_REPAIRERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_RADII = (4, 64, 1024, 16_384, 262_144)


def _term_names(model) -> list[str]:
    return [v.name for v in (*model.free_RVs, *model.observed_RVs, *model.potentials)]


class _TermEvaluator:
    """Every log-p term of the model at one point (compiled once)."""

    def __init__(self, model, compile_kwargs=None):
        self.names = [v.name for v in model.value_vars]
        self.fn = model.compile_fn(
            logp_terms(model),
            inputs=model.value_vars,
            point_fn=False,
            on_unused_input="ignore",
            **safe_compile_kwargs(compile_kwargs),
        )

    def __call__(self, point) -> np.ndarray:
        return np.array([float(t) for t in self.fn(*[point[n] for n in self.names])])


def _score(terms: np.ndarray) -> tuple[int, float]:
    """(number of non-finite terms, -sum of finite terms): smaller is better."""
    bad = ~np.isfinite(terms) | np.isnan(terms)
    return int(bad.sum()), -float(np.sum(terms[~bad]))


def is_feasible(model=None, point=None, *, compile_kwargs=None) -> bool:
    """True if every log-p term of ``model`` is finite at ``point`` (default: its initial point)."""
    model = modelcontext(model)
    point = model.initial_point() if point is None else point
    terms = _TermEvaluator(model, one_shot(compile_kwargs))(point)
    return _score(terms)[0] == 0


class StartRepairer:
    """Checks and repairs start points of one model; compiles what it needs once, lazily.

    Calling it with a point returns ``(feasible point, repaired?)`` exactly as
    :func:`repair_start` does.
    """

    def __init__(self, model=None, *, compile_kwargs=None, max_sweeps: int = 50):
        # weak: StartRepairer.of keeps repairers in a map keyed weakly by their model
        self._model = weakref.ref(modelcontext(model))
        self.compile_kwargs = one_shot(compile_kwargs)
        self.max_sweeps = max_sweeps
        self._evaluate = None
        self._searchers = None
        self.discrete = [
            v
            for v in self.model.value_vars
            if is_discrete(v)
            and self.model.rvs_to_transforms.get(self.model.values_to_rvs[v]) is None
        ]

    @property
    def model(self):
        return self._model()

    @classmethod
    def of(cls, model, compile_kwargs=None) -> StartRepairer:
        """The model's repairer, compiled once while its log-p terms stay the same.

        Sampling the same model again (new observed values set in its shared
        variables, as a Monte Carlo run does for each simulated release) reuses
        the compiled check; a variable added to the model makes a new one.
        """
        key = (tuple(map(id, _logp_factors(model))), repr(sorted((compile_kwargs or {}).items())))
        kept = _REPAIRERS.setdefault(model, {})
        if key not in kept:
            kept[key] = cls(model, compile_kwargs=compile_kwargs)
        return kept[key]

    def evaluate(self, point) -> np.ndarray:
        if self._evaluate is None:
            self._evaluate = _TermEvaluator(self.model, self.compile_kwargs)
        return self._evaluate(point)

    def searchers(self):
        if self._searchers is None:
            model, kwargs = self.model, self.compile_kwargs
            self._searchers = {
                v.name: (
                    BatchedLogp(model, [v], outputs=logp_terms(model), compile_kwargs=kwargs),
                    BoundsFunction(model, v, compile_kwargs=kwargs),
                )
                for v in self.discrete
            }
        return self._searchers

    def __call__(self, point=None):
        model = self.model
        point = dict(model.initial_point() if point is None else point)
        point = {k: np.asarray(v) for k, v in point.items()}
        score = _score(self.evaluate(point))
        if score[0] == 0:
            return point, False

        # 2. support points of the discrete variables
        support = model.initial_point()
        candidate = {**point, **{v.name: np.asarray(support[v.name]) for v in self.discrete}}
        candidate_score = _score(self.evaluate(candidate))
        if candidate_score[0] == 0:
            _log.info("Start point was infeasible; using the discrete variables' support points.")
            return candidate, True
        if candidate_score < score:
            point, score = candidate, candidate_score

        # 3. coordinate-wise search
        for _ in range(self.max_sweeps):
            improved = False
            for name, (batched, bounds) in self.searchers().items():
                value = np.array(point[name], dtype=np.int64, copy=True)
                lower, upper = bounds(point, value.shape)
                for element in range(value.size):
                    best = _search_element(
                        batched,
                        point,
                        value,
                        element,
                        int(lower.reshape(-1)[element]),
                        int(upper.reshape(-1)[element]),
                        score,
                    )
                    if best is not None:
                        value.reshape(-1)[element], score = best
                        point = {**point, name: value.copy()}
                        improved = True
                        if score[0] == 0:
                            _log.info(
                                "Start point was infeasible; repaired by a coordinate search."
                            )
                            return point, True
            if not improved:
                break

        terms = self.evaluate(point)
        names = _term_names(model)
        bad = [f"{n}: {t}" for n, t in zip(names, terms, strict=True) if not np.isfinite(t)]
        shown = {k: v.tolist() for k, v in point.items()}
        raise SamplingError(
            "start point: no feasible start point found — the log-p stays -inf/NaN for "
            + ", ".join(bad)
            + f" at {shown}. Check that the prior allows the observations (e.g. support "
            "bounds such as X2 >= X1) or pass feasible initvals."
        )


def repair_start(model=None, point=None, *, compile_kwargs=None, max_sweeps: int = 50):
    """A feasible start point: ``point`` itself if feasible, else a repaired copy.

    Parameters
    ----------
    model : pymc.Model, optional (context model by default)
    point : dict, optional
        A point in value-variable space (as from ``model.initial_point()``);
        default the model's initial point.
    max_sweeps : int
        Sweeps of the coordinate-wise search before giving up.

    Returns
    -------
    (point, repaired) : the feasible point and whether it differs from the input.

    Raises
    ------
    pymc.exceptions.SamplingError
        If no feasible point is found by moving the discrete variables; the
        message lists the log-p terms that stay ``-inf``/NaN.
    """
    return StartRepairer(model, compile_kwargs=compile_kwargs, max_sweeps=max_sweeps)(point)


def _search_element(batched, point, value, element, lower, upper, score):
    """The best value for one element over growing windows, if it beats ``score``."""
    current = int(value.reshape(-1)[element])
    valid_bounds = lower <= upper
    for radius in _RADII:
        centre = min(max(current, lower), upper) if valid_bounds else current
        a, b = centre - radius, centre + radius
        if valid_bounds:
            a, b = max(a, lower), min(b, upper)
        candidates = np.arange(a, b + 1, dtype=np.int64)
        batch = np.repeat(value.reshape(1, -1), len(candidates), axis=0)
        batch[:, element] = candidates
        terms = np.stack(batched([batch.reshape(len(candidates), *value.shape)], point))
        bad = (~np.isfinite(terms)).sum(axis=0)
        finite_sum = np.where(np.isfinite(terms), terms, 0.0).sum(axis=0)
        order = np.lexsort((-finite_sum, bad))
        j = order[0]
        best = (int(bad[j]), -float(finite_sum[j]))
        if best < score:
            return int(candidates[j]), best
        if valid_bounds and a == lower and b == upper:
            return None
    return None
