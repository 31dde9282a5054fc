"""The data holder's view of the ℓ-level attack: (3.3), (3.4), (3.6) over the ℓ releases."""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import special

from ..._validation import as_positive, as_probability
from ...measures.decision import DEFAULT_TIE_RULE, binary_credit, check_tie_rule
from ...measures.marginal import one_measure
from ...measures.noise import mechanism_tuple
from ...measures.releases import DEFAULT_TAIL_MASS
from .inputs import (
    LEVELS_2020,
    checked_known_counts,
    checked_rhos,
    level_noise,
    rhos_2020,
    truth_has_c,
)
from .sums import (
    DEFAULT_GRID_WIDTH,
    MultiLevelMarginals,
    marginals_of_levels,
    marginals_of_row,
    mechanism_level,
)

__all__ = [
    "correct_decision_probability",
    "marginal_by_levels",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
]


def _validated_tail_and_grid(tail_mass, grid_width) -> tuple[float, float]:
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    grid_width = as_positive(grid_width, "grid_width")
    if grid_width.ndim != 0:
        raise ValueError(f"grid_width must be one number > 0, got {grid_width!r}")
    return tail_mass, float(grid_width)


#: The options :func:`marginal_by_levels` passes on as :func:`marginals` takes them.
_OPTIONS = ("convention", "tail_mass", "grid_width", "tie_rule")


def _marginal_cases(
    prior,
    rhos,
    known_counts,
    true_count,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
):
    """Broadcast cases, compute every prefix of levels; arrays have a leading prefix axis."""
    check_tie_rule(tie_rule)
    prior = as_probability(prior, "prior")
    sigma2, mechanisms, n_levels = level_noise(rhos, convention, mechanism)
    known = checked_known_counts(known_counts, n_levels)
    has_c = truth_has_c(known[..., 0], true_count)
    tail_mass, grid_width = _validated_tail_and_grid(tail_mass, grid_width)
    if mechanisms is not None:
        return _mechanism_cases(prior, has_c, mechanisms, tail_mass, grid_width, tie_rule)
    shape = np.broadcast_shapes(prior.shape, has_c.shape, sigma2.shape[:-1])
    prior = np.broadcast_to(prior, shape).ravel()
    has_c = np.broadcast_to(has_c, shape).ravel()
    rows = np.broadcast_to(sigma2, (*shape, n_levels)).reshape(-1, n_levels)
    logit = special.logit(prior)
    offsets = np.where(has_c, logit, -logit)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    share = _tie_share(has_c, tie_rule)

    n_cases = prior.size
    names = ("posterior", "posterior_bound", "decision", "decision_bound", "omitted", "exact")
    out = {
        name: np.empty((n_levels, n_cases), dtype=bool if name == "exact" else np.float64)
        for name in names
    }
    cutoffs = np.empty((n_cases, n_levels), dtype=np.int64)
    widths = np.empty(n_cases)
    unique_rows, which = np.unique(rows, axis=0, return_inverse=True)
    for r, row in enumerate(unique_rows):
        at = which.reshape(-1) == r
        part = marginals_of_row(row, offsets[at], share[at], tail_mass, grid_width)
        for name in names:
            out[name][:, at] = part[name]
        cutoffs[at] = part["cutoffs"]
        widths[at] = part["grid_width"]
    return out, prior_of_truth, shape, cutoffs, widths


def _tie_share(has_c: np.ndarray, tie_rule: str) -> np.ndarray:
    """What a tied decision counts for the truth: the rule's credit of ``m_1 + 1`` or of ``m_1``."""
    return binary_credit(np.zeros(has_c.shape), has_c, tie_rule)


def _mechanism_cases(prior, has_c, mechanisms, tail_mass, grid_width, tie_rule):
    """:func:`_marginal_cases` for one row of mechanisms (one per level), any noise.

    Cases are grouped by their truth: without symmetry of the noise the law of
    the increments differs between T = 1 and T = 0.
    """
    n_levels = len(mechanisms)
    shape = np.broadcast_shapes(prior.shape, has_c.shape)
    prior = np.broadcast_to(prior, shape).ravel()
    has_c = np.broadcast_to(has_c, shape).ravel()
    logit = special.logit(prior)
    offsets = np.where(has_c, logit, -logit)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    share = _tie_share(has_c, tie_rule)
    names = ("posterior", "posterior_bound", "decision", "decision_bound", "omitted", "exact")
    out = {
        name: np.empty((n_levels, prior.size), dtype=bool if name == "exact" else np.float64)
        for name in names
    }
    cutoffs = np.empty((prior.size, n_levels), dtype=np.int64)
    widths = np.empty(prior.size)
    for flag in (True, False):
        at = has_c == flag
        if not np.any(at):
            continue
        parts = [mechanism_level(m, flag, tail_mass / n_levels) for m in mechanisms]
        levels = [level for level, _ in parts]
        certain = [mass for _, mass in parts]
        part = marginals_of_levels(levels, certain, offsets[at], share[at], grid_width)
        for name in names:
            out[name][:, at] = part[name]
        cutoffs[at] = part["cutoffs"]
        widths[at] = part["grid_width"]
    return out, prior_of_truth, shape, cutoffs, widths


