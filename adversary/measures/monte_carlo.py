"""The data holder's measures of any PyMC attack model by Monte Carlo over releases.

Kazan & Reiter's marginal posterior (3.3), marginal risk (3.4) and probability
of a correct decision (3.6) average the adversary's posterior over every
release the mechanism could produce from the truth. Where the release grid is
small, :func:`~adversary.measures.exact.exact_measures` sums that average
exactly; for a model with too many releases to sum, this module estimates it
the direct way:

1. **simulate** ``N`` release sets from the model's own generative process with
   every latent fixed at the truth (:mod:`~adversary.measures.simulation`);
2. **infer**: for each simulated release set, the adversary's posterior of the
   event (default: "the target has its true value") and their Bayes decision
   for the target under 0-1 loss (3.5) — by exact enumeration
   (``method="exact"``, :class:`~adversary.measures.release_posteriors.ReleasePosteriors`:
   one compiled log-p for every release set) or by exact-Gibbs MCMC
   (``method="mcmc"``, :func:`adversary.inference.sample`);
3. **average**: the mean posterior estimates (3.3), divided by the prior
   probability of the event (3.4); the mean credit of the decisions (3.6),
   ties counted by the tie rule (:mod:`~adversary.measures.decision`).
   Standard errors are the sample standard deviation over ``√N`` (posterior)
   and ``√(q̃(1-q̃)/N)`` for the decisions, with ``q̃ = (k + 1/2)/(N + 1)`` for a
   total credit ``k`` (so it is not 0 when all ``N`` decisions agree; a mean
   of values in [0, 1] has at most this variance); with ``N = 1`` they are
   infinite.

The truth, target and event, and the prior of the event, are as in
:mod:`~adversary.measures.attack_model` and :mod:`~adversary.measures.prior_of_event`.
With MCMC the decision is the mode of the draws, which can differ from the
Bayes decision when the posterior is close to a tie; the estimate is then
that of an adversary deciding from that many draws.

**Cost** (measured on the 2-core development machine, one run): the exact
path takes about 10–60 µs per simulated release set (mostly the exact noise
sampler) after 0.3–1 s of set-up — 20 000 release sets of the Dare County,
Granville County or a 3-cell model in under 2 s. The MCMC path with the
defaults (one chain, 200 tuning + 500 draws) takes about 0.15–0.3 s per
release set; use it for a few hundred sets. Its first two release sets are timed and the
whole projected: a projection over the time budget (:mod:`adversary.time_budget`) is
refused, naming ``releases``; one over a few seconds shows a progress bar on stderr.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping

import numpy as np
import pymc as pm
from pymc.model import modelcontext
from pymc.model.transform.optimization import freeze_model

from ..inference import assign_steps, marginal_pmf, posterior_probability
from ..inference import sample as mcmc_sample
from ..time_budget import timed_blocks
from .attack_model import generator, is_discrete, positive_int
from .decision import DEFAULT_TIE_RULE
from .marginal import MarginalMeasures
from .release_posteriors import ReleasePosteriors, with_shared_observations
from .simulation import release_simulator
from .standard_errors import DEFAULT_SE_MULTIPLE, credit_standard_error
from .stated import Statements, decision_credit, risk_error, state_attack
from .structure import structured

__all__ = ["METHODS", "monte_carlo_measures"]

#: How the adversary's posterior is computed for each simulated release set.
METHODS = ("exact", "mcmc")


def _shared_observations(model):
    """A frozen copy of ``model`` whose observed values are shared variables, and those.

    Frozen (:func:`pymc.model.transform.optimization.freeze_model`), the copy
    caches its graphs and compiled functions, so repeated sampling with new
    observed values does not recompile.
    """
    copy, _ = with_shared_observations(model)
    frozen = freeze_model(copy)
    return frozen, {rv.name: frozen.rvs_to_values[rv] for rv in frozen.observed_RVs}


def _mcmc_posteriors(stated, simulated, rng, *, draws, tune, chains, sample_kwargs, compile_kwargs):
    """Per release set: the event's posterior and the decision's credit, by MCMC."""
    copy, shared = _shared_observations(stated.model)
    steps = assign_steps(copy, compile_kwargs=compile_kwargs)
    if any(not is_discrete(v) for v in copy.value_vars):
        provided, selected = pm.sampling.mcmc.assign_step_methods(copy, step=steps)
        steps = pm.sampling.mcmc.instantiate_steppers(
            copy, provided, selected, compile_kwargs=compile_kwargs
        )
        steps = steps if isinstance(steps, list) else [steps]
    n = len(next(iter(simulated.values())))
    seeds = rng.integers(2**31, size=n)
    event_p, credit = np.empty(n), np.empty(n)
    quiet = logging.getLogger("pymc")
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    options = {"compute_convergence_checks": False, **(sample_kwargs or {})}
    what = f"Monte Carlo by MCMC over releases={n} release sets drawn from the truth"
    try:
        for block in timed_blocks(n, 1, 1, what, unit="release sets"):  # refused over budget
            r = block.start
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
            event_p[r] = posterior_probability(tree, stated.event)
            pmf = marginal_pmf(tree, stated.target)
            credit[r] = decision_credit(
                pmf.values[None], pmf[stated.target].values, stated.true_target, stated.tie_rule
            )[0]
    finally:
        quiet.setLevel(level)
    return event_p, credit


def monte_carlo_measures(
    model,
    truth: Mapping,
    event: Mapping | Callable | None = None,
    *,
    target: str | None = None,
    releases: int = 1000,
    method: str = "exact",
    tie_rule: str = DEFAULT_TIE_RULE,
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
    tie_rule : {"split", "largest", "smallest"}
        How a tied decision counts in (3.6) (:mod:`~adversary.measures.decision`).
    random_seed : int, numpy Generator or None
        Same seed, same numbers.
    prior_of_truth : float in (0, 1], optional
        ``P[event]`` under the prior; default: enumerated exactly (or, when the
        event's prior involves continuous variables, estimated from draws).
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
        ``event_posterior`` and ``decision_credit`` arrays,
        ``seconds_per_release`` (simulation + inference, after the one-off
        ``setup_seconds``), ``prior`` (how the prior of the event was found)
        and for the exact path the latent ``ranges``. ``omitted_mass`` is the
        largest estimated posterior mass outside the latent grid over the
        simulated release sets (exact path; 0 for MCMC, whose windows are
        bounded by :func:`~adversary.inference.sample`'s ``tail_mass`` per update).
    """
    model = modelcontext(model)
    releases = positive_int(releases, "releases")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    se_multiple = float(se_multiple)
    if not se_multiple > 0 or not np.isfinite(se_multiple):
        raise ValueError(f"se_multiple must be a positive number, got {se_multiple!r}")
    for name, value in (("draws", draws), ("chains", chains)):
        positive_int(value, name)
    if isinstance(tune, bool) or not isinstance(tune, int | np.integer) or tune < 0:
        raise ValueError(f"tune must be an integer >= 0, got {tune!r}")
    rng = generator(random_seed)
    setup = time.perf_counter()
    if method == "exact":
        model = structured(model)
    exact_only = "the exact path enumerates discrete latents only: use method='mcmc'"
    statements = Statements(truth, event, target, prior_of_truth, tie_rule)
    discrete_only = exact_only if method == "exact" else None
    stated = state_attack(
        model, statements, tail_mass, max_cells, compile_kwargs, rng, discrete_only
    )
    simulator = release_simulator(model, stated.truth, rng)
    engine = ReleasePosteriors.of(model, compile_kwargs) if method == "exact" else None
    setup_seconds = time.perf_counter() - setup

    start = time.perf_counter()
    simulated = simulator(releases)
    simulated_at = time.perf_counter()
    details: dict = {}
    if method == "exact":
        table = engine.reduced(
            simulated,
            stated.event,
            stated.target,
            centre=stated.truth,
            tail_mass=tail_mass,
            max_cells=max_cells,
        )
        if not np.all(np.isfinite(table.centre_logp)):
            raise ValueError(
                "model: a release set drawn from the truth has probability 0 at the truth; the "
                "model's random draws and its log-p disagree"
            )
        event_p = table.event
        credit = decision_credit(
            table.target, table.target_values, stated.true_target, stated.tie_rule
        )
        omitted = float(table.omitted.max())
        details["ranges"] = {k: list(v) for k, v in table.ranges.items()}
    else:
        event_p, credit = _mcmc_posteriors(
            stated,
            simulated,
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
    posterior_mean = float(event_p.mean())
    q = float(credit.mean())
    if n > 1:
        se_post = float(event_p.std(ddof=1) / math.sqrt(n))
        se_decision = credit_standard_error(credit)
    else:
        se_post = se_decision = math.inf
    prior = stated.prior_of_truth
    details.update(
        {
            "inference": method,
            "releases": n,
            "target": stated.target,
            "event": stated.event if isinstance(stated.event, Mapping) else repr(stated.event),
            "standard_errors": {
                "marginal_posterior": se_post,
                "marginal_risk": risk_error(se_post, prior, stated.prior_standard_error),
                "correct_decision_probability": se_decision,
            },
            "se_multiple": se_multiple,
            "event_posterior": event_p,
            "decision_credit": credit,
            "prior": stated.prior_details,
            "setup_seconds": setup_seconds,
            "simulation_seconds": simulated_at - start,
            "inference_seconds": finished - simulated_at,
            "seconds_per_release": (finished - start) / n,
        }
    )
    error = se_multiple * max(se_post, se_decision) + omitted
    details["risk_error_bound"] = risk_error(
        error, prior, se_multiple * stated.prior_standard_error
    )
    return MarginalMeasures(
        marginal_posterior=posterior_mean,
        marginal_risk=posterior_mean / prior,
        correct_decision_probability=q,
        prior_of_truth=prior,
        omitted_mass=omitted,
        error_bound=error,
        method="monte-carlo",
        details=details,
        tie_rule=stated.tie_rule,
    )
