"""Figures of the single-block analysis, like Kazan & Reiter's Figures 1–3.

Each function returns a :class:`matplotlib.figure.Figure` built without
pyplot, so nothing needs a display; :func:`save_figures` writes all three.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .._output import write_figures
from ..reports.single_block import rho_sweep
from ..scenarios import single_block as sb
from ..scenarios.single_block import SingleBlockCase

__all__ = [
    "correct_decision_figure",
    "marginal_figure",
    "posterior_figure",
    "save_figures",
]

DEFAULT_RHOS = np.geomspace(1e-3, 1e2, 301)


def _mark_case_rho(axis, case: SingleBlockCase) -> None:
    axis.axvline(case.rho, color="0.5", linestyle=":", label=f"ρ = {case.rho:.4g}")


def posterior_figure(case: SingleBlockCase, releases=None) -> Figure:
    """Figure 1: posterior (3.1) and risk (3.2) against the released ``x1*``.

    A case with ``mechanism=`` is drawn with its noise; releases that neither
    value of ``X1`` can produce under bounded noise must be left out of ``releases``.
    """
    if releases is None:
        releases = np.arange(case.known_count - 10, case.known_count + 16)
    releases = np.asarray(releases)
    args = (case.rho, case.known_count, case.true_count, case.convention)
    noise = {"mechanism": case.mechanism}
    post = sb.posterior(releases[:, None], case.prior_values, *args, **noise)
    risk = sb.risk(releases[:, None], case.prior_values, *args, **noise)
    figure = Figure(figsize=(10, 4), layout="constrained")
    left, right = figure.subplots(1, 2)
    for i, label in enumerate(case.priors):
        left.plot(releases, post[:, i], marker=".", label=f"p = {label}")
        right.plot(releases, risk[:, i], marker=".", label=f"p = {label}")
    left.set(xlabel="released count x1*", ylabel="posterior P[X1 = x1 | x1*]", ylim=(0, 1))
    right.set(xlabel="released count x1*", ylabel="risk (posterior / prior)", yscale="log")
    right.axhline(1.0, color="0.5", linewidth=0.8)
    left.legend(fontsize="small")
    noise = f"ρ = {case.rho:.4g}" if case.mechanism is None else case.mechanism.label
    figure.suptitle(f"{case.name}: posterior and risk at {noise}")
    return figure


def marginal_figure(case: SingleBlockCase, rhos=DEFAULT_RHOS) -> Figure:
    """Figure 2: marginal posterior (3.3) and marginal risk (3.4) against ρ."""
    sweep = rho_sweep(case, rhos)
    figure = Figure(figsize=(10, 4), layout="constrained")
    left, right = figure.subplots(1, 2)
    for label in case.priors:
        curve = sweep.xs(label, level="prior")
        left.plot(curve.index, curve["marginal_posterior"], label=f"p = {label}")
        right.plot(curve.index, curve["marginal_risk"], label=f"p = {label}")
    left.set(xscale="log", xlabel="ρ", ylabel="marginal posterior", ylim=(0, 1))
    right.set(xscale="log", yscale="log", xlabel="ρ", ylabel="marginal risk")
    for axis in (left, right):
        _mark_case_rho(axis, case)
    left.legend(fontsize="small")
    figure.suptitle(f"{case.name}: averaged over releases from the truth")
    return figure


def correct_decision_figure(case: SingleBlockCase, rhos=DEFAULT_RHOS) -> Figure:
    """Figure 3: probability that the adversary's 0-1 decision (3.5) is right, (3.6)."""
    sweep = rho_sweep(case, rhos)
    figure = Figure(figsize=(6, 4), layout="constrained")
    axis = figure.subplots()
    for label in case.priors:
        curve = sweep.xs(label, level="prior")
        axis.plot(curve.index, curve["correct_decision_probability"], label=f"p = {label}")
    axis.set(xscale="log", xlabel="ρ", ylabel="P[correct decision]", ylim=(-0.02, 1.02))
    _mark_case_rho(axis, case)
    axis.legend(fontsize="small")
    axis.set_title(f"{case.name}: probability of a correct decision")
    return figure


def save_figures(case: SingleBlockCase, out_dir) -> list[Path]:
    """Write Figures 1–3 as PNG files into ``out_dir`` (created); return their paths."""
    figures = {
        "figure1_posterior_and_risk.png": posterior_figure(case),
        "figure2_marginal_posterior_and_risk.png": marginal_figure(case),
        "figure3_correct_decision.png": correct_decision_figure(case),
    }
    return write_figures(figures, out_dir, dpi=120)
