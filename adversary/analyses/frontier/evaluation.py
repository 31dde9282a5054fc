"""A family of allocations through the two evaluators, as one labelled Dataset.

:func:`evaluate` calls ``accuracy(allocation)`` (an :class:`xarray.Dataset`,
e.g. dims ``("metric", "level")``, variables such as ``variance``, ``mae``) and
``risk(allocation)`` (dims e.g. ``("attack", "prior")``, variables such as the
marginal risk (Kazan & Reiter 2023, (3.4)) and the probability of a correct
decision (3.6)) for every allocation and stacks them along an ``allocation``
dimension (the allocations' names), keeping the evaluators' own dimensions.
The result describes its allocations too, as coordinates:

``rho_total`` (allocation)
    the total zCDP ρ;
``level_share`` (allocation, budget_level)
    each level's share of ``rho_total``;
``query_share`` (allocation, budget_level, budget_query)
    each query's share *within* its level;
``rho`` (allocation, budget_level, budget_query)
    each query's ρ, ``rho_total · level share · query share``.

(Floats of the exact shares; ``budget_level``/``budget_query`` are the
allocation's level and query keys, apart from an evaluator's own ``level``.)

A family whose evaluations take long shows a progress bar with the time
remaining on stderr once it has run for about a second (as
:func:`adversary.analyses.compare.sweep` does), and the whole is projected
from the first allocation's time and checked against the time budget
(:mod:`adversary.time_budget`).
"""

from __future__ import annotations

import time

import numpy as np
import xarray as xr

from ...time_budget import check_time
from ..compare import _LazyProgress
from .families import explicit

__all__ = ["BUDGET_COORDINATES", "evaluate"]

#: The coordinates :func:`evaluate` adds to describe the allocations.
BUDGET_COORDINATES = ("rho_total", "level_share", "query_share", "rho")


def _dataset(value, name: str, allocation) -> xr.Dataset:
    if not isinstance(value, xr.Dataset):
        raise TypeError(
            f"{name} must return an xarray.Dataset, got {type(value).__name__} for allocation "
            f"{allocation.name!r}"
        )
    if "allocation" in value.dims or "allocation" in value.variables:
        raise ValueError(f"{name} must not return an 'allocation' dimension or variable")
    return value


def _one(allocation, accuracy, risk) -> xr.Dataset:
    """The two evaluators' datasets of one allocation, merged (their variables kept apart)."""
    acc = _dataset(accuracy(allocation), "accuracy", allocation)
    rsk = _dataset(risk(allocation), "risk", allocation)
    shared = sorted(set(acc.data_vars) & set(rsk.data_vars))
    if shared:
        raise ValueError(f"accuracy and risk must name their variables apart; both give {shared}")
    return xr.merge([acc, rsk], join="exact", compat="no_conflicts")


def _check_same_coordinates(first: xr.Dataset, other: xr.Dataset, name: str) -> None:
    for dim in set(first.indexes) | set(other.indexes):
        if dim not in first.indexes or dim not in other.indexes:
            raise ValueError(f"accuracy and risk must give dimension {dim!r} for every allocation")
        if not first.indexes[dim].equals(other.indexes[dim]):
            raise ValueError(
                f"accuracy and risk must give the same {dim!r} coordinates for every allocation; "
                f"they differ at allocation {name!r}"
            )


def _budget_coordinates(allocations) -> dict:
    first = allocations[0]
    query_shares = np.array(
        [[[float(s) for s in row] for row in a.query_shares] for a in allocations]
    )
    level_shares = np.array([[float(s) for s in a.level_shares] for a in allocations])
    rho_total = np.array([float(a.rho_total) for a in allocations])
    rho = np.array([[[a.rho(lv, q) for q in a.queries] for lv in a.levels] for a in allocations])
    return {
        "budget_level": ("budget_level", list(first.levels)),
        "budget_query": ("budget_query", list(first.queries)),
        "rho_total": ("allocation", rho_total),
        "level_share": (("allocation", "budget_level"), level_shares),
        "query_share": (("allocation", "budget_level", "budget_query"), query_shares),
        "rho": (("allocation", "budget_level", "budget_query"), rho),
        "description": ("allocation", [a.description for a in allocations]),
    }


def evaluate(allocations, accuracy, risk, *, progress: bool | None = None) -> xr.Dataset:
    """``accuracy(a)`` and ``risk(a)`` of every allocation ``a``, stacked along ``allocation``.

    Parameters
    ----------
    allocations : sequence of BudgetAllocation
        Distinct names, the same levels and queries (a family,
        :mod:`~adversary.analyses.frontier.families`).
    accuracy, risk : callable
        ``allocation -> xarray.Dataset``; their variables must have distinct
        names and the same coordinates for every allocation.
    progress : bool, optional
        ``None`` shows a progress bar once the evaluations prove slow,
        ``True`` from the start, ``False`` never.

    Returns
    -------
    xarray.Dataset
        Every variable of both evaluators with a leading ``allocation``
        dimension, plus the coordinates of :data:`BUDGET_COORDINATES` and
        ``description`` (module docstring).
    """
    allocations = explicit(allocations)
    bar = _LazyProgress(len(allocations), "allocations", progress)
    began = time.perf_counter()
    datasets = []
    try:
        for a in allocations:
            datasets.append(_one(a, accuracy, risk))
            if len(datasets) == 1 and len(allocations) > 1:
                seconds = time.perf_counter() - began
                check_time(
                    seconds * len(allocations),
                    f"evaluating {len(allocations):,} allocations ({seconds:.3g} s for the first, "
                    "measured)",
                )
            else:
                _check_same_coordinates(datasets[0], datasets[-1], a.name)
            bar.advance()
    finally:
        bar.close()
    stacked = xr.concat(
        datasets,
        dim="allocation",
        join="exact",
        data_vars="all",
        coords="different",
        compat="equals",
    )
    stacked = stacked.assign_coords(allocation=[a.name for a in allocations])
    return stacked.assign_coords(_budget_coordinates(allocations))
