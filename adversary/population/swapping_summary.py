"""The swapping study's summary, figure, printed table and JSON.

- :func:`summary_by_bin` — by mechanism, prior and JASON Table 8-11 block-size
  bin (and ``"all"``): the mean marginal risk (3.4) and mean probability of a
  correct decision (3.6) of the assessed persons, the persons above each
  threshold and the share whose household was swapped, each with its standard
  error from the stratified sample (``n_h`` of ``N_h`` persons per bin drawn
  without replacement: ``se² = (1 - n_h/N_h) s_h² / n_h``; a bin assessed whole
  is a census, error 0; ``"all"`` weighs the bins by ``N_h``);
- :func:`marginal_risk_figure` — mean marginal risk by bin, one panel per
  mechanism, one line per prior (built without pyplot);
- :func:`summary_text` and :func:`survey_json` — the run printed and as JSON;
  :func:`write_survey` writes the files of ``--out``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._output import package_version, write_figures
from .swapping import SwappingStudy
from .synthetic import BLOCK_SIZE_BINS

__all__ = [
    "marginal_risk_figure",
    "summary_by_bin",
    "summary_text",
    "survey_json",
    "write_survey",
]


def _stratum(values: np.ndarray, assessed: float) -> tuple[float, float]:
    """Mean and standard error of a sample of ``values`` from ``assessed`` persons."""
    n = values.size
    if n >= assessed:  # the whole bin: a census
        return float(values.mean()), 0.0
    variance = (1.0 - n / assessed) * values.var(ddof=1) / n
    return float(values.mean()), float(np.sqrt(variance))


def _estimates(records: pd.DataFrame, column_values: dict) -> list[dict]:
    """Per bin and ``"all"``: each named column's stratified mean and standard error."""
    rows, strata = [], []
    for label in BLOCK_SIZE_BINS:
        part = records["block_size_bin"] == label
        if not part.any():
            continue
        assessed = float(records.loc[part, "weight"].sum())
        values = {n: _stratum(v[part.to_numpy()], assessed) for n, v in column_values.items()}
        strata.append((round(assessed), values))
        rows.append(
            {"block_size_bin": label, "assessed": round(assessed), "sampled": int(part.sum())}
            | {k: v for n, (m, e) in values.items() for k, v in ((n, m), (f"{n}_se", e))}
        )
    total = sum(n for n, _ in strata)
    overall = {"block_size_bin": "all", "assessed": total, "sampled": len(records)}
    for name in column_values:
        overall[name] = sum(n * v[name][0] for n, v in strata) / total
        overall[f"{name}_se"] = float(np.sqrt(sum((n * v[name][1]) ** 2 for n, v in strata)))
        overall[f"{name}_se"] /= total
    return [*rows, overall] if strata else []


def summary_by_bin(
    records: pd.DataFrame, study: SwappingStudy, persons_per_bin: pd.Series
) -> pd.DataFrame:
    """The summary table (module docstring); ``persons_per_bin``: persons per bin's blocks."""
    rows = []
    for mechanism in study.mechanisms:
        swapped = records[f"{mechanism}:swapped"].to_numpy(dtype=np.float64)
        for prior, p in study.priors.items():
            risk = records[f"{mechanism}:{prior}:marginal_risk"].to_numpy()
            correct = records[f"{mechanism}:{prior}:p_correct"].to_numpy()
            columns = {"mean_marginal_risk": risk, "mean_p_correct": correct}
            for t in study.risk_thresholds:
                columns[f"risk_above_{t:g}"] = (risk > t).astype(np.float64)
            for t in study.decision_thresholds:
                columns[f"p_correct_above_{t:g}"] = (correct > t).astype(np.float64)
            columns["swapped_share"] = swapped
            for row in _estimates(records, columns):
                row = {"mechanism": mechanism, "prior": prior, "prior_value": p} | row
                label = row["block_size_bin"]
                persons = persons_per_bin.sum() if label == "all" else persons_per_bin.get(label, 0)
                row["persons"] = int(persons)
                for name in columns:  # shares above thresholds as persons
                    if "_above_" in name:
                        row[name] *= row["assessed"]
                        row[f"{name}_se"] *= row["assessed"]
                rows.append(row)
    return pd.DataFrame(rows)


