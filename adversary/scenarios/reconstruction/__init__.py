"""Bayesian reconstruction of a block's records from all its noisy tables.

In 2018 the Census Bureau rebuilt 2010 block-level microdata from the
published tables (JASON 2022, Sec. 4.2); Dick et al. (2023) rank rebuilt
records by confidence; Ruggles & Van Riper (2021) answer that chance explains
much of such match rates. The Bayesian adversary settles both with one number
per block: how much the posterior over the block's histogram, given every
noisy table, beats the prior alone.

- :class:`ReconstructionCase` — the block: ``n`` persons, the ``cells`` of a
  cross-classification, the adversary's ``prior`` over them (multinomial, or
  Dirichlet-multinomial with ``concentration``), the released ``queries``
  (each a sum of cells) with their ρ and noise, the ``releases`` and the
  ``truth``; its PyMC model has the block's histogram as latent
  (:meth:`ReconstructionCase.model`).
- :func:`exact_posterior` (every histogram, for small blocks) and
  :func:`sampled_posterior` (MCMC: each person's cell drawn from its exact
  full conditional, all cells scored in one call).
- :func:`posterior_measures`, :func:`prior_measures` — ``p_true_histogram``,
  ``expected_overlap``, ``map_histogram`` / ``map_exact`` and the
  confidence-ranked ``match_rate``, for the posterior and for the prior
  alone (the chance baseline); :func:`reconstruct` gives both;
  :func:`holder_measures` the data holder's versions, averaged over releases
  drawn from the truth.
- :mod:`.classification` — the reduced (56-cell) and detailed (2 016-cell)
  cross-classifications and the 2020 PL 94-171 queries on them;
  :func:`pl94_block` a block released as those tables, its truth and
  releases drawn from the model (:func:`simulated`).
"""

from ..._lazy import lazy_names

_LAZY = {
    "Classification": ".classification",
    "DETAILED": ".classification",
    "HistogramPosterior": ".posterior",
    "PL94_QUERIES": ".classification",
    "REDUCED": ".classification",
    "ReconstructionCase": ".case",
    "ReconstructionMeasures": ".measures",
    "enumerable": ".run",
    "exact_posterior": ".posterior",
    "holder_measures": ".data_holder",
    "pl94_block": ".simulate",
    "pl94_queries": ".classification",
    "posterior_measures": ".measures",
    "prior_measures": ".measures",
    "prior_posterior": ".posterior",
    "reconstruct": ".run",
    "sampled_posterior": ".posterior",
    "simulated": ".simulate",
}

__all__ = sorted(_LAZY)

# Names are imported on first use: a case (or the classifications) alone loads neither
# the numba kernels of the posteriors nor SciPy's statistics of the measures.
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
