"""Differential privacy as hypothesis testing: the best true-positive rate at a false-positive rate.

An adversary sees one output and tests ``H0: the data are D`` against
``H1: the data are D'`` (neighbours; e.g. the target is absent / present).
A test with false-positive rate (type I error) α has true-positive rate
``1 - β``. Privacy bounds the best such test:

**(ε, δ)-DP** (Wasserman & Zhou 2010; Kairouz, Oh & Viswanath 2015, Thm 2.1;
Dong, Roth & Su 2019, eq. (5)): every test has ``β ≥ f_{ε,δ}(α)`` with

    f_{ε,δ}(α) = max{0, 1 - δ - e^ε α, e^{-ε}(1 - δ - α)}

— the formula the JASON report prints (Sec. 5.4.1) — so

    TPR ≤ 1 - f_{ε,δ}(α) = min{1, e^ε α + δ, 1 - e^{-ε}(1 - α - δ)}.

JASON calls ``1 - f_{ε,δ}(0.01)`` the *Effective TPR* and tabulates it in
Table 5-7 (:data:`JASON_TABLE_5_7`, :func:`jason_table_5_7`).

**Gaussian mechanisms** (Gaussian DP, Dong, Roth & Su 2019, Def. 2.6): the
Gaussian mechanism with sensitivity Δ and noise σ is exactly ``μ``-GDP,
``μ = Δ/σ``: ``TPR = Φ(Φ^{-1}(α) + μ)``. At ``σ² = Δ²/(2ρ)`` (ρ-zCDP),
``μ = √(2ρ)``; composing Gaussian mechanisms adds ``μ²``, i.e. ρ, so the
production ρ of all queries gives one μ. (ρ-zCDP alone does not imply
``√(2ρ)``-GDP; it is exact for Gaussian noise.)

**Additive integer noise** (the discrete Gaussian above all): the exact
Neyman–Pearson trade-off, :func:`tradeoff`. Outputs are ordered by the
likelihood ratio ``P[o | D'] / P[o | D]``; the most powerful test at level α
rejects the outputs with the largest ratios and, at the boundary output,
rejects with the probability that makes the level exactly α (randomisation).
For the discrete Gaussian the ratio increases with o, so the test is a
threshold on the output.

Table 5-7 of the JASON report, row by row (α = 0.01; settings inferred):

* The pure-DP rows are ``1 - f_{ε,0}(0.01)`` **rounded up** to the printed
  digits: 0.0128403 → 0.01285, 0.997546 → 0.9976, 0.900171 → 0.90018 (round
  to nearest would print 0.01284, 0.9975, 0.90017).
* The 19.61 row is ``1 - f_{19.61, 1e-10}(0.01)`` = 0.99999999699 → 0.999999997.
* The April 2021 row (ε = 12.2) prints 0.9999955; at α = 0.01 the formula
  gives 0.99999502, and 0.9999955 is its value at α = 0.1 (0.99999548): the
  row appears to have used α = 0.1.
* The bottom row ("minimum estimate for zCDP at ρ = 2.63", 0.997) is the
  minimum over δ of ``1 - f_{ε(δ),δ}(0.01)`` with the Bun–Steinke conversion
  ``ε(δ) = ρ + 2√(ρ log(1/δ))`` the report states (Sec. 4.3): 0.99696 at
  δ ≈ 0.73, ε ≈ 4.44. With the tighter CKS conversion the minimum is 0.760;
  the Gaussian mechanism at ρ = 2.63 (μ = 2.29) has the exact TPR 0.487, and
  the discrete Gaussian at ``σ² = 1/(2ρ)`` (one count, shift 1) a little less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .._validation import _as_real_array, as_nonnegative, as_positive, scalar_or_array
from ..accounting import as_conversion, epsilon_from_zcdp
from ..noise import noise_variance
from .privacy_loss._checks import _as_integer_shift
from .privacy_loss.integer_noise import IntegerNoise

__all__ = [
    "JASON_FPR",
    "JASON_TABLE_5_7",
    "JasonRow",
    "TradeOff",
    "discrete_gaussian_tpr",
    "effective_tpr",
    "gaussian_tpr",
    "gaussian_type_ii_error",
    "jason_table_5_7",
    "mu_from_rho",
    "tpr_bound",
    "tradeoff",
    "type_ii_error_bound",
    "zcdp_minimum_tpr_bound",
]

#: The false-positive rate of JASON's Table 5-7.
JASON_FPR = 0.01


# --- argument checks -------------------------------------------------------------------


def _as_rate(value, name: str) -> np.ndarray:
    array = _as_real_array(value, name).astype(np.float64)
    if not np.all((array >= 0) & (array <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return array


# --- (ε, δ)-DP ---------------------------------------------------------------------------


def type_ii_error_bound(fpr, epsilon, delta=0.0):
    """``f_{ε,δ}(α) = max{0, 1 - δ - e^ε α, e^{-ε}(1 - δ - α)}``: the least β at level α.

    The trade-off function of (ε, δ)-DP as the JASON report prints it
    (Sec. 5.4.1, from Wasserman & Zhou 2010). ``fpr`` (α) and ``delta`` in
    [0, 1], ``epsilon`` finite and >= 0; broadcast like numpy ufuncs.
    """
    alpha = _as_rate(fpr, "fpr")
    eps = as_nonnegative(epsilon, "epsilon")
    delta = _as_rate(delta, "delta")
    with np.errstate(over="ignore"):
        steep = 1.0 - delta - np.exp(eps) * alpha
    flat = np.exp(-eps) * (1.0 - delta - alpha)
    return scalar_or_array(np.maximum(0.0, np.maximum(steep, flat)))


def tpr_bound(fpr, epsilon, delta=0.0):
    """``1 - f_{ε,δ}(α) = min{1, e^ε α + δ, 1 - e^{-ε}(1 - α - δ)}``.

    The largest true-positive rate of any test at false-positive rate α
    against an (ε, δ)-DP mechanism; arguments as :func:`type_ii_error_bound`.
    """
    alpha = _as_rate(fpr, "fpr")
    eps = as_nonnegative(epsilon, "epsilon")
    delta = _as_rate(delta, "delta")
    with np.errstate(over="ignore"):
        steep = np.exp(eps) * alpha + delta
    flat = 1.0 - np.exp(-eps) * (1.0 - alpha - delta)
    return scalar_or_array(np.minimum(1.0, np.minimum(steep, flat)))


def effective_tpr(epsilon, delta=0.0, fpr=JASON_FPR):
    """JASON's *Effective TPR* (Table 5-7): :func:`tpr_bound` at α = 0.01 by default."""
    return tpr_bound(fpr, epsilon, delta)


