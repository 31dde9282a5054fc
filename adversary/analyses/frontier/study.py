"""A frontier study: which release to make, with every attack's risk beside the tables' accuracy.

:func:`frontier_study` takes a reference allocation (the 2020 production one by
default), a geography (a synthetic state or true tables) and a family of
allocations (default :func:`default_family`), and

1. evaluates every allocation (:func:`~.evaluation.evaluate`) with the analytic
   accuracy of TopDown with every query and the risk of every chosen attack
   (:mod:`.evaluators`: ``error_score`` per metric, 1 for the reference;
   ``risk_score`` per attack, ≤ 1 within the risk profile);
2. searches (:mod:`.search`, :data:`SEARCH_SETTINGS`: every share at least
   1 %) over the level shares of ``search_levels`` for
   the **most accurate** allocation whose every ``search_attacks`` risk stays
   within the profile (mean error score minimised, every risk score ≤ 1) and
   the **least risky** allocation at the reference's accuracy (mean risk score
   minimised, every error score ≤ 1); each answer is evaluated again with
   every attack, so its row states whether the attacks outside the search also
   meet the limits; when no allocation meets them, the failure names the
   attack that binds at the reference and the total ρ at which it would
   (:func:`~adversary.analyses.allocation_risk.binding_rho`);
3. marks the Pareto set over (``risk_score`` per attack and
   ``reconstruction_score``; ``error_score`` per metric) and places the
   reference on it (:func:`~.pareto.dominance`);
4. when true tables and ``runs`` are given, re-checks the reference's and
   the most accurate allocation's accuracy by simulating TopDown with every
   query (non-negativity and rounding included): MAE per metric and level
   with its Monte Carlo standard error beside the analytic value.

The geography is one state, so the US level's measurements do not enter its
tables: the searches give the US level the least share they allow (1 %),
where the 2020 allocation spends 104/4099 ≈ 2.5 %; an agency running the
national TopDown would hold it. Its detailed query still counts in the
many-levels attack.
"""

from __future__ import annotations

import time
from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import xarray as xr

from ...topdown.accuracy import analytic_accuracy, simulated_accuracy
from ...topdown.every_query import every_query_runs
from ..allocation_risk import DEFAULT_PRIORS, binding_message, binding_rho
from ..allocation_risk.evaluate import as_attacks
from .evaluation import evaluate
from .evaluators import accuracy_evaluator, risk_evaluator
from .families import explicit, level_shares, query_shares, rho_totals
from .pareto import dominance, pareto_set
from .search import least_risky, most_accurate
from .targets import at_most, weighted_sum

__all__ = [
    "DEFAULT_SEARCH_LEVELS",
    "SEARCH_ATTACKS",
    "SEARCH_SETTINGS",
    "FrontierResult",
    "default_family",
    "frontier_study",
]

#: Levels whose shares the searches vary (module docstring: the US level's share falls to 1 %).
DEFAULT_SEARCH_LEVELS = ("us", "state", "county", "tract", "block_group", "block")
#: The attacks the searches hold within the limits: exact, closed-form fast at any ρ (the block
#: group's release grid widens as its ρ shrinks: minutes per evaluation near a share of 0).
SEARCH_ATTACKS = ("single_block", "unknown_attribute")
#: The searches' settings: every varied share at least 1 % (of its level, or of the total),
#: SLSQP to a relative change of the objective of 1e-6.
SEARCH_SETTINGS = {"min_share": 0.01, "options": {"ftol": 1e-6, "maxiter": 100}}


class FrontierResult(NamedTuple):
    """``tree`` (nodes ``evaluation``, ``dominance`` and, when simulated, ``simulation``)
    and the exact allocations by name (the evaluation's ``allocation`` coordinate)."""

    tree: xr.DataTree
    allocations: dict


