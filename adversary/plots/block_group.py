"""Figures of the block-group attack, like Kazan & Reiter's (2023) Figures 4–6 (Sec. 4.3).

- :func:`decision_figure` — Figure 4 (and S4's Figures 10–11): the
  adversary's 0-1 decision (3.5) about ``X1`` over the releases
  ``(x1*, x2*, y1*)`` that hold most of the probability, coloured where the
  block group changes it, to the right or the wrong value: a
  :func:`~adversary.scenarios.block_group.releases.decision_map` drawn by
  :func:`adversary.plots.compare.decision_map_figure`.
- :func:`hierarchy_sweep` — the numbers of Figures 5 and 6: the probability
  of a correct decision (3.6), the marginal posterior (3.3) and the marginal
  risk (3.4) of a :class:`~adversary.scenarios.block_group.case.BlockGroupCase`
  for every true block-group count ``x2`` (and every ``ρ2``), from
  :func:`adversary.analyses.compare.sweep`.
- :func:`correct_decision_by_x2_figure` — Figure 5: the probability of a
  correct decision against the true ``x2``, with the block group and without it.
- :func:`correct_decision_by_rho2_figure` — Figure 6: the same against ``ρ2``
  for a few true ``x2``.

Figures are built without pyplot, so nothing needs a display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..analyses.compare import sweep
from .compare import decision_map_figure

__all__ = [
    "correct_decision_by_rho2_figure",
    "correct_decision_by_x2_figure",
    "decision_figure",
    "hierarchy_sweep",
]

_CORRECT = "correct_decision_probability"
_ALONE = "correct_decision_probability_without_hierarchy"
_WITHOUT_STYLE = {"color": "0.35", "linestyle": "--", "linewidth": 1.2}


# --- Figure 4 ------------------------------------------------------------------------------


def decision_figure(
    decisions: xr.Dataset,
    *,
    mass: float | None = 0.99,
    ncols: int | None = None,
    title: str | None = None,
) -> Figure:
    """Figure 4: the adversary's decision about ``X1`` for each release ``(x1*, x2*, y1*)``.

    ``decisions`` is a :func:`~adversary.scenarios.block_group.releases.decision_map`
    (the Bayes decision (3.5) with the block group, from the posterior
    (S3.4), and without it, from ``x1*`` alone), drawn by
    :func:`adversary.plots.compare.decision_map_figure`: one panel per ``x1*``
    with ``x2*`` across and ``y1*`` up (Kazan & Reiter's Figure 4, and the
    panels of S4's Figures 10–11). Grey tiles: the same decision with or
    without the block group; green: the block group changes it to the true
    value; red: to the wrong one; the title gives the release mass of each
    (the paper's 2.48% and 1.83%).

    ``mass`` is the release probability the drawn box must hold at least
    (the paper's "over 99%"): each axis is cropped to its central
    ``1 - (1 - mass) / 3`` (``None``: the whole grid). The default title names
    the prior of ``X2 | X1``, the truth and the probability of a correct
    decision (3.6) with and without the block group.
    """
    if not isinstance(decisions, xr.Dataset) or "release_probability" not in decisions:
        raise TypeError(
            "decisions must be the Dataset of adversary.scenarios.block_group.releases."
            "decision_map (or BlockGroupCase.decision_map)"
        )
    if mass is not None and not 0 < mass <= 1:
        raise ValueError(f"mass must lie in (0, 1], got {mass!r}")
    if title is None:
        attrs = decisions.attrs
        parts = ["The adversary's decision about X1"]
        if "x2_prior" in attrs:
            parts.append(f"X2 | X1 ~ {attrs['x2_prior']}")
        if "truth" in attrs:
            parts.append(f"truth (x1, x2) = ({attrs['truth'][0]}, {attrs['truth'][1]})")
        title = ", ".join(parts)
        if _CORRECT in attrs and _ALONE in attrs:
            title += (
                f"\nP[correct decision] {attrs[_CORRECT]:.2%} with the block group, "
                f"{attrs[_ALONE]:.2%} without"
            )
    per_axis = None if mass is None else 1.0 - (1.0 - mass) / 3.0
    return decision_map_figure(decisions, mass=per_axis, ncols=ncols, title=title)


# --- Figures 5 and 6: the numbers ----------------------------------------------------------


def hierarchy_sweep(
    case,
    x2_values: Sequence[int],
    rho2_values: Sequence[float] | None = None,
    prior_label: str | None = None,
    x2_priors: Mapping[str, object] | None = None,
    progress: bool | None = False,
) -> xr.Dataset:
    """Measures of a block-group case for each true ``x2`` (and ``ρ2``): Figures 5 and 6.

    For every true block-group count ``x2`` in ``x2_values`` the truth becomes
    ``(x1, x2, x2 - x1)`` with the case's ``x1`` (the paper adds people with
    the target's characteristics to the other blocks); with ``rho2_values``
    the block-group ρ is varied too, and with ``x2_priors`` (a mapping
    ``{label: BlockGroupPrior}``, e.g. S4's priors) the adversary's prior of
    ``X2 | X1``. Each combination's marginal posterior
    (3.3), marginal risk (3.4) and probability of a correct decision (3.6) is
    summed exactly over the releases by
    :meth:`~adversary.scenarios.block_group.case.BlockGroupCase.marginal_measures`,
    through :func:`adversary.analyses.compare.sweep`.

    Returns
    -------
    xarray.Dataset
        Dimensions ``x2`` and, if given, ``rho2`` and ``x2_prior`` (labelled
        by the keys of ``x2_priors``), in that order before ``x2``; the
        variables of :func:`~adversary.analyses.compare.sweep` at the one prior
        ``prior_label`` (default: the case's first), and the scalar
        ``correct_decision_probability_without_hierarchy`` (3.6) of the
        single block, which depends on neither ``x2``, ``ρ2`` nor the prior
        of ``X2``. Attributes: the case's name, prior label, its own ``x2``
        and ``ρ2`` (``case_x2``, ``case_rho2``) and its prior of ``X2 | X1``.
    """
    for attribute in ("truth", "rho2", "x2_prior", "marginal_measures"):
        if not hasattr(case, attribute):
            raise TypeError(f"case must be a BlockGroupCase, got {type(case).__name__}")
    label = next(iter(case.priors)) if prior_label is None else prior_label
    if label not in case.priors:
        raise ValueError(
            f"prior_label: {label!r} is not a prior of the case; have {', '.join(case.priors)}"
        )
    x1 = int(case.truth[0])
    x2_values = [int(k) for k in np.asarray(x2_values).reshape(-1)]
    if not x2_values or min(x2_values) < x1:
        raise ValueError(f"x2_values must be non-empty counts >= the true x1 = {x1}")
    over = {}
    if rho2_values is not None:
        over["rho2"] = [float(r) for r in np.asarray(rho2_values).reshape(-1)]
    if x2_priors is not None:
        if not isinstance(x2_priors, Mapping) or not x2_priors:
            raise TypeError(
                "x2_priors must be a non-empty mapping {label: BlockGroupPrior}, "
                f"got {x2_priors!r}"
            )
        over["x2_prior"] = list(x2_priors.values())
    over["truth"] = [(x1, k, k - x1) for k in x2_values]
    swept = sweep(case, over=over, priors=[label], progress=progress).isel(prior=0, drop=True)
    swept = swept.rename({"truth": "x2"}).assign_coords(x2=np.array(x2_values, dtype=np.int64))
    if x2_priors is not None:
        swept = swept.assign_coords(x2_prior=[str(k) for k in x2_priors])
    alone = case.marginal_measures(label).details[_ALONE]
    swept[_ALONE] = xr.DataArray(alone, attrs={"long_name": "P[correct decision], x1* alone"})
    swept.attrs = {
        "case": case.name,
        "prior": label,
        "p": float(case.priors[label]),
        "x2_prior": case.x2_prior.describe(),
        "x1": x1,
        "case_x2": int(case.truth[1]),
        "case_rho2": float(case.rho2),
        "rho1": float(case.rho1),
        "d": int(case.d),
    }
    return swept


# --- Figures 5 and 6: the drawings ---------------------------------------------------------


def _panels(data, dims: set[str], optional: str | None = None) -> dict[str, xr.Dataset]:
    """``{panel title: Dataset}`` from one Dataset or a mapping of them, each checked.

    ``optional``: a further dimension a Dataset may have (one line per value).
    """
    if isinstance(data, xr.Dataset):
        data = {"": data}
    if not isinstance(data, Mapping) or not data:
        raise TypeError("data must be a hierarchy_sweep Dataset or a mapping {title: Dataset}")
    for name, dataset in data.items():
        if not isinstance(dataset, xr.Dataset) or _CORRECT not in dataset:
            raise TypeError(f"data[{name!r}]: not a Dataset with {_CORRECT!r}")
        have = set(dataset[_CORRECT].dims)
        if have != dims and have != dims | {optional}:
            raise ValueError(
                f"data[{name!r}]: {_CORRECT!r} has dims {sorted(have)}, needs {sorted(dims)}"
                + (" (select one rho2 first)" if dims == {"x2"} and "rho2" in have else "")
            )
    return dict(data)


def _without_line(axis, dataset: xr.Dataset) -> None:
    if _ALONE in dataset:
        value = float(dataset[_ALONE])
        axis.axhline(value, **_WITHOUT_STYLE, label=f"without the block group ({value:.2%})")


def _figure(
    count: int, title: str | None, default: str, extra_width: float = 0.0
) -> tuple[Figure, np.ndarray]:
    figure = Figure(figsize=(max(7.0, 5.2 * count) + extra_width, 4.2), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, count, squeeze=False)[0])
    figure.suptitle(title if title is not None else default)
    return figure, axes


def correct_decision_by_x2_figure(data, *, title: str | None = None) -> Figure:
    """Figure 5: P[correct decision] (3.6) against the true block-group count ``x2``.

    ``data`` is a :func:`hierarchy_sweep` Dataset over ``x2`` (one ``ρ2``;
    with an ``x2_prior`` dimension, one line per prior of ``X2 | X1``), or
    a mapping ``{panel title: Dataset}`` to draw several side by side with
    their own y axes (e.g. the model's posterior and another way of deciding,
    such as the paper's sampler). Each panel: the probability with the block
    group against ``x2`` (points and line) and, dashed, without it (from
    ``x1*`` alone, as in the paper); the case's own ``x2`` is marked.
    Kazan & Reiter's Figure 5 shows these from Monte Carlo estimates at
    ``x2 = 1, …, 25``.
    """
    panels = _panels(data, {"x2"}, optional="x2_prior")
    first = next(iter(panels.values()))
    default = f"{first.attrs.get('case', '')}: P[correct decision] against the true x2"
    figure, axes = _figure(len(panels), title, default)
    for axis, (name, dataset) in zip(axes, panels.items(), strict=True):
        curve = dataset[_CORRECT]
        if "x2_prior" in curve.dims:
            for prior in curve["x2_prior"].values:
                line = curve.sel(x2_prior=prior)
                axis.plot(line["x2"].values, line.values, marker="o", markersize=3, label=prior)
        else:
            axis.plot(
                curve["x2"].values,
                curve.values,
                marker="o",
                markersize=4,
                label="with the block group",
            )
        _without_line(axis, dataset)
        case_x2 = dataset.attrs.get("case_x2")
        if case_x2 is not None:
            axis.axvline(case_x2, color="0.6", linestyle=":", label=f"case: x2 = {case_x2}")
        axis.set(xlabel="true block-group count x2", ylabel="P[correct decision] (3.6)")
        if name:
            axis.set_title(name, fontsize="medium")
        axis.legend(fontsize="small")
    return figure


def correct_decision_by_rho2_figure(data, *, title: str | None = None) -> Figure:
    """Figure 6: P[correct decision] (3.6) against the block-group ρ2, one line per true ``x2``.

    ``data`` is a :func:`hierarchy_sweep` Dataset over ``rho2`` and ``x2``, or
    a mapping ``{panel title: Dataset}`` for several panels side by side. The
    ρ2 axis is logarithmic; dashed: without the block group (independent of
    ρ2); dotted: the case's ρ2 (2020: ≈ 0.2465). Kazan & Reiter's Figure 6
    shows these at the 2020 ρ1 for a few values of ``x2``.
    """
    panels = _panels(data, {"x2", "rho2"})
    first = next(iter(panels.values()))
    default = f"{first.attrs.get('case', '')}: P[correct decision] against ρ2"
    figure, axes = _figure(len(panels), title, default, extra_width=1.8)
    for axis, (name, dataset) in zip(axes, panels.items(), strict=True):
        curves = dataset[_CORRECT].transpose("x2", "rho2")
        for x2 in curves["x2"].values:
            line = curves.sel(x2=x2)
            axis.plot(line["rho2"].values, line.values, label=f"x2 = {x2}")
        _without_line(axis, dataset)
        case_rho2 = dataset.attrs.get("case_rho2")
        if case_rho2 is not None:
            axis.axvline(case_rho2, color="0.6", linestyle=":", label=f"case: ρ2 = {case_rho2:.4g}")
        axis.set(xscale="log", xlabel="block-group ρ2", ylabel="P[correct decision] (3.6)")
        if name:
            axis.set_title(name, fontsize="medium")
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right center", fontsize="small")
    return figure