def zcdp_minimum_tpr_bound(rho, fpr=JASON_FPR, conversion="cks"):
    """``min_δ`` of :func:`tpr_bound` at ``(ε(δ), δ)``, ε(δ) from ρ-zCDP by ``conversion``.

    Every conversion ``ρ-zCDP ⇒ (ε(δ), δ)-DP`` gives a valid bound, so the
    smallest over δ is the best bound this route gives — JASON's "search for
    the minimum Effective TPR found across possible ϵ, δ conversions"
    (Table 5-7, bottom row; their conversion is ``"bun-steinke"``).
    Returns ``(tpr, delta, epsilon)`` at the minimum (a scalar ``rho``).

    The search: a grid of 2 001 δ, log-spaced from 1e-300 to 1 - 1e-12, then
    a bounded scalar minimisation in ``log δ`` around the best grid point.
    """
    rho = float(as_positive(rho, "rho"))
    alpha = float(_as_rate(fpr, "fpr"))
    conversion = as_conversion(conversion)

    def bound(log_delta):
        delta = np.exp(log_delta)
        return tpr_bound(alpha, epsilon_from_zcdp(rho, delta, conversion), delta)

    grid = np.linspace(math.log(1e-300), math.log1p(-1e-12), 2001)
    values = bound(grid)
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    result = optimize.minimize_scalar(
        lambda s: float(bound(s)), bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    )
    log_delta = result.x if result.fun <= values[best] else grid[best]
    delta = float(np.exp(log_delta))
    epsilon = float(epsilon_from_zcdp(rho, delta, conversion))
    return float(tpr_bound(alpha, epsilon, delta)), delta, epsilon


