"""The accuracy of published TopDown runs against the truth, with Monte Carlo standard errors.

For each metric count ``aᵀx`` (:mod:`.metrics`) of each unit and run, the
error is ``e = aᵀp − aᵀt`` (published ``p``, truth ``t``). Per run and level:

``mae``
    the mean of ``|e|`` over the units;
``mse``
    the mean of ``e²`` over the units (for the linear estimator, whose mean
    error is 0, the run mean estimates the analytic ``variance`` of :mod:`.analytic`);
``share_off_5``, ``share_off_10``
    the share of units with ``|e| > f·aᵀt`` for ``f`` = 5 %, 10 %: a unit
    whose true count is 0 is off when its published count is not 0.

A metric of several vectors (``hispanic_race``) takes the mean over them
within each run. Each statistic is reported as its mean over the ``R`` runs
and its Monte Carlo standard error ``sd/√R`` (``_se``; the runs are
independent). :func:`simulated_bias` gives JASON's bias measure ``B`` (2022,
eq. 6-3; :func:`adversary.topdown.bias.bias_measure`) averaged over the units
of each Table 8-11 block-size bin, with its jackknife standard error over runs.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...memory import check_memory
from ...scenarios.reconstruction.classification import REDUCED, Classification
from ..bias import BLOCK_SIZE_BINS, bias_measure, block_size_bin
from .analytic import OFF_FRACTIONS
from .metrics import metric_vectors
from .tree import as_tree, level_counts, published_runs

__all__ = ["simulated_accuracy", "simulated_bias"]


def _mean_and_se(per_run: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over runs (axis 0) and its standard error ``sd/√R``."""
    return per_run.mean(axis=0), per_run.std(axis=0, ddof=1) / np.sqrt(per_run.shape[0])


def simulated_accuracy(published, truth, *, classification: Classification = REDUCED) -> xr.Dataset:
    """``mae``, ``mse``, ``share_off_5``, ``share_off_10`` (module docstring) with their
    ``_se``, dims ``("metric", "level")``, over every level of ``truth``.

    ``published`` and ``truth`` are in the table format (:mod:`.tree`): ``counts`` of dims
    ``("run", "unit", "cell")`` (at least 2 runs) and ``("unit", "cell")``.
    """
    metrics = metric_vectors(classification)
    tree = as_tree(truth)
    names = ("mae", "mse", *OFF_FRACTIONS)
    columns = {name: [] for name in (*names, *(f"{n}_se" for n in names))}
    for level in tree.levels:
        units = tree.units[level]
        true = level_counts(truth, level, units, classification.n_cells) @ metrics.matrix.T
        rows = []
        for counts in published_runs(published, level, units, classification.n_cells):
            error = np.abs(counts @ metrics.matrix.T - true)  # runs × units × vectors
            stats = [error.mean(axis=1), (error**2).mean(axis=1)]
            stats += [(error > f * true).mean(axis=1) for f in OFF_FRACTIONS.values()]
            rows.append(metrics.by_metric(np.stack(stats, axis=1)))  # runs × statistics × metrics
        rows = np.concatenate(rows)
        mean, se = _mean_and_se(rows)  # statistics × metrics
        for index, name in enumerate(names):
            columns[name].append(mean[index])
            columns[f"{name}_se"].append(se[index])
    data = {name: (("level", "metric"), np.array(rows)) for name, rows in columns.items()}
    out = xr.Dataset(data, coords={"level": list(tree.levels), "metric": list(metrics.names)})
    out.attrs.update(cells=classification.n_cells, runs=len(rows))
    return out.transpose("metric", "level")


def _metric_runs(published, truth, level, classification, metrics):
    """The metric counts of every run (runs × units × vectors), the true ones (units ×
    vectors) and the units' true populations."""
    tree = as_tree(truth)
    if level not in tree.levels:
        raise ValueError(f"level must be one of the truth's levels {tree.levels}, got {level!r}")
    units = tree.units[level]
    counts = level_counts(truth, level, units, classification.n_cells)
    has_level = isinstance(published, xr.DataTree) and level in published.children
    runs = published[level].dataset.sizes.get("run", 0) if has_level else 0
    check_memory(
        8.0 * max(runs, 1) * units.size * metrics.matrix.shape[0],
        f"published: {runs} runs of the metric counts of {units.size} units",
    )
    runs = [
        c @ metrics.matrix.T
        for c in published_runs(published, level, units, classification.n_cells)
    ]
    return np.concatenate(runs), counts @ metrics.matrix.T, counts.sum(axis=1)


def simulated_bias(
    published, truth, *, classification: Classification = REDUCED, level: str = "block"
) -> xr.Dataset:
    """JASON's ``B`` (eq. 6-3) of each metric at the units of ``level``, averaged over the
    units of each block-size bin (Table 8-11, by the unit's true population), dims
    ``("metric", "size_bin")``.

    ``B`` is the mean of the per-unit ``B`` over the bin's units (and the metric's vectors)
    with ``B`` defined (a unit never wrong has none: :func:`~adversary.topdown.bias.bias_measure`);
    ``B_se`` its jackknife standard error over the runs (each run left out in turn, the
    mean then over the units with ``B`` defined without that run); ``units`` the number of
    (unit, vector) pairs averaged. ``B`` is NaN for a bin with no such pair, ``B_se`` also
    where leaving some run out leaves none (every error of the bin in that one run).
    """
    metrics = metric_vectors(classification)
    published_counts, true, sizes = _metric_runs(published, truth, level, classification, metrics)
    n_runs = published_counts.shape[0]
    indicator = np.eye(len(BLOCK_SIZE_BINS))[block_size_bin(sizes).codes]  # units × bins
    shape = (len(metrics.names), len(BLOCK_SIZE_BINS))
    total, defined = np.zeros(shape), np.zeros(shape)
    left_total, left_defined = np.zeros((n_runs, *shape)), np.zeros((n_runs, *shape))
    for k, m in enumerate(metrics.metric):
        runs = published_counts[:, :, k]
        bias = bias_measure(runs, true[:, k])["B"]
        total[m] += np.nan_to_num(bias) @ indicator
        defined[m] += np.isfinite(bias) @ indicator
        error = runs - true[None, :, k]
        plus = np.where(error >= 0, error**2, 0.0)
        minus = np.where(error < 0, error**2, 0.0)
        rest_plus, rest_minus = plus.sum(axis=0) - plus, minus.sum(axis=0) - minus
        with np.errstate(invalid="ignore"):
            left = (rest_plus - rest_minus) / (rest_plus + rest_minus)  # runs × units
        left_total[:, m] += np.nan_to_num(left) @ indicator
        left_defined[:, m] += np.isfinite(left) @ indicator
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / defined
        left_mean = left_total / left_defined
    spread = ((left_mean - left_mean.mean(axis=0)) ** 2).sum(axis=0)
    se = np.sqrt((n_runs - 1) / n_runs * spread)
    dims = ("metric", "size_bin")
    return xr.Dataset(
        {"B": (dims, mean), "B_se": (dims, se), "units": (dims, defined.astype(np.int64))},
        coords={"metric": list(metrics.names), "size_bin": list(BLOCK_SIZE_BINS)},
        attrs={"level": level, "runs": n_runs, "cells": classification.n_cells},
    )
