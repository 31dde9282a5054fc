"""Exact Gibbs step methods for discrete variables (PyMC ``BlockedStep`` subclasses).

Each update replaces one element of a discrete variable by an exact draw from
its full conditional given all other variables,
``p(X = k | rest) ∝ exp(logp(model at X = k))``, computed from the model's own
log-p for all candidate values ``k`` in one vectorised call. The steps here have
no proposal and no rejection: each update is a Gibbs update (Geman & Geman), and a
sweep over all variables leaves the posterior invariant (the default step of a
finite support, :class:`~adversary.inference.MetropolisedGibbs`, is Liu's
Metropolised variant of the same update).

For the block-group attack of Kazan & Reiter these are the full conditionals
of their Gibbs sampler: ``X1 | X2`` is two-valued (S3.9) — handled by
:class:`BoundedGibbs` — and ``X2 | X1`` is a discrete Gaussian truncated to
``{X1, X1+1, …}`` (S3.14), which the paper samples on a grid — here
:class:`WindowGibbs`, which chooses the grid so that it provably holds all but
``tail_mass`` of the conditional (see its docstring for the exact guarantee).
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

import numpy as np
from pymc.blocking import PointType, StatsType
from pymc.exceptions import SamplingError
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_random_generator, get_value_vars_from_user_vars

from .._validation import as_probability
from ._conditional import BoundsFunction, draw_index, is_discrete
from .roles import compile_roles
from .tiered import tiered_kernels

__all__ = ["BoundedGibbs", "ExactGibbsState", "WindowGibbs"]


@dataclass_state
class ExactGibbsState(StepMethodState):
    half_widths: list = field(default_factory=list)


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _ExactGibbs(BlockedStep):
    """Common set-up: one compiled batched log-p per role (:mod:`.roles`), bounds per variable."""

    # One instance updates all its variables in turn, one scalar at a time, so that
    # variables of one role share a compiled function (PyMC's ``blocked=False``
    # would split the step into one instance, and one compilation, per variable).
    default_blocked = True
    default_tune_steps = 200
    _state_class = ExactGibbsState
    _stat_suffixes: ClassVar[dict] = {}

    def __init__(
        self,
        vars=None,
        *,
        model=None,
        rng=None,
        blocked: bool = False,
        initial_point: PointType | None = None,
        compile_kwargs: dict | None = None,
    ):
        model = modelcontext(model)
        if vars is None:
            vars = [v for v in model.value_vars if is_discrete(v)]
        value_vars = get_value_vars_from_user_vars(vars, model)
        for v in value_vars:
            if not is_discrete(v):
                raise TypeError(
                    f"vars: {type(self).__name__} updates discrete (integer) variables only; "
                    f"{v.name!r} has dtype {v.dtype}"
                )
        if initial_point is None:
            initial_point = model.initial_point()
        self.vars = value_vars
        self.blocked = blocked
        self.rng = get_random_generator(rng)
        self._names = [v.name for v in value_vars]
        self._shapes = {v.name: np.shape(initial_point[v.name]) for v in value_vars}
        self._compile(model, value_vars, compile_kwargs)
        self._tiered = tiered_kernels(self._kernels())
        self._sweep = self._sweeps = 0  # of the chain being sampled (setup_chain)
        self.half_widths = [8] * len(value_vars)
        # Stats are named per variable ("X2_candidates", ...) so that several
        # variables' steps can be told apart in ``sample_stats``.
        self.stats_dtypes_shapes = {
            f"{name}_{suffix}": spec
            for name in self._names
            for suffix, spec in self._stat_suffixes.items()
        }
        self.stats_dtypes = [{key: dtype for key, (dtype, _) in self.stats_dtypes_shapes.items()}]

    def __repr__(self) -> str:
        return f"{type(self).__name__}([{', '.join(self._names)}])"

    def _compile(self, model, value_vars, compile_kwargs) -> None:
        """One compiled conditional per role, and each variable's support bounds."""
        self._roles = compile_roles(model, value_vars, self._shapes, compile_kwargs=compile_kwargs)
        self._role_list = list({id(role): role for role, _ in self._roles.values()}.values())
        self._compile_bounds(model, value_vars, compile_kwargs)

    def _kernels(self) -> list:
        """The compiled functions :meth:`_compile` made (roles' conditionals, bounds)."""
        return [role.logp.fn for role in self._role_list] + self._bound_kernels()

    def _bound_kernels(self) -> list:
        return [bounds.fn for bounds in self._bounds.values()]

    def _compile_bounds(self, model, value_vars, compile_kwargs) -> None:
        self._bounds = {
            v.name: BoundsFunction(model, v, compile_kwargs=compile_kwargs) for v in value_vars
        }

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        super().setup_chain(rng, tune, draws)
        self.half_widths = [8] * len(self._names)
        self._sweep, self._sweeps = 0, tune + draws

    def _plan(self) -> None:
        """Tell the kernels still on PyTensor's Python VM how far the chain is (:mod:`.tiered`)."""
        if self._sweeps:
            self._tiered = [fn for fn in self._tiered if fn.tier == "python"]
            for fn in self._tiered:
                fn.plan(self._sweep, self._sweeps)
        self._sweep += 1

    def reset_tuning(self):
        """Nothing to tune: every update is an exact draw."""

    @staticmethod
    def competence(var, has_grad=False):
        return Competence.IDEAL if is_discrete(var) else Competence.INCOMPATIBLE

    def step(self, point: PointType) -> tuple[PointType, StatsType]:
        self._plan()
        point = dict(point)
        stats = {}
        for role in self._role_list:
            role.load(point)
        for index, name in enumerate(self._names):
            role, slot = self._roles[name]
            value = np.array(point[name], dtype=np.int64, copy=True)
            flat = value.reshape(-1)
            lower, upper = self._bounds[name](point, value.shape)
            lower, upper = lower.reshape(-1), upper.reshape(-1)
            point[name] = value
            totals = None
            for element in range(flat.size):
                element_stats = self._update(
                    index, name, value, element, lower[element], upper[element], point
                )
                role.set(slot, element, flat[element])
                totals = element_stats if totals is None else _combined(totals, element_stats)
            for key, number in (totals or dict.fromkeys(self._stat_suffixes, 0)).items():
                stats[f"{name}_{key}"] = number
        return point, [stats]

    def _conditional(self, name, value, element, candidates, point) -> np.ndarray:
        """Log-p of the model (up to a constant) at each candidate for ``value.flat[element]``."""
        role, slot = self._roles[name]
        return role.scores(slot, (element,), candidates[:, None], point)

    def _fail(self, name, element, value, reason) -> SamplingError:
        where = name if value.ndim == 0 else f"{name}[{np.unravel_index(element, value.shape)}]"
        return SamplingError(
            f"{type(self).__name__} could not update {where} (current value "
            f"{value.reshape(-1)[element]}): {reason}. Is the start point feasible "
            "(adversary.inference.sample repairs it) and the posterior proper?"
        )


