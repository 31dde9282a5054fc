"""Figures of Kazan & Reiter's (2023) supplement: S1.3, S2, S5 and S6.

Each function draws one figure from numbers the package has computed (the
Datasets of :func:`adversary.scenarios.multi_level.marginal_by_levels`,
:func:`adversary.analyses.sequential.marginal_by_releases`,
:func:`adversary.scenarios.post_processing.marginal_by_x2_tilde` and
:func:`~adversary.scenarios.post_processing.marginal_by_rho`, or the exact
pmfs of :mod:`adversary.noise`) and returns a :class:`matplotlib.figure.Figure`
built without pyplot, so nothing needs a display. The S2 figures compute their
own (cheap) numbers; :func:`dg_sum_comparison` gives those of Figure 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..noise import discrete_gaussian, noise_variance
from ..noise.sums import sum_of_discrete_gaussians

__all__ = [
    "SumComparison",
    "dg_sum_comparison",
    "dg_sum_figure",
    "dg_variance_figure",
    "many_levels_figure",
    "post_processing_decision_figure",
    "post_processing_figure",
    "prior_label",
    "sequential_releases_figure",
]

#: Colour of "without post-processing" in S6's Figure 6 (the paper's purple line).
UNPROCESSED_COLOUR = "tab:purple"


def prior_label(p: float) -> str:
    """``p`` as the paper writes it: ``1/864`` when it is one over an integer, else 3 digits."""
    fraction = Fraction(float(p)).limit_denominator(100_000)
    if fraction.numerator == 1 and abs(float(fraction) - p) <= 1e-12 * p:
        return f"1/{fraction.denominator}"
    return f"{p:.3g}"


def _one_prior(data: xr.Dataset, prior: float | None) -> xr.Dataset:
    """``data`` at one prior (default: its first), the ``prior`` dimension dropped."""
    if "prior" not in data.dims:
        return data
    if prior is None:
        return data.isel(prior=0)
    return data.sel(prior=prior, method="nearest")


# --- S1.3, Figure 1 ----------------------------------------------------------------------


def many_levels_figure(curve: xr.Dataset, *, with_decision: bool = False) -> Figure:
    """S1.3, Figure 1: marginal posterior (3.3) and marginal risk (3.4) against ℓ.

    ``curve`` is :func:`adversary.scenarios.multi_level.marginal_by_levels`
    (posterior (S1.1) averaged over the ℓ releases from the truth); one line per
    prior. ``with_decision`` adds a third panel, the probability (3.6) that the
    adversary's 0-1 decision is right, which the figure's caption names but
    which differs from the marginal posterior it plots (docs/paper-differences.md).
    """
    levels = curve["levels"].values
    panels = [
        ("marginal_posterior", "marginal posterior P[X1 = 1]", "linear"),
        ("marginal_risk", "marginal risk (posterior / prior)", "log"),
    ]
    if with_decision:
        panels.append(("correct_decision_probability", "P[correct decision]", "linear"))
    figure = Figure(figsize=(5 * len(panels), 4), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(panels)))
    ticks = [str(level) for level in levels]
    if "level_name" in curve.coords:
        names = curve["level_name"].values
        ticks = [f"{level}\n+{name}" for level, name in zip(levels, names, strict=True)]
    for axis, (name, label, scale) in zip(axes, panels, strict=True):
        for p in curve["prior"].values:
            axis.plot(levels, curve[name].sel(prior=p), marker="o", label=f"p = {prior_label(p)}")
        axis.set(xlabel="ℓ, levels at which the target is unique", ylabel=label, yscale=scale)
        axis.set_xticks(levels, ticks, fontsize="small")
    axes[0].legend(fontsize="small")
    figure.suptitle("S1.3: a target unique at ℓ levels, 2020 ρ per level")
    return figure


# --- S2, Figures 2 and 3 -----------------------------------------------------------------


def dg_variance_figure(scales=None) -> Figure:
    """S2, Figure 2: the variance σ² of ``DG(0, s)`` against the scale s, with σ² = s dashed.

    Left, as the paper: log axes, the upper axis ρ = 1/(2s). Right: the gap
    ``s - σ²`` on log axes with the supplement's claimed bounds (0.002 for
    s > 0.5, 1e-6 for s > 1) dotted. σ² is the exact theta-series value of
    :func:`adversary.noise.discrete_gaussian.variance`; the gap is drawn where
    it is resolved in float64 (above s ≈ 2.5 it is below the rounding of s).
    ``scales`` default: 400 values log-spaced from 0.05 to 100.
    """
    s = np.geomspace(5e-2, 1e2, 400) if scales is None else np.asarray(scales, dtype=float)
    sigma2 = discrete_gaussian.variance(s)
    gap = s - sigma2
    figure = Figure(figsize=(10, 4), layout="constrained")
    left, right = figure.subplots(1, 2)
    left.plot(s, sigma2, label="σ² = Var Z")
    left.plot(s, s, linestyle="--", color="0.3", label="σ² = s")
    left.set(xscale="log", yscale="log", xlabel="scale s", ylabel="σ²")
    top = left.secondary_xaxis("top", functions=(_half_inverse, _half_inverse))
    top.set_xlabel("ρ = 1/(2s)")
    left.legend(fontsize="small")
    shown = gap > 0.0  # beyond s ≈ 2.5 the gap is below the float resolution of s
    right.plot(s[shown], gap[shown], label="s − σ²")
    for bound, start in ((2e-3, 0.5), (1e-6, 1.0)):
        right.hlines(bound, start, s[-1], colors="0.4", linestyles=":")
        right.annotate(f"{bound:g} (s > {start:g})", (s[-1], bound), ha="right", va="bottom")
    right.set(xscale="log", yscale="log", xlabel="scale s", ylabel="s − σ²")
    right.legend(fontsize="small")
    figure.suptitle("S2: variance of the discrete Gaussian DG(0, s)")
    return figure


def _half_inverse(x):
    """``1/(2x)``, its own inverse (s ↔ ρ); non-positive inputs map to ``inf``."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > 0, 1.0 / (2.0 * np.where(x > 0, x, 1.0)), np.inf)


