"""What Kazan & Reiter's block-group Gibbs sampler appears to compute, to explain their numbers.

The paper's sampler alternates (S3.9), a draw of ``X1`` given ``X2``, and
(S3.14), a draw of ``X2 ≥ X1`` given ``X1``. Tables 7–8 and the 59% decision
probabilities of Sec. 4.3 and S4 are reproduced, within their Monte Carlo
error, by a sampler whose ``X1`` update draws from both values
``{m, m+1}`` whatever ``X2`` is — ignoring ``k1 ≤ k2`` — while its ``X2``
update keeps ``k2 ≥ k1``. That pair of conditionals belongs to no joint
distribution; the chain's stationary law still exists and is computed here
exactly, from the two-state chain of ``X1``:

    P[X1 = m+1] = a / (a + b),  a = P[m → m+1],  b = P[m+1 → m],
    P[k1 → k1'] = Σ_{k2 ≥ k1} P[k2 | k1, r] P[k1' | k2, r]   (unconstrained in k1').

Use :mod:`.exact_posterior` and :mod:`.releases` for the posterior of
the model; this module exists so that the documentation's comparisons with
the paper are computations, not assertions.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .noise_laws import BlockGroupNoise
from .prior import BlockGroupPrior

__all__ = ["stationary_x1_probability"]


def stationary_x1_probability(
    x1_release,
    x2_release,
    y1_release,
    *,
    prior: float,
    noise: BlockGroupNoise,
    x2_prior: BlockGroupPrior,
    known: int = 0,
    x2_max: int = 200,
) -> np.ndarray:
    """Stationary ``P[X1 = m+1]`` of the incompatible sampler, broadcast over releases.

    ``x2_max`` bounds the ``X2`` values summed over; choose it well above the
    releases (its conditional decays like a discrete Gaussian).
    """
    x1r, x2r, y1r = (np.asarray(v)[..., None] for v in (x1_release, x2_release, y1_release))
    k2 = np.arange(known, x2_max + 1)

    def x2_given(k1):  # (S3.14) on {k1, k1 + 1, ...}
        log_w = (
            noise.logpmf_group(x2r - k2)
            + noise.logpmf_others(y1r - (k2 - k1))
            + x2_prior.log_prior(k2, k1)
        )
        return np.exp(log_w - special.logsumexp(log_w, axis=-1, keepdims=True))

    # (S3.9) without k1 ≤ k2: probability of m+1 given each k2.
    log_odds = (
        special.logit(prior)
        + noise.logpmf_block(x1r - known - 1)
        - noise.logpmf_block(x1r - known)
        + noise.logpmf_others(y1r - (k2 - known - 1))
        - noise.logpmf_others(y1r - (k2 - known))
    )
    up = special.expit(log_odds)
    a = np.sum(x2_given(known) * up, axis=-1)
    b = np.sum(x2_given(known + 1) * (1.0 - up), axis=-1)
    return a / (a + b)
