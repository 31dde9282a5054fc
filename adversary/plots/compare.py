"""Figures comparing one scenario across priors and parameters.

- :func:`risk_curves_figure` — a :func:`~adversary.analyses.compare.sweep`
  Dataset as curves: one line per prior against the swept parameter, panels
  for the marginal posterior (3.3), the marginal risk (3.4) and the
  probability of a correct decision (3.6);
- :func:`prior_sensitivity_figure` — the adversary's posterior of the target
  under each prior (:func:`~adversary.analyses.compare.compare_priors`), with
  ±2 MCSE error bars when sampled;
- :func:`prior_forest`, :func:`prior_dist` — ArviZ's forest and ECDF plots of
  sampled comparisons (ArviZ ``PlotCollection``; ``.savefig``);
- :func:`decision_map_figure` — the adversary's decision over a grid of
  releases ``(x1*, x2*, y1*)``, like Kazan & Reiter's Figure 4.

Matplotlib figures are built without pyplot, so nothing needs a display.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr
from matplotlib import colormaps
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..analyses.compare import SampledComparison

__all__ = [
    "decision_map_figure",
    "prior_dist",
    "prior_forest",
    "prior_sensitivity_figure",
    "risk_curves_figure",
]

_PANELS = {
    "marginal_posterior": "marginal posterior of the truth",
    "marginal_risk": "marginal risk (posterior / prior)",
    "correct_decision_probability": "P[correct decision]",
}
_MAX_ROWS = 6


def _wide_positive(values) -> bool:
    """Whether values are numbers > 0 spanning at least a factor 20 (a log axis helps)."""
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.number) or values.size < 2:
        return False
    values = values[np.isfinite(values)]
    return bool(values.size and values.min() > 0 and values.max() / values.min() >= 20)


def _row_selections(dataset: xr.Dataset, x: str) -> list[dict]:
    others = [d for d in dataset["marginal_posterior"].dims if d not in ("prior", x)]
    if not others:
        return [{}]
    grids = [dataset[d].values for d in others]
    selections = [
        dict(zip(others, combo, strict=True))
        for combo in np.stack(np.meshgrid(*grids, indexing="ij"), -1).reshape(-1, len(others))
    ]
    if len(selections) > _MAX_ROWS:
        raise ValueError(
            f"dataset: {len(selections)} combinations of {others} besides x={x!r}; select at "
            f"most {_MAX_ROWS} first, e.g. dataset.sel({others[0]}=...)"
        )
    return selections


def _cast(dataset: xr.Dataset, selection: dict) -> dict:
    """Selection values in the coordinates' own dtypes (meshgrid stacking casts them)."""
    return {d: np.asarray(v, dtype=dataset[d].dtype).item() for d, v in selection.items()}