@dataclass(frozen=True)
class SumComparison:
    """The exact pmf of ``Z_1 + … + Z_n`` (``Z_i ~ DG(0, s)`` iid) against ``DG(0, n s)`` (S2.3).

    ``support`` the integers tabulated; ``exact`` and ``approximation`` their
    probabilities; ``total_variation`` ``½ Σ |exact - approximation|`` over the
    table; ``tail_bound`` a bound on what the table leaves out (the exact sum's
    omitted mass plus ``DG(0, n s)``'s mass beyond the table, halved), so the
    total-variation distance lies within ``total_variation ± tail_bound``;
    ``exact_variance`` the variance of the tabulated sum (``n Var Z_1``).
    """

    n: int
    rho: float
    scale: float
    support: np.ndarray
    exact: np.ndarray
    approximation: np.ndarray
    total_variation: float
    tail_bound: float
    exact_variance: float


def dg_sum_comparison(n: int, rho: float, convention="paper", tail_mass=1e-15) -> SumComparison:
    """The sum of n iid ``DG(0, s)``, ``s`` from ρ (paper: ``1/(2ρ)``), against ``DG(0, n s)``.

    Proposition S2 / (S2.3). The exact pmf is
    :func:`adversary.noise.sums.sum_of_discrete_gaussians` (to within
    ``tail_mass``); the approximation the discrete Gaussian pmf on the same
    integers.
    """
    scale = float(noise_variance(rho, convention))
    table = sum_of_discrete_gaussians(n, scale, tail_mass)
    support = table.support
    approximation = discrete_gaussian.pmf(support, n * scale)
    beyond = 2.0 * float(discrete_gaussian.sf(support[-1] + 1, n * scale))
    return SumComparison(
        n=int(n),
        rho=float(rho),
        scale=scale,
        support=support,
        exact=table.probabilities,
        approximation=approximation,
        total_variation=0.5 * float(np.abs(table.probabilities - approximation).sum()),
        tail_bound=0.5 * (table.omitted_mass + beyond),
        exact_variance=table.variance,
    )