def marginals(
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
) -> MultiLevelMarginals:
    """Marginal posterior, marginal risk and correct-decision probability over the ℓ releases.

    The data holder's measures (3.3), (3.4) and (3.6) with the posterior
    (S1.1): averages over ``x_i* = x_i + Z_i``, ``Z_i ~ DG(0, σ_i²)``
    independent. With ``a_i = 1/(2σ_i²)`` and the truth T = 1, the posterior is
    ``expit(logit p + L)``, ``L = Σ_i a_i (2 Z_i + 1)``; for the truth T = 0
    the same law of L gives ``expit(logit(1-p) + L)`` (``Z ↦ -Z``). L is a sum
    of independent variables on the incommensurate lattices ``a_i(2ℤ + 1)``,
    whose joint support (~50⁶ points for the 2020 ρ) is too large to sum.

    **Noise truncation.** Level i's noise is summed over ``|z| ≤ K_i``,
    ``K_i = cutoff(σ_i², tail_mass/ℓ)``
    (:func:`adversary.noise.discrete_gaussian.cutoff`); the omitted releases
    have probability at most ``ε = Σ_i 2·tail_bound(K_i + 1, σ_i²) ≤ tail_mass``
    (reported as ``omitted_mass``). Sums are not renormalised, so with values
    in [0, 1] the truncated sum lies in ``[E - ε, E]``.

    **Marginal posterior and risk: mean-preserving grid.** Each level's
    increment ``v = a_i(2z + 1) = (k + f)h`` is split onto the grid ``hℤ``
    (mass ``1 - f`` at ``kh``, ``f`` at ``(k+1)h``), which keeps its mean, and
    the grid distributions are convolved exactly (all prefixes ℓ' ≤ ℓ come out
    of one pass). For any ``g`` with ``|g''| ≤ M`` a split changes ``E g`` by at
    most ``(M/2) h² f(1-f)`` per point (Taylor to second order; the first
    order cancels), and averaging over the other levels keeps ``|g''| ≤ M``. With
    ``g = expit``, ``M = 1/(6√3)`` (:data:`EXPIT_SECOND_DERIVATIVE_BOUND`), so::

        |error of the marginal posterior| ≤ (M/2) Σ_i h² Σ_z P[z] f(1-f) + ε
                                           ≤ ℓ M h²/8 + ε,

    about 7e-10 for ℓ = 6 at the default ``h = 1e-4`` (``posterior_error_bound``;
    the risk's bound is this over the prior of the truth). ``h`` grows beyond
    ``grid_width`` only if the grid would exceed 2²³ points.

    **Correct-decision probability: exact, meet in the middle.** The decision
    is right iff ``L ≥ -logit p`` (truth T = 1) or ``L > logit p`` (T = 0). The
    levels are split into two groups whose truncated supports A, B are
    enumerated exactly (≈ 1.0·10⁵ and 7·10⁴ points for the 2020 ρ, ℓ = 6); B is
    sorted with suffix sums of mass and ``P[A + B ≥ t]`` is summed over A by
    binary search. The error is only the truncation, ``≤ ε``. Log odds within
    :func:`~adversary.measures.decision.tie_tolerance` of 0 (for the largest
    possible size of the sum) are ties, counted by ``tie_rule``
    (:mod:`adversary.measures.decision`; as :func:`decision` decides them): exact
    ties occur when the ρ_i are commensurate (e.g. repeated releases with one ρ
    and p = 1/2, :mod:`adversary.analyses.sequential`), and their float sums
    need not be exactly 0. Should a group exceed 2²² points, the
    grid above brackets it instead: ``|L_h - L| ≤ ℓh`` gives
    ``P[L_h > t + ℓh] ≤ P[L ≥ t] ≤ P[L_h ≥ t - ℓh] + ε``; the midpoint is
    returned with half the bracket as the bound (``decision_exact`` False).

    **Other noise** (``mechanism``, one per level, not all discrete
    Gaussian): level i's truncated noise is its table (the whole support for
    bounded noise, whose ε is 0), and its increment of the truth's log odds is
    ``logpmf_i(z) - logpmf_i(z ± 1)`` instead of ``a_i(2z + 1)`` (equal
    increments merged: the discrete Laplace has two values). A ``+inf``
    increment — a release only the truth can produce — makes the posterior 1
    and the decision right whatever the other levels say; that mass,
    ``Π_i (finite_i + certain_i) - Π_i finite_i``, is added to both sums over
    the finite increments, which go through the same grid and meet in the
    middle as above, with the same bounds. Without symmetric noise the truths
    T = 1 and T = 0 are summed separately.

    Arguments broadcast as in :func:`posterior` (levels on the last axis of
    ``rhos`` and ``known_counts``); ``true_count`` is the true ``x1``
    (default ``m_1 + 1``). ``known_counts`` matter only through the truth.
    With ``mechanism``, the cases are the broadcast of ``prior`` and ``true_count``.
    """
    out, prior_of_truth, shape, cutoffs, widths = _marginal_cases(
        prior,
        rhos,
        known_counts,
        true_count,
        convention,
        tail_mass,
        grid_width,
        mechanism,
        tie_rule,
    )
    last = -1
    return MultiLevelMarginals.of_truth(
        prior_of_truth.reshape(shape),
        out["posterior"][last].reshape(shape),
        out["posterior_bound"][last].reshape(shape),
        correct_decision_probability=out["decision"][last].reshape(shape),
        decision_error_bound=out["decision_bound"][last].reshape(shape),
        omitted_mass=out["omitted"][last].reshape(shape),
        cutoffs=cutoffs.reshape(*shape, -1),
        grid_width=widths.reshape(shape),
        decision_exact=out["exact"][last].reshape(shape),
    )


