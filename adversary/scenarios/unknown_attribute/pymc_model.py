"""The unknown-attribute attack as a PyMC model, whose exact posterior is (3.1)'s analogue."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ...distributions import DiscreteGaussian, FinitePmf, NoiseRelease
from .inputs import (
    category_names,
    cell_noise,
    checked_known,
    checked_prior,
    checked_releases,
    released_mask,
)

__all__ = ["model"]


def model(
    releases,
    prior,
    rho,
    known_counts,
    convention="paper",
    released=None,
    categories=None,
    *,
    mechanism=None,
):
    """The attack as a PyMC model; its exact posterior is :func:`.scores.posterior`.

    Latent ``C ~ FinitePmf({0, …, K-1}, π)`` (the target's category, by
    index), the counts ``m + e_C`` as a Deterministic ``counts`` over the
    ``category`` dimension, and the released cells' counts observed as
    ``DiscreteGaussian(mu = counts, σ_k²)`` over the ``cell`` dimension.
    ``releases`` is one observation: a 1-d sequence, one noisy count per
    released cell. ``categories`` optionally names the categories
    (coordinates; default ``"0"``, ``"1"``, …). With ``mechanism`` (not all
    discrete Gaussian) the released cells are a
    :func:`~adversary.distributions.NoiseRelease` with each cell's mechanism.
    """
    prior = checked_prior(prior, one=True)
    n_categories = prior.size
    mask = released_mask(released, n_categories)
    known = checked_known(known_counts, n_categories)
    if known.ndim != 1:
        raise ValueError(f"known_counts must be 1-d, one count per category, got {known.shape}")
    releases = checked_releases(releases, int(mask.sum()))
    if releases.ndim != 1:
        raise ValueError(f"releases must be 1-d, one noisy count per released cell, got {releases}")
    sigma2, mechanisms = cell_noise(rho, n_categories, convention, mechanism)
    names = category_names(categories, n_categories)
    cells = np.flatnonzero(mask)
    coords = {"category": list(names), "cell": [names[k] for k in cells]}
    with pm.Model(coords=coords) as attack:
        category = FinitePmf("C", support=list(range(n_categories)), probs=prior)
        in_cell = pt.cast(pt.eq(pt.arange(n_categories), category), "int64")
        counts = pm.Deterministic("counts", pt.as_tensor_variable(known) + in_cell, dims="category")
        if mechanisms is None:
            sigma2 = np.broadcast_to(sigma2, (n_categories,))
            DiscreteGaussian(
                "releases",
                mu=counts[cells],
                sigma2=np.asarray(sigma2[cells], dtype=np.float64),
                observed=releases,
                dims="cell",
            )
        else:
            NoiseRelease(
                "releases",
                mu=counts[cells],
                mechanism=[mechanisms[k] for k in cells],
                observed=releases,
                dims="cell",
            )
    return attack
