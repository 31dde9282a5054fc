"""The accuracy of the 2020 release: its noisy measurements and TopDown's published tables.

Accuracy is the mean absolute error of a level's counts of the 56 cells of
:data:`~adversary.scenarios.reconstruction.REDUCED` (:mod:`.errors`), in the
DAS convention ``σ² = 1/ρ`` (:meth:`adversary.topdown.queries.QueryMatrix.variances`).

**Noisy measurements** (:func:`measurement_accuracy`, no population needed):

- ``mae_detailed`` — each cell's count in the detailed (GVHR) query,
  ``x + Z`` with ``Z ~ DG(0, 1/ρ_detailed)`` at the level: ``E|Z|`` of the
  discrete Gaussian, exact (:func:`dg_mean_absolute`), the same for every cell;
- ``mae_gls`` — the generalised least-squares estimate of the cells from
  every query measured at the level (JASON 2022, Sec. 6.3), ``Σ = (AᵀWA)⁻¹``
  (:func:`adversary.topdown.accuracy.level_forms`): the mean over cells of
  ``sqrt(2/π)·sd``, a **normal approximation** (a weighted sum of several
  discrete Gaussians is not one).

**TopDown's published tables** (:func:`topdown_accuracy`): ``runs`` releases
of :func:`adversary.topdown.every_query_runs` (every query, non-negative,
integer, consistent, the state's total invariant) over a population, the
per-run mean absolute error and its Monte Carlo standard error over runs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import as_positive, scalar_integer
from ...budget import as_allocation
from ...noise import discrete_gaussian
from ...noise.conventions import noise_variance
from ...scenarios.reconstruction import REDUCED
from ...topdown import every_query_runs, truth_tables
from ...topdown.accuracy import level_forms
from ...topdown.queries import query_matrix
from ..reconstruction_study import block_cells
from .errors import mean_and_se, release_mae

__all__ = ["LEVELS", "dg_mean_absolute", "measurement_accuracy", "topdown_accuracy"]

#: The levels compared (the block's and the tract's counts).
LEVELS = ("tract", "block")


def dg_mean_absolute(sigma2, tail_mass: float = 1e-15) -> float:
    """``E|Z|`` for ``Z ~ DG(0, σ²)``: ``2 Σ_{k≥1} k P[Z = k]``, summed on ``[-K, K]``.

    ``K`` is :func:`~adversary.noise.discrete_gaussian.cutoff` (``P[|Z| > K] ≤
    tail_mass``); the terms left out are at most ``sqrt(σ² · tail_mass)`` by
    Cauchy–Schwarz (``E|Z|·1{|Z|>K} ≤ sqrt(E Z² · P[|Z| > K])``, ``E Z² < σ²``).
    For large σ it tends to the normal ``sqrt(2/π)·σ``.
    """
    sigma2 = float(as_positive(sigma2, "sigma2"))
    table = discrete_gaussian.table(sigma2, tail_mass)
    z = np.arange(table.probabilities.size) + table.start
    return float(np.sum(np.abs(z) * table.probabilities))


def _levels(levels) -> tuple[str, ...]:
    levels = (levels,) if isinstance(levels, str) else tuple(levels)
    if not levels or any(level not in LEVELS for level in levels):
        raise ValueError(f"levels must be among {LEVELS}, got {levels!r}")
    return levels


def measurement_accuracy(
    budget="pl94-2020-persons", *, scale: float = 1.0, levels=LEVELS
) -> pd.DataFrame:
    """Per level: ``rho_detailed``, ``sigma2_detailed``, ``mae_detailed`` (exact) and
    ``mae_gls`` (normal approximation) of the noisy measurements (module docstring), with
    every ρ of ``budget`` (:func:`~adversary.budget.as_allocation`) times ``scale``."""
    allocation = _scaled(budget, scale)
    queries = query_matrix(REDUCED)
    rows = []
    for level in _levels(levels):
        rho = float(allocation.rho(level, "detailed"))
        sigma2 = float(noise_variance(rho, "das"))
        forms = level_forms(allocation, level, np.eye(REDUCED.n_cells), queries, "das")
        rows.append(
            {
                "level": level,
                "rho_detailed": rho,
                "sigma2_detailed": sigma2,
                "mae_detailed": dg_mean_absolute(sigma2),
                "mae_gls": float(np.mean(np.sqrt(2.0 / np.pi * forms))),
            }
        )
    return pd.DataFrame(rows).set_index("level")


def _scaled(budget, scale):
    """``budget`` as an allocation with every ρ times ``scale`` (> 0, finite)."""
    scale = float(as_positive(scale, "scale"))
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale!r}")
    allocation = as_allocation(budget, "budget")
    return allocation.with_rho_total(
        allocation.rho_total * Fraction(scale).limit_denominator(10**9)
    )


def topdown_accuracy(
    persons: pd.DataFrame,
    budget="pl94-2020-persons",
    *,
    scale: float = 1.0,
    runs: int = 4,
    seed: int = 0,
    levels=LEVELS,
    client=None,
) -> pd.DataFrame:
    """Per level: ``mae`` of TopDown's published cells against the truth of ``persons``
    (a synthetic state's persons) and ``mae_se`` over ``runs`` (≥ 2) releases seeded by
    ``seed``, every ρ of ``budget`` times ``scale`` (DAS convention)."""
    runs = scalar_integer(runs, "runs", 2)
    seed = scalar_integer(seed, "seed", 0)
    allocation = _scaled(budget, scale)
    truth = truth_tables(persons.assign(cell=block_cells(persons, REDUCED)), REDUCED)
    published = every_query_runs(
        truth, allocation, runs, classification=REDUCED, convention="das", seed=seed, client=client
    )
    rows = []
    for level in _levels(levels):
        per_run = release_mae(published[level]["counts"].values, truth[level]["counts"].values)
        mae, se = mean_and_se(per_run)
        rows.append({"level": level, "mae": mae, "mae_se": se, "runs": runs})
    return pd.DataFrame(rows).set_index("level")