def default_family(base) -> list:
    """The reference's neighbours along the three choices an agency makes.

    The total ρ halved and doubled; the block level's share 1/20, 1/10 and 1/5
    (2020: 165/4099 ≈ 0.040; the other levels in proportion); the detailed
    query's share within the block level 1/2 and 3/4 (2020: 3945/4097 ≈ 0.963;
    the other queries in proportion).
    """
    return [
        *rho_totals(base, [base.rho_total / 2, base.rho_total * 2]),
        *level_shares(base, [[Fraction(1, k)] for k in (20, 10, 5)], levels=["block"]),
        *query_shares(base, "block", [[Fraction(1, 2)], [Fraction(3, 4)]], queries=["detailed"]),
    ]


def _search(kind: str, base, accuracy, search_risk, settings: dict, limited: bool):
    """One search's answer, or the one line saying why there is none; without a risk profile
    (``limited`` false) the most accurate allocation is sought under no risk limit."""
    metrics = accuracy(base)["error_score"].sizes["metric"]
    attacks = search_risk(base)["risk_score"].sizes["attack"]
    if kind == "most_accurate":  # least error within the risk limits
        search, objective = most_accurate, weighted_sum("error_score", 1.0 / metrics)
        limits = {"risk": at_most("risk_score", 1.0)} if limited else None
    else:  # least risk at no more error than the reference's
        search, objective = least_risky, weighted_sum("risk_score", 1.0 / attacks)
        limits = {"accuracy": at_most("error_score", 1.0)}
    try:
        return search(base, objective, limits, accuracy=accuracy, risk=search_risk, **settings)
    except ValueError as error:
        return str(error)


def _binding(base, search_risk, profile, priors, convention) -> str:
    """Which attack binds at ``base`` and the total ρ at which it would meet the profile."""
    scores = search_risk(base)["risk_score"]
    attack = str(scores["attack"].values[int(np.argmax(scores.values))])
    try:
        found = binding_rho(base, profile, attack, priors=priors, convention=convention)
    except ValueError as error:  # a limit no total ρ meets (e.g. a ratio of 1): said, not raised
        return f"attack {attack} binds at every total rho ({error})"
    return binding_message(found)


def _flags(evaluation: xr.Dataset, reference: str, profile, reconstruction_bound):
    """``within_limits`` (every stated limit met; true everywhere when none is stated),
    ``on_frontier`` and ``dominated_by`` of every allocation, and the reference's placement."""
    risks = [v for v in ("risk_score", "reconstruction_score") if v in evaluation]
    within = xr.ones_like(evaluation["rho_total"], dtype=bool).reset_coords(drop=True)
    if profile is not None and "risk_score" in evaluation:
        within = within & (evaluation["risk_score"] <= 1).all("attack")
    if reconstruction_bound is not None and "reconstruction_score" in evaluation:
        within = within & (evaluation["reconstruction_score"] <= 1)
    front = pareto_set(evaluation, risks=risks, errors=["error_score"])
    on_frontier = evaluation["allocation"].isin(front.front["allocation"].values)
    evaluation = evaluation.assign(
        within_limits=within, on_frontier=on_frontier, dominated_by=front.dominated_by
    )
    placed = dominance(evaluation, reference, risks=risks, errors=["error_score"])
    return evaluation, placed


def _simulation(truth, allocations, names, runs, seed, convention, client, geography):
    """TopDown's simulated accuracy of ``names`` beside the analytic one (module docstring)."""
    parts = []
    for name in names:
        published = every_query_runs(
            truth, allocations[name], runs, convention=convention, seed=seed, client=client
        )
        simulated = simulated_accuracy(published, truth)
        levels = [level for level in simulated["level"].values if level != "state"]
        analytic = analytic_accuracy(
            allocations[name], geography, convention=convention, levels=levels
        )
        parts.append(simulated.sel(level=levels).assign(analytic_mae=analytic["mae"]).drop_attrs())
    return xr.concat(parts, dim="allocation").assign_coords(allocation=list(names))


