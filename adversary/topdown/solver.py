"""Weighted least squares under sum constraints: the core of TopDown's post-processing.

The Census Bureau's TopDown algorithm turns noisy measurements into
consistent, non-negative counts by least squares. JASON (2022, Sec. 6.3.4)
gives the closed form for the equality-constrained problem

    minimise ½ (M̂ − M̃)ᵀ W (M̂ − M̃)   subject to   Bᵀ M̂ = c,

    M̂ = M̃ + W⁻¹B (BᵀW⁻¹B)⁻¹ (c − BᵀM̃),

with ``W`` diagonal (here the inverse noise variances), ``B``'s columns the
0/1 indicators of the constrained sums and ``c`` their values; and the
non-negativity step: fix the most negative estimate at zero, solve again
without it, repeat until no estimate is negative (:func:`nonnegative_wls`).
:func:`scipy_wls` solves the same problem with ``scipy.optimize.minimize``
(SLSQP, as JASON's experiments do), with the bounds as bounds, for any
constraints.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

__all__ = ["constrained_wls", "nonnegative_wls", "scipy_wls"]


def _inputs(noisy, variances, constraints, totals):
    noisy = np.asarray(noisy, dtype=np.float64)
    if noisy.ndim != 1 or noisy.size == 0 or not np.all(np.isfinite(noisy)):
        raise ValueError(f"noisy must be a non-empty vector of finite numbers, got {noisy!r}")
    variances = np.broadcast_to(np.asarray(variances, dtype=np.float64), noisy.shape)
    if not np.all(np.isfinite(variances)) or np.any(variances <= 0):
        raise ValueError("variances must be finite numbers > 0, one or one per measurement")
    constraints = np.asarray(constraints, dtype=np.float64).reshape(noisy.size, -1)
    totals = np.asarray(totals, dtype=np.float64).reshape(-1)
    if constraints.shape[1] != totals.size:
        raise ValueError(
            f"totals must hold one value per constraint (column of constraints, "
            f"{constraints.shape[1]}), got {totals.size}"
        )
    return noisy, variances, constraints, totals


def constrained_wls(noisy, variances, constraints, totals) -> np.ndarray:
    """JASON's closed form: the estimates closest to ``noisy`` whose sums are ``totals``.

    ``constraints`` is ``B`` (measurements × constraints, 0/1), ``totals`` is
    ``c``; ``W = diag(1 / variances)``. The constraints must be linearly
    independent.
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    if constraints.shape[1] == 0:
        return noisy.copy()
    spread = variances[:, None] * constraints  # W⁻¹ B
    gram = constraints.T @ spread  # Bᵀ W⁻¹ B
    multipliers = np.linalg.solve(gram, totals - constraints.T @ noisy)
    return noisy + spread @ multipliers


def nonnegative_wls(noisy, variances, constraints, totals) -> np.ndarray:
    """:func:`constrained_wls` with every estimate ≥ 0, by JASON's iteration (Sec. 6.3.4).

    While an estimate is negative, the most negative is fixed at zero and the
    problem is solved again over the others. Each round fixes one more, so
    there are at most as many rounds as zeros in the result. With one sum
    constraint (or disjoint ones, as every parent of a hierarchy solved top
    down) and diagonal ``W`` this is the constrained optimum; in general it
    is a feasible point near it (:func:`scipy_wls` solves the general case).
    Refuses totals that no non-negative estimates can meet.
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    if np.any(totals < 0):
        raise ValueError(f"totals must be >= 0 for non-negative estimates, got {totals!r}")
    free = np.ones(noisy.size, dtype=bool)
    estimate = np.zeros_like(noisy)
    while True:
        estimate[:] = 0.0
        used = constraints[free].any(axis=0)
        if np.any(totals[~used] > 0):
            raise ValueError("totals: a positive total has no free measurement left to hold it")
        estimate[free] = constrained_wls(
            noisy[free], variances[free], constraints[free][:, used], totals[used]
        )
        if estimate.min() >= 0.0:
            return estimate
        free[int(np.argmin(estimate))] = False


def scipy_wls(noisy, variances, constraints, totals, nonnegative: bool = True) -> np.ndarray:
    """The same least-squares problem by scipy, for any constraints.

    ``scipy.optimize.minimize`` (SLSQP, as JASON's experiments) finds the
    optimum to about 1e-7 and which estimates sit at their bound 0
    (``nonnegative``); the Karush–Kuhn–Tucker system of the others,
    ``[[W, B], [Bᵀ, 0]] [x; −λ] = [W M̃; c]``, is then solved exactly
    (``scipy.linalg.lstsq``), which gives the optimum to rounding error
    when SLSQP found the right active set (checked: the result is feasible
    and no worse than SLSQP's point; otherwise SLSQP's point is returned, or
    an error if SLSQP failed).
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    weights = 1.0 / variances
    result = optimize.minimize(
        lambda x: 0.5 * np.sum(weights * (x - noisy) ** 2),
        np.maximum(noisy, 0.0) if nonnegative else noisy,
        jac=lambda x: weights * (x - noisy),
        method="SLSQP",
        bounds=[(0.0, None)] * noisy.size if nonnegative else None,
        constraints=[
            {
                "type": "eq",
                "fun": lambda x: constraints.T @ x - totals,
                "jac": lambda x: constraints.T,
            }
        ],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    free = (
        result.x > 1e-7 * max(1.0, float(np.abs(totals).max(initial=0.0)))
        if nonnegative
        else (np.ones(noisy.size, dtype=bool))
    )
    n, r = int(free.sum()), constraints.shape[1]
    kkt = np.zeros((n + r, n + r))
    kkt[:n, :n] = np.diag(weights[free])
    kkt[:n, n:] = constraints[free]
    kkt[n:, :n] = constraints[free].T
    rhs = np.concatenate([weights[free] * noisy[free], totals])
    solution = linalg.lstsq(kkt, rhs)[0]
    polished = np.zeros_like(noisy)
    polished[free] = solution[:n]
    feasible = np.allclose(constraints.T @ polished, totals, atol=1e-9, rtol=0)
    objective = result.fun * (1.0 + 1e-6) + 1e-9  # SLSQP's point may be slightly infeasible
    if feasible and polished.min(initial=0.0) >= -1e-12:
        if 0.5 * np.sum(weights * (polished - noisy) ** 2) <= objective:
            return np.maximum(polished, 0.0) if nonnegative else polished
    if not result.success:
        raise ValueError(f"scipy_wls: the optimizer failed ({result.message})")
    return result.x
