"""The files, plots and printed summaries of a population assessment.

:func:`write_outputs` writes a run's tables, figures and ``summary.json``.

Figures are built without pyplot (no display needed):

``persons_at_risk_by_budget.png``
    one panel per attack: persons whose marginal risk (3.4) is above the
    first risk threshold (solid) and the last (dashed), against the budget
    scale, one colour per prior.
``persons_at_risk_by_block_size.png``
    one panel per attack: the share of each Table 8-11 block-size bin's
    persons above the first risk threshold, at the budget of scale 1 (or the
    first budget), bars by prior.
``correct_decisions_by_budget.png``
    as the first, for the probability of a correct decision (3.6) above the
    last decision threshold.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from .._output import package_version, write_figures
from .model import PopulationModel
from .synthetic import BLOCK_SIZE_BINS

__all__ = ["save_plots", "summary_json", "summary_text", "write_outputs"]

_TITLES = {
    "single_block": "single block (3.1)",
    "block_group": "block group (S3.4)",
    "multi_level": "unique at ℓ levels (S1.1)",
}


def _totals(summary: pd.DataFrame, measure: str, threshold: float) -> pd.DataFrame:
    rows = summary[
        (summary["block_size_bin"] == "all")
        & (summary["measure"] == measure)
        & (summary["threshold"] == threshold)
    ]
    return rows


def _by_budget(summary, model, measure, thresholds, ylabel) -> Figure:
    attacks = list(model.attacks)
    figure = Figure(figsize=(4.2 * len(attacks), 3.6), layout="constrained")
    axes = figure.subplots(1, len(attacks), squeeze=False)[0]
    colours = [f"C{k}" for k in range(len(model.priors))]
    for axis, attack in zip(axes, attacks, strict=True):
        for style, threshold in zip(("-", "--"), thresholds, strict=False):
            rows = _totals(summary, measure, threshold)
            rows = rows[rows["attack"] == attack]
            for colour, prior in zip(colours, model.priors, strict=True):
                line = rows[rows["prior"] == prior].sort_values("budget_scale")
                axis.plot(
                    line["budget_scale"],
                    line["persons_above"],
                    style,
                    marker="o",
                    color=colour,
                    label=f"p = {prior}, > {threshold:g}",
                )
        axis.set_xscale("log")
        scales = sorted(set(model.budgets.values()))
        axis.set_xticks(scales, [f"×{s:g}" for s in scales])
        axis.xaxis.set_minor_formatter(NullFormatter())
        axis.set_xlabel("budget scale (× every ρ of the preset)")
        axis.set_title(_TITLES.get(attack, attack))
        axis.set_ylabel(ylabel)
        axis.grid(alpha=0.3)
    axes[-1].legend(fontsize="small")
    figure.suptitle(f"{model.name}: {ylabel}")
    return figure


def _by_block_size(summary, model) -> Figure:
    attacks = list(model.attacks)
    budgets = list(model.budgets)
    budget = next((b for b in budgets if model.budgets[b] == 1.0), budgets[0])
    threshold = model.risk_thresholds[0] if model.risk_thresholds else None
    figure = Figure(figsize=(4.2 * len(attacks), 3.6), layout="constrained")
    axes = figure.subplots(1, len(attacks), squeeze=False)[0]
    x = np.arange(len(BLOCK_SIZE_BINS))
    width = 0.8 / len(model.priors)
    for axis, attack in zip(axes, attacks, strict=True):
        for k, prior in enumerate(model.priors):
            rows = summary[
                (summary["attack"] == attack)
                & (summary["budget"] == budget)
                & (summary["prior"] == prior)
                & (summary["measure"] == "marginal_risk")
                & (summary["threshold"] == threshold)
                & (summary["block_size_bin"] != "all")
            ].set_index("block_size_bin")
            rows = rows.reindex(list(BLOCK_SIZE_BINS))
            share = rows["persons_above"] / rows["persons"].where(rows["persons"] > 0)
            axis.bar(
                x + (k - (len(model.priors) - 1) / 2) * width, share, width, label=f"p = {prior}"
            )
        axis.set_xticks(x, list(BLOCK_SIZE_BINS))
        axis.set_ylim(bottom=0)
        axis.set_xlabel("persons in the block")
        axis.set_ylabel(f"share of persons with risk > {threshold:g}")
        axis.set_title(_TITLES.get(attack, attack))
        axis.grid(alpha=0.3, axis="y")
    axes[-1].legend(fontsize="small")
    figure.suptitle(f"{model.name}: budget {budget} (× {model.budgets[budget]:g})")
    return figure


def save_plots(summary: pd.DataFrame, model: PopulationModel, folder) -> list[Path]:
    """Write the figures (module docstring) into ``folder``; return their paths."""
    figures = {}
    if model.risk_thresholds:
        risk = (model.risk_thresholds[0], model.risk_thresholds[-1])
        figures["persons_at_risk_by_budget.png"] = _by_budget(
            summary, model, "marginal_risk", risk[: 1 + (risk[1] != risk[0])], "persons above"
        )
        figures["persons_at_risk_by_block_size.png"] = _by_block_size(summary, model)
    if model.decision_thresholds:
        figures["correct_decisions_by_budget.png"] = _by_budget(
            summary,
            model,
            "correct_decision_probability",
            (model.decision_thresholds[-1],),
            "persons with P[correct] above",
        )
    return write_figures(figures, folder, dpi=110)


def summary_json(result, model: PopulationModel, files: dict | None = None) -> dict:
    """The run as one JSON-ready object (see ``adversary population --help``)."""
    return {
        "version": package_version(),
        "data": result.data,
        "model": model.describe(),
        "stats": result.stats,
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "summary": result.summary.to_dict(orient="records"),
        "files": files or result.files,
    }


def summary_text(result, model: PopulationModel) -> str:
    """A printed table: persons above each threshold (all block sizes) per attack."""
    stats = result.stats
    lines = [
        f"{model.name}: {stats['persons']:,} persons, {stats['persons_assessed']:,} in cells of"
        f" at most {model.small_cell_max} in their block (assessed);"
        f" {stats['partitions']} partitions by {stats['partition_level']},"
        f" {stats['workers']} workers, {result.timings['total']:.1f} s",
        "distinct parameter tuples per budget and prior: "
        + ", ".join(f"{a} {n}" for a, n in stats["distinct_tuples"].items()),
        "",
    ]
    rows = result.summary[result.summary["block_size_bin"] == "all"]
    columns = [
        (m, t)
        for m, ts in (
            ("marginal_risk", model.risk_thresholds),
            ("correct_decision_probability", model.decision_thresholds),
        )
        for t in ts
    ]
    short = {"marginal_risk": "risk", "correct_decision_probability": "P[correct]"}
    head = f"{'attack':<13} {'budget':<8} {'prior':<8}" + "".join(
        f" {short[m] + ' > ' + format(t, 'g'):>16}" for m, t in columns
    )
    lines += ["persons above each threshold:", head, "-" * len(head)]
    for attack in model.attacks:
        for budget in model.budgets:
            for prior in model.priors:
                cells = rows[
                    (rows["attack"] == attack)
                    & (rows["budget"] == budget)
                    & (rows["prior"] == prior)
                ]
                values = []
                for measure, threshold in columns:
                    hit = cells[(cells["measure"] == measure) & (cells["threshold"] == threshold)]
                    values.append(int(hit["persons_above"].iloc[0]) if len(hit) else 0)
                lines.append(
                    f"{attack:<13} {budget:<8} {prior:<8}" + "".join(f" {v:>16,}" for v in values)
                )
    if result.files:
        lines += ["", "written: " + ", ".join(result.files.values())]
    return "\n".join(lines)


def write_outputs(staging: Path, out: Path, result, model: PopulationModel, plots: bool) -> dict:
    """Write ``result``'s tables, figures (when ``plots``) and ``summary.json`` into ``staging``;
    returns each file's path once the staging folder becomes ``out``."""
    result.parameters.to_parquet(staging / "parameters.parquet", index=False)
    result.summary.to_csv(staging / "summary.csv", index=False)
    result.by_county.to_csv(staging / "summary_by_county.csv", index=False)
    names = ["records.parquet", "parameters.parquet", "summary.csv", "summary_by_county.csv"]
    if plots:
        (staging / "plots").mkdir()
        names += [f"plots/{p.name}" for p in save_plots(result.summary, model, staging / "plots")]
    files = {name: str(out / name) for name in [*names, "summary.json"]}
    with open(staging / "summary.json", "w") as handle:
        json.dump(summary_json(result, model, files), handle, indent=2)
    return files
