"""The adversary's posterior (S1.1) from ℓ releases: log likelihood ratios, posterior, decision."""

from __future__ import annotations

from inspect import signature

import numpy as np
from scipy import special

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, decide, tie_tolerance
from ...measures.noise import impossible_release_error, log_ratio
from .inputs import checked_known_counts, checked_releases, level_count, level_noise, truth_has_c

__all__ = ["decision", "log_likelihood_ratio", "posterior", "risk"]


def _per_level_ratios(releases, known, mechanisms) -> np.ndarray:
    """``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)`` per level (levels last).

    Raises where a release is impossible under both values of T, at one level
    or across levels (one certain of T = 1, another of T = 0).
    """
    noise = releases - known
    shape = np.broadcast_shapes(releases.shape, known.shape)
    noise = np.broadcast_to(noise, shape)
    columns = [
        log_ratio(m.logpmf(noise[..., i] - 1), m.logpmf(noise[..., i]))
        for i, m in enumerate(mechanisms)
    ]
    per_level = np.stack(columns, axis=-1)
    both_certain = np.any(per_level == np.inf, axis=-1) & np.any(per_level == -np.inf, axis=-1)
    impossible = np.any(np.isnan(per_level), axis=-1) | both_certain
    if np.any(impossible):
        bad = np.broadcast_to(releases, shape)[impossible]
        raise impossible_release_error("releases", bad.tolist(), mechanisms)
    return per_level


def _level_ratios(releases, rhos, known_counts, convention, mechanism):
    """Per-level log likelihood ratios (levels last) and the validated known counts."""
    sigma2, mechanisms, n_levels = level_noise(rhos, convention, mechanism, level_count(releases))
    releases = checked_releases(releases, n_levels)
    known = checked_known_counts(known_counts, n_levels)
    if mechanisms is None:
        per_level = (2.0 * (releases - known).astype(np.float64) - 1.0) / (2.0 * sigma2)
    else:
        per_level = _per_level_ratios(releases, known, mechanisms)
    return per_level, known


def log_likelihood_ratio(
    releases, rhos=None, known_counts=None, convention="paper", *, mechanism=None
) -> np.ndarray:
    """``Σ_i (2(x_i* - m_i) - 1)/(2σ_i²)``: log P[releases | T=1] - log P[releases | T=0].

    The sum over the last (levels) axis of the single-block ratio of each
    level; for the paper's convention ``1/(2σ_i²) = ρ_i``. With ``mechanism``:
    the sum of ``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)``.
    """
    per_level, _ = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    return per_level.sum(axis=-1)


def _log_odds_of_truth(releases, prior, rhos, known_counts, true_count, convention, mechanism):
    """The posterior log odds of the truth given the releases, and its prior."""
    prior = as_probability(prior, "prior")
    per_level, known = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    has_c = truth_has_c(known[..., 0], true_count)
    log_odds_c = special.logit(prior) + per_level.sum(axis=-1)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    return np.where(has_c, log_odds_c, -log_odds_c), prior_of_truth


def posterior(
    releases,
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    *,
    mechanism=None,
) -> np.ndarray:
    """Posterior probability of the truth given the ℓ releases, equation (S1.1).

    ``p Π_i e^{-ρ_i(x_i*-m_i-1)²} / (p Π_i e^{-ρ_i(x_i*-m_i-1)²} + (1-p) Π_i e^{-ρ_i(x_i*-m_i)²})``
    for the default truth (paper convention), computed as the logistic
    function of the posterior log odds. ``releases``, ``rhos`` and
    ``known_counts`` have the levels on their last axis; the result has the
    broadcast shape of the other axes and ``prior``.
    """
    log_odds, _ = _log_odds_of_truth(
        releases, prior, rhos, known_counts, true_count, convention, mechanism
    )
    return special.expit(log_odds)


_POSTERIOR_SIGNATURE = signature(posterior)


def risk(*args, **kwargs) -> np.ndarray:
    """Disclosure risk: the posterior (S1.1) of the truth over its prior, as (3.2).

    Arguments as :func:`posterior`.
    """
    arguments = _POSTERIOR_SIGNATURE.bind(*args, **kwargs)
    arguments.apply_defaults()
    log_odds, prior_of_truth = _log_odds_of_truth(**arguments.arguments)
    return special.expit(log_odds) / prior_of_truth


def decision(
    releases,
    prior,
    rhos=None,
    known_counts=None,
    convention="paper",
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
    rng=None,
) -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss, as (3.5), from all ℓ releases.

    ``m_1 + 1`` where its posterior (S1.1) is above 1/2, ``m_1`` where below.
    A tie — log odds within :func:`~adversary.measures.decision.tie_tolerance`
    of 0 for the size of their terms: it happens whenever the ρ_i are
    commensurate (equal, say) and the float sum need not be exactly 0 — goes by
    ``tie_rule`` (:mod:`adversary.measures.decision`): to ``m_1 + 1``
    (``"largest"``, the paper's rule), to ``m_1`` (``"smallest"``), or drawn with
    ``rng`` (``"split"``, which then needs it).
    """
    prior = as_probability(prior, "prior")
    per_level, known = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    logit = special.logit(prior)
    log_odds = logit + per_level.sum(axis=-1)
    finite = np.where(np.isfinite(per_level), np.abs(per_level), 0.0)
    tolerance = tie_tolerance(np.abs(logit) + finite.sum(axis=-1))
    scores = np.stack(np.broadcast_arrays(np.zeros_like(log_odds), log_odds), axis=-1)
    return known[..., 0] + decide(np.array([0, 1]), scores, tie_rule, rng=rng, tolerance=tolerance)
