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

__all__ = ["constrained_wls", "nonnegative_sum_fit", "nonnegative_wls", "scipy_wls"]


def _inputs(noisy, variances, constraints, totals):
    noisy = np.asarray(noisy, dtype=np.float64)
    if noisy.ndim != 1 or noisy.size == 0 or not np.all(np.isfinite(noisy)):
        raise ValueError(f"noisy must be a non-empty vector of finite numbers, got {noisy!r}")
    variances = np.broadcast_to(np.asarray(variances, dtype=np.float64), noisy.shape)
    if not np.all(np.isfinite(variances)) or np.any(variances <= 0):
        raise ValueError("variances must be finite numbers > 0, one or one per measurement")
    constraints = np.asarray(constraints, dtype=np.float64).reshape(noisy.size, -1)
    totals = np.asarray(totals, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(totals)) or not np.all(np.isfinite(constraints)):
        raise ValueError("totals and constraints must be finite numbers")
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
        if free.any():
            estimate[free] = constrained_wls(
                noisy[free], variances[free], constraints[free][:, used], totals[used]
            )
        if estimate.min() >= 0.0:
            return estimate
        free[int(np.argmin(estimate))] = False


def nonnegative_sum_fit(noisy: np.ndarray, variances: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`nonnegative_wls` with one constraint (the sum), for many rows at once.

    ``noisy`` is rows × units, ``totals`` one sum per row. JASON's iteration,
    vectorised: on the units still free, ``x = M̃ + λ v`` with ``λ`` meeting
    the total; in every row with a negative estimate the most negative is
    fixed at 0; repeat (at most once per unit).
    """
    free = np.ones(noisy.shape, dtype=bool)
    for _ in range(noisy.shape[1]):
        spread = np.where(free, variances[None, :], 0.0)
        room = totals - np.where(free, noisy, 0.0).sum(axis=1)
        weight = spread.sum(axis=1)
        shift = np.divide(room, weight, out=np.zeros_like(room), where=weight > 0)
        estimate = np.where(free, noisy + shift[:, None] * spread, 0.0)
        negative = estimate.min(axis=1) < 0.0
        if not negative.any():
            break
        rows = np.flatnonzero(negative)
        free[rows, np.argmin(estimate[rows], axis=1)] = False
    return estimate


def _kkt_solution(noisy, variances, constraints, totals, free):
    """The optimum with the estimates outside ``free`` fixed at 0, and its multipliers ``y``.

    The Karush–Kuhn–Tucker system ``W x + B y = W M̃``, ``Bᵀ x = c`` over the
    free estimates, solved by ``scipy.linalg.lstsq`` in the balanced form
    ``x + (V/v̄) B y' = M̃`` (``V = W⁻¹``, ``v̄`` the mean variance,
    ``y = y'/v̄``) so that large variances do not spoil its conditioning.
    """
    n, r = int(free.sum()), constraints.shape[1]
    mean = float(variances.mean())
    kkt = np.zeros((n + r, n + r))
    kkt[:n, :n] = np.eye(n)
    kkt[:n, n:] = (variances[free] / mean)[:, None] * constraints[free]
    kkt[n:, :n] = constraints[free].T
    solution = linalg.lstsq(kkt, np.concatenate([noisy[free], totals]))[0]
    x = np.zeros_like(noisy)
    x[free] = solution[:n]
    return x, solution[n:] / mean


def scipy_wls(noisy, variances, constraints, totals, nonnegative: bool = True) -> np.ndarray:
    """The same least-squares problem by scipy, for any constraints.

    ``scipy.optimize.minimize`` (SLSQP, as JASON's experiments) finds the
    optimum to about 1e-7 and which estimates sit at their bound 0
    (``nonnegative``). From that active set, the Karush–Kuhn–Tucker system of
    the free estimates is solved exactly (:func:`_kkt_solution`) and the set
    corrected until the conditions hold: a free estimate below 0 is fixed, a
    fixed one whose bound multiplier is negative is freed. The result is the
    optimum to rounding error; if the corrections do not settle, SLSQP's
    point is returned (or an error, if SLSQP failed).
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
    scale = 1.0 + float(max(np.abs(totals).max(initial=0.0), np.abs(noisy).max()))
    tolerance = 1e-12 * scale
    free = result.x > 1e-7 * scale if nonnegative else np.ones(noisy.size, dtype=bool)
    for _ in range(2 * noisy.size + 2):
        x, y = _kkt_solution(noisy, variances, constraints, totals, free)
        if not nonnegative:
            return x
        if x.min() < -tolerance:
            free[int(np.argmin(x))] = False
            continue
        bound_multipliers = -weights * noisy + constraints @ y
        bound_multipliers[free] = np.inf
        if bound_multipliers.min() < -1e-12 * scale * weights.max():
            free[int(np.argmin(bound_multipliers))] = True
            continue
        if np.allclose(constraints.T @ x, totals, atol=1e-9 * scale, rtol=0):
            return np.maximum(x, 0.0)
        break
    if not result.success:
        raise ValueError(f"scipy_wls: the optimizer failed ({result.message})")
    return result.x
