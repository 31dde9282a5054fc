"""A frontier study's files: the table, the best allocation, the summary and the figure.

:func:`frontier_table` flattens the evaluation to one row per allocation:
``allocation``, ``rho_total``, each level's share (``share:<level>``),
``within_limits``, ``on_frontier``, ``dominates_reference``, the scores
(``risk_score:<attack>``, ``reconstruction_score``, ``error_score:<metric>``),
each attack's marginal risk and correct-decision probability per prior
(``ratio:<attack>:p=<prior>``, ``correct:…``) and each metric's analytic MAE
and variance per level (``mae:<metric>:<level>``, ``variance:…``).

:func:`best_allocation` is the most accurate search's answer, or else the
allocation with the lowest mean error score among those within the limits.

:func:`frontier_figure` plots every allocation's largest risk score (over the
attacks) against its mean error score: the Pareto set over every risk and
error score marked (not joined: a member may look dominated in these two
summaries), the reference (2020) and the searches' answers marked, the
profile's limit (risk score 1) drawn when one was given.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["best_allocation", "frontier_figure", "frontier_table", "placement"]


def _label(value) -> str:
    return str(Fraction(float(value)).limit_denominator(10_000))


def frontier_table(evaluation: xr.Dataset) -> pd.DataFrame:
    """One row per allocation of ``evaluation`` (module docstring)."""
    names = [str(a) for a in evaluation["allocation"].values]
    reference = evaluation.attrs.get("reference")
    columns: dict[str, object] = {
        "allocation": names,
        "rho_total": evaluation["rho_total"].values,
    }
    for level in evaluation["budget_level"].values:
        columns[f"share:{level}"] = evaluation["level_share"].sel(budget_level=level).values
    columns["within_limits"] = evaluation["within_limits"].values
    columns["on_frontier"] = evaluation["on_frontier"].values
    if reference is not None:
        columns["dominates_reference"] = (
            evaluation["dominated_by"].sel(allocation=reference).values
            if "dominator" in evaluation["dominated_by"].dims
            else np.zeros(len(names), dtype=bool)
        )
    for attack in evaluation["attack"].values:
        columns[f"risk_score:{attack}"] = evaluation["risk_score"].sel(attack=attack).values
    if "reconstruction_score" in evaluation:
        columns["reconstruction_score"] = evaluation["reconstruction_score"].values
    for metric in evaluation["metric"].values:
        columns[f"error_score:{metric}"] = evaluation["error_score"].sel(metric=metric).values
    for variable in ("ratio", "correct"):
        for attack in evaluation["attack"].values:
            for prior in evaluation["prior"].values:
                values = evaluation[variable].sel(attack=attack, prior=prior).values
                columns[f"{variable}:{attack}:p={_label(prior)}"] = values
    for variable in ("mae", "variance"):
        for metric in evaluation["metric"].values:
            for level in evaluation["level"].values:
                values = evaluation[variable].sel(metric=metric, level=level).values
                columns[f"{variable}:{metric}:{level}"] = values
    return pd.DataFrame(columns)


def best_allocation(evaluation: xr.Dataset) -> str | None:
    """The name of the allocation to recommend (module docstring), ``None`` if none is within."""
    answer = evaluation.attrs.get("search_most_accurate")
    if answer:
        return str(answer)
    within = evaluation["within_limits"].values
    if not within.any():
        return None
    mean_error = evaluation["error_score"].mean("metric").values
    names = evaluation["allocation"].values
    return str(names[within][np.argmin(mean_error[within])])


def placement(dominance: xr.Dataset) -> dict:
    """The reference's place on the frontier as plain values (for ``summary.json``)."""
    dominators = (
        [str(a) for a in dominance["dominator"].values] if "dominator" in dominance.dims else []
    )
    return {
        "reference": dominance.attrs.get("reference"),
        "dominated": bool(dominance["dominated"]),
        "dominated_by": dominators,
        "largest_error_factor": float(dominance["largest_error_factor"]),
        "largest_risk_factor": float(dominance["largest_risk_factor"]),
    }


def frontier_figure(evaluation: xr.Dataset):
    """Largest risk score against mean error score, one point per allocation (module docstring)."""
    from matplotlib.figure import Figure

    risk = evaluation["risk_score"].max("attack")
    if "reconstruction_score" in evaluation:
        risk = np.maximum(risk, evaluation["reconstruction_score"])
    error = evaluation["error_score"].mean("metric").values
    risk = risk.values
    names = [str(a) for a in evaluation["allocation"].values]
    front = evaluation["on_frontier"].values
    figure = Figure(figsize=(7.0, 4.8), layout="constrained")
    axis = figure.add_subplot()
    axis.scatter(error, risk, s=18, color="0.6", label="allocations evaluated")
    axis.scatter(error[front], risk[front], s=36, color="C0", label="Pareto set (every score)")
    marks = [(evaluation.attrs.get("reference"), "*", "C3", "reference (2020)")]
    marks += [
        (evaluation.attrs.get(f"search_{kind}"), marker, color, kind.replace("_", " "))
        for kind, marker, color in (("most_accurate", "D", "C2"), ("least_risky", "s", "C1"))
    ]
    for name, marker, color, label in marks:
        if name in names:
            i = names.index(name)
            axis.plot(error[i], risk[i], marker, color=color, markersize=11, label=label)
    if evaluation.attrs.get("profile"):
        axis.axhline(1.0, color="C3", linestyle=":", label=f"limit ({evaluation.attrs['profile']})")
    axis.set_xlabel("mean error score (analytic variance / reference's; lower is more accurate)")
    axis.set_ylabel("largest risk score over the attacks")
    axis.legend(fontsize="small")
    return figure