def risk_curves_figure(dataset: xr.Dataset, x: str | None = None, measures=None) -> Figure:
    """Risk curves of a sweep: one line per prior against the swept parameter ``x``.

    ``x`` defaults to the first swept parameter. Panels (columns): the
    measures in ``measures`` (default marginal posterior (3.3), marginal
    risk (3.4), probability of a correct decision (3.6)); one row per value of
    any further swept parameter (at most 6; select first). The x axis is
    logarithmic when the swept values are positive and span a factor ≥ 20,
    the risk axis when the risks do; the case's own value of ``x`` is marked.
    """
    if not isinstance(dataset, xr.Dataset) or "prior" not in dataset.dims:
        raise TypeError("dataset must be a Dataset from adversary.analyses.compare.sweep")
    swept = [d for d in dataset["marginal_posterior"].dims if d != "prior"]
    if x is None:
        if not swept:
            raise ValueError("dataset: nothing was swept; use prior_sensitivity_figure instead")
        x = swept[0]
    if x not in swept:
        raise ValueError(f"x: {x!r} is not a swept dimension; have {swept}")
    measures = list(_PANELS) if measures is None else list(measures)
    for measure in measures:
        if measure not in dataset:
            raise ValueError(f"measures: {measure!r} is not in the dataset")
    rows = _row_selections(dataset, x)
    figure = Figure(figsize=(4.2 * len(measures), 3.4 * len(rows) + 0.6), layout="constrained")
    axes = np.atleast_2d(figure.subplots(len(rows), len(measures), squeeze=False))
    xs = dataset[x].values
    numeric = np.issubdtype(xs.dtype, np.number)
    positions = xs if numeric else np.arange(len(xs))
    case_value = dataset.attrs.get(f"case_{x}")
    for r, selection in enumerate(rows):
        part = dataset.sel(_cast(dataset, selection)) if selection else dataset
        for c, measure in enumerate(measures):
            axis = axes[r, c]
            for label in part["prior"].values:
                curve = part[measure].sel(prior=label)
                axis.plot(
                    positions,
                    curve.values,
                    marker="." if len(xs) < 30 else None,
                    label=f"p = {label}",
                )
            axis.set(xlabel=x, ylabel=_PANELS.get(measure, measure))
            if numeric and _wide_positive(xs):
                axis.set_xscale("log")
            if not numeric:
                axis.set_xticks(positions, [str(v) for v in xs], rotation=45, ha="right")
            if measure == "marginal_risk":
                axis.axhline(1.0, color="0.5", linewidth=0.8)
                if _wide_positive(part[measure].values):
                    axis.set_yscale("log")
            elif measure in ("marginal_posterior", "correct_decision_probability"):
                axis.set_ylim(-0.02, 1.02)
            if numeric and isinstance(case_value, int | float) and not isinstance(case_value, bool):
                axis.axvline(
                    case_value, color="0.5", linestyle=":", label=f"case: {case_value:.4g}"
                )
            if selection:
                axis.set_title(
                    ", ".join(f"{d} = {v}" for d, v in selection.items()), fontsize="medium"
                )
        axes[r, 0].legend(fontsize="small")
    figure.suptitle(f"{dataset.attrs.get('case', '')}: averaged over releases from the truth")
    return figure


def _comparison(result) -> tuple[xr.Dataset, bool]:
    if isinstance(result, SampledComparison):
        return result.dataset, True
    if isinstance(result, xr.Dataset) and "prior" in result.dims:
        return result, "posterior_of_truth_mcse" in result
    raise TypeError(
        "result must be a compare_priors result (Dataset or SampledComparison), "
        f"got {type(result).__name__}"
    )