def marginal_risk_figure(summary: pd.DataFrame) -> Figure:
    """Mean marginal risk (3.4) by block-size bin (± 2 s.e.): a panel per mechanism."""
    mechanisms = list(dict.fromkeys(summary["mechanism"]))
    figure = Figure(figsize=(5.0 * len(mechanisms), 3.8), layout="constrained")
    axes = figure.subplots(1, len(mechanisms), sharey=True, squeeze=False)[0]
    x = np.arange(len(BLOCK_SIZE_BINS))
    for axis, mechanism in zip(axes, mechanisms, strict=True):
        part = summary[(summary["mechanism"] == mechanism) & (summary["block_size_bin"] != "all")]
        for prior, line in part.groupby("prior", sort=False):
            line = line.set_index("block_size_bin").reindex(BLOCK_SIZE_BINS)
            axis.errorbar(
                x,
                line["mean_marginal_risk"],
                yerr=2 * line["mean_marginal_risk_se"].fillna(0),
                marker="o",
                capsize=3,
                label=f"prior {prior}",
            )
        axis.axhline(1.0, color="grey", linestyle=":", label="no information")
        axis.set(xticks=x, xticklabels=BLOCK_SIZE_BINS, xlabel="persons in block", title=mechanism)
        axis.set_yscale("log")
    axes[0].set_ylabel("mean marginal risk (3.4), ± 2 s.e.")
    axes[-1].legend(fontsize=8)
    return figure


def summary_text(survey, study: SwappingStudy) -> str:
    """The run as a printed table: per mechanism and prior, the measures by bin."""
    stats = survey.stats
    lines = [
        f"{study.name}: {stats['persons']:,} persons, {stats['persons_assessed']:,} assessed "
        f"({stats['persons_sampled']:,} sampled); {stats['workers']} workers, "
        f"{survey.timings['total']:.1f} s",
        "mean marginal risk (3.4) and P[correct decision] (3.6) ± s.e.; share swapped",
    ]
    for (mechanism, prior), part in survey.summary.groupby(["mechanism", "prior"], sort=False):
        lines += ["", f"{mechanism}, prior {prior}"]
        head = f"{'bin':<9}{'assessed':>9}{'marginal risk':>22}{'P[correct]':>22}"
        lines.append(head + f"{'swapped':>9}")
        for row in part.itertuples(index=False):
            lines.append(
                f"{row.block_size_bin:<9}{row.assessed:>9,}"
                f"{row.mean_marginal_risk:>13.3f} ± {row.mean_marginal_risk_se:<6.3f}"
                f"{row.mean_p_correct:>13.3f} ± {row.mean_p_correct_se:<6.3f}"
                f"{row.swapped_share:>9.3f}"
            )
    if survey.files:
        lines += ["", "written: " + ", ".join(survey.files.values())]
    return "\n".join(lines)


def survey_json(survey, study: SwappingStudy) -> dict:
    """The run as one JSON-ready object."""
    return {
        "version": package_version(),
        "study": study.describe(),
        "stats": survey.stats,
        "timings": {k: round(v, 3) for k, v in survey.timings.items()},
        "summary": json.loads(survey.summary.to_json(orient="records")),
        "files": survey.files,
    }


def write_survey(staging: Path, out: Path, survey, study: SwappingStudy, plots: bool) -> dict:
    """Write ``records.parquet``, ``summary.csv``, ``plots/`` and ``summary.json`` into
    ``staging`` (moved to ``out`` when the run succeeds); ``{name: path in out}``."""
    survey.records.to_parquet(staging / "records.parquet", index=False)
    survey.summary.to_csv(staging / "summary.csv", index=False)
    names = ["records.parquet", "summary.csv"]
    if plots:
        figures = {"marginal_risk_by_block_size.png": marginal_risk_figure(survey.summary)}
        write_figures(figures, staging / "plots", dpi=120)
        names += [f"plots/{name}" for name in figures]
    survey.files = {name: str(out / name) for name in [*names, "summary.json"]}
    with open(staging / "summary.json", "w") as handle:
        json.dump(survey_json(survey, study), handle, indent=2)
    return survey.files
