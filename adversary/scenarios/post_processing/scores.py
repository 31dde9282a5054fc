"""The adversary's posterior (S6.7) of the block count from the post-processed release; decision."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._validation import as_counts, as_probability
from ...measures.decision import DEFAULT_TIE_RULE, TIE_TOLERANCE, decide
from ...measures.marginal import over_prior_of_truth
from ...measures.noise import log_ratio, resolve
from .releases import AttackSetting, attack_setting, released_value

__all__ = ["decision", "posterior", "risk"]


def true_count_of(known: int, true_count) -> np.ndarray:
    """The truth ``x1``: ``m + 1`` by default, else ``m`` or ``m + 1``."""
    if true_count is None:
        return np.asarray(known + 1)
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known) & (truth != known + 1)):
        raise ValueError(
            f"true_count must equal known_count or known_count + 1, got true_count={true_count!r}"
            f" with known_count={known}"
        )
    return truth


def posterior_of_truth(prior_of_truth, log_truth, log_other):
    """``p_T L_T / (p_T L_T + (1 - p_T) L_O)`` from log likelihoods, element-wise.

    Where ``L_O = 0`` (beyond the tables) and ``L_T > 0`` the value is 1; where
    ``L_T = 0`` it is 0 (those releases carry no probability under the truth).
    """
    both = np.isfinite(log_truth) & np.isfinite(log_other)
    difference = np.where(both, log_truth, 0.0) - np.where(both, log_other, 0.0)
    value = special.expit(special.logit(prior_of_truth) + difference)
    return np.where(both, value, np.where(np.isfinite(log_truth), 1.0, 0.0))


def _likelihoods(chosen: AttackSetting, x1_tilde, prior, rho):
    """The checked release and prior, and the release's likelihoods ``L1``, ``L0`` (S6.5)."""
    x1_tilde = released_value(x1_tilde, chosen.x2_tilde)
    prior = as_probability(prior, "prior")
    table = chosen.table(rho)
    known = np.int64(chosen.known)
    return x1_tilde, prior, table.likelihood(x1_tilde, known + 1), table.likelihood(x1_tilde, known)


def posterior(x1_tilde, prior, rho=None, *, true_count=None, **setting) -> np.ndarray:
    """Posterior probability of the truth given the post-processed release, equation (S6.7).

    With the default truth ``x1 = m + 1``:
    ``P[X1 = m+1 | x̃1, x̃2] = L1 p / (L1 p + L0 (1 - p))``, ``Lk = P[X̃1 = x̃1 | X1 = k, x̃2]``
    from :func:`release_table`; ``setting`` is the keyword arguments of
    :func:`~adversary.scenarios.post_processing.releases.attack_setting`. Broadcasts
    ``x1_tilde``, ``prior``, ``rho`` and ``true_count``. Raises ``ValueError`` if
    the release lies beyond the noise tables under either value of ``X1``
    (probability below ``omitted_mass``): pass a smaller ``tail_mass``.
    """
    chosen = attack_setting(**setting)
    known = chosen.known
    x1_tilde, prior, with_c, without_c = _likelihoods(chosen, x1_tilde, prior, rho)
    truth = true_count_of(known, true_count)
    mech = resolve(rho, chosen.convention, chosen.mechanism)[1]
    if mech is not None and mech.bounded:  # exact tables: a zero is a real zero
        if np.any((with_c == 0) & (without_c == 0)):
            raise ValueError(
                f"x1_tilde: a release in {x1_tilde!r} is impossible under both X1 = {known} "
                f"and {known + 1} with {mech.label} noise"
            )
    elif np.any((with_c == 0) | (without_c == 0)):
        raise ValueError(
            f"x1_tilde: a release in {x1_tilde!r} has probability below the noise tables' "
            f"omitted mass under X1 = {known} or {known + 1}; its posterior needs a smaller "
            f"tail_mass than {chosen.tail_mass}"
        )
    has_c = truth == known + 1
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    with np.errstate(divide="ignore"):
        log_with, log_without = np.log(with_c), np.log(without_c)
    log_truth = np.where(has_c, log_with, log_without)
    log_other = np.where(has_c, log_without, log_with)
    return posterior_of_truth(prior_of_truth, log_truth, log_other)


risk = over_prior_of_truth(
    posterior, "Disclosure risk of a post-processed release: (S6.7) over its prior, as (3.2)"
)


def decision(
    x1_tilde, prior, rho=None, *, tie_rule=DEFAULT_TIE_RULE, rng=None, **setting
) -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss from ``x̃1``, as (3.5) with (S6.7).

    ``m + 1`` where ``p L1 > (1 - p) L0`` (its posterior is above 1/2), ``m``
    where below, with ``Lk = P[X̃1 = x̃1 | X1 = k, x̃2]``. A tie (equal within
    :func:`~adversary.measures.decision.tie_tolerance` on the log scale:
    common where clipping makes both likelihoods the same) goes by
    ``tie_rule`` (:mod:`adversary.measures.decision`): to ``m + 1``
    (``"largest"``), ``m`` (``"smallest"``), or drawn with ``rng`` (``"split"``,
    which then needs it). Broadcasts ``x1_tilde``, ``prior`` and ``rho``;
    ``setting`` as :func:`posterior`.
    """
    chosen = attack_setting(**setting)
    _, prior, with_c, without_c = _likelihoods(chosen, x1_tilde, prior, rho)
    log_odds = decision_log_odds(prior, with_c, without_c)
    scores = np.stack(np.broadcast_arrays(np.zeros_like(log_odds), log_odds), axis=-1)
    step = decide(np.array([0, 1]), scores, tie_rule, rng=rng, tolerance=TIE_TOLERANCE)
    return chosen.known + step


def decision_log_odds(prior, with_c, without_c) -> np.ndarray:
    """``log(p L1) - log((1 - p) L0)``: ``+inf`` where only ``m + 1`` gives the release, ``-inf``
    where only ``m`` does, 0 where neither does (no probability under either: a tie)."""
    with np.errstate(divide="ignore"):
        up, down = np.log(prior * with_c), np.log((1.0 - prior) * without_c)
    both_impossible = np.isneginf(up) & np.isneginf(down)
    return np.where(both_impossible, 0.0, log_ratio(up, down))