marginal_posterior = one_measure(
    marginals,
    "marginal_posterior",
    "Posterior (S1.1) of the truth averaged over the ℓ releases (3.3)",
)
marginal_risk = one_measure(marginals, "marginal_risk", "Marginal disclosure risk (3.4)")
correct_decision_probability = one_measure(
    marginals,
    "correct_decision_probability",
    "Probability that the Bayes decision from all ℓ releases is right (3.6)",
)


def marginal_by_levels(
    priors, rhos=None, *, true_count=None, known_count=0, mechanism=None, **options
) -> xr.Dataset:
    """S1.3's Figure 1: the marginal measures for ℓ = 1, 2, …, n levels of uniqueness.

    ``priors`` is a number or 1-d sequence of p; ``rhos`` a 1-d sequence of
    per-level ρ, default :func:`rhos_2020` (block → … → US). Level ℓ uses the
    first ℓ entries of ``rhos``. Returns a Dataset over ``(levels, prior)``
    with ``marginal_posterior``, ``marginal_risk``,
    ``correct_decision_probability``, their error bounds (:func:`marginals`)
    and ``omitted_mass``; coordinate ``level_name`` names the level added at
    each ℓ when ``rhos`` is the default. ``known_count`` is a unique target's
    m at every level (it does not change the marginal measures).
    ``mechanism`` (one per level) replaces ``rhos`` and ``convention``; the
    coordinate ``mechanism`` then labels each level's noise instead of ``rho``.
    The ``options`` — ``convention``, ``tail_mass``, ``grid_width``,
    ``tie_rule`` — are :func:`marginals`'s, with its defaults.
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(
            f"{unknown[0]}: marginal_by_levels takes priors, rhos, true_count, known_count, "
            f"mechanism and {', '.join(_OPTIONS)}"
        )
    default = rhos is None and mechanism is None
    if mechanism is None:
        rhos = rhos_2020() if default else checked_rhos(rhos)
        if rhos.ndim != 1:
            raise ValueError(f"rhos must be a 1-d sequence of per-level ρ, got shape {rhos.shape}")
    priors = as_probability(priors, "priors")
    if priors.ndim > 1:
        raise ValueError(f"priors must be a number or a 1-d sequence, got shape {priors.shape}")
    priors = np.atleast_1d(priors)
    out, prior_of_truth, _, cutoffs, widths = _marginal_cases(
        priors, rhos, known_count, true_count, mechanism=mechanism, **options
    )
    n_levels = cutoffs.shape[-1]
    dims = ("levels", "prior")
    data = {
        "marginal_posterior": (dims, out["posterior"]),
        "marginal_risk": (dims, out["posterior"] / prior_of_truth),
        "correct_decision_probability": (dims, out["decision"]),
        "posterior_error_bound": (dims, out["posterior_bound"]),
        "risk_error_bound": (dims, out["posterior_bound"] / prior_of_truth),
        "decision_error_bound": (dims, out["decision_bound"]),
        "omitted_mass": (dims, out["omitted"]),
        "decision_exact": (dims, out["exact"]),
    }
    coords = {
        "levels": np.arange(1, n_levels + 1),
        "prior": priors,
        "cutoff": ("levels", cutoffs[0]),
    }
    if mechanism is None:
        coords["rho"] = ("levels", rhos)
    else:
        labels = [m.label for m in mechanism_tuple(mechanism)]
        coords["mechanism"] = ("levels", labels)
    if default:
        coords["level_name"] = ("levels", list(LEVELS_2020[:n_levels]))
    convention = options.get("convention", "paper")
    attrs = {
        "convention": str(convention) if mechanism is None else "mechanism",
        "tail_mass": float(options.get("tail_mass", DEFAULT_TAIL_MASS)),
        "grid_width": float(widths[0]),
        "tie_rule": options.get("tie_rule", DEFAULT_TIE_RULE),
        "source": "Kazan & Reiter (2023), supplement S1.3, (S1.1) and Figure 1",
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)