def prior_sensitivity_figure(result, exact: xr.Dataset | None = None, variable=None) -> Figure:
    """The adversary's posterior of the target under each prior, beside the prior.

    ``result`` is a :func:`~adversary.analyses.compare.compare_priors` result
    (exact Dataset or :class:`SampledComparison`: points with ±2 MCSE bars);
    ``exact`` optionally overlays an exact result as crosses. ``variable``
    defaults to ``posterior_of_truth`` (a sweep Dataset without swept
    parameters works too, with ``variable="marginal_posterior"``). Left panel:
    posterior and prior probability ``p`` (log axis when they span a factor
    ≥ 20); right panel: their ratio, the risk (3.2).
    """
    dataset, sampled = _comparison(result)
    if variable is None:
        variable = "posterior_of_truth" if "posterior_of_truth" in dataset else None
        if variable is None and "marginal_posterior" in dataset:
            variable = "marginal_posterior"
    if variable is None or variable not in dataset:
        raise ValueError(
            f"variable: {variable!r} is not in the dataset; the comparison needs a target "
            "(compare_priors(..., target={'X1': value}))"
        )
    if dataset[variable].dims != ("prior",):
        raise ValueError(f"variable: {variable!r} must have the single dim 'prior'")
    labels = [str(v) for v in dataset["prior"].values]
    positions = np.arange(len(labels))
    posterior = dataset[variable].values
    p = dataset["p"].values if "p" in dataset.coords else None
    if p is not None and not np.issubdtype(p.dtype, np.number):
        p = None  # priors that are not one probability (e.g. one per category)
    if "prior_of_truth" in dataset:
        p = dataset["prior_of_truth"].values
    figure = Figure(figsize=(9, 3.8), layout="constrained")
    left, right = figure.subplots(1, 2)
    mcse = dataset.get(f"{variable}_mcse") if sampled else None
    method = "MCMC" if sampled else "exact"
    if mcse is not None:
        left.errorbar(
            positions,
            posterior,
            yerr=2 * mcse.values,
            fmt="o",
            capsize=4,
            label=f"posterior ({method}, ±2 MCSE)",
        )
    else:
        left.plot(positions, posterior, "o", label=f"posterior ({method})")
    if exact is not None:
        exact_values = exact[variable].sel(prior=dataset["prior"]).values
        left.plot(positions, exact_values, "x", color="k", markersize=8, label="posterior (exact)")
    if p is not None:
        left.plot(positions, p, "_", color="0.4", markersize=18, mew=2, label="prior")
        ratio = posterior / p
        if mcse is not None:
            right.errorbar(positions, ratio, yerr=2 * mcse.values / p, fmt="o", capsize=4)
        else:
            right.plot(positions, ratio, "o")
        right.axhline(1.0, color="0.5", linewidth=0.8)
        right.set(ylabel="risk (posterior / prior)")
        if _wide_positive(ratio):
            right.set_yscale("log")
    else:
        right.set_visible(False)
    shown = np.concatenate([posterior, [] if p is None else p])
    if _wide_positive(shown):
        left.set_yscale("log")
    else:
        left.set_ylim(-0.02, 1.02)
    target = dataset.attrs.get("target", "the truth")
    left.set(ylabel=f"P[{target}]" if variable == "posterior_of_truth" else variable)
    for axis in (left, right):
        axis.set_xticks(positions, labels)
        axis.set_xlabel("prior")
        axis.set_xlim(-0.5, len(labels) - 0.5)
    left.legend(fontsize="small")
    figure.suptitle(f"{dataset.attrs.get('case', '')}: the adversary's posterior by prior")
    return figure


def _trees(result) -> dict:
    if isinstance(result, SampledComparison):
        return result.trees
    if isinstance(result, dict) and result:
        return result
    raise TypeError("result must be a SampledComparison (compare_priors(..., method='mcmc'))")


def prior_forest(result, var_names=None, **kwargs):
    """ArviZ's forest plot of the sampled posteriors, one model per prior (combined chains).

    Returns ArviZ's ``PlotCollection`` (``.savefig(path)``); ``kwargs`` go to
    :func:`arviz.plot_forest`.
    """
    import arviz as az

    return az.plot_forest(_trees(result), var_names=var_names, combined=True, **kwargs)


def prior_dist(result, var_names=None, kind: str = "ecdf", **kwargs):
    """ArviZ's distribution plot (ECDF by default) of the sampled posteriors, one per prior."""
    import arviz as az

    return az.plot_dist(_trees(result), var_names=var_names, kind=kind, **kwargs)


_RELEASE_DIMS = ("x1_release", "x2_release", "y1_release")
_PROBABILITY_NAMES = ("release_probability", "probability")


def _true_x1(dataset: xr.Dataset):
    """The true ``x1`` from ``attrs["true_x1"]`` or the first element of ``attrs["truth"]``."""
    if "true_x1" in dataset.attrs:
        return int(dataset.attrs["true_x1"])
    truth = dataset.attrs.get("truth")
    if truth is not None and np.ndim(truth) == 1 and len(truth):
        return int(np.asarray(truth)[0])
    if truth is not None and np.ndim(truth) == 0:
        return int(truth)
    return None


def _release_probability(dataset: xr.Dataset):
    for name in _PROBABILITY_NAMES:
        if name in dataset:
            return dataset[name]
    return None