def _combined(totals: dict, element_stats: dict) -> dict:
    """A variable's step stats over its elements: sums, and the largest tail bound."""
    return {
        key: max(number, element_stats[key]) if key == "tail_bound" else number + element_stats[key]
        for key, number in totals.items()
    }


class BoundedGibbs(_ExactGibbs):
    """Exact Gibbs update of a discrete variable with finite support bounds.

    The candidates are every integer from the variable's lower to its upper
    bound (:func:`adversary.distributions.support_bounds`, evaluated at the
    current values of the other variables, so ``X2 ∈ {X1, …, 10}`` works), and
    the new value is drawn from ``exp(logp)`` normalised over them — the exact
    full conditional, e.g. the two-valued ``X1 | X2`` of Kazan & Reiter (S3.9).

    Parameters
    ----------
    vars : variables to update (default: every discrete free variable).
    max_candidates : int
        Refuse (with an error) to enumerate more values than this in one update.
    model, rng, blocked, initial_point, compile_kwargs :
        As for PyMC step methods; ``rng`` is replaced per chain by ``pm.sample``.

    Stats: ``{var}_candidates`` — number of candidate values evaluated.
    """

    name = "bounded_gibbs"
    _stat_suffixes: ClassVar[dict] = {"candidates": (np.int64, [])}

    def __init__(self, vars=None, *, max_candidates: int = 100_000, **kwargs):
        self.max_candidates = _positive_int(max_candidates, "max_candidates")
        super().__init__(vars, **kwargs)
        for name, bounds in self._bounds.items():
            if not bounds.bounded:
                raise ValueError(
                    f"vars: {name!r} has no finite upper and lower support bound; "
                    "use WindowGibbs for unbounded counts"
                )

    def _update(self, index, name, value, element, lower, upper, point):
        if upper < lower:
            raise self._fail(name, element, value, f"its support {{{lower}..{upper}}} is empty")
        n = int(upper - lower + 1)
        if n > self.max_candidates:
            raise self._fail(
                name,
                element,
                value,
                f"its support has {n} values, more than max_candidates={self.max_candidates}",
            )
        candidates = np.arange(lower, upper + 1, dtype=np.int64)
        logp = self._conditional(name, value, element, candidates, point)
        flat = value.reshape(-1)
        try:
            flat[element] = candidates[self._draw(logp, lower, int(flat[element]))]
        except FloatingPointError as error:
            raise self._fail(name, element, value, str(error)) from None
        return {"candidates": n}

    def _draw(self, logp: np.ndarray, lower: int, current: int) -> int:
        """The index of the new value among the candidates ``lower, lower + 1, …``."""
        return draw_index(logp, self.rng)


