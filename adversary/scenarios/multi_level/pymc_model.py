"""The ℓ-level attack as a PyMC model, whose exact posterior is (S1.1)."""

from __future__ import annotations

import numpy as np
import pymc as pm

from ..._validation import as_probability
from ...distributions import BernoulliCount, DiscreteGaussian, NoiseRelease
from .inputs import checked_known_counts, checked_releases, level_count, level_noise

__all__ = ["model"]


def model(releases, prior, rhos=None, known_counts=None, convention="paper", *, mechanism=None):
    """The ℓ-level attack as a PyMC model; its exact posterior is (S1.1).

    Latent ``X1 ~ BernoulliCount(m_1, p)`` (``X1 = m_1 + T``); the level-i
    count is ``m_i + (X1 - m_1)`` and the releases are observed as
    ``DiscreteGaussian(mu = counts, σ_i²)`` over a ``level`` dimension
    (coordinates 1..ℓ). ``releases`` is one observation: a 1-d sequence, one
    noisy count per level. With ``mechanism`` (not all discrete Gaussian) the
    releases are a :func:`~adversary.distributions.NoiseRelease` with each
    level's mechanism.
    """
    prior = as_probability(prior, "prior")
    if prior.ndim != 0:
        raise ValueError(f"prior must be one probability for a model, got {prior!r}")
    sigma2, mechanisms, n_levels = level_noise(rhos, convention, mechanism, level_count(releases))
    if sigma2 is not None and sigma2.ndim != 1:
        raise ValueError(f"rhos must be a 1-d sequence of per-level ρ, got shape {sigma2.shape}")
    releases = checked_releases(releases, n_levels)
    if releases.ndim != 1:
        raise ValueError(f"releases must be 1-d, one noisy count per level, got {releases.shape}")
    known = checked_known_counts(known_counts, n_levels)
    if known.ndim != 1:
        raise ValueError(f"known_counts must be 1-d, one count per level, got {known.shape}")
    with pm.Model(coords={"level": np.arange(1, n_levels + 1)}) as attack:
        x1 = BernoulliCount("X1", known=int(known[0]), p=float(prior))
        counts = known + (x1 - int(known[0]))
        if mechanisms is None:
            DiscreteGaussian("releases", mu=counts, sigma2=sigma2, observed=releases, dims="level")
        else:
            NoiseRelease(
                "releases", mu=counts, mechanism=mechanisms, observed=releases, dims="level"
            )
    return attack
