"""One level of TopDown with every query: the state to its invariant, children to their parent.

The state (one unit) is fitted to the invariant total ``T``:
``x_S = x̂ − Σ1(1ᵀΣ1)⁻¹(1ᵀx̂ − T)``, the GLS estimate under ``1ᵀx = T``.
The ``n`` children of a parent with published cell vector ``P`` minimise
``Σ_c (x_c − x̂_c)ᵀ M (x_c − x̂_c)`` subject to ``Σ_c x_c = P``; ``M`` is the
same for every child, so ``x_c = x̂_c + (P − Σ_k x̂_k)/n`` (the discrepancy
split equally, whatever ``M``). These are the linear estimator whose variance
is ``V_c = (1 − 1/n)Σ + V_P/n²``. With ``nonnegative`` the same problems get
``x ≥ 0`` (:func:`~.nonnegative.nonnegative_family_fit`; when ``M`` is
diagonal every cell is its own problem, solved by the sort of
:func:`adversary.topdown.solver.nonnegative_sum_fit`); with ``rounded`` each
cell is rounded over the children keeping the parent's integer count
(:func:`adversary.topdown.rounding.round_rows_keeping_totals`), the state's
cells keeping ``T``.
"""

from __future__ import annotations

import numpy as np

from ..rounding import round_rows_keeping_totals
from ..solver import nonnegative_sum_fit
from .nonnegative import nonnegative_family_fit
from .operators import LevelOperator

__all__ = ["fit_children", "fit_state"]


def fit_state(estimate, operator: LevelOperator, total: int, *, nonnegative, rounded):
    """The state's published cell vector from its GLS estimate and invariant ``total``."""
    estimate = np.asarray(estimate, dtype=np.float64)
    if nonnegative and operator.diagonal:
        variances = np.diag(operator.covariance)
        fitted = nonnegative_sum_fit(estimate[None], variances, float(total))[0]
    elif nonnegative:
        ones = np.ones((operator.cells, 1))
        fitted = nonnegative_family_fit(
            estimate[None], operator.information, [0, 1], [[float(total)]], ones
        )[0]
    else:
        spread = operator.covariance.sum(axis=1)  # Σ1
        fitted = estimate - spread * (estimate.sum() - total) / spread.sum()
    if rounded:
        return round_rows_keeping_totals(fitted[None], np.array([float(total)]))[0]
    return fitted


def _families_by_size(starts: np.ndarray):
    """``(n, families, rows)`` for each family size ``n``: the families of ``n`` children
    and their rows (families × n)."""
    sizes = np.diff(starts)
    for size in np.unique(sizes):
        families = np.flatnonzero(sizes == size)
        yield int(size), families, starts[families][:, None] + np.arange(size)[None, :]


def fit_children(estimates, starts, published, operator: LevelOperator, *, nonnegative, rounded):
    """The children's published cell vectors (children × cells): family ``f`` is rows
    ``starts[f]:starts[f + 1]`` of ``estimates``, fitted to ``published[f]``."""
    estimates = np.asarray(estimates, dtype=np.float64)
    published = np.asarray(published, dtype=np.float64)
    sizes = np.diff(starts)
    cells = estimates.shape[1]
    if nonnegative and operator.diagonal:
        fitted = np.empty_like(estimates)
        for size, families, rows in _families_by_size(starts):
            # every cell of every family of this size: rows (families · cells) × children
            block = estimates[rows].transpose(0, 2, 1).reshape(-1, size)
            fit = nonnegative_sum_fit(block, 1.0, published[families].reshape(-1))
            fitted[rows] = fit.reshape(families.size, cells, size).transpose(0, 2, 1)
    elif nonnegative:
        fitted = nonnegative_family_fit(estimates, operator.information, starts, published)
    else:
        gap = published - np.add.reduceat(estimates, starts[:-1], axis=0)
        fitted = estimates + np.repeat(gap / sizes[:, None], sizes, axis=0)
    if not rounded:
        return fitted
    result = np.empty(fitted.shape, dtype=np.int64)
    for size, families, rows in _families_by_size(starts):
        block = fitted[rows].transpose(0, 2, 1).reshape(-1, size)
        rounded_block = round_rows_keeping_totals(block, published[families].reshape(-1))
        result[rows] = rounded_block.reshape(families.size, cells, size).transpose(0, 2, 1)
    return result