# --- Gaussian DP ---------------------------------------------------------------------------


def mu_from_rho(rho):
    """``μ = √(2ρ)``: the Gaussian mechanism at ``σ² = Δ²/(2ρ)`` is exactly μ-GDP."""
    rho = as_positive(rho, "rho")
    return scalar_or_array(np.sqrt(2.0 * rho))


def gaussian_tpr(fpr, mu):
    """``Φ(Φ^{-1}(α) + μ)``: the exact trade-off of μ-GDP (Dong, Roth & Su 2019, eq. (6)).

    ``mu = Δ/σ`` for a Gaussian mechanism (:func:`mu_from_rho`); ``fpr`` in
    [0, 1], ``mu`` finite and >= 0.
    """
    alpha = _as_rate(fpr, "fpr")
    mu = as_nonnegative(mu, "mu")
    return scalar_or_array(special.ndtr(special.ndtri(alpha) + mu))


def gaussian_type_ii_error(fpr, mu):
    """``β = Φ(-Φ^{-1}(α) - μ) = 1 - Φ(Φ^{-1}(α) + μ)``, accurate when β is tiny."""
    alpha = _as_rate(fpr, "fpr")
    mu = as_nonnegative(mu, "mu")
    return scalar_or_array(special.ndtr(-special.ndtri(alpha) - mu))


# --- exact Neyman–Pearson for additive integer noise --------------------------------------


@dataclass(frozen=True)
class TradeOff:
    """The exact trade-off curve of ``D: o = Z`` against ``D': o = s + Z``.

    ``outputs`` are the possible outputs in rejection order (decreasing
    likelihood ratio ``P[o | D']/P[o | D]``); ``fpr_knots``/``tpr_knots``
    are the cumulative rates after rejecting each prefix (from ``(0, ·)``),
    ``fnr_knots = 1 - tpr_knots`` summed from the other end (accurate when
    tiny). Between knots the most powerful test randomises on one output,
    so the curve is piecewise linear.

    Accuracy: each knot's rates are within ``omitted_mass`` (the noise's
    window) of the exact ones; a rate read off the curve at a given α is
    within ``omitted_mass · (1 + r)``, r the likelihood ratio of the segment
    it falls on, which can be large in the far tail. Build the noise with a
    tiny ``tail_mass`` (e.g. 1e-300, a window about 37σ wide for the discrete
    Gaussian) when far-tail rates are wanted to relative accuracy.
    """

    outputs: np.ndarray
    fpr_knots: np.ndarray
    tpr_knots: np.ndarray
    fnr_knots: np.ndarray
    omitted_mass: float
    shift: int

    def _knots(self):
        # Keep the last of each run of equal FPR (outputs impossible under D
        # raise the TPR at no cost): the curve is the upper envelope.
        keep = np.r_[self.fpr_knots[1:] != self.fpr_knots[:-1], True]
        return self.fpr_knots[keep], self.tpr_knots[keep], self.fnr_knots[keep]

    def tpr(self, fpr):
        """The largest true-positive rate at false-positive rate ``fpr`` (in [0, 1])."""
        alpha = _as_rate(fpr, "fpr")
        x, y, _ = self._knots()
        return scalar_or_array(np.interp(alpha, x, y))

    def type_ii_error(self, fpr):
        """``β(α) = 1 - TPR(α)``, interpolated on the accurate ``fnr_knots``."""
        alpha = _as_rate(fpr, "fpr")
        x, _, beta = self._knots()
        return scalar_or_array(np.interp(alpha, x, beta))

    def test(self, fpr) -> tuple[np.ndarray, int | None, float]:
        """The most powerful level-``fpr`` test: ``(rejected, boundary, γ)``.

        Reject every output in ``rejected``, and ``boundary`` (if not None)
        with probability γ; its false-positive rate is exactly ``fpr`` (up to
        ``omitted_mass``). ``fpr`` must be a scalar in [0, 1].
        """
        alpha = float(_as_rate(fpr, "fpr"))
        cumulative = self.fpr_knots[1:]
        count = int(np.searchsorted(cumulative, alpha, side="right"))
        if count >= self.outputs.size:
            return self.outputs.copy(), None, 0.0
        before = self.fpr_knots[count]
        mass = cumulative[count] - before
        gamma = float((alpha - before) / mass) if mass > 0 else 0.0
        if gamma <= 0.0:
            return self.outputs[:count].copy(), None, 0.0
        return self.outputs[:count].copy(), int(self.outputs[count]), min(gamma, 1.0)


