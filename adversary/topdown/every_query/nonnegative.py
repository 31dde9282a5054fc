"""The non-negative fit of children's cell vectors to their parents' totals, for any ``M``.

For each family ``f`` (children ``c`` of one parent, their estimates ``b_c``)

    minimise Σ_c ½ (x_c − b_c)ᵀ M (x_c − b_c)   subject to   Σ_c Eᵀ x_c = P_f,  x_c ≥ 0,

with ``M = AᵀWA`` the level's information matrix (not diagonal when several
queries are measured) and ``E`` the constraint: the identity (the parent's
published cell vector) or one column of ones (the state's invariant total,
one child). Strictly convex, so the Karush–Kuhn–Tucker conditions

    M (x_c − b_c) = E λ_f + μ_c,   μ_c ≥ 0,   x_c ≥ 0,   μ_c · x_c = 0,

are necessary and sufficient. :func:`nonnegative_family_fit` finds the active
set (the cells at 0) by ADMM (Boyd et al. 2011, Sec. 5.2) vectorised over
every child of every family — the x-step in closed form,
``x_c = K(q_c + Eλ_f)``, ``K = (M + rI)⁻¹`` and ``λ_f`` from the family's
constraint; the z-step ``max(0, ·)`` — then *polishes*: with the active cells
fixed at 0 the conditions are linear, solved exactly (each child's free block
of ``M`` inverted, one small system per family), and corrected (a free cell
below 0 fixed, an active one with ``μ < 0`` freed) until they hold. The answer
is returned only when every condition holds to the stated tolerance
(:data:`TOLERANCE` relative: ``x ≥ −tol·s``, ``μ ≥ −tol·s·‖M‖``,
``|Σ_c Eᵀx_c − P_f| ≤ tol·s·n_f``, ``s = 1 + max |b|, |P|``); otherwise,
after :data:`MAX_ITERATIONS` ADMM steps, it raises.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...memory import affordable_rows, check_memory

__all__ = ["CORRECTIONS", "MAX_ITERATIONS", "TOLERANCE", "nonnegative_family_fit"]

#: Relative tolerance of the KKT conditions the returned fit meets.
TOLERANCE = 1e-9
#: ADMM steps after which an unconverged fit is refused.
MAX_ITERATIONS = 20_000
#: ADMM steps between attempts to polish.
CHECK_EVERY = 20
#: Active-set corrections per polishing attempt.
CORRECTIONS = 4
#: Float64 arrays of children × cells × cells the polish holds at once.
POLISH_ARRAYS = 3


def _checked(estimates, information, starts, totals, constraint):
    b = np.asarray(estimates, dtype=np.float64)
    if b.ndim != 2 or b.shape[0] == 0 or not np.all(np.isfinite(b)):
        raise ValueError(f"estimates must be finite, children × cells, got shape {b.shape}")
    d = b.shape[1]
    m = np.asarray(information, dtype=np.float64)
    if m.shape != (d, d) or not np.allclose(m, m.T, rtol=1e-12, atol=0.0):
        raise ValueError(f"information must be a symmetric {d} × {d} matrix, got {m.shape}")
    eigenvalues = np.linalg.eigvalsh(m)
    if eigenvalues[0] <= 0:
        raise ValueError(f"information must be positive definite, got eigenvalue {eigenvalues[0]}")
    starts = np.asarray(starts)
    if (
        starts.ndim != 1
        or starts.size < 2
        or starts[0] != 0
        or starts[-1] != b.shape[0]
        or np.any(np.diff(starts) < 1)
    ):
        raise ValueError(
            f"starts must rise from 0 to the children ({b.shape[0]}), each family non-empty"
        )
    e = np.eye(d) if constraint is None else np.asarray(constraint, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] != d or np.any((e != 0) & (e != 1)) or np.any(e.sum(1) > 1):
        raise ValueError(f"constraint must be {d} × k, disjoint 0/1 columns, got {e.shape}")
    p = np.asarray(totals, dtype=np.float64)
    if p.shape != (starts.size - 1, e.shape[1]) or not np.all(p >= 0):
        raise ValueError(
            f"totals must be >= 0, families × constraints {(starts.size - 1, e.shape[1])}, "
            f"got shape {p.shape}"
        )
    return b, m, eigenvalues, starts.astype(np.int64), p, e


def nonnegative_family_fit(
    estimates, information, starts, totals, constraint=None, *, tolerance: float = TOLERANCE
) -> np.ndarray:
    """The non-negative fit of the module docstring: ``x`` (children × cells).

    ``estimates``: children × cells, the children of family ``f`` in rows
    ``starts[f]:starts[f + 1]``; ``information``: ``M``; ``totals``: families ×
    constraints, each ≥ 0; ``constraint``: ``E`` (cells × constraints, disjoint
    0/1 columns; default the identity). Families are solved together and each
    is returned as soon as its KKT conditions hold; raises :class:`ValueError`
    if some family's do not hold to ``tolerance`` after :data:`MAX_ITERATIONS` steps.
    """
    b, m, eigenvalues, starts, p, e = _checked(estimates, information, starts, totals, constraint)
    n, d = b.shape
    per_row = 8.0 * POLISH_ARRAYS * d * d
    check_memory(per_row * np.diff(starts).max(), f"the non-negative fit (a family × {d} cells)")
    polish_rows = affordable_rows(per_row, n, f"the non-negative fit ({d} cells)")
    scale = 1.0 + max(np.abs(b).max(), p.max(initial=0.0))
    part = _Families(b, b @ m, m, e, np.diff(starts), p, tolerance * scale, np.arange(len(p)))
    part.tol_mu = part.tol_x * eigenvalues[-1]
    if np.any(p[:, ~e.any(axis=0)] > part.tol_x):
        raise ValueError("totals: a positive total constrains no cell")
    step = float(np.sqrt(eigenvalues[0] * eigenvalues[-1]))
    k = np.linalg.inv(m + step * np.eye(d))
    reduce = np.linalg.inv(e.T @ k @ e)
    result = np.empty_like(b)
    z, u = np.maximum(b, 0.0), np.zeros_like(b)
    previous = np.zeros(b.shape, dtype=bool)
    tried = np.zeros(len(p), dtype=bool)  # polished with this active set, in vain
    for iteration in range(1, MAX_ITERATIONS + 1):
        q = part.g + step * (z - u)
        summed = np.add.reduceat(q, part.starts[:-1], axis=0)
        multipliers = ((part.p - summed @ k @ e) @ reduce) / part.sizes[:, None]
        x = (q + (multipliers @ e.T)[part.family]) @ k
        z = np.maximum(x + u, 0.0)
        u += x - z
        if iteration % CHECK_EVERY:
            continue
        active = z <= 0.0
        changed = np.logical_or.reduceat(np.any(active != previous, axis=1), part.starts[:-1])
        previous = active
        tried[changed] = False
        ready = ~tried
        if not ready.any():
            continue
        polished, met = part.subset(ready).polish_in_chunks(active[part.rows(ready)], polish_rows)
        tried[ready] = True
        finished = np.zeros_like(ready)
        finished[np.flatnonzero(ready)[met]] = True
        if not finished.any():
            continue
        kept = polished[np.repeat(met, part.sizes[ready])]
        result[starts_rows(starts, part.index[finished])] = kept
        rows = part.rows(~finished)
        part, z, u, previous, tried = (
            part.subset(~finished),
            z[rows],
            u[rows],
            previous[rows],
            tried[~finished],
        )
        if part.index.size == 0:
            return result
    raise ValueError(
        f"nonnegative_family_fit: the KKT conditions did not hold to tolerance {tolerance:g} "
        f"after {MAX_ITERATIONS} ADMM steps ({n} units × {d} cells)"
    )


def starts_rows(starts: np.ndarray, families: np.ndarray) -> np.ndarray:
    """The rows of ``families`` (indices into ``starts``), in order."""
    return np.concatenate([np.arange(starts[f], starts[f + 1]) for f in families])


@dataclass
class _Families:
    """Some families of the problem: estimates ``b``, ``g = bM``, sizes, totals, tolerances,
    and their indices among all families."""

    b: np.ndarray
    g: np.ndarray
    m: np.ndarray
    e: np.ndarray
    sizes: np.ndarray
    p: np.ndarray
    tol_x: float
    index: np.ndarray
    tol_mu: float = 0.0

    def __post_init__(self):
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.family = np.repeat(np.arange(self.sizes.size), self.sizes)

    def rows(self, families: np.ndarray) -> np.ndarray:
        """A mask of the rows of the families in the mask ``families``."""
        return np.repeat(families, self.sizes)

    def subset(self, families: np.ndarray) -> _Families:
        rows = self.rows(families)
        part = _Families(
            self.b[rows],
            self.g[rows],
            self.m,
            self.e,
            self.sizes[families],
            self.p[families],
            self.tol_x,
            self.index[families],
            self.tol_mu,
        )
        return part

    def polish_in_chunks(self, active: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`polish` of whole families at most ``rows`` children at a time (one family
        more when it alone is larger): the memory of the children's matrices is bounded."""
        fitted, met = np.zeros_like(self.b), np.zeros(self.sizes.size, dtype=bool)
        chunk = np.cumsum(self.sizes) // max(rows, 1)  # families in chunks of about ``rows``
        for label in np.unique(chunk):
            families = chunk == label
            mask = self.rows(families)
            fitted[mask], met[families] = self.subset(families).polish(active[mask])
        return fitted, met

    def polish(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The exact optimum of each family from the active set ``active`` (corrected up to
        :data:`CORRECTIONS` times) and whether its KKT conditions hold."""
        met = np.zeros(self.sizes.size, dtype=bool)
        fitted = np.zeros_like(self.b)
        pending = np.ones(self.sizes.size, dtype=bool)
        for _ in range(CORRECTIONS):
            part, rows = self.subset(pending), self.rows(pending)
            now, low_x, low_mu, x = part.check(active[rows])
            done = np.flatnonzero(pending)[now]
            fitted[self.rows(np.isin(np.arange(self.sizes.size), done))] = x[part.rows(now)]
            met[done] = True
            if not (low_x.any() or low_mu.any()):
                break
            active[rows] = (active[rows] | low_x) & ~low_mu
            pending = ~met
        return fitted, met

    def check(self, active: np.ndarray):
        """Solve with ``active`` and test each family's KKT conditions: ``(met, the free
        cells below 0, the active cells of negative μ, the fit)``."""
        x, multipliers, degenerate = self.solve_active(active)
        mu = (x - self.b) @ self.m - (multipliers @ self.e.T)[self.family]
        free = ~active
        low_x, low_mu = free & (x < -self.tol_x), active & (mu < -self.tol_mu)
        for f, i in zip(*np.nonzero(degenerate & (self.p > self.tol_x)), strict=True):
            # a positive total over active cells only: free the one of least μ (0)
            rows = slice(self.starts[f], self.starts[f + 1])
            under = np.where(self.e[:, i] > 0, mu[rows], np.inf)
            child, cell = np.unravel_index(np.argmin(under), under.shape)
            low_mu[self.starts[f] + child, cell] = True
        off = free & (np.abs(mu) > self.tol_mu)  # the linear solve itself is off
        gap = np.abs(np.add.reduceat(x, self.starts[:-1], axis=0) @ self.e - self.p)
        bad = np.logical_or.reduceat(np.any(low_x | low_mu | off, axis=1), self.starts[:-1])
        met = ~bad & np.all(gap <= self.tol_x * self.sizes[:, None], axis=1)
        return met, low_x, low_mu, np.where(free, np.maximum(x, 0.0), 0.0)

    def solve_active(self, active: np.ndarray):
        """``x`` and ``λ`` meeting ``M(x_c − b_c) = Eλ_f`` on the free cells, ``x = 0`` on the
        active ones and the families' constraints, and which constraints are over active
        cells only (families × constraints): these get the largest ``λ`` keeping ``μ ≥ 0``."""
        m, e, starts = self.m, self.e, self.starts
        free = ~active
        pair = free[:, :, None] & free[:, None, :]
        held = np.where(pair, m[None], 0.0) + np.eye(m.shape[0])[None] * active[:, :, None]
        spread = np.linalg.inv(held) * pair  # each child's M_FF⁻¹, zero elsewhere
        spread_g = (spread @ self.g[:, :, None])[:, :, 0]
        system = e.T @ np.add.reduceat(spread, starts[:-1], axis=0) @ e
        rhs = self.p - np.add.reduceat(spread_g, starts[:-1], axis=0) @ e
        degenerate = np.einsum("fii->fi", system) <= 0.0  # no free cell under the constraint
        where_f, where_i = np.nonzero(degenerate)
        system[where_f, where_i, where_i] = 1.0  # its λ is set below
        rhs[degenerate] = 0.0
        multipliers = np.linalg.solve(system, rhs[:, :, None])[:, :, 0]
        x = spread_g + (spread @ (multipliers @ e.T)[self.family][:, :, None])[:, :, 0]
        if degenerate.any():
            lowest = np.minimum.reduceat((x - self.b) @ m, starts[:-1], axis=0)
            bound = np.stack(
                [np.min(lowest[:, e[:, i] > 0], axis=1) for i in range(e.shape[1])], axis=1
            )
            multipliers = np.where(degenerate, bound, multipliers)
        return x, multipliers, degenerate
