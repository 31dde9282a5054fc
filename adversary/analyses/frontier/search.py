"""Searching the share simplexes for the best allocation under limits (scipy's SLSQP).

- :func:`most_accurate` — minimise an accuracy objective (e.g. a weighted sum
  of analytic variances) subject to risk limits (the risk within a profile);
- :func:`least_risky` — minimise a risk objective subject to accuracy limits
  (e.g. every variance at most the reference allocation's).

Both minimise ``f(evaluation)`` subject to ``g_k(evaluation) ≤ 0``, where the
evaluation of an allocation is what :func:`~adversary.analyses.frontier.evaluation.evaluate`
gives for it (both evaluators' variables, without the ``allocation`` dimension;
:mod:`~adversary.analyses.frontier.targets` builds ``f`` and ``g_k``). What varies
— level shares of chosen levels, query shares of chosen queries within chosen
levels, and optionally the total ρ — and how it is made smooth for scipy is
described in :mod:`adversary.analyses.frontier.variables`: in short, the chosen
shares are the variables (the other keys take the rest in proportion), bounded
below by ``min_share``, with one linear constraint per set of shares.

**Every answer is checked.** SLSQP meets nonlinear constraints only to its
tolerance, so the answer is made feasible and then re-checked:

1. If SLSQP's point violates a limit, it is moved toward the best point seen
   that met every limit, by the smallest step ``t = 2^-40, 2^-39, …, 1`` of
   the segment that meets them (the objective gives up as little as possible).
2. If no point seen met every limit, a phase-one problem (minimise ``s``
   subject to ``g_k ≤ s``) looks for one; when its least ``s`` is positive
   no allocation in the family meets the limits, and a :class:`ValueError`
   names the limit that binds (the largest ``g_k`` at that point). Otherwise
   SLSQP runs again from the point found.
3. The returned (exact) allocation is evaluated again by calling the
   evaluators afresh; a limit exceeded then (evaluators that are not
   deterministic) is a :class:`ValueError`, never a silent answer.

SLSQP stopping at its iteration limit is an error (raise ``maxiter`` in
``options``); other reports (e.g. "Positive directional derivative for
linesearch", where the objective is flat to rounding) are kept in
:attr:`SearchResult.report` with the feasible answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import optimize

from ...budget import BudgetAllocation
from .evaluation import evaluate
from .targets import as_number, as_values
from .variables import Variables

__all__ = ["DEFAULT_OPTIONS", "SearchResult", "least_risky", "most_accurate"]

#: SLSQP's options unless told otherwise (the objective is scaled to 1 at the start).
DEFAULT_OPTIONS = {"ftol": 1e-12, "maxiter": 500}
#: SLSQP's status when it stops at ``maxiter``.
_ITERATION_LIMIT = 9
#: Steps toward a feasible point tried when restoring feasibility: 2^-40 … 1.
_STEPS = [2.0**-j for j in range(40, -1, -1)]


@dataclass(frozen=True)
class SearchResult:
    """The answer of a search.

    ``allocation`` is exact (it is the allocation evaluated); ``evaluation``
    its :func:`~adversary.analyses.frontier.evaluation.evaluate` Dataset (an
    ``allocation`` dimension of length 1, so it stacks with a family's);
    ``objective`` the objective there; ``constraints`` the largest ``g_k``
    of each limit there (all ≤ 0); ``report`` scipy's
    :class:`~scipy.optimize.OptimizeResult` of the last SLSQP run;
    ``evaluations`` the allocations evaluated; ``varied`` what varied.
    """

    allocation: BudgetAllocation
    evaluation: xr.Dataset
    objective: float
    constraints: dict[str, float]
    report: optimize.OptimizeResult
    evaluations: int
    varied: str


class _Problem:
    """The objective and constraints of vectors, each vector evaluated once (cached)."""

    def __init__(self, variables, accuracy, risk, objective, constraints, roles):
        self.variables, self.accuracy, self.risk = variables, accuracy, risk
        self.objective, self.constraints, self.roles = objective, constraints, roles
        self.cache: dict[bytes, tuple[float, dict[str, np.ndarray]]] = {}
        self.scale = 1.0

    def values(self, evaluation: xr.Dataset) -> tuple[float, dict[str, np.ndarray]]:
        f = as_number(self.objective(evaluation), self.roles[0])
        g = {
            name: as_values(fn(evaluation), f"{self.roles[1]}[{name!r}]")
            for name, fn in self.constraints.items()
        }
        return f, g

    def at(self, x: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        key = np.asarray(x, dtype=float).tobytes()
        if key not in self.cache:
            allocation = self.variables.allocation(x, self.variables.base.name)
            evaluation = evaluate([allocation], self.accuracy, self.risk, progress=False)
            self.cache[key] = self.values(evaluation.isel(allocation=0))
        return self.cache[key]

    def fun(self, x) -> float:
        return self.at(x)[0] / self.scale

    def excess(self, x) -> np.ndarray:
        """Every ``g_k`` element at ``x`` (all ≤ 0 where the limits are met)."""
        g = self.at(x)[1]
        return np.concatenate([*g.values(), np.zeros(0)])

    def feasible(self, x) -> bool:
        return bool((self.excess(x) <= 0).all())

    def best_feasible(self) -> np.ndarray | None:
        best = None
        for key, (f, g) in self.cache.items():
            if all((v <= 0).all() for v in g.values()) and (best is None or f < best[0]):
                best = (f, np.frombuffer(key))
        return None if best is None else best[1].copy()

    def scipy_constraints(self, variables: Variables) -> list[dict]:
        out = variables.linear_constraints()
        if self.constraints:
            out.append({"type": "ineq", "fun": lambda x: -self.excess(x)})
        return out


def _slsqp(problem: _Problem, variables: Variables, x0: np.ndarray, options: dict):
    result = optimize.minimize(
        problem.fun,
        x0,
        method="SLSQP",
        bounds=variables.bounds(),
        constraints=problem.scipy_constraints(variables),
        options=options,
    )
    if result.status == _ITERATION_LIMIT:
        raise ValueError(
            f"options: SLSQP stopped at maxiter={options['maxiter']} before converging "
            f"(varying {variables.describe()}); raise maxiter"
        )
    return result


def _phase_one(problem: _Problem, variables: Variables, x0: np.ndarray, options: dict):
    """A point meeting every limit, or a ValueError naming the limit that binds."""
    start = np.append(x0, problem.excess(x0).max())
    result = optimize.minimize(
        lambda z: z[-1],
        start,
        method="SLSQP",
        jac=lambda z: np.eye(len(z))[-1],
        bounds=[*variables.bounds(), (None, None)],
        constraints=[
            *({**c, "fun": (lambda z, f=c["fun"]: f(z[:-1]))} for c in _linear(variables)),
            {"type": "ineq", "fun": lambda z: z[-1] - problem.excess(z[:-1])},
        ],
        options=options,
    )
    x = result.x[:-1]
    if problem.feasible(x):
        return x
    g = problem.at(x)[1]
    name = max(g, key=lambda k: g[k].max())
    raise ValueError(
        f"{problem.roles[1]}: no allocation varying {variables.describe()} meets the limits; "
        f"{name!r} binds (at best it exceeds its limit by {g[name].max():.3g})"
    )


def _linear(variables: Variables) -> list[dict]:
    """The linear constraints without their Jacobians (phase one adds a variable)."""
    return [{"type": c["type"], "fun": c["fun"]} for c in variables.linear_constraints()]


def _restore(problem: _Problem, x: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """The first point ``x + t (anchor − x)``, t = 2^-40 … 1, meeting every limit."""
    for t in _STEPS:
        point = x + t * (anchor - x)
        if problem.feasible(point):
            return point
    return anchor


def _search(
    roles: tuple[str, str, str],
    base: BudgetAllocation,
    objective: Callable,
    constraints: Mapping[str, Callable] | None,
    *,
    accuracy: Callable,
    risk: Callable,
    levels=None,
    queries=None,
    rho_total=None,
    min_share: float = 1e-6,
    options: dict | None = None,
    name: str | None = None,
) -> SearchResult:
    """Minimise ``objective`` subject to ``constraints`` (module docstring); ``roles`` names
    the objective, the constraints and the answer (``"<base> <roles[2]>"``)."""
    if not callable(objective):
        raise TypeError(f"{roles[0]} must be a callable of an evaluation, got {objective!r}")
    constraints = {} if constraints is None else constraints
    if not isinstance(constraints, Mapping) or not all(map(callable, constraints.values())):
        raise TypeError(f"{roles[1]} must be a mapping {{name: callable}}, got {constraints!r}")
    for evaluator, label in ((accuracy, "accuracy"), (risk, "risk")):
        if not callable(evaluator):
            raise TypeError(f"{label} must be a callable allocation -> xarray.Dataset")
    options = {**DEFAULT_OPTIONS, **(options or {})}
    variables = Variables(base, levels, queries, rho_total, min_share)
    problem = _Problem(variables, accuracy, risk, objective, dict(constraints), roles)
    x0 = variables.start()
    f0 = problem.at(x0)[0]
    problem.scale = abs(f0) if f0 != 0 and math.isfinite(f0) else 1.0
    result = _slsqp(problem, variables, x0, options)
    x = result.x
    if not problem.feasible(x):
        anchor = problem.best_feasible()
        if anchor is None:
            anchor = _phase_one(problem, variables, x, options)
            result = _slsqp(problem, variables, anchor, options)
            x = result.x
        if not problem.feasible(x):
            x = _restore(problem, x, problem.best_feasible())
    allocation = variables.allocation(x, name or f"{base.name} {roles[2]}")
    evaluation = evaluate([allocation], accuracy, risk, progress=False)  # afresh
    f, g = problem.values(evaluation.isel(allocation=0))
    worst = {k: float(v.max()) for k, v in g.items()}
    over = [k for k, v in worst.items() if v > 0]
    if over:
        raise ValueError(
            f"{roles[1]}: {over[0]!r} exceeds its limit by {worst[over[0]]:.3g} at the "
            "returned allocation when recomputed (are the evaluators deterministic?)"
        )
    return SearchResult(
        allocation, evaluation, f, worst, result, len(problem.cache) + 1, variables.describe()
    )


def most_accurate(
    base: BudgetAllocation,
    objective: Callable,
    constraints: Mapping[str, Callable] | None = None,
    **settings,
) -> SearchResult:
    """The allocation near ``base`` minimising an accuracy ``objective`` within risk limits.

    Parameters
    ----------
    base : BudgetAllocation
        The start, and the shares that do not vary.
    objective : callable
        ``evaluation -> float`` to minimise, e.g.
        ``weighted_sum("variance", weights)`` (:mod:`.targets`).
    constraints : mapping, optional
        ``{name: evaluation -> array}``: every element must be ``≤ 0``, e.g.
        ``{"risk": at_most("marginal_risk", profile)}``. None: unconstrained.
    **settings
        Keywords:

        ``accuracy``, ``risk`` (required)
            ``allocation -> xarray.Dataset``, the evaluators (:func:`.evaluation.evaluate`).
        ``levels`` (sequence of str)
            Levels whose level shares vary (the others take the rest in proportion).
        ``queries`` (mapping)
            ``{level: [query, …]}``: query shares that vary within each level.
        ``rho_total`` ((float, float))
            Bounds of the total ρ, which then varies too; default: ``base``'s, fixed.
        ``min_share`` (float, default 1e-6)
            Lower bound of every varied share (and of the others' total).
        ``options`` (dict)
            SLSQP options over :data:`DEFAULT_OPTIONS`.
        ``name`` (str)
            The answer's name (default ``"<base> most accurate"``).

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        Bad settings; no allocation meeting every limit (naming the limit
        that binds); a limit exceeded when the answer is recomputed; SLSQP
        at its iteration limit.
    """
    roles = ("objective", "constraints", "most accurate")
    return _search(roles, base, objective, constraints, **settings)


def least_risky(
    base: BudgetAllocation,
    risk_objective: Callable,
    accuracy_constraints: Mapping[str, Callable],
    **settings,
) -> SearchResult:
    """The allocation near ``base`` minimising a ``risk_objective`` at no less accuracy.

    ``risk_objective`` is ``evaluation -> float`` (e.g.
    ``weighted_sum("marginal_risk", prior="1/864")``); ``accuracy_constraints``
    ``{name: evaluation -> array ≤ 0}``, e.g. at least the reference's accuracy:
    ``{"variance": at_most("variance", reference["variance"])}``. The keywords
    are :func:`most_accurate`'s (the answer is named ``"<base> least risky"``).
    """
    roles = ("risk_objective", "accuracy_constraints", "least risky")
    return _search(roles, base, risk_objective, accuracy_constraints, **settings)
