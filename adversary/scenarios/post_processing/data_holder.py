"""The data holder's view of S6: the marginal posterior (S6.8), risk and P[correct], with bounds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, binary_credit, check_tie_rule
from ...measures.marginal import BoundedMarginals, one_measure
from .releases import PostProcessedReleases, attack_setting
from .scores import decision_log_odds, posterior_of_truth, true_count_of

__all__ = [
    "PostProcessedMarginals",
    "correct_decision_probability",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
]


@dataclass(frozen=True)
class PostProcessedMarginals(BoundedMarginals):
    """The data holder's measures of the S6 attack for a truth, with their error bounds.

    Arrays of the broadcast shape of ``prior``, ``rho`` and ``true_count``
    (:class:`~adversary.measures.marginal.BoundedMarginals`): (S6.8), its
    ratio to the prior of the truth (as (3.4)), and the probability that the
    Bayes decision (:func:`decision`) from ``x̃1`` is right (as (3.6)); the
    bounds ``omitted_mass / p_T`` and ``omitted_mass / p_T²`` (module
    docstring), and for the decision ``omitted_mass`` plus the probability,
    under the truth, of the releases whose decision the truncation could flip
    (see :func:`marginals`); ``omitted_mass`` bounds the noise probability the
    tables leave out (per ``rho``).
    """


def table_marginals(table: PostProcessedReleases, prior, truth, tie_rule) -> PostProcessedMarginals:
    """:class:`PostProcessedMarginals` from a release table, broadcasting prior and truth."""
    known, width = table.known_count, table.x2_tilde + 1
    rho_index = np.arange(table.omitted_mass.size).reshape(table.omitted_mass.shape)
    prior, rho_index, truth = np.broadcast_arrays(prior, rho_index, truth)
    rows = table.log_probabilities.reshape(-1, 2, width)[rho_index]  # (..., 2, J)
    omitted = table.omitted_mass.reshape(-1)[rho_index]
    has_c = truth == known + 1
    log_truth = np.where(has_c[..., None], rows[..., 1, :], rows[..., 0, :])
    log_other = np.where(has_c[..., None], rows[..., 0, :], rows[..., 1, :])
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    of_truth = posterior_of_truth(prior_of_truth[..., None], log_truth, log_other)
    truth_rows = np.exp(log_truth)
    posterior = np.sum(of_truth * truth_rows, axis=-1)

    # The Bayes decision at each x̃1 (3.5): m + 1 where p L1 > (1 - p) L0, a tie counted by
    # the rule.
    with_c, without_c = np.exp(rows[..., 1, :]), np.exp(rows[..., 0, :])
    p1, p0 = prior[..., None], 1.0 - prior[..., None]
    log_odds = decision_log_odds(p1, with_c, without_c)
    credit = binary_credit(log_odds, has_c[..., None], tie_rule)
    decision = np.sum(credit * truth_rows, axis=-1)
    # Each computed L underestimates the exact one by e ∈ [0, ω] (ω = omitted mass), so
    # the exact Δ = p L1 - (1 - p) L0 lies in [Δ - p0 ω, Δ + p1 ω]; outside that bracket
    # the sign is certain (a tie too, when ω = 0). Certain releases err by their e_T
    # (≤ ω in total); uncertain ones may change, costing at most their probability.
    w = omitted[..., None]
    difference = p1 * with_c - p0 * without_c
    certain = (difference - p0 * w > 0.0) | (difference + p1 * w < 0.0) | (w == 0.0)
    decision_bound = omitted + np.sum(np.where(certain, 0.0, truth_rows), axis=-1)
    return PostProcessedMarginals(
        marginal_posterior=posterior,
        marginal_risk=posterior / prior_of_truth,
        correct_decision_probability=decision,
        posterior_error_bound=omitted / prior_of_truth,
        risk_error_bound=omitted / prior_of_truth**2,
        decision_error_bound=decision_bound,
        omitted_mass=omitted,
    )


def marginals(
    prior, rho=None, *, true_count=None, tie_rule=DEFAULT_TIE_RULE, **setting
) -> PostProcessedMarginals:
    """Marginal posterior (S6.8), marginal risk and correct-decision probability, with bounds.

    Sums over every post-processed release ``x̃1 ∈ {0 … x̃2}`` with its
    probability under the truth from :func:`release_table`. The Bayes decision
    at ``x̃1`` is ``m + 1`` where ``p L1 > (1 - p) L0`` (:func:`decision`), a
    tie counted by ``tie_rule`` (:mod:`adversary.measures.decision`).
    Error bounds: the marginal posterior is within ``omitted_mass / p_T`` and
    the risk within ``omitted_mass / p_T²`` (module docstring). For the decision
    probability, the computed likelihoods each fall short of the exact ones by
    at most ``ω = omitted_mass``, so the exact ``Δ = p L1 - (1-p) L0`` lies in
    ``[Δ̂ - (1-p)ω, Δ̂ + pω]``; releases where that bracket holds 0 might be
    decided the other way, and the bound is ``ω`` plus their probability
    under the truth (in practice none: the bound is ``ω``; a tie with ``ω > 0``,
    e.g. at ``x̃2 = 0`` with ``p = 1/2``, is reported with a bound near its mass).
    Broadcasts ``prior``, ``rho`` and ``true_count``; ``setting`` is the keyword
    arguments of :func:`~adversary.scenarios.post_processing.releases.attack_setting`.
    """
    chosen = attack_setting(**setting)
    prior = as_probability(prior, "prior")
    truth = true_count_of(chosen.known, true_count)
    table = chosen.table(rho)
    check_tie_rule(tie_rule)
    return table_marginals(table, prior, truth, tie_rule)


marginal_posterior = one_measure(
    marginals,
    "marginal_posterior",
    "Posterior of the truth averaged over post-processed releases from the truth (S6.8)",
)
marginal_risk = one_measure(
    marginals, "marginal_risk", "Marginal disclosure risk with post-processing, (S6.8) over p_T"
)
correct_decision_probability = one_measure(
    marginals,
    "correct_decision_probability",
    "Probability that the Bayes decision from the post-processed release is right (3.6)",
)
