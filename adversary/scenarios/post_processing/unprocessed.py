"""The S6 adversary seeing the noisy counts ``(x1*, y1*)`` that ``x̃1`` is computed from.

The bound that holds: ``x̃1`` is a function of ``(x1*, y1*)``, so its marginal
posterior (S6.8) cannot exceed this one (module docstring of
:mod:`adversary.scenarios.post_processing`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._validation import as_probability
from ...measures.marginal import over_prior_of_truth
from ...measures.releases import DEFAULT_TAIL_MASS
from .release_noise import combined_noise, mechanism_tables, noise_tables, release_noise
from .releases import attack_setting
from .scores import posterior_of_truth, true_count_of

__all__ = ["unprocessed_marginal_posterior", "unprocessed_marginal_risk"]


def _unprocessed_for_sigma2(sigma2, prior_of_truth, delta, d, exact_sum, tail_mass):
    """``E_T[P[X1 = x1 | x1*, y1*]]`` for one σ², a 1-d array of priors of the truth.

    ``delta = x1 - (other value)`` is ``+1`` (truth ``m + 1``) or ``-1``. With
    ``x1* = x1 + z`` and ``y1* = x2 - x1 + w`` the log likelihood ratio of the
    truth is ``log pZ(z) - log pZ(z + δ) + log pW(w) - log pW(w - δ)``; under (3.7)
    it is ``(2 δ v + d + 1)/(2 d σ²)`` with ``v = d z - w``, a function of ``v``
    alone (``d x1* - y1*`` is sufficient), so one sum over ``V`` suffices.
    """
    if not exact_sum:
        noise = combined_noise(d, sigma2, False, tail_mass)
        log_ratio = (2.0 * delta * noise.support + (d + 1)) / (2.0 * d * sigma2)
        values = special.expit(special.logit(prior_of_truth)[:, None] + log_ratio[None, :])
        return values @ noise.probabilities
    z, w = noise_tables(d, sigma2, True, tail_mass)
    log_truth = z.logpmf(z.support)[:, None] + w.logpmf(w.support)[None, :]
    log_other = z.logpmf(z.support + delta)[:, None] + w.logpmf(w.support - delta)[None, :]
    weights = np.exp(log_truth)
    return np.array(
        [
            np.sum(weights * posterior_of_truth(value, log_truth, log_other))
            for value in prior_of_truth
        ]
    )


def _unprocessed_for_mechanism(mechanism, prior_of_truth, delta, d, tail_mass):
    """:func:`_unprocessed_for_sigma2` for any noise: ``Z1`` from the mechanism, ``W`` its
    exact d-fold sum (tabulated), summed over both tables."""
    z, w = mechanism_tables(d, mechanism, tail_mass)
    zs, ws = z.support, w.support
    with np.errstate(divide="ignore"):
        log_truth = mechanism.logpmf(zs)[:, None] + w.logpmf(ws)[None, :]
        log_other = mechanism.logpmf(zs + delta)[:, None] + w.logpmf(ws - delta)[None, :]
    weights = z.probabilities[:, None] * w.probabilities[None, :]
    return np.array(
        [
            np.sum(weights * posterior_of_truth(value, log_truth, log_other))
            for value in prior_of_truth
        ]
    )


def unprocessed_marginal_posterior(
    prior,
    rho=None,
    *,
    d,
    x2,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Marginal posterior of the truth for the S6 adversary seeing ``x1*`` and ``y1*``.

    The counterpart of (S6.8) without post-processing: same prior, same known
    ``x2``, same noise model (``exact_sum``), but the adversary observes the
    noisy counts ``(x1*, y1*)`` that ``x̃1 = f(x1*, y1*, x̃2)`` is computed from;
    averaged over ``(x1*, y1*)`` drawn from the truth. By the data-processing
    argument of the module docstring, (S6.8) never exceeds it (up to the
    truncation bounds). It does not depend on ``x2`` or ``m`` beyond their
    validation. Broadcasts ``prior``, ``rho`` and ``true_count``.
    """
    chosen = attack_setting(d=d, x2=x2, x2_tilde=0, known_count=known_count)
    d, known = chosen.d, chosen.known
    prior = as_probability(prior, "prior")
    truth = true_count_of(known, true_count)
    sigma2, mech, exact_sum = release_noise(rho, convention, mechanism, exact_sum)
    if mech is not None:
        prior, truth = np.broadcast_arrays(prior, truth)
        has_c = truth == known + 1
        prior_of_truth = np.where(has_c, prior, 1.0 - prior)
        out = np.empty(prior.shape)
        for flag in (True, False):
            at = has_c == flag
            if np.any(at):
                out[at] = _unprocessed_for_mechanism(
                    mech, prior_of_truth[at], 1 if flag else -1, d, tail_mass
                )
        return out
    sigma2 = np.asarray(sigma2)
    prior, sigma2, truth = np.broadcast_arrays(prior, sigma2, truth)
    has_c = truth == known + 1
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    out = np.empty(prior.shape)
    for value in np.unique(sigma2):
        for flag in (True, False):
            at = (sigma2 == value) & (has_c == flag)
            if np.any(at):
                out[at] = _unprocessed_for_sigma2(
                    float(value), prior_of_truth[at], 1 if flag else -1, d, exact_sum, tail_mass
                )
    return out


unprocessed_marginal_risk = over_prior_of_truth(
    unprocessed_marginal_posterior,
    "The marginal risk without post-processing; an upper bound on :func:`marginal_risk`",
)
