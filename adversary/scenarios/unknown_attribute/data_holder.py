"""The data holder's view of the unknown-attribute attack: (3.3), (3.4), (3.6) for a truth."""

from __future__ import annotations

from ..._validation import as_positive, as_probability
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import one_measure
from ...measures.releases import DEFAULT_TAIL_MASS
from .gaussian import gaussian_marginals
from .inputs import cell_noise, checked_category, checked_prior, released_mask
from .mechanisms import mechanism_marginals
from .sums import DEFAULT_GRID_WIDTH, MARGINAL_METHODS, UnknownAttributeMarginals

__all__ = [
    "correct_decision_probability",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
]


def marginals(
    prior,
    rho,
    true_category,
    convention="paper",
    released=None,
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    method="auto",
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
) -> UnknownAttributeMarginals:
    """Marginal posterior, marginal risk and correct-decision probability for true category c.

    The data holder's measures (3.3), (3.4) and (3.6) with the posterior over
    categories: averages over ``x_k* = m_k + 1[k = c] + Z_k``, ``Z_k ~ DG(0, σ_k²)``
    independent. With ``a_k = 1/(2σ_k²)``, category k scores
    ``log π_k + a_k(2Z_k + 2·1[k = c] - 1)`` (``log π_k`` if not released).
    ``prior`` is one 1-d π; ``rho`` one number or one per category.

    **Noise truncation.** Each released cell's noise is summed over
    ``|z| ≤ K_k``, ``K_k = cutoff(σ_k², tail_mass/R)`` for R released cells; the
    omitted releases have probability at most ``ε = Σ_k 2·tail_bound(K_k + 1, σ_k²)
    ≤ tail_mass`` (``omitted_mass``). Sums are not renormalised, so for values
    in [0, 1] the truncated sum lies in ``[E - ε, E]``.

    **Marginal posterior and risk.** ``method="enumeration"`` sums the
    posterior of c over the joint noise grid of every released cell (``Π_k
    (2K_k + 1)`` points): exact up to ε. ``method="grid"`` needs only one
    dimension at a time: the posterior of c is ``expit(log π_c + s_c - L)`` with
    ``L = log Σ_{k≠c} π_k e^{s_k}``, a function of the other cells' noises,
    independent of ``Z_c``. L is built one cell at a time, ``L_j = logaddexp(L_{j-1},
    score_j)``; after each combination (but the first, which stays exact) the
    values are split onto the grid ``hℤ`` keeping the mean (mass ``1 - f`` at
    ``kh``, ``f`` at ``(k+1)h`` for a value ``(k + f)h``). The final average over
    ``Z_c`` and L is an exact sum. Error: splitting a point mass under a
    function ``g`` with ``|g''| ≤ M`` changes ``E g`` by at most
    ``(M/2) h² f(1 - f)``; the function of ``L_j`` that the rest of the
    computation averages is ``G(ℓ) = E[expit(v - logaddexp(ℓ, Y))]`` (Y the
    later cells, v the truth's score), whose second derivative is at most
    ``max|expit''| + max|expit'| · max ∂²logaddexp = 1/(6√3) + 1/16``
    (:data:`GRID_CURVATURE_BOUND`, M). Summing over the splits (a telescoping
    sum with exact later steps)::

        |error of the marginal posterior| ≤ (M/2) Σ h² Σ P f(1-f) + ε
                                           ≤ (R' - 1) M h²/8 + ε,

    with R' the number of released cells other than c: about 2e-10 per
    further cell at the default ``h = 1e-4``; 0 + ε for K = 2 (no split).
    ``h`` grows beyond ``grid_width`` only if the grid would exceed 2²³
    points. ``"auto"`` enumerates when the joint grid has at most 2²¹ points,
    else uses the grid. The risk's bound is the posterior's over ``π_c``.

    **Correct-decision probability: exact, one dimension.** Given ``Z_c`` (the
    truth's score v), every other category k independently scores below
    ``v - tol``, within ``tol`` of v (a tie) or above; the decision is c when
    none scores above, and a tie counts by ``tie_rule``
    (:mod:`adversary.measures.decision`: ``"split"`` credits ``1/(1 + T)`` for T
    tied categories, ``"smallest"``/``"largest"`` credit 1 when no tied category
    comes before/after c). So
    ``P[correct] = Σ_z P[Z_c = z] ∫₀¹ Π_{k≠c} (P[below] + P[tied] u) du`` under
    ``"split"`` (:func:`~adversary.measures.decision.competition_credit`), each
    probability a discrete Gaussian cdf at ``floor((v ± tol - log π_k + a_k)/(2a_k))``.
    Only ``Z_c`` is truncated: the error is at most its omitted mass
    (``decision_error_bound``; the result is a lower bound). ``tol`` is
    :func:`~adversary.measures.decision.tie_tolerance` at the largest scores of
    the grid, as :func:`decision` uses for one release.

    **Other noise** (``mechanism``, not all discrete Gaussian). Each released
    cell's noise is its table (the whole support for bounded noise, whose ε is
    0); cell k's score is ``log π_k + logpmf_k(z) - logpmf_k(z + 1)`` for the
    truth (k = c) and ``log π_k + logpmf_k(z - 1) - logpmf_k(z)`` for the others,
    equal values merged. A ``+inf`` truth score (only c produces the release)
    gives posterior 1 and a right decision; ``-inf`` scores of other categories
    (ruled out) drop out of L. Enumeration and grid as above, the grid carrying
    ``L = -inf`` (every other category ruled out) as a separate atom. The
    decision probability sums over the truth's noise the product of the other
    cells' ``P[score_k < v - tol]`` (or ``≤ v + tol``), now from their tables
    (scores are no longer monotone in the noise): its error is at most the
    total omitted mass ``ε``, and 0 for bounded noise.
    """
    prior = checked_prior(prior, one=True)
    n_categories = prior.size
    c = checked_category(true_category, n_categories)
    mask = released_mask(released, n_categories)
    sigma2, mechanisms = cell_noise(rho, n_categories, convention, mechanism)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    grid_width = as_positive(grid_width, "grid_width")
    if grid_width.ndim != 0:
        raise ValueError(f"grid_width must be one number > 0, got {grid_width!r}")
    if method not in MARGINAL_METHODS:
        raise ValueError(f"method must be one of {MARGINAL_METHODS}, got {method!r}")
    check_tie_rule(tie_rule)
    if mechanisms is not None:
        return mechanism_marginals(
            prior, c, mask, mechanisms, tail_mass, float(grid_width), method, tie_rule
        )
    return gaussian_marginals(
        prior, c, mask, sigma2, tail_mass, float(grid_width), method, tie_rule
    )


marginal_posterior = one_measure(
    marginals,
    "marginal_posterior",
    "The posterior of the true category averaged over releases (3.3)",
)
marginal_risk = one_measure(
    marginals, "marginal_risk", "Marginal disclosure risk (3.4) of the true category"
)
correct_decision_probability = one_measure(
    marginals,
    "correct_decision_probability",
    "Probability that the Bayes decision is the true category (3.6)",
)
