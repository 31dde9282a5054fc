"""``adversary frontier``'s run: the study on the chosen geography, its files and its summary.

:func:`run_and_write` builds the geography (a synthetic state, or true tables
read from CSV/Parquet), runs :func:`~.study.frontier_study` (the TopDown
simulation on a local Dask cluster or a scheduler when ``runs`` > 0) and
writes ``frontier.csv``, ``best_allocation.toml``, ``summary.json`` and
``frontier.png`` through a staging folder (nothing is written unless the run
succeeds); :func:`summary_text` is the summary for a terminal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from ..._output import package_version, staged, write_figures
from ...budget_files import write_budget
from .outputs import best_allocation, frontier_figure, frontier_table, placement
from .specs import FrontierInputs
from .study import frontier_study

__all__ = ["run_and_write", "summary_text"]


def _geography(inputs: FrontierInputs, need_truth: bool):
    """``(geography, truth, described)``: what the accuracy is computed over."""
    from ...topdown.every_query import truth_tables

    if inputs.data is not None:
        path = inputs.data
        table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
        truth = truth_tables(table)
        return truth, truth, {"path": str(path)}
    from ...population.synthetic import synthetic_geography, synthetic_population

    described = {"synthetic": inputs.synthetic, "seed": inputs.seed}
    if not need_truth:
        return synthetic_geography(inputs.synthetic, seed=inputs.seed), None, described
    from ..reconstruction_study import block_cells

    persons = synthetic_population(inputs.synthetic, seed=inputs.seed)
    truth = truth_tables(persons.assign(cell=block_cells(persons)))
    return truth, truth, described


def _searched(evaluation, allocations) -> dict:
    out = {}
    for kind in ("most_accurate", "least_risky"):
        name = evaluation.attrs.get(f"search_{kind}")
        failed = evaluation.attrs.get(f"search_{kind}_failed")
        if name:
            allocation = allocations[name]
            out[kind] = {
                "allocation": name,
                "level_shares": {
                    level: str(share)
                    for level, share in zip(allocation.levels, allocation.level_shares, strict=True)
                },
            }
        elif failed:
            out[kind] = {"failed": failed}
    return out


def run_and_write(inputs: FrontierInputs, out: Path, *, plots: bool = True) -> dict:
    """The study of ``inputs`` written into ``out``; returns ``summary.json``'s object."""
    from contextlib import nullcontext

    began = time.perf_counter()
    geography, truth, described = _geography(inputs, need_truth=inputs.runs > 0)
    seconds_data = time.perf_counter() - began
    if inputs.runs:
        from ...population.cluster import cluster_client, default_local_directory

        cluster = cluster_client(None, inputs.scheduler, inputs.workers, default_local_directory())
    else:
        cluster = nullcontext(None)
    with cluster as client:
        result = frontier_study(
            inputs.base,
            geography,
            family=inputs.family,
            attacks=inputs.attacks,
            priors=inputs.priors,
            profile=inputs.profile,
            convention=inputs.convention,
            searches=inputs.searches,
            truth=truth,
            runs=inputs.runs,
            seed=inputs.seed,
            client=client,
            progress=None if inputs.progress else False,
        )
    evaluation = result.tree["evaluation"].to_dataset()
    best = best_allocation(evaluation)
    files = ["frontier.csv", "summary.json"]
    summary = {
        "version": package_version(),
        "inputs": {
            "reference": inputs.base.name,
            "data": described,
            "seed": inputs.seed,
            "attacks": list(inputs.attacks),
            "priors": list(inputs.priors),
            "profile": None if inputs.profile is None else inputs.profile.spec,
            "convention": inputs.convention,
            "family": list(inputs.family_specs) or "default",
            "runs": inputs.runs,
        },
        "placement": placement(result.tree["dominance"].to_dataset()),
        "searches": _searched(evaluation, result.allocations),
        "best": best,
        "timings": {
            "data": seconds_data,
            **{k.removeprefix("seconds_"): v for k, v in result.tree.attrs.items()},
        },
    }
    if "simulation" in result.tree:
        simulation = result.tree["simulation"].to_dataset()
        summary["simulation"] = simulation.to_dataframe().reset_index().to_dict(orient="records")
    with staged(out, "--out") as stage:
        frontier_table(evaluation).to_csv(stage / "frontier.csv", index=False)
        if best is not None:
            write_budget(result.allocations[best], stage / "best_allocation.toml")
            files.append("best_allocation.toml")
        if plots:
            write_figures({"frontier.png": frontier_figure(evaluation)}, stage, dpi=120)
            files.append("frontier.png")
        summary["files"] = {name: str(Path(out) / name) for name in files}
        with open(stage / "summary.json", "w") as handle:
            json.dump(summary, handle, indent=2, default=float)
    return summary


def summary_text(summary: dict) -> str:
    """A few lines for a terminal: the reference's place, the searches, the best allocation."""
    place = summary["placement"]
    lines = [
        f"reference {place['reference']}: "
        + (
            f"dominated by {', '.join(place['dominated_by'])} (errors divided by up to "
            f"{place['largest_error_factor']:.3g} at no more risk; risks by up to "
            f"{place['largest_risk_factor']:.3g} at no more error)"
            if place["dominated"]
            else "on the frontier of the allocations evaluated"
        )
    ]
    for kind, answer in summary["searches"].items():
        what = answer.get("allocation") or f"none ({answer['failed']})"
        lines.append(f"{kind.replace('_', ' ')}: {what}")
    lines.append(f"best allocation: {summary['best'] or 'none within the limits'}")
    lines += [f"  {name}: {path}" for name, path in summary["files"].items()]
    return "\n".join(lines)