def tradeoff(noise: IntegerNoise, shift=1) -> TradeOff:
    """The exact Neyman–Pearson trade-off of ``Z`` against ``s + Z`` on ``noise``'s window.

    Outputs ``o`` from ``noise.lower`` to ``noise.upper + s``; ``P[o | D] =
    p(o)``, ``P[o | D'] = p(o - s)`` from the log-pmf (so an output is
    impossible under a hypothesis only where the pmf is 0, not where it
    leaves the window). Outputs are sorted by decreasing log likelihood ratio
    (ties in any order: they lie on one segment), and the cumulative rates
    tabulated.
    """
    shift = _as_integer_shift(shift)
    outputs = np.arange(noise.lower, noise.upper + shift + 1, dtype=np.int64)
    # The log-pmf itself, not the window, decides what is impossible: a
    # full-support noise (DG) cut at its window must not create outputs that
    # look impossible under D (an infinite likelihood ratio) at the window's edge.
    log_null = noise.logpmf(outputs)
    log_alt = noise.logpmf(outputs - shift)
    possible = np.isfinite(log_null) | np.isfinite(log_alt)
    outputs, log_null, log_alt = outputs[possible], log_null[possible], log_alt[possible]
    with np.errstate(invalid="ignore"):
        log_ratio = np.where(
            np.isneginf(log_null),
            np.inf,
            np.where(np.isneginf(log_alt), -np.inf, log_alt - log_null),
        )
    order = np.argsort(-log_ratio, kind="stable")
    outputs = outputs[order]
    null, alt = np.exp(log_null[order]), np.exp(log_alt[order])
    fpr_knots = np.r_[0.0, np.cumsum(null)]
    tpr_knots = np.r_[0.0, np.cumsum(alt)]
    fnr_knots = np.r_[np.cumsum(alt[::-1])[::-1], 0.0]
    fpr_knots = np.minimum(fpr_knots, 1.0)  # rounding of sums near 1
    tpr_knots = np.minimum(tpr_knots, 1.0)
    fnr_knots = np.minimum(fnr_knots, 1.0)
    return TradeOff(outputs, fpr_knots, tpr_knots, fnr_knots, noise.omitted_mass, shift)


