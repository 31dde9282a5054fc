"""``sample``: PyMC's sampler with exact Gibbs steps for every discrete variable."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from inspect import signature

import numpy as np
import pymc as pm
import pytensor
from pymc.backends.ndarray import NDArray
from pymc.initial_point import make_initial_point_fns_per_chain
from pymc.model import modelcontext
from pymc.sampling.mcmc import get_default_tune_steps
from pymc.step_methods.compound import CompoundStep, flatten_steps
from pymc.util import get_random_generator
from xarray import DataTree

from .._validation import as_probability
from ..distributions.support import support_bounds
from ..memory import check_memory
from ._conditional import BoundsFunction, is_discrete, one_shot
from .metropolised import MetropolisedGibbs
from .moves import TransferGibbs, has_known_total
from .progress import ChainProgress, SamplingClock
from .safe import safe_compile_kwargs
from .start import StartRepairer
from .steps import WindowGibbs
from .tiered import TieredFunction, compile_kernel
from .workers import worker_context

__all__ = ["assign_steps", "sample"]


def _count(value, name: str, *, minimum: int, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        kind = "an integer" if minimum <= 0 else "a positive integer"
        bound = f" >= {minimum}" if minimum <= 0 else ""
        raise ValueError(f"{name} must be {kind}{bound}, got {value!r}")
    return int(value)


def assign_steps(
    model=None,
    *,
    vars=None,
    initial_point=None,
    tail_mass: float = 1e-12,
    max_candidates: int = 100_000,
    compile_kwargs: dict | None = None,
) -> list:
    """Exact Gibbs steps for the discrete free variables of ``model`` (default: all of them).

    The variables whose supports have finite bounds with at most
    ``max_candidates`` values at ``initial_point`` share one
    :class:`~adversary.inference.MetropolisedGibbs` (the exact conditional
    over the support, with Liu's Metropolised draw: never proposing to stay,
    a Bernoulli's chain anti-correlated); the others one
    :class:`~adversary.inference.WindowGibbs` with ``tail_mass``; count
    vectors with a known total (``pm.Multinomial``, ``pm.DirichletMultinomial``)
    one :class:`~adversary.inference.TransferGibbs`. Within a step, variables
    of one role share one compiled conditional (:mod:`adversary.inference.roles`).
    Continuous variables are skipped (PyMC assigns its own steps to them).
    """
    model = modelcontext(model)
    initial_point = model.initial_point() if initial_point is None else initial_point
    value_vars = (
        [model.rvs_to_values[rv] for rv in model.free_RVs]
        if vars is None
        else pm.util.get_value_vars_from_user_vars(vars, model)
    )
    bounded, unbounded, totals = [], [], []
    for v in value_vars:
        if not is_discrete(v):
            continue
        if has_known_total(model.values_to_rvs[v]):
            totals.append(v)
            continue
        lower, upper = support_bounds(model.values_to_rvs[v])
        if lower is not None and upper is not None:
            bounds = BoundsFunction(model, v, compile_kwargs=one_shot(compile_kwargs))
            lo, hi = bounds(initial_point, np.shape(initial_point[v.name]))
            if np.all(hi - lo + 1 <= max_candidates):
                bounded.append(v)
                continue
        unbounded.append(v)
    common = {"model": model, "initial_point": initial_point, "compile_kwargs": compile_kwargs}
    steps = []
    if bounded:
        steps.append(MetropolisedGibbs(bounded, max_candidates=max_candidates, **common))
    if unbounded:
        steps.append(WindowGibbs(unbounded, tail_mass=tail_mass, **common))
    if totals:
        steps.append(TransferGibbs(totals, **common))
    return steps


def _check_initvals(model, initvals, chains: int) -> None:
    """``initvals``: ``None``, a dict, or a dict per chain, keyed by the free variables."""
    if initvals is None:
        return
    if isinstance(initvals, Mapping):
        points = [initvals]
    elif isinstance(initvals, Sequence) and not isinstance(initvals, str):
        points = list(initvals)
        if len(points) != chains:
            raise ValueError(
                f"initvals: a list needs one dict per chain ({chains}), got {len(points)}"
            )
    else:
        raise TypeError(
            f"initvals must be a dict or a list of dicts (one per chain), got {initvals!r}"
        )
    names = {rv.name for rv in model.free_RVs} | {value.name for value in model.value_vars}
    for point in points:
        if not isinstance(point, Mapping):
            raise TypeError(f"initvals: each chain's start must be a dict, got {point!r}")
        keys = {getattr(key, "name", key) for key in point}
        unknown = sorted(str(key) for key in keys - names)
        if unknown:
            free = ", ".join(rv.name for rv in model.free_RVs)
            raise ValueError(f"initvals: {', '.join(unknown)} not free variables; have {free}")


def _start_points(model, initvals, chains, random_seed):
    seeds = [rng.integers(2**30) for rng in get_random_generator(random_seed).spawn(chains)]
    functions = make_initial_point_fns_per_chain(
        model=model, overrides=initvals, jitter_rvs=set(), chains=chains
    )
    return [fn(seed) for fn, seed in zip(functions, seeds, strict=True)]


PYMC_FALLBACK_TUNE = signature(get_default_tune_steps).parameters["default_tune_steps"].default


def _tune_steps(tune, steps, model) -> int:
    """The tuning steps :func:`pymc.sample` runs: ``tune``, else the largest step default.

    A free variable no step covers gets a step from PyMC, whose default is
    PyMC's fallback, as in :func:`pymc.sampling.mcmc.get_default_tune_steps`.
    """
    if tune is not None:
        return tune
    covered = {value for step in steps for value in step.vars}
    left_to_pymc = any(model.rvs_to_values[rv] not in covered for rv in model.free_RVs)
    defaults = [get_default_tune_steps(step, None) for step in steps]
    return max(defaults + [PYMC_FALLBACK_TUNE] * left_to_pymc)


class _ChainTrace(NDArray):
    """PyMC's ``NDArray`` trace whose copy (one per chain, as ``pymc.sample`` makes from a
    given trace) starts empty: a shallow copy would share one dict of draws among chains."""

    def __copy__(self):
        return type(self)(
            model=self.model,
            vars=self.vars,
            fn=self.fn,
            var_shapes=self.var_shapes,
            var_dtypes=self.var_dtypes,
        )


def _point_trace(model, var_names, start, calls: int, compile_kwargs) -> NDArray:
    """PyMC's default trace (``NDArray``, the variables ``var_names`` or all), its point
    function a kernel (:func:`~.tiered.compile_kernel`) told it will be called ``calls`` times.

    PyMC compiles the function that reads each draw's values with numba, whose first compile
    in a process costs about a second even when it copies its inputs; a short run now reads
    them on PyTensor's Python VM, and a long one compiles numba after its first draws.
    """
    if var_names is None:
        variables = model.unobserved_value_vars
    else:
        chosen = [v for v in model.unobserved_RVs if v.name in var_names]
        variables = model.replace_rvs_by_values(chosen)
    fn = compile_kernel(
        model,
        [pytensor.Out(v, borrow=True) for v in variables],
        [pytensor.In(v, borrow=True) for v in model.value_vars],
        compile_kwargs,
    )
    values = fn(*[start[v.name] for v in model.value_vars])
    if isinstance(fn, TieredFunction):
        fn.expect(calls)
    return _ChainTrace(
        model=model,
        vars=variables,
        fn=fn,
        var_shapes={v.name: np.shape(x) for v, x in zip(variables, values, strict=True)},
        var_dtypes={v.name: np.asarray(x).dtype for v, x in zip(variables, values, strict=True)},
    )


def _chained(*callbacks):
    """One :func:`pymc.sample` callback calling each of ``callbacks`` that is not None."""
    present = [callback for callback in callbacks if callback is not None]
    if len(present) <= 1:
        return present[0] if present else None

    def call_each(trace, draw):
        for callback in present:
            callback(trace=trace, draw=draw)

    return call_each


def sample(
    model=None,
    draws: int = 1000,
    tune: int | None = None,
    chains: int | None = None,
    random_seed=None,
    progressbar: bool = True,
    *,
    step=None,
    initvals=None,
    cores: int | None = None,
    tail_mass: float = 1e-12,
    max_candidates: int = 100_000,
    compile_kwargs: dict | None = None,
    **kwargs,
) -> DataTree:
    """Sample the posterior of ``model`` with exact Gibbs updates for its discrete variables.

    Every discrete free variable not covered by a user ``step`` is updated
    from its exact full conditional (:func:`assign_steps`:
    :class:`~adversary.inference.MetropolisedGibbs` or
    :class:`~adversary.inference.WindowGibbs`) — the Gibbs sampler of Kazan &
    Reiter's block-group attack, (S3.9) and (S3.14), for any user-written
    PyMC model. Continuous variables keep PyMC's default steps (NUTS).

    The start point of every chain (``initvals``, else the support points) is
    checked; where its log-p is ``-inf`` it is repaired by
    :func:`~adversary.inference.repair_start`, and a
    :class:`pymc.exceptions.SamplingError` is raised if that fails.

    Parameters
    ----------
    model : pymc.Model, optional
        Default: the model on the context stack.
    draws, tune, chains, cores, random_seed, step, initvals, compile_kwargs :
        As for :func:`pymc.sample`; ``tune=None`` uses 200 for the exact steps
        (the maximum over steps, so 1000 when NUTS is also present).
        ``random_seed`` gives reproducible draws for any ``cores``. Chains
        on several cores run in processes started by a fork server, not
        forked (:mod:`~adversary.inference.workers`; ``mp_ctx`` chooses otherwise).
    progressbar : bool or str
        ``True`` shows one bar per chain with its true draw rate
        (:class:`~adversary.inference.progress.ChainProgress`); ``False`` none;
        PyMC's option strings (``"combined"``, ...) select PyMC's own bar.
    tail_mass : float in (0, 1)
        Conditional mass an unbounded variable's update may leave outside its window.
    max_candidates : int
        Largest support a bounded variable may have and still be enumerated whole.
    **kwargs
        Passed on to :func:`pymc.sample`.

    Returns
    -------
    xarray.DataTree
        ArviZ's tree (``posterior``, ``sample_stats`` with per-variable step
        stats such as ``X2_candidates``, ``observed_data``); ``sample_stats``
        attribute ``start_repaired`` lists, per chain, 1 if its start was repaired.
    """
    model = modelcontext(model)
    draws = _count(draws, "draws", minimum=1)
    tune = _count(tune, "tune", minimum=0, allow_none=True)
    chains = _count(chains, "chains", minimum=1, allow_none=True)
    cores = _count(cores, "cores", minimum=1, allow_none=True)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    max_candidates = _count(max_candidates, "max_candidates", minimum=1)
    if not model.free_RVs:
        raise ValueError("model: has no free random variables to sample")
    if cores is None:
        cores = min(4, os.cpu_count() or 1)
    if chains is None:
        chains = max(2, cores)
    _check_initvals(model, initvals, chains)

    starts = _start_points(model, initvals, chains, random_seed)
    repairer = StartRepairer.of(model, compile_kwargs)
    repaired = [repairer(point) for point in starts]
    starts = [point for point, _ in repaired]

    user_steps = (
        []
        if step is None
        else flatten_steps(CompoundStep(list(step)))
        if isinstance(step, list | tuple)
        else flatten_steps(step)
    )
    covered = {v for s in user_steps for v in s.vars}
    free_discrete = [
        model.rvs_to_values[rv]
        for rv in model.free_RVs
        if is_discrete(rv) and model.rvs_to_values[rv] not in covered
    ]
    ours = (
        assign_steps(
            model,
            vars=free_discrete,
            initial_point=starts[0],
            tail_mass=tail_mass,
            max_candidates=max_candidates,
            compile_kwargs=compile_kwargs,
        )
        if free_discrete
        else []
    )

    chain_initvals = []
    user_list = initvals if isinstance(initvals, Sequence) else [initvals] * chains
    for point, user in zip(starts, user_list, strict=True):
        merged = dict(user or {})
        for rv in model.free_RVs:
            value = model.rvs_to_values[rv]
            if is_discrete(rv) and model.rvs_to_transforms.get(rv) is None:
                merged[rv.name] = point[value.name]
        chain_initvals.append(merged)

    steps = [*user_steps, *ours]
    tune = _tune_steps(tune, steps, model)
    callback = kwargs.pop("callback", None)
    kwargs = worker_context(kwargs, chains, cores)
    values = sum(int(np.size(v)) for v in model.initial_point().values())
    check_memory(
        8.0 * values * chains * (draws + tune),
        f"the trace of {chains} chains x {draws + tune:,} draws of {values:,} values",
    )
    ours = kwargs.get("nuts_sampler", "pymc") == "pymc"  # PyMC calls callbacks
    if ours and kwargs.get("trace") is None:
        calls = chains * (draws + tune)
        kwargs["trace"] = _point_trace(
            model, kwargs.get("var_names"), starts[0], calls, compile_kwargs
        )
    progress = ChainProgress(chains, draws + tune) if progressbar is True and ours else None
    clock = SamplingClock(chains, draws + tune, min(chains, cores)) if ours else None
    with progress or nullcontext(), warnings.catch_warnings():
        # A variable that never moves (a point mass) has an undefined R-hat; ArviZ's
        # convergence check then divides 0 by 0. That is not a sampling problem.
        warnings.filterwarnings(
            "ignore",
            message="invalid value encountered in scalar divide",
            category=RuntimeWarning,
            module=r"arviz_stats\..*",
        )
        tree = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=random_seed,
            progressbar=progressbar if progress is None else False,
            step=steps or None,
            initvals=chain_initvals,
            model=model,
            compile_kwargs=safe_compile_kwargs(compile_kwargs),
            callback=_chained(progress, clock, callback),
            **kwargs,
        )
    if isinstance(tree, DataTree) and "sample_stats" in tree.children:
        tree["sample_stats"].attrs["start_repaired"] = [int(r) for _, r in repaired]
    return tree