def dg_sum_figure(rhos=(0.099, 1.0), ns=(27, 5), convention="paper") -> Figure:
    """S2, Figure 3: pmf of the exact sum of n ``DG(ρ)`` (blue) against ``DG(0, n/(2ρ))`` (red).

    Rows ρ (the paper: 0.099, the 2020 block ρ1, on top; 1 below), columns n
    (27, the block group of Sec. 4.3, then 5). Each panel is titled with the
    total-variation distance from :func:`dg_sum_comparison`; the x-range is
    ±4 standard deviations.
    """
    figure = Figure(figsize=(10, 7), layout="constrained")
    axes = figure.subplots(len(rhos), len(ns), squeeze=False)
    for row, rho in enumerate(rhos):
        for column, n in enumerate(ns):
            axis = axes[row, column]
            comparison = dg_sum_comparison(n, rho, convention)
            reach = 4.0 * np.sqrt(comparison.exact_variance)
            shown = np.abs(comparison.support) <= reach
            z = comparison.support[shown]
            axis.bar(
                z,
                comparison.exact[shown],
                width=1.0,
                color="tab:blue",
                alpha=0.5,
                label=f"sum of {n} DG(ρ)",
            )
            axis.plot(
                z,
                comparison.approximation[shown],
                color="tab:red",
                marker=".",
                linewidth=1,
                label=f"DG(0, {n}/(2ρ))",
            )
            axis.set_title(
                f"ρ = {rho:g}, n = {n}: TV = {comparison.total_variation:.1e}", fontsize="medium"
            )
            axis.set(xlabel="z", ylabel="probability")
    axes[0, 0].legend(fontsize="small")
    figure.suptitle("S2: the sum of n discrete Gaussians against one discrete Gaussian (S2.3)")
    return figure


# --- S5 ----------------------------------------------------------------------------------


def sequential_releases_figure(curve: xr.Dataset, sequence, joint_risks=None) -> Figure:
    """S5: the marginal total risk of m releases against m, and the product identity (S5.7)–(S5.8).

    Left: ``marginal_risk`` of ``curve``
    (:func:`adversary.analyses.sequential.marginal_by_releases`, the expectation of
    the total risk (S5.8) over releases from the truth) against m, one line per
    prior. Right: one realised sequence (``sequence``, a
    :class:`~adversary.analyses.sequential.SequentialRisk` whose leading axis is
    the priors of ``curve``): the conditional risks (S5.2) of each release
    (dotted), their running product, the total risk (S5.7)–(S5.8) (solid), and,
    if given, ``joint_risks`` (same shape), the risk (S5.5) of one look at
    releases 1..j at once (crosses), which the product must equal.
    """
    priors = np.atleast_1d(curve["prior"].values)
    figure = Figure(figsize=(11, 4), layout="constrained")
    left, right = figure.subplots(1, 2)
    m = curve["releases"].values
    for i, p in enumerate(priors):
        left.plot(
            m,
            curve["marginal_risk"].sel(prior=p),
            marker=".",
            color=f"C{i}",
            label=f"p = {prior_label(p)}",
        )
    left.set(xlabel="m, number of releases", ylabel="marginal total risk", yscale="log")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(fontsize="small")
    n_releases = np.shape(sequence.total_risks)[-1]
    conditional = np.reshape(sequence.conditional_risks, (-1, n_releases))
    total = np.reshape(sequence.total_risks, (-1, n_releases))
    j = np.arange(1, n_releases + 1)
    for i in range(total.shape[0]):
        right.plot(j, conditional[i], linestyle=":", marker=".", color=f"C{i}")
        right.plot(j, total[i], color=f"C{i}")
        if joint_risks is not None:
            right.plot(
                j,
                np.reshape(joint_risks, (-1, n_releases))[i],
                linestyle="none",
                marker="x",
                color=f"C{i}",
            )
    right.plot([], [], color="0.3", linestyle=":", marker=".", label="conditional risk (S5.2)")
    right.plot([], [], color="0.3", label="product of conditional risks (S5.8)")
    if joint_risks is not None:
        right.plot(
            [],
            [],
            color="0.3",
            linestyle="none",
            marker="x",
            label="one look at releases 1..j (S5.5)",
        )
    right.set(xlabel="release j", ylabel="risk", yscale="log")
    right.legend(fontsize="small")
    figure.suptitle("S5: sequential releases of one count")
    return figure


# --- S6, Figure 6 ------------------------------------------------------------------------


