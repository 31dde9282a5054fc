"""The exact variance of the linear TopDown estimator's counts under an allocation.

The estimator (without non-negativity or rounding): at each unit of level ℓ
the cell vector is estimated by GLS over every query's noisy count,
``x̂ = (AᵀW_ℓA)⁻¹AᵀW_ℓ y`` with covariance ``Σ_ℓ = (AᵀW_ℓA)⁻¹`` (JASON 2022,
Sec. 6.3; :mod:`adversary.topdown.queries`); a state is constrained to its
invariant total, ``x_S = x̂ − Σ_S1(1ᵀΣ_S1)⁻¹(1ᵀx̂ − T)``, of covariance
``V_S = Σ_S − Σ_S11ᵀΣ_S/(1ᵀΣ_S1)``; the ``n`` children of a published parent
``P`` get ``x_c = x̂_c + (P − Σ_k x̂_k)/n`` (the weighted fit to ``P`` when every
child has the same ``Σ_ℓ``), of covariance

    V_c = (1 − 1/n) Σ_ℓ + V_P / n².

For a count ``aᵀx`` this is a scalar recursion, ``aᵀV_c a = (1 − 1/n) aᵀΣ_ℓa +
aᵀV_P a / n²``, computed for every unit of every level at once
(:func:`unit_variances`). :func:`analytic_accuracy` averages it over the units
of a level for the metrics of :mod:`.metrics`. The estimator is unbiased, so
the variance is the mean squared error; the mean absolute error and the share
of units off by more than 5 % or 10 % are **normal approximations**
(``E|e| = sqrt(2/π)·sd`` and ``P[|e| > f·t] = erfc(f·t/(sd·√2))``): the noise
is discrete Gaussian, and each estimate a weighted sum of many noisy counts.
TopDown's non-negativity and rounding are not modelled.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import linalg, special

from ...budget import BudgetAllocation
from ...memory import check_memory
from ...scenarios.reconstruction.classification import REDUCED, Classification
from ..queries import QueryMatrix, information_matrix, query_matrix
from .metrics import metric_vectors
from .tree import as_tree, level_counts

__all__ = ["analytic_accuracy", "level_forms", "unit_variances"]

#: The thresholds of the share of units off: more than 5 % and 10 % of the true count.
OFF_FRACTIONS = {"share_off_5": 0.05, "share_off_10": 0.10}


def _identified(rows: np.ndarray) -> bool:
    """Whether the measured rows (0/1) identify every cell, i.e. ``AᵀWA`` is non-singular.

    Every query is a margin of the cross-classification; the cells' highest-order
    interaction contrast is orthogonal to every proper margin, so the cells are identified
    exactly when some measured query's counts are single cells (then every cell is alone in
    a row).
    """
    return rows.shape[0] > 0 and bool(rows[rows.sum(axis=1) == 1].any(axis=0).all())


def level_forms(
    allocation: BudgetAllocation,
    level: str,
    vectors: np.ndarray,
    queries: QueryMatrix,
    convention="das",
    *,
    invariant: bool = False,
) -> np.ndarray:
    """``aᵀΣ_ℓa`` for each row ``a`` of ``vectors``; with ``invariant``, ``aᵀV_Sa`` (the total
    held to its true value). A level whose ``AᵀWA`` is singular is refused naming ``budget``."""
    variances = queries.variances(allocation, level, convention)
    measured = np.isfinite(variances)
    n_cells = queries.classification.n_cells
    if not _identified(queries.matrix[measured]):
        names = sorted({q for q, m in zip(queries.queries, measured, strict=True) if m})
        raise ValueError(
            f"budget: the queries measured at level {level!r} ({', '.join(names) or 'none'}) "
            f"do not identify the {n_cells} cells (AᵀWA is singular); give a share to "
            f"'detailed' there"
        )
    factor = linalg.cho_factor(information_matrix(queries.matrix, variances))
    solved = linalg.cho_solve(factor, np.column_stack([vectors.T, np.ones(n_cells)]))
    forms = np.einsum("kc,ck->k", vectors, solved[:, :-1])
    if invariant:
        cross = vectors @ solved[:, -1]
        forms = forms - cross**2 / solved[:, -1].sum()
    return np.maximum(forms, 0.0)  # 0 up to rounding where the invariant fixes the count


def _levels(levels, available: tuple[str, ...]) -> tuple[str, ...]:
    levels = (levels,) if isinstance(levels, str) else tuple(levels)
    if not levels or len(set(levels)) != len(levels) or any(x not in available for x in levels):
        raise ValueError(f"levels must be distinct names among {available}, got {levels!r}")
    return tuple(x for x in available if x in levels)


def unit_variances(
    allocation: BudgetAllocation,
    geography,
    vectors=None,
    *,
    classification: Classification = REDUCED,
    convention="das",
    levels=None,
) -> xr.DataTree:
    """The variance of ``aᵀx`` at every unit, for each row ``a`` of ``vectors`` (vectors ×
    cells; default the metric vectors of :func:`~.metrics.metric_vectors`), under the linear
    estimator (module docstring).

    Returns a DataTree in the table format (:mod:`.tree`) with a node per level down to the
    deepest of ``levels`` (default: every level of ``geography``): variable ``variance`` of
    dims ``("vector", "unit")``.
    """
    if not isinstance(allocation, BudgetAllocation):
        raise TypeError(f"budget must be a BudgetAllocation, got {type(allocation).__name__}")
    tree = as_tree(geography)
    wanted = _levels(tree.levels if levels is None else levels, tree.levels)
    chain = tree.levels[: tree.levels.index(wanted[-1]) + 1]
    if vectors is None:
        metrics = metric_vectors(classification)
        vectors, labels = metrics.matrix, metrics.labels
    else:
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[1] != classification.n_cells:
            raise ValueError(
                f"vectors must be (vectors × {classification.n_cells} cells), got {vectors.shape}"
            )
        labels = tuple(range(vectors.shape[0]))
    check_memory(
        8.0 * vectors.shape[0] * sum(tree.units[x].size for x in chain),
        f"geography: the variances of {vectors.shape[0]} counts at every unit",
    )
    queries = query_matrix(classification)
    nodes, above = {}, None
    for level in chain:
        forms = level_forms(
            allocation, level, vectors, queries, convention, invariant=level == "state"
        )
        if above is None:
            variance = np.repeat(forms[:, None], tree.units[level].size, axis=1)
        else:
            parents = tree.parents[level]
            n = tree.family_sizes(level).astype(np.float64)
            variance = (1.0 - 1.0 / n) * forms[:, None] + above[:, parents] / n**2
        parent_ids = (
            tree.units[chain[chain.index(level) - 1]][tree.parents[level]]
            if above is not None
            else np.full(tree.units[level].size, -1)
        )
        nodes[level] = xr.Dataset(
            {"variance": (("vector", "unit"), variance)},
            coords={
                "vector": list(labels),
                "unit": tree.units[level],
                "parent": ("unit", parent_ids),
            },
        )
        above = variance
    return xr.DataTree.from_dict(nodes)


def analytic_accuracy(
    allocation: BudgetAllocation,
    geography,
    *,
    classification: Classification = REDUCED,
    convention="das",
    levels=("county", "tract", "block_group", "block"),
    truth=None,
) -> xr.Dataset:
    """Mean accuracy of the metrics over the units of each level, dims ``("metric", "level")``.

    ``variance`` (mean over units of the exact variance), ``rmse`` (its square root),
    ``mae`` (normal approximation ``sqrt(2/π)·sd``, averaged over units); given ``truth``
    (true counts per unit in the table format, ``("unit", "cell")``), ``share_off_5`` and
    ``share_off_10``: the expected share of units whose count is off by more than 5 % / 10 %
    of the true count (normal approximation; a true count of 0 is off when the estimate is
    not exactly 0). A metric of several vectors (``hispanic_race``) is the mean over them.
    """
    metrics = metric_vectors(classification)
    variances = unit_variances(
        allocation,
        geography,
        metrics.matrix,
        classification=classification,
        convention=convention,
        levels=levels,
    )
    wanted = _levels(levels, tuple(variances.children))
    columns = {
        name: [] for name in ("variance", "mae", *(OFF_FRACTIONS if truth is not None else ()))
    }
    for level in wanted:
        node = variances[level].dataset
        variance = node["variance"].values
        sd = np.sqrt(variance)
        columns["variance"].append(metrics.by_metric(variance.mean(axis=1)))
        columns["mae"].append(metrics.by_metric(np.sqrt(2.0 / np.pi) * sd.mean(axis=1)))
        if truth is not None:
            counts = level_counts(truth, level, node["unit"].values, classification.n_cells)
            true = metrics.matrix @ counts.T  # vectors × units
            for name, fraction in OFF_FRACTIONS.items():
                with np.errstate(divide="ignore", invalid="ignore"):
                    off = np.where(sd > 0, special.erfc(fraction * true / (sd * np.sqrt(2))), 0.0)
                columns[name].append(metrics.by_metric(off.mean(axis=1)))
    data = {name: (("level", "metric"), np.array(rows)) for name, rows in columns.items()}
    data["rmse"] = (("level", "metric"), np.sqrt(np.array(columns["variance"])))
    out = xr.Dataset(data, coords={"level": list(wanted), "metric": list(metrics.names)})
    out.attrs.update(
        convention=str(convention),
        budget=allocation.name,
        cells=classification.n_cells,
        note="mae and share_off_* are normal approximations; non-negativity and rounding "
        "are not modelled",
    )
    return out.transpose("metric", "level")