class WindowGibbs(_ExactGibbs):
    r"""Exact Gibbs update of an integer variable with unbounded support.

    The full conditional ``f(k) = logp(model at X = k)`` is evaluated on a
    window ``{a, …, b}`` around the current value (clipped to any finite
    support bound), which grows (doubling on each side that fails the test)
    until the mass it leaves out is certified below ``tail_mass``; the new
    value is then drawn exactly from the conditional restricted to the window.

    Guarantee. Let ``Z_W = Σ_{k∈W} e^{f(k)}``. On an open right edge ``b`` with
    ``f(b) < f(b-1)`` put ``r = e^{f(b) - f(b-1)} < 1``; if ``f`` is concave
    beyond the window (true whenever the conditional is log-concave — e.g. a
    product of discrete Gaussian likelihoods and flat or Bernoulli-type priors,
    as in (S3.14)), then ``f(b + j) ≤ f(b) + j (f(b) - f(b-1))``, so
    ``Σ_{k>b} e^{f(k)} ≤ e^{f(b)} r / (1 - r)``. The window stops growing when
    the sum of these bounds over both open edges, relative to ``Z_W`` (a lower
    bound on the total), is at most ``tail_mass``; an edge where ``f = -inf``
    counts as 0. Hence each update draws from a distribution within total
    variation ``tail_mass`` of the exact full conditional (log-concave case).
    For other conditionals the bound is a diagnostic: it assumes the log-p keeps
    falling beyond the window at least as fast as at its edge.

    Parameters
    ----------
    vars : variables to update (default: every discrete free variable).
    tail_mass : float in (0, 1)
        Largest conditional mass an update may leave outside its window.
    max_window : int
        Raise (improper or extremely flat conditional) rather than evaluate a
        wider window than this.
    model, rng, blocked, initial_point, compile_kwargs : as for PyMC steps.

    Stats: ``{var}_candidates`` (window size), ``{var}_tail_bound`` (the
    certified bound on the omitted conditional mass, max over elements) and
    ``{var}_expansions`` (number of window enlargements).
    """

    name = "window_gibbs"
    _stat_suffixes: ClassVar[dict] = {
        "candidates": (np.int64, []),
        "tail_bound": (np.float64, []),
        "expansions": (np.int64, []),
    }

    def __init__(
        self, vars=None, *, tail_mass: float = 1e-12, max_window: int = 10_000_000, **kwargs
    ):
        self.tail_mass = float(as_probability(tail_mass, "tail_mass"))
        self.max_window = _positive_int(max_window, "max_window")
        super().__init__(vars, **kwargs)

    def _update(self, index, name, value, element, lower, upper, point):
        current = int(value.reshape(-1)[element])
        half = self.half_widths[index]
        a, b = max(int(lower), current - half), min(int(upper), current + half)
        candidates = np.arange(a, b + 1, dtype=np.int64)
        logp = self._conditional(name, value, element, candidates, point)
        expansions = 0
        while True:
            left, right, tail = _edge_tails(logp, a > lower, b < upper)
            if tail <= self.tail_mass:
                break
            if b - a + 1 >= self.max_window:
                raise self._fail(
                    name,
                    element,
                    value,
                    f"its conditional needs a window wider than max_window={self.max_window} "
                    f"(window {a}..{b} still leaves mass bound {tail:.3g} > tail_mass)",
                )
            expansions += 1
            width = max(b - a + 1, 16)
            if left > self.tail_mass / 2:
                new_a = max(int(lower), a - width)
                extra = np.arange(new_a, a, dtype=np.int64)
                logp = np.concatenate([self._conditional(name, value, element, extra, point), logp])
                candidates = np.concatenate([extra, candidates])
                a = new_a
            if right > self.tail_mass / 2:
                new_b = min(int(upper), b + width)
                extra = np.arange(b + 1, new_b + 1, dtype=np.int64)
                logp = np.concatenate([logp, self._conditional(name, value, element, extra, point)])
                candidates = np.concatenate([candidates, extra])
                b = new_b
        try:
            new = int(candidates[draw_index(logp, self.rng)])
        except FloatingPointError as error:
            raise self._fail(name, element, value, str(error)) from None
        value.reshape(-1)[element] = new
        # Start the next window about as wide as this one needed to be.
        self.half_widths[index] = max(8, current - a, b - current)
        return {"candidates": len(candidates), "tail_bound": tail, "expansions": expansions}


def _edge_tails(logp: np.ndarray, open_left: bool, open_right: bool) -> tuple[float, float, float]:
    """Bounds on the conditional mass beyond each open edge, relative to the window's mass.

    Returns ``(left, right, left + right)``; ``inf`` for an edge where the log-p
    is not yet decreasing outwards (see :class:`WindowGibbs`).
    """
    finite = np.isfinite(logp)
    if not finite.any():
        return np.inf, np.inf, np.inf
    log_total = np.logaddexp.reduce(logp[finite])

    def one_side(edge: float, inner: float) -> float:
        if edge == -np.inf:
            return 0.0
        if not inner > edge:  # also catches inner == -inf and NaN
            return np.inf
        log_ratio = edge - inner
        return float(np.exp(edge - log_total + log_ratio - np.log(-np.expm1(log_ratio))))

    left = (
        one_side(logp[0], logp[1])
        if open_left and len(logp) > 1
        else (np.inf if open_left else 0.0)
    )
    right = (
        one_side(logp[-1], logp[-2])
        if open_right and len(logp) > 1
        else (np.inf if open_right else 0.0)
    )
    return left, right, left + right