def frontier_study(
    base,
    geography,
    *,
    family=None,
    attacks=None,
    priors=DEFAULT_PRIORS,
    profile=None,
    reconstruction_bound=None,
    convention: str = "das",
    searches=("most_accurate", "least_risky"),
    search_attacks=SEARCH_ATTACKS,
    search_levels=DEFAULT_SEARCH_LEVELS,
    truth=None,
    runs: int = 0,
    seed: int = 0,
    client=None,
    progress: bool | None = None,
    risk_options: dict | None = None,
) -> FrontierResult:
    """The frontier of ``family`` around ``base`` (module docstring).

    ``geography`` is a synthetic :class:`~adversary.population.synthetic.Geography`
    or true tables (:func:`adversary.topdown.every_query.truth_tables`);
    ``attacks``/``priors``/``profile``/``reconstruction_bound``/``convention``
    and ``risk_options`` (``block_sizes``, ``reconstruction_replications``)
    define the risk (:func:`.evaluators.risk_evaluator`); ``searches`` any of
    ``"most_accurate"``, ``"least_risky"``; ``truth``/``runs``/``seed``/``client``
    the TopDown simulation (``runs = 0``: none).
    """
    unknown = set(searches) - {"most_accurate", "least_risky"}
    if unknown:
        raise ValueError(f"searches must be among 'most_accurate', 'least_risky', got {unknown}")
    if runs and truth is None:
        raise ValueError("runs: simulating TopDown needs the true tables (truth)")
    if not isinstance(runs, int | np.integer) or runs < 0 or runs == 1:
        raise ValueError(f"runs must be 0 (no simulation) or an integer >= 2, got {runs!r}")
    risk_options = dict(risk_options or {})
    timings = {}
    began = time.perf_counter()
    accuracy = accuracy_evaluator(geography, base, convention=convention)
    common = {"priors": priors, "profile": profile, "convention": convention, **risk_options}
    risk = risk_evaluator(as_attacks(attacks), reconstruction_bound=reconstruction_bound, **common)
    chosen = [a for a in as_attacks(search_attacks) if a in as_attacks(attacks)]
    search_risk = risk_evaluator(chosen or ["single_block"], **common)
    answers, failures = {}, {}
    for kind in searches:
        settings = {
            **SEARCH_SETTINGS,
            "levels": list(search_levels),
            "name": f"{base.name} {kind.replace('_', ' ')}",
        }
        answer = _search(kind, base, accuracy, search_risk, settings, profile is not None)
        if isinstance(answer, str):
            failures[kind] = answer
            if kind == "most_accurate" and profile is not None:
                failures[kind] += "; " + _binding(base, search_risk, profile, priors, convention)
        else:
            answers[kind] = replace(
                answer.allocation,
                description=f"{kind.replace('_', ' ')} allocation from {base.name} "
                f"(levels varied: {', '.join(search_levels)}; {answer.varied})",
                sources=(),
            )
    timings["search"] = time.perf_counter() - began
    members = explicit([base, *(family if family is not None else default_family(base))])
    members += [a for a in answers.values() if a.name not in {m.name for m in members}]
    began = time.perf_counter()
    evaluation = evaluate(members, accuracy, risk, progress=progress)
    timings["evaluation"] = time.perf_counter() - began
    evaluation, placed = _flags(evaluation, base.name, profile, reconstruction_bound)
    allocations = {a.name: a for a in members}
    evaluation.attrs = {
        "reference": base.name,
        "profile": "" if profile is None else str(getattr(profile, "spec", profile)),
        "convention": str(convention),
        "search_attacks": ",".join(chosen),
        "search_levels": ",".join(search_levels),
        **{f"search_{kind}": answers[kind].name for kind in answers},
        **{f"search_{kind}_failed": failures[kind] for kind in failures},
    }
    nodes = {"evaluation": evaluation, "dominance": placed}
    if runs:
        began = time.perf_counter()
        best = [answers["most_accurate"].name] if "most_accurate" in answers else []
        nodes["simulation"] = _simulation(
            truth, allocations, [base.name, *best], runs, seed, convention, client, geography
        )
        timings["simulation"] = time.perf_counter() - began
    tree = xr.DataTree.from_dict(nodes)
    tree.attrs = {f"seconds_{k}": v for k, v in timings.items()}
    return FrontierResult(tree, allocations)
