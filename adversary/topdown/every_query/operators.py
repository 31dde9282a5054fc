"""One level's measurement design: which counts are measured, and the GLS operator over them.

At every unit of a level ℓ the release measures each PL 94-171 query the
allocation gives a share there (:mod:`adversary.topdown.queries`): ``y = A x + e``,
``e`` discrete Gaussian with the σ² of each count. The unconstrained estimate
of the unit's cell vector is the generalised least-squares one (JASON 2022,
Sec. 6.3)

    x̂ = (AᵀW_ℓA)⁻¹AᵀW_ℓ y,   W_ℓ = diag(1/σ²),   Cov x̂ = Σ_ℓ = (AᵀW_ℓA)⁻¹,

the same matrix for every unit of the level, so :class:`LevelOperator` holds it
once and :meth:`LevelOperator.estimate` applies it to all units' answers at
once. The weights are scaled by their largest value before the solve (the
estimate does not change; with one query measured the operator is then the
identity exactly). A level whose ``AᵀW_ℓA`` is singular — the measured queries
do not identify the cells, e.g. the detailed query with share 0 — is refused
in one line naming ``budget`` and the level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...scenarios.reconstruction.classification import REDUCED, Classification
from ..queries import LEVELS, QueryMatrix, information_matrix, query_matrix

__all__ = ["LEVELS", "SINGULAR", "LevelOperator", "level_operator", "level_operators"]

#: ``AᵀWA`` (weights scaled to at most 1) is refused as singular when its smallest eigenvalue
#: is below this fraction of its largest.
SINGULAR = 1e-12


@dataclass(frozen=True)
class LevelOperator:
    """The measured counts of a level and their GLS estimate of the cells.

    ``matrix``: the measured rows of ``A`` (counts × cells, 0/1, int64);
    ``variances``: their σ²; ``queries``: each row's query; ``gls``:
    ``(AᵀWA)⁻¹AᵀW`` (cells × counts); ``information``: ``M = AᵀWA``;
    ``covariance``: ``Σ = M⁻¹``; ``diagonal``: ``M`` is diagonal (the cells
    are then post-processed one by one).
    """

    level: str
    matrix: np.ndarray
    variances: np.ndarray
    queries: tuple[str, ...]
    gls: np.ndarray
    information: np.ndarray
    covariance: np.ndarray
    diagonal: bool

    @property
    def cells(self) -> int:
        return self.matrix.shape[1]

    def estimate(self, answers: np.ndarray) -> np.ndarray:
        """``x̂`` of every unit (units × cells) from its answers (units × measured counts)."""
        return np.asarray(answers, dtype=np.float64) @ self.gls.T


def level_operator(queries: QueryMatrix, allocation, level: str, convention="das"):
    """The :class:`LevelOperator` of ``level`` under ``allocation`` (module docstring)."""
    variances = queries.variances(allocation, level, convention)
    measured = np.isfinite(variances)
    cells = queries.classification.n_cells
    names = sorted({q for q, m in zip(queries.queries, measured, strict=True) if m})
    refusal = (
        f"budget: level {level!r} does not identify the {cells} cells (AᵀWA is singular; "
        f"measured there: {names or 'nothing'}); give the detailed query a share at {level!r}"
    )
    if not measured.any():
        raise ValueError(refusal)
    matrix, variances = queries.matrix[measured], variances[measured]
    weights = 1.0 / variances
    scaled = weights / weights.max()  # the estimate is the same; its matrix better scaled
    information = information_matrix(matrix, 1.0 / scaled)
    eigenvalues = np.linalg.eigvalsh(information)
    if eigenvalues[0] <= SINGULAR * eigenvalues[-1]:
        raise ValueError(refusal)
    gls = np.linalg.solve(information, matrix.T * scaled)
    covariance = np.linalg.inv(information) / weights.max()
    information = information * weights.max()
    return LevelOperator(
        level=level,
        matrix=matrix.astype(np.int64),
        variances=variances,
        queries=tuple(q for q, m in zip(queries.queries, measured, strict=True) if m),
        gls=gls,
        information=(information + information.T) / 2,
        covariance=(covariance + covariance.T) / 2,
        diagonal=bool(np.all(information == np.diag(np.diag(information)))),
    )


def level_operators(
    allocation, classification: Classification = REDUCED, convention="das", queries=None
) -> dict[str, LevelOperator]:
    """``{level: LevelOperator}`` for every level of :data:`LEVELS`.

    ``queries``: the names of the queries measured where funded (default every
    PL 94-171 query of :func:`~adversary.topdown.queries.query_matrix`).
    """
    matrix = query_matrix(classification, queries)
    return {level: level_operator(matrix, allocation, level, convention) for level in LEVELS}