def discrete_gaussian_tpr(fpr, rho, convention="paper", shift=1, tail_mass=1e-300):
    """Exact TPR at ``fpr`` for one count released with ``DG(0, σ²)``, σ² from ρ.

    ``σ² = 1/(2ρ)`` (``"paper"``) or ``1/ρ`` (``"das"``), see
    :func:`adversary.noise.noise_variance`; the neighbours differ by ``shift``
    in the count. Scalar ``rho``; ``fpr`` broadcasts. The default window's
    ``tail_mass`` of 1e-300 keeps far-tail rates relatively exact.

    Under ``"das"`` this is one cell of the histogram; a changed record
    moves two cells by one each, whose trade-off is the composition of two
    such curves (not computed here).
    """
    sigma2 = float(noise_variance(rho, convention))
    return tradeoff(IntegerNoise.discrete_gaussian(sigma2, tail_mass), shift).tpr(fpr)


# --- JASON Table 5-7 ------------------------------------------------------------------------


@dataclass(frozen=True)
class JasonRow:
    """One row of JASON (2022) Table 5-7: the printed Effective TPR and our inputs."""

    date: str
    description: str
    epsilon: float | None
    delta: float
    printed: float
    digits: int
    rho: float | None = None


#: Table 5-7 of JASON (2022), "Consistency of Data Products and Formal Privacy
#: Methods for the 2020 Census", JSR-21-02, as printed.
JASON_TABLE_5_7 = (
    JasonRow("Nov 2018", "2018 E2E Census Test DAS (DP)", 0.25, 0.0, 0.01285, 5),
    JasonRow("Oct 2019", "Demonstration Data Project (DP)", 6.0, 0.0, 0.9976, 4),
    JasonRow("May 2020", "Demonstration Data (DP)", 4.5, 0.0, 0.90018, 5),
    JasonRow("Sep 2020", "Demonstration Data (zCDP)", 4.5, 0.0, 0.90018, 5),
    JasonRow("Nov 2020", "Demonstration Data (zCDP)", 4.5, 0.0, 0.90018, 5),
    JasonRow("Apr 2021", "Demonstration Data (zCDP), eps 4.5; 12.2", 12.2, 0.0, 0.9999955, 7),
    JasonRow(
        "Jun 2021", "Production Parameters (zCDP; delta = 1e-10)", 19.61, 1e-10, 0.999999997, 9
    ),
    JasonRow("Jun 2021", "Minimum estimate for zCDP at rho = 2.63", None, 0.0, 0.997, 3, rho=2.63),
)


def _round_up(value: float, digits: int) -> float:
    scale = 10.0**digits
    return math.ceil(value * scale - 1e-9) / scale


def jason_table_5_7(fpr=JASON_FPR) -> list[dict]:
    """Each row of :data:`JASON_TABLE_5_7` with our value.

    ``ours``: :func:`effective_tpr` at the row's (ε, δ) and ``fpr``, or for the
    zCDP row :func:`zcdp_minimum_tpr_bound` with the Bun–Steinke conversion
    (JASON's). ``ours_rounded_up`` / ``ours_rounded``: rounded up / to nearest
    at the printed digits. For the zCDP row also the CKS minimum, the
    Gaussian mechanism's exact TPR (μ = √(2ρ)) and the discrete Gaussian's
    at ``σ² = 1/(2ρ)``.
    """
    rows = []
    for row in JASON_TABLE_5_7:
        entry = {"date": row.date, "description": row.description, "printed": row.printed}
        if row.rho is None:
            ours = float(effective_tpr(row.epsilon, row.delta, fpr))
        else:
            ours, delta, epsilon = zcdp_minimum_tpr_bound(row.rho, fpr, "bun-steinke")
            entry |= {
                "delta_at_minimum": delta,
                "epsilon_at_minimum": epsilon,
                "cks_minimum": zcdp_minimum_tpr_bound(row.rho, fpr, "cks")[0],
                "gaussian_mechanism": float(gaussian_tpr(fpr, mu_from_rho(row.rho))),
                "discrete_gaussian": float(discrete_gaussian_tpr(fpr, row.rho, "paper")),
            }
        entry |= {
            "ours": ours,
            "ours_rounded_up": _round_up(ours, row.digits),
            "ours_rounded": round(ours, row.digits),
        }
        rows.append(entry)
    return rows
