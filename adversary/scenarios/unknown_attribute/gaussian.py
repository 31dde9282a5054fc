"""The data holder's measures of the unknown-attribute attack under discrete Gaussian noise.

With ``a_k = 1/(2σ_k²)`` category k scores ``log π_k + a_k(2Z_k + 2·1[k = c] - 1)``
under the truth c (``log π_k`` if its cell is not released), the noises
``Z_k ~ DG(0, σ_k²)`` independent. See
:func:`~adversary.scenarios.unknown_attribute.marginals` for the methods and
their bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...measures.decision import credit_against_others, tie_tolerance
from ...noise import discrete_gaussian
from .sums import (
    UnknownAttributeMarginals,
    expit_average,
    logsumexp_distribution,
    posterior_by_method,
)

__all__ = ["gaussian_marginals"]

# Thresholds beyond ±this are saturated (probabilities 0 or 1) to stay integral.
_LIMIT = 2.0**61


@dataclass(frozen=True)
class _Noise:
    """One released cell's truncated noise: values ``z``, masses, cut-off, omitted mass."""

    z: np.ndarray
    masses: np.ndarray
    cutoff: int
    omitted: float


def _noise(sigma2: float, tail_mass: float, copies: int) -> _Noise:
    table = discrete_gaussian.table(sigma2, tail_mass, copies)
    return _Noise(table.support, table.probabilities, -table.start, table.omitted_mass)


def _truth_scores(log_prior, a, noises, c):
    """Per category: the score values ``log π_k + a_k(2z + 2·1[k=c] - 1)`` and their masses.

    A cell not released has one value, ``log π_k``, with mass 1.
    """
    out = []
    for k, (lp, noise) in enumerate(zip(log_prior, noises, strict=True)):
        if noise is None:
            out.append((np.array([lp]), np.ones(1)))
        else:
            shift = 1.0 if k == c else -1.0
            out.append((lp + a[k] * (2.0 * noise.z + shift), noise.masses))
    return out


def _gridded_posterior(terms, c, grid_width):
    """``E[expit(log π_c + s_c - L)]`` with L from :func:`logsumexp_distribution`."""
    others = [term for k, term in enumerate(terms) if k != c]
    l_values, l_masses, spread, h = logsumexp_distribution(others, grid_width)
    average, pair_spread = expit_average(*terms[c], l_values, l_masses)
    return average, spread + pair_spread, h


def _at_most(t, log_prior_k, a_k, sigma2_k, strict: bool):
    """``P[log π_k + a_k(2Z_k - 1) < t]`` (strict) or ``≤ t``, for ``Z_k ~ DG(0, σ_k²)``.

    The score is ``≤ t`` iff ``Z_k ≤ floor((t - log π_k + a_k)/(2a_k))``.
    """
    position = (t - log_prior_k + a_k) / (2.0 * a_k)
    top = np.ceil(position) - 1.0 if strict else np.floor(position)
    top = np.clip(top, -_LIMIT, _LIMIT)
    return discrete_gaussian.cdf(top.astype(np.int64), sigma2_k)


def _decision_probability(log_prior, a, noises, c, tolerance, tie_rule):
    """(3.6) for the truth c: a one-dimensional sum over ``Z_c`` (the truth's score ``v``).

    Given v, each other category k independently scores below ``v - tol``,
    within ``tol`` of v (tied) or above; both probabilities are exact discrete
    Gaussian cdfs (a constant for a cell not released), and
    :func:`~adversary.measures.decision.credit_against_others` counts the ties
    by ``tie_rule``.
    """
    if noises[c] is None:
        c_values, c_masses = np.array([log_prior[c]]), np.ones(1)
    else:
        c_values = log_prior[c] + a[c] * (2.0 * noises[c].z + 1.0)
        c_masses = noises[c].masses

    def below_and_tied(k, v):
        low, high = v - tolerance, v + tolerance
        if noises[k] is None:
            return log_prior[k] < low, (log_prior[k] >= low) & (log_prior[k] <= high)
        sigma2_k = 1.0 / (2.0 * a[k])
        below = _at_most(low, log_prior[k], a[k], sigma2_k, strict=True)
        return below, _at_most(high, log_prior[k], a[k], sigma2_k, False) - below

    return credit_against_others(c_values, c_masses, c, len(log_prior), below_and_tied, tie_rule)


def gaussian_marginals(
    prior, c, mask, sigma2, tail_mass, grid_width, method, tie_rule
) -> UnknownAttributeMarginals:
    """:func:`~adversary.scenarios.unknown_attribute.marginals` for discrete Gaussian noise."""
    n_categories = prior.size
    sigma2 = np.broadcast_to(sigma2, (n_categories,))
    n_released = int(mask.sum())
    noises = [
        # each released cell's table and its scores are held together
        _noise(float(s2), tail_mass / n_released, 2 * n_released) if on else None
        for s2, on in zip(sigma2, mask, strict=True)
    ]
    a = 1.0 / (2.0 * sigma2)
    log_prior = np.log(prior)
    terms = _truth_scores(log_prior, a, noises, c)
    omitted = sum(noise.omitted for noise in noises if noise is not None)
    reach = float(np.max(np.abs(log_prior))) + max(
        float(a[k] * (2.0 * noises[k].cutoff + 1.0)) for k in range(n_categories) if mask[k]
    )
    sums = posterior_by_method(terms, c, method, grid_width, _gridded_posterior)
    tolerance = float(tie_tolerance(2.0 * reach))
    correct = _decision_probability(log_prior, a, noises, c, tolerance, tie_rule)
    decision_bound = 0.0 if noises[c] is None else noises[c].omitted
    cutoffs = [noise.cutoff for noise in noises if noise is not None]
    return UnknownAttributeMarginals.from_sums(
        prior[c], sums, omitted, correct, decision_bound, cutoffs, tie_rule
    )