def _central(dataset: xr.Dataset, probability: xr.DataArray, mass: float) -> xr.Dataset:
    """The dataset cropped, axis by axis, to the central range holding ``mass`` of each marginal."""
    tail = (1.0 - mass) / 2
    keep = {}
    for dim in _RELEASE_DIMS:
        marginal = probability.sum([d for d in _RELEASE_DIMS if d != dim]).values
        cumulative = np.cumsum(marginal) / marginal.sum()
        low = int(np.searchsorted(cumulative, tail, side="left"))
        high = int(np.searchsorted(cumulative, 1.0 - tail, side="left"))
        keep[dim] = slice(low, min(high, len(marginal) - 1) + 1)
    return dataset.isel(keep)


def _decided(value: float) -> str:
    """A decided count for a legend: ``2``, or ``1 or 2 (tie)`` for a split tie's ``1.5``."""
    if float(value).is_integer():
        return str(int(value))
    return f"{math.floor(value)} or {math.ceil(value)} (tie)"


def _credit(decision, truth):
    """(3.6)'s credit of a decided count (``m + 1/2`` for a split tie) given the true count."""
    return 1.0 - np.abs(np.asarray(decision, dtype=np.float64) - truth)


def _decision_categories(dataset: xr.Dataset, truth):
    """``(codes over the grid, names of the codes, colours or None)`` for the map."""
    decision = dataset["decision"].astype(np.float64)
    if "decision_without_hierarchy" not in dataset:
        values = sorted(float(v) for v in np.unique(decision.values))
        codes = xr.apply_ufunc(np.searchsorted, values, decision)
        names = []
        for v in values:
            verdict = ""
            if truth is not None:
                verdict = {1.0: " (right)", 0.0: " (wrong)"}.get(float(_credit(v, truth)), "")
            names.append(f"decides {_decided(v)}{verdict}")
        palette = ["#d9d9d9", "#4c72b0", "#dd8452", "#55a868"]
        return codes, names, palette[: len(values)] if len(values) <= len(palette) else None
    without = dataset["decision_without_hierarchy"].astype(np.float64)
    pairs = sorted(
        {
            (float(a), float(b))
            for a, b in zip(without.values.ravel(), decision.values.ravel(), strict=True)
        }
    )
    lookup = {pair: k for k, pair in enumerate(pairs)}
    codes = xr.apply_ufunc(
        np.vectorize(lambda a, b: lookup[(float(a), float(b))], otypes=[np.int64]),
        without,
        decision,
    )
    names, colours = [], []
    greys = iter(["#d9d9d9", "#969696", "#636363", "#252525"] * len(pairs))
    for a, b in pairs:
        if a == b:
            names.append(f"decides {_decided(b)} with or without hierarchy")
            colours.append(next(greys))
            continue
        better = None if truth is None else _credit(b, truth) > _credit(a, truth)
        verdict = {None: "", True: ", right", False: ", wrong"}[better]
        names.append(f"hierarchy changes {_decided(a)} → {_decided(b)}{verdict}")
        if truth is None:
            colours.append("#4c72b0" if b > a else "#dd8452")
        else:
            colours.append("#55a868" if better else "#c44e52")
    return codes, names, colours


