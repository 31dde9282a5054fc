"""The PL 94-171 queries of one geographic unit as a matrix, and their weights under an allocation.

At every geographic unit the 2020 release measures each query of the
redistricting data (JASON 2022, Figure 5-3): the total, the race count, …, the
detailed (GVHR) histogram, each count with discrete Gaussian noise of the
variance its share of the budget gives (:meth:`adversary.budget.BudgetAllocation.sigma2`).
On a cross-classification of the unit's persons (the 56 cells of
:data:`~adversary.scenarios.reconstruction.REDUCED` or the 2 016 of
:data:`~adversary.scenarios.reconstruction.DETAILED`) every released count is
the sum of a set of cells, so the measurements of one unit are ``y = A x + e``
with ``A`` the 0/1 *query matrix* (one row per released count, one column per
cell) and ``e`` independent with variances ``v``. The weighted least-squares
estimate of the cells is ``(AᵀWA)⁻¹AᵀW y`` with ``W = diag(1/v)`` (JASON 2022,
Sec. 6.3), its covariance ``(AᵀWA)⁻¹``; :func:`information_matrix` is ``AᵀWA``.

A query the allocation does not measure at a level (share 0) has no rows
there: it has infinite variance, weight 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..noise.conventions import as_convention, noise_variance
from ..scenarios.reconstruction.classification import PL94_QUERIES, REDUCED, Classification

__all__ = ["LEVELS", "QueryMatrix", "information_matrix", "query_matrix"]

#: The levels of a single state's tables, top down (TopDown with every query and its accuracy;
#: the US level does not enter one state's tables).
LEVELS = ("state", "county", "tract", "block_group", "block")


@dataclass(frozen=True)
class QueryMatrix:
    """The released counts of a unit's queries: ``matrix[r, j] = 1`` if count ``r`` holds cell j.

    ``queries[r]`` names row ``r``'s PL 94-171 query and ``labels[r]`` the count
    (``"race[3]"``); ``classification`` is the cross-classification of the columns.
    """

    matrix: np.ndarray
    queries: tuple[str, ...]
    labels: tuple[str, ...]
    classification: Classification

    def variances(self, allocation, level: str, convention="das") -> np.ndarray:
        """Each row's noise variance at ``level`` of ``allocation`` (``inf`` where not measured)."""
        convention = as_convention(convention)
        rho = {query: allocation.rho(level, query) for query in dict.fromkeys(self.queries)}
        rhos = np.array([rho[query] for query in self.queries])
        variances = np.full(rhos.shape, np.inf)
        measured = rhos > 0
        variances[measured] = noise_variance(rhos[measured], convention)
        return variances


def query_matrix(classification: Classification = REDUCED, queries=None) -> QueryMatrix:
    """The query matrix of ``queries`` (default: every PL 94-171 query of :data:`PL94_QUERIES`).

    ``hhinstlevels`` is not among them: it needs the eight household/group
    quarters types, which the 56-cell classification merges.
    """
    names = tuple(PL94_QUERIES) if queries is None else tuple(queries)
    unknown = [q for q in names if q not in PL94_QUERIES]
    if unknown or not names:
        raise ValueError(f"queries must be names among {list(PL94_QUERIES)}, got {queries!r}")
    rows, row_queries, labels = [], [], []
    for query in names:
        for index, cells in enumerate(classification.table(PL94_QUERIES[query])):
            row = np.zeros(classification.n_cells)
            row[list(cells)] = 1.0
            rows.append(row)
            row_queries.append(query)
            labels.append(f"{query}[{index}]")
    return QueryMatrix(np.array(rows), tuple(row_queries), tuple(labels), classification)


def information_matrix(matrix: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """``AᵀWA`` with ``W = diag(1/variances)`` (rows of infinite variance weigh 0)."""
    weights = 1.0 / np.asarray(variances, dtype=np.float64)
    return (matrix.T * weights) @ matrix
