"""The reconstruction study's figure and printed table, and a survey's JSON.

- :func:`reconstruction_by_block_size_figure` — a
  :func:`~adversary.analyses.reconstruction_study.summary_by_bin` table drawn
  with one panel per noise convention: the share of records reconstructed in
  each of JASON Table 8-11's bins with 95 % intervals, one line per scale of
  the budget, the prior alone dashed, and the 2010 reconstruction's 46.48 %
  dotted (built without pyplot: no display needed);
- :func:`summary_text` — the same as a printed table per convention;
- :func:`survey_json` — a survey (:func:`~.reconstruction.survey`) as one
  JSON-ready object.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._output import package_version
from ..analyses.reconstruction_study import JASON_2010_EXACT_SHARE, ReconstructionStudy
from .synthetic import BLOCK_SIZE_BINS

__all__ = ["reconstruction_by_block_size_figure", "scale_label", "summary_text", "survey_json"]


def scale_label(scale: float) -> str:
    """``"ρ ×4"`` for a scale, ``"no noise"`` for ``inf``."""
    return "no noise" if math.isinf(scale) else f"ρ ×{scale:g}"


def _line(axis, x, part: pd.DataFrame, measure: str, **style) -> None:
    mean = part[measure].to_numpy()
    error = np.vstack([mean - part[f"{measure}_low"], part[f"{measure}_high"] - mean])
    axis.errorbar(x, mean, yerr=np.nan_to_num(error), marker="o", capsize=3, **style)


def reconstruction_by_block_size_figure(summary: pd.DataFrame) -> Figure:
    """Share of records reconstructed by bin (``summary``: :func:`summary_by_bin`'s table)."""
    conventions = list(dict.fromkeys(summary.index.get_level_values("convention")))
    figure = Figure(figsize=(5.2 * len(conventions), 4.0), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(conventions), sharey=True, squeeze=False)[0])
    x = np.arange(len(BLOCK_SIZE_BINS))
    for axis, convention in zip(axes, conventions, strict=True):
        part = summary.loc[convention]
        scales = list(dict.fromkeys(part.index.get_level_values("scale")))
        for scale in scales:
            line = part.loc[scale].reindex(BLOCK_SIZE_BINS)
            _line(axis, x, line, "overlap_share", label=scale_label(scale))
        base = part.loc[scales[0]].reindex(BLOCK_SIZE_BINS)
        _line(
            axis,
            x,
            base,
            "baseline_overlap_share",
            color="grey",
            linestyle="--",
            label="prior alone",
        )
        axis.axhline(
            JASON_2010_EXACT_SHARE,
            color="black",
            linestyle=":",
            label="2010 reconstruction (46.48 %)",
        )
        axis.set(
            xticks=x,
            xticklabels=BLOCK_SIZE_BINS,
            xlabel="persons in block",
            title=f"{convention} convention",
            ylim=(0, 1.04),
        )
    axes[0].set_ylabel("share of records reconstructed (95 % CI)")
    axes[-1].legend(loc="lower right", fontsize=8)
    return figure


def _estimate(mean: float, error: float) -> str:
    """``mean ± error``, or the mean alone when the error is unknown (one block of several)."""
    return f"{mean:>9.3f} ± {error:<5.3f}" if math.isfinite(error) else f"{mean:>9.3f}  (no s.e.)"


def summary_text(survey, study: ReconstructionStudy) -> str:
    """A printed table per convention: share of records reconstructed ± standard error.

    A census row (every block of the bin sampled) shows the shares alone and
    says so: it has no sampling error.
    """
    stats = survey.stats
    sampled = ", ".join(f"{b} {n}" for b, n in stats["sampled_per_bin"].items())
    lines = [
        f"{study.name}: {stats['persons']:,} persons in {stats['blocks']:,} blocks; "
        f"{stats['blocks_sampled']} sampled ({sampled}); {stats['workers']} workers, "
        f"{survey.timings['total']:.1f} s",
        "share of records reconstructed, ± one standard error (stratified sample):",
    ]
    for convention in study.conventions:
        part = survey.summary.loc[convention]
        scales = list(dict.fromkeys(part.index.get_level_values("scale")))
        labels = [scale_label(scale) for scale in scales] + ["prior alone"]
        head = f"{'bin':<9}" + "".join(f"{label:>17}" for label in labels)
        lines += ["", f"{convention} convention", head]
        for label in part.loc[scales[0]].index:
            cells = [part.loc[(scale, label)] for scale in scales]
            values = [(c["overlap_share"], c["overlap_share_se"]) for c in cells]
            base = cells[0]
            values.append((base["baseline_overlap_share"], base["baseline_overlap_share_se"]))
            if base["census"]:
                shares = "".join(f"{m:>9.3f}{'':8}" for m, _ in values)
                lines.append(f"{label:<9}{shares}  census of the bin: no sampling error")
            else:
                lines.append(f"{label:<9}" + "".join(_estimate(m, e) for m, e in values))
    if survey.files:
        lines += ["", "written: " + ", ".join(survey.files.values())]
    return "\n".join(lines)


def survey_json(survey, study: ReconstructionStudy) -> dict:
    """The survey as one JSON-ready object (``inf`` scales written as ``"inf"``)."""
    summary = survey.summary.reset_index()
    summary["scale"] = [s if math.isfinite(s) else "inf" for s in summary["scale"]]
    return {
        "version": package_version(),
        "study": study.describe(),
        "stats": survey.stats,
        "timings": {k: round(v, 3) for k, v in survey.timings.items()},
        "summary": json.loads(summary.to_json(orient="records")),
        "files": survey.files,
    }