def decision_map_figure(
    dataset: xr.Dataset,
    mass: float | None = 0.99,
    ncols: int | None = None,
    title: str | None = None,
) -> Figure:
    """The adversary's decision over released ``(x1*, x2*, y1*)``, like Kazan & Reiter's Figure 4.

    ``dataset`` has dims ``x1_release``, ``x2_release``, ``y1_release`` (integer
    coordinates) and a boolean or numeric ``decision`` (the Bayes decision (3.5)
    about ``X1``: the count decided, ``m + 1/2`` on a tie split by the tie
    rule); optionally ``decision_without_hierarchy`` (the single-block
    decision), whose disagreements are coloured — as right or wrong when the
    true ``x1`` is known (``attrs["true_x1"]``, or ``attrs["truth"] = (x1, x2,
    y1)``); and optionally ``release_probability`` (the pmf of the releases
    under the truth). One panel per ``x1*``, each an image with ``x2*`` across
    and ``y1*`` up.

    With a release probability, each axis is first cropped to the central
    range holding ``mass`` of its marginal (``None``: no cropping; the paper
    shows > 99%), the panel titles give each ``x1*``'s mass, and the title the
    mass on which the hierarchy changes the decision to right and to wrong (a
    change to or from a split tie counting half).
    """
    if not isinstance(dataset, xr.Dataset) or "decision" not in dataset:
        raise TypeError("dataset must be a Dataset with a 'decision' variable")
    missing = [d for d in _RELEASE_DIMS if d not in dataset["decision"].dims]
    extra = [d for d in dataset["decision"].dims if d not in _RELEASE_DIMS]
    if missing or extra:
        raise ValueError(
            f"dataset: 'decision' must have dims {_RELEASE_DIMS}; "
            f"missing {missing}, unexpected {extra}"
        )
    if mass is not None and not 0 < mass <= 1:
        raise ValueError(f"mass must lie in (0, 1], got {mass!r}")
    truth = _true_x1(dataset)
    probability = _release_probability(dataset)
    summary = ""
    if probability is not None and truth is not None and "decision_without_hierarchy" in dataset:
        gain = _credit(dataset["decision"], truth) - _credit(
            dataset["decision_without_hierarchy"], truth
        )
        right = float((probability * np.maximum(gain, 0.0)).sum())
        wrong = float((probability * np.maximum(-gain, 0.0)).sum())
        summary = (
            f"\nthe hierarchy changes the decision to right on {right:.2%} and to wrong on "
            f"{wrong:.2%} of the release mass"
        )
    if probability is not None and mass is not None and mass < 1:
        dataset = _central(dataset, probability, mass)
        probability = _release_probability(dataset)
    codes, names, colours = _decision_categories(dataset, truth)
    n = len(names)
    if colours is None:
        colours = [tuple(c) for c in colormaps["tab10"](np.arange(n) % 10)]
    cmap = ListedColormap(colours)
    norm = BoundaryNorm(np.arange(-0.5, n + 0.5), n)
    x1_values = dataset["x1_release"].values
    ncols = ncols or min(len(x1_values), 4)
    nrows = math.ceil(len(x1_values) / ncols)
    figure = Figure(figsize=(3.3 * ncols, 3.0 * nrows + 1.2), layout="constrained")
    axes = figure.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    x2 = dataset["x2_release"].values
    y1 = dataset["y1_release"].values
    for k, value in enumerate(x1_values):
        axis = axes.flat[k]
        panel = codes.sel(x1_release=value).transpose("y1_release", "x2_release")
        axis.pcolormesh(_edges(x2), _edges(y1), panel.values, cmap=cmap, norm=norm)
        heading = f"x1* = {value}"
        if probability is not None:
            heading += f"  (mass {float(probability.sel(x1_release=value).sum()):.3g})"
        axis.set_title(heading, fontsize="medium")
    for axis in axes.flat[len(x1_values) :]:
        axis.set_visible(False)
    for axis in axes[-1, :]:
        axis.set_xlabel("x2*")
    for axis in axes[:, 0]:
        axis.set_ylabel("y1*")
    handles = [
        Patch(facecolor=cmap(k), edgecolor="0.3", label=name) for k, name in enumerate(names)
    ]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(n, 3), fontsize="small")
    heading = title or dataset.attrs.get("title", "The adversary's decision about X1")
    figure.suptitle(heading + summary)
    return figure


def _edges(values: np.ndarray) -> np.ndarray:
    """Cell edges around sorted, evenly spaced coordinates (integers: ±1/2)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 1:
        return np.array([values[0] - 0.5, values[0] + 0.5])
    middle = (values[1:] + values[:-1]) / 2
    return np.concatenate([[2 * values[0] - middle[0]], middle, [2 * values[-1] - middle[-1]]])
