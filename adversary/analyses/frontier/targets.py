"""Objectives and limits for the search, read from one allocation's evaluation.

The search (:mod:`~adversary.analyses.frontier.search`) gives its objective and
each constraint the evaluation of one allocation: the Dataset
:func:`~adversary.analyses.frontier.evaluation.evaluate` gives for it, without the
``allocation`` dimension. An objective returns a number to minimise; a
constraint an array (or a number) every element of which must be ``≤ 0``.
Any callable will do; these two cover the common cases.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

__all__ = ["at_most", "weighted_sum"]


def _selected(evaluation: xr.Dataset, variable: str, selection: dict, name: str) -> xr.DataArray:
    if variable not in evaluation.data_vars:
        raise ValueError(
            f"{name}: {variable!r} is not a variable of the evaluation "
            f"({', '.join(map(str, evaluation.data_vars))})"
        )
    data = evaluation[variable]
    return data.sel(selection) if selection else data


def _bare(data) -> xr.DataArray:
    """``data`` as a DataArray without the coordinates that are not its dimensions'."""
    data = data if isinstance(data, xr.DataArray) else xr.DataArray(data)
    return data.reset_coords(drop=True)


def weighted_sum(variable: str, weights=None, **selection):
    """An objective: ``Σ weights · evaluation[variable]`` over every element (of the
    ``selection``, e.g. ``metric="total"``). ``weights`` is a number or a DataArray
    whose coordinates match the variable's exactly (default 1 for every element)."""
    weights = 1.0 if weights is None else _bare(weights)

    def objective(evaluation: xr.Dataset) -> float:
        value, w = xr.align(
            _bare(_selected(evaluation, variable, selection, "weighted_sum")),
            weights if isinstance(weights, xr.DataArray) else xr.DataArray(weights),
            join="exact",
        )
        return float((w * value).sum())

    return objective


def at_most(variable: str, limit, **selection):
    """A constraint: ``evaluation[variable] ≤ limit`` element by element, as
    ``(value − limit) / |limit| ≤ 0`` (relative, so limits of any scale weigh alike).

    ``limit`` is a nonzero number or a DataArray of nonzero numbers (e.g. a risk
    profile over priors, or a reference allocation's variances for "at least as
    accurate") whose coordinates match the variable's exactly.
    """
    limit = _bare(limit)
    values = limit.values
    if not np.issubdtype(values.dtype, np.number) or not np.isfinite(values).all():
        raise ValueError(f"limit must be finite numbers, got {limit.values!r}")
    if (values == 0).any():
        raise ValueError("limit must be nonzero (the constraint is relative to it)")

    def constraint(evaluation: xr.Dataset) -> xr.DataArray:
        value, lim = xr.align(
            _bare(_selected(evaluation, variable, selection, "at_most")), limit, join="exact"
        )
        return (value - lim) / abs(lim)

    constraint.__name__ = f"at_most({variable!r})"
    return constraint


def as_number(value, name: str) -> float:
    """``value`` (a number or a one-element array) as a finite float; else one line naming it."""
    array = np.asarray(value.values if isinstance(value, xr.DataArray) else value, dtype=float)
    if array.size != 1 or not math.isfinite(float(array.reshape(-1)[0])):
        raise ValueError(f"{name} must return one finite number, got {value!r}")
    return float(array.reshape(-1)[0])


def as_values(value, name: str) -> np.ndarray:
    """``value`` (a number or an array) as finite floats; else one line naming it."""
    array = np.ravel(np.asarray(value.values if isinstance(value, xr.DataArray) else value))
    array = array.astype(float)
    if array.size == 0 or not np.isfinite(array).all():
        raise ValueError(f"{name} must return finite numbers, got {value!r}")
    return array
