"""Weighted least squares under sum constraints: the core of TopDown's post-processing.

The Census Bureau's TopDown algorithm turns noisy measurements into
consistent, non-negative counts by least squares. JASON (2022, Sec. 6.3.4)
gives the closed form for the equality-constrained problem

    minimise ½ (M̂ − M̃)ᵀ W (M̂ − M̃)   subject to   Bᵀ M̂ = c,

    M̂ = M̃ + W⁻¹B (BᵀW⁻¹B)⁻¹ (c − BᵀM̃),

with ``W`` diagonal (here the inverse noise variances), ``B``'s columns the
0/1 indicators of the constrained sums and ``c`` their values; and the
non-negativity step: fix the most negative estimate at zero, solve again
without it, repeat until no estimate is negative (:func:`jason_iteration`).
For one sum (or disjoint sums, as every parent of a hierarchy solved top
down) its answer is the optimum, found directly by sorting
(:func:`nonnegative_sum_fit`, used by :func:`nonnegative_wls`).
:func:`scipy_wls` solves the same problem with ``scipy.optimize.minimize``
(SLSQP, as JASON's experiments do), with the bounds as bounds, for any
constraints.

Dense constraints cost memory and time: every function sizes its arrays
against the memory budget (:mod:`~adversary.memory`) before it solves, and
refuses in one line naming ``constraints`` a problem whose worst case passes
:data:`MAX_WORK` floating-point operations (JASON's iteration: one solve of
``O(n r² + r³)`` per estimate it may fix), instead of running for hours — a
tree of 10⁴ units solved jointly, say; :func:`~.hierarchy.topdown` solves a
hierarchy level by level in ``O(n log n)``.

Every count and measurement must be finite and of magnitude at most 2**53
(:data:`~adversary._validation.MAX_EXACT_COUNT`), where float64 still holds
every integer: the estimates are rounded to integers by :mod:`.rounding`.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

from .._validation import as_exact_reals, is_noise_free
from ..memory import check_memory

__all__ = [
    "constrained_wls",
    "jason_iteration",
    "nonnegative_sum_fit",
    "nonnegative_wls",
    "scipy_wls",
]

#: Floating-point operations a solve may need in its worst case: about 10**11, a minute or two
#: on one core (JASON's iteration over 1,000 measurements and 100 constraints needs 10**10).
MAX_WORK = 1e11
#: Float64 arrays of measurements × constraints a closed-form solve holds at once (the
#: constraints, the free rows' copy, ``W⁻¹B``).
SOLVE_ARRAYS = 3
#: Dense solves of the whole problem (``n + r`` square) :func:`scipy_wls` is counted as
#: (SLSQP's iterations and the KKT corrections): a tree of 500 units took 2 s, of 2,000 units
#: over 5 minutes, so trees of up to about 1,300 units are solved.
SLSQP_ROUNDS = 30


def check_variances(variances, size: int, what: str) -> np.ndarray:
    """``variances`` (one, or one per ``what``: ``size`` of them), finite and > 0 with finite
    inverses (the weights), as a float64 vector of ``size``."""
    variances = as_exact_reals(variances, "variances", limit=np.finfo(np.float64).max)
    refused = is_noise_free(variances)
    if np.any(refused):
        raise ValueError(
            f"variances must be > 0 with finite inverses (the weights), "
            f"got {float(variances[refused][0])!r}"
        )
    if variances.shape not in ((), (1,), (size,)):
        raise ValueError(
            f"variances must be one variance or one per {what} ({size}), "
            f"got shape {variances.shape}"
        )
    return np.broadcast_to(variances.reshape(-1), (size,))


def _inputs(noisy, variances, constraints, totals):
    noisy = as_exact_reals(noisy, "noisy")
    if noisy.ndim != 1 or noisy.size == 0:
        raise ValueError(f"noisy must be a non-empty vector of measurements, got {noisy.shape}")
    variances = check_variances(variances, noisy.size, "measurement")
    constraints = as_exact_reals(constraints, "constraints")
    if constraints.shape == noisy.shape:
        constraints = constraints[:, None]  # one constraint given as a vector
    if constraints.ndim != 2 or constraints.shape[0] != noisy.size:
        raise ValueError(
            f"constraints must be measurements ({noisy.size}) × constraints, "
            f"got shape {constraints.shape}"
        )
    totals = as_exact_reals(totals, "totals").reshape(-1)
    if constraints.shape[1] != totals.size:
        raise ValueError(
            f"totals must hold one value per constraint (column of constraints, "
            f"{constraints.shape[1]}), got {totals.size}"
        )
    return noisy, variances, constraints, totals


def _check_size(rounds: int, size: int, constraints: int, square: int = 0) -> None:
    """Refuse, naming ``constraints``, ``rounds`` closed-form solves of ``size`` measurements ×
    ``constraints`` (and a ``square`` × ``square`` system per round) past the memory budget
    or :data:`MAX_WORK` operations."""
    shape = f"{size} measurements × {constraints} constraints"
    check_memory(
        8.0 * (SOLVE_ARRAYS * size * constraints + 2 * constraints**2 + 2 * square**2),
        f"constraints ({shape})",
    )
    work = rounds * (float(size) * constraints**2 + float(constraints) ** 3 + float(square) ** 3)
    if work > MAX_WORK:
        raise ValueError(
            f"constraints: {shape} may need {work:.1e} operations ({rounds} solves), more than "
            f"{MAX_WORK:.0e} (MAX_WORK); solve a hierarchy level by level with topdown"
        )


def _closed_form(noisy, variances, constraints, totals) -> np.ndarray:
    """JASON's closed form, unchecked; dependent constraints are solved by least squares
    (every solution of the multipliers' system gives the same estimates), and refused when
    their totals contradict each other."""
    if constraints.shape[1] == 0:
        return noisy.copy()
    spread = variances[:, None] * constraints  # W⁻¹ B
    gram = constraints.T @ spread  # Bᵀ W⁻¹ B
    multipliers = linalg.lstsq(gram, totals - constraints.T @ noisy)[0]
    estimate = noisy + spread @ multipliers
    met = constraints.T @ estimate
    if np.any(np.abs(met - totals) > 1e-9 * (1.0 + np.abs(constraints).T @ np.abs(estimate))):
        raise ValueError(
            "totals: no estimates meet these constraints (they are linearly dependent and "
            "their totals contradict each other)"
        )
    return estimate


def constrained_wls(noisy, variances, constraints, totals) -> np.ndarray:
    """JASON's closed form: the estimates closest to ``noisy`` whose sums are ``totals``.

    ``constraints`` is ``B`` (measurements × constraints, 0/1; a vector for
    one constraint), ``totals`` is ``c``; ``W = diag(1 / variances)``.
    Linearly dependent constraints are allowed when their totals agree.
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    _check_size(1, *constraints.shape)
    return _closed_form(noisy, variances, constraints, totals)


def _check_nonnegative_totals(totals: np.ndarray) -> None:
    if np.any(totals < 0):
        raise ValueError(
            f"totals must be >= 0 for non-negative estimates, got {float(totals.min())!r}"
        )


def _disjoint_sums(constraints: np.ndarray) -> np.ndarray | None:
    """Each measurement's constraint (−1: none) when the constraints are disjoint 0/1 sums,
    else ``None``."""
    if not np.all((constraints == 0) | (constraints == 1)):
        return None
    memberships = constraints.sum(axis=1)
    if np.any(memberships > 1):
        return None
    return np.where(memberships == 1, np.argmax(constraints, axis=1), -1)


def nonnegative_wls(noisy, variances, constraints, totals) -> np.ndarray:
    """:func:`constrained_wls` with every estimate ≥ 0: the optimum for disjoint sums.

    When the constraints are disjoint 0/1 sums (one sum, or every parent's
    children in a hierarchy solved top down), the problem splits into one
    problem per sum, each solved exactly by :func:`nonnegative_sum_fit`
    (its KKT conditions; ``O(n log n)``), and a measurement in no sum is
    ``max(M̃ᵢ, 0)``; this is the answer of JASON's iteration, found without
    iterating. Other constraints (e.g. :func:`~.hierarchy.consistency_constraints`)
    go to :func:`jason_iteration`. Refuses totals that no non-negative
    estimates can meet.
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    _check_nonnegative_totals(totals)
    groups = _disjoint_sums(constraints)
    if groups is None:
        return _iterate(noisy, variances, constraints, totals)
    if np.any((np.bincount(groups + 1, minlength=totals.size + 1)[1:] == 0) & (totals > 0)):
        raise ValueError("totals: a positive total has no measurement to hold it")
    estimate = np.maximum(noisy, 0.0)  # the measurements in no sum
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], np.arange(totals.size + 1))
    for group, total in enumerate(totals):
        members = order[starts[group] : starts[group + 1]]
        if members.size:
            estimate[members] = _sum_fit(noisy[None, members], variances[members], total[None])[0]
    return estimate


def jason_iteration(noisy, variances, constraints, totals) -> np.ndarray:
    """JASON's iteration (Sec. 6.3.4) for any constraints: :func:`constrained_wls`, then while
    an estimate is negative the most negative is fixed at zero and the rest solved again.

    Each round fixes one more estimate, so there are at most as many rounds
    as measurements (each one closed-form solve, ``O(n r² + r³)`` for ``r``
    constraints). With disjoint sums the result is the optimum
    (:func:`nonnegative_sum_fit` finds it without rounds); in general it is
    a feasible point near it (:func:`scipy_wls` solves the general case).
    """
    noisy, variances, constraints, totals = _inputs(noisy, variances, constraints, totals)
    _check_nonnegative_totals(totals)
    return _iterate(noisy, variances, constraints, totals)


def _iterate(noisy, variances, constraints, totals) -> np.ndarray:
    _check_size(noisy.size, *constraints.shape)  # at most one round per measurement
    free = np.ones(noisy.size, dtype=bool)
    estimate = np.zeros_like(noisy)
    for _ in range(noisy.size + 1):  # one more estimate fixed per round
        estimate[:] = 0.0
        used = constraints[free].any(axis=0)
        if np.any(totals[~used] > 0):
            raise ValueError("totals: a positive total has no free measurement left to hold it")
        if free.any():
            estimate[free] = _closed_form(
                noisy[free], variances[free], constraints[free][:, used], totals[used]
            )
        if estimate.min() >= 0.0:
            break
        free[int(np.argmin(estimate))] = False
    return estimate


def nonnegative_sum_fit(noisy, variances, totals) -> np.ndarray:
    """The non-negative estimates closest to ``noisy`` that sum to ``totals``, row by row.

    ``noisy`` is rows × units, ``variances`` one per unit (or one), ``totals``
    one sum ≥ 0 per row (or one). Each row solves

        minimise Σᵢ (xᵢ − M̃ᵢ)² / vᵢ   subject to   Σᵢ xᵢ = c,  xᵢ ≥ 0,

    a strictly convex problem whose Karush–Kuhn–Tucker conditions —
    ``(xᵢ − M̃ᵢ)/vᵢ = λ + μᵢ``, ``μᵢ ≥ 0``, ``μᵢ xᵢ = 0`` — are necessary and
    sufficient: ``xᵢ = max(0, M̃ᵢ + λ vᵢ)`` with ``λ`` the root of the
    non-decreasing, piecewise linear ``f(λ) = Σᵢ max(0, M̃ᵢ + λ vᵢ) = c``.
    Sorting the units by their breakpoints ``tᵢ = −M̃ᵢ/vᵢ`` gives ``f`` at
    every breakpoint by prefix sums; the units kept are those whose
    breakpoint has ``f(tᵢ) < c`` (none when ``c = 0``), and ``λ`` is the
    closed form over them: ``O(n log n)`` per row, no rounds.

    This is the point where JASON's iteration stops (:func:`jason_iteration`):
    with the units fixed so far all zero at the optimum, a round's
    ``λ_F`` has ``f(λ_F) ≥ Σ_F (M̃ᵢ + λ_F vᵢ) = c``, so ``λ* ≤ λ_F`` and every
    unit negative in that round (``M̃ᵢ + λ_F vᵢ < 0``) is zero at the optimum
    too (``M̃ᵢ + λ* vᵢ < 0``); when no estimate is negative, the optimum
    (feasible for the restricted problem) is its solution.
    """
    noisy = as_exact_reals(noisy, "noisy")
    if noisy.ndim != 2 or noisy.shape[1] == 0:
        raise ValueError(f"noisy must be rows × units (units >= 1), got shape {noisy.shape}")
    variances = check_variances(variances, noisy.shape[1], "unit")
    totals = as_exact_reals(totals, "totals")
    if totals.shape not in ((), noisy.shape[:1]) or np.any(totals < 0):
        raise ValueError(
            f"totals must be sums >= 0, one per row ({noisy.shape[0]}) or one for all, "
            f"got shape {totals.shape} (smallest {float(totals.min(initial=0.0))!r})"
        )
    return _sum_fit(noisy, variances, np.broadcast_to(totals, noisy.shape[:1]))


def _sum_fit(noisy: np.ndarray, variances: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """:func:`nonnegative_sum_fit` of checked arguments."""
    order = np.argsort(-noisy / variances[None, :], axis=1)  # breakpoints; ties kept together
    m_sorted, v_sorted = np.take_along_axis(noisy, order, axis=1), variances[order]
    at = -m_sorted / v_sorted
    before = np.zeros((2, *noisy.shape))  # Σ M̃ and Σ v over the units before each breakpoint
    np.cumsum(m_sorted[:, :-1], axis=1, out=before[0][:, 1:])
    np.cumsum(v_sorted[:, :-1], axis=1, out=before[1][:, 1:])
    kept = np.count_nonzero(before[0] + at * before[1] < totals[:, None], axis=1)
    free = np.zeros(noisy.shape, dtype=bool)
    np.put_along_axis(free, order, np.arange(noisy.shape[1])[None, :] < kept[:, None], axis=1)
    spread = np.where(free, variances[None, :], 0.0)
    room = totals - np.where(free, noisy, 0.0).sum(axis=1)
    weight = spread.sum(axis=1)
    shift = np.divide(room, weight, out=np.zeros_like(room), where=weight > 0)
    return np.maximum(np.where(free, noisy + shift[:, None] * spread, 0.0), 0.0)


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
    if not isinstance(nonnegative, bool | np.bool_):
        raise TypeError(f"nonnegative must be True or False, got {nonnegative!r}")
    _check_size(SLSQP_ROUNDS, *constraints.shape, square=sum(constraints.shape))
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