def post_processing_figure(by_x2_tilde: xr.Dataset, by_rho: xr.Dataset, prior=None) -> Figure:
    """S6, Figure 6: marginal risk with post-processing (S6.8) against x̃2 and against ρ1.

    ``by_x2_tilde`` is :func:`adversary.scenarios.post_processing.marginal_by_x2_tilde`
    (left: one ρ1, the paper's ≈ 0.099), ``by_rho`` is
    :func:`~adversary.scenarios.post_processing.marginal_by_rho` (right: one line
    per x̃2, the dashed line at the reference ρ1); ``prior`` selects one prior
    (default the first). Both panels show the single-block risk (3.4) of an
    adversary seeing ``x1*`` alone (purple, the paper's "without
    post-processing") and the risk of the adversary seeing the noisy counts
    ``(x1*, y1*)`` that ``x̃1`` is computed from (black dashed) — the bound that
    holds by data processing.
    """
    left_data = _one_prior(by_x2_tilde, prior)
    right_data = _one_prior(by_rho, prior)
    figure = Figure(figsize=(11, 4), layout="constrained")
    left, right = figure.subplots(1, 2)
    x2_tilde = left_data["x2_tilde"].values
    left.plot(
        x2_tilde, left_data["marginal_risk"], color="tab:blue", label="with post-processing (S6.8)"
    )
    left.axhline(
        float(left_data["single_block_marginal_risk"]),
        color=UNPROCESSED_COLOUR,
        label="single block, sees x1* (3.4)",
    )
    left.axhline(
        float(left_data["unprocessed_marginal_risk"]),
        color="k",
        linestyle="--",
        label="sees (x1*, y1*)",
    )
    left.set(xlabel="x̃2", ylabel="marginal risk", title=f"ρ1 = {float(left_data['rho']):.4g}")
    left.legend(fontsize="small")
    rho = right_data["rho"].values
    for i, x in enumerate(right_data["x2_tilde"].values):
        right.plot(
            rho, right_data["marginal_risk"].sel(x2_tilde=x), color=f"C{i}", label=f"x̃2 = {x}"
        )
    right.plot(
        rho,
        right_data["single_block_marginal_risk"],
        color=UNPROCESSED_COLOUR,
        label="single block (3.4)",
    )
    right.plot(
        rho,
        right_data["unprocessed_marginal_risk"],
        color="k",
        linestyle="--",
        label="sees (x1*, y1*)",
    )
    reference = by_rho.attrs.get("reference_rho")
    if reference is not None:
        right.axvline(reference, color="0.5", linestyle="--", linewidth=0.8)
    right.set(xscale="log", xlabel="ρ1", ylabel="marginal risk")
    right.legend(fontsize="small")
    p = float(left_data["prior"]) if "prior" in left_data.coords else None
    d = by_x2_tilde.attrs.get("d")
    figure.suptitle(
        f"S6: post-processed block count, d = {d}, x2 = {by_x2_tilde.attrs.get('x2')}"
        + (f", p = {prior_label(p)}" if p is not None else "")
    )
    return figure


def post_processing_decision_figure(by_x2_tilde: xr.Dataset, prior=None) -> Figure:
    """S6: probability (3.6) that the decision from the post-processed ``x̃1`` is right, against x̃2.

    From :func:`adversary.scenarios.post_processing.marginal_by_x2_tilde`, with
    the single-block probability (from ``x1*`` alone) as a purple line. The
    curve swings with period ``d + 1`` in x̃2: the share (S6.2) is shifted by
    ``(x̃2 - x2)/(d + 1)`` before it is rounded.
    """
    data = _one_prior(by_x2_tilde, prior)
    figure = Figure(figsize=(6, 4), layout="constrained")
    axis = figure.subplots()
    axis.plot(
        data["x2_tilde"].values,
        data["correct_decision_probability"],
        marker=".",
        label="from x̃1 (post-processed)",
    )
    axis.axhline(
        float(data["single_block_correct_decision_probability"]),
        color=UNPROCESSED_COLOUR,
        label="from x1* (single block)",
    )
    axis.set(
        xlabel="x̃2",
        ylabel="P[correct decision]",
        title=f"S6: the adversary's 0-1 decision, ρ1 = {float(data['rho']):.4g}",
    )
    axis.legend(fontsize="small")
    return figure
