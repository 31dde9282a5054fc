"""The ``posterior`` group of an exact result: the exact joint's quantiles as draws.

ArviZ 1.3 summarises equally weighted draws over ``(chain, draw)`` and takes
no weights: ``az.summary`` computes ``mean`` and ``sd`` (``ddof=1``), the
credible interval, ``ess``, ``r_hat`` and ``mcse`` from the ``posterior``
group's draws (:func:`arviz_stats.summary`), and ``az.plot_dist`` draws a
density histogram of integer draws. An exact pmf therefore reaches them as
a deterministic sample: the ``N = chains × draws`` quantiles ``(j + ½)/N``,
``j = 0 … N-1``, of the exact joint (cells in table order), so that

- every cell gets ``⌊N p⌋`` or ``⌈N p⌉`` draws (its count is within 1 of
  ``N p``), and a table of probabilities that are multiples of ``1/N`` is
  reproduced exactly;
- for the table's first latent the draws' cdf is the exact cdf ``F`` rounded
  to a multiple of ``1/N`` (within ``1/(2N)`` at every value), so the draws'
  mean is within ``Σ_x min(1/(2N), F(x), 1 - F(x))`` of the exact mean.

The draws are then put in a fixed pseudo-random order (the permutation of
``numpy.random.default_rng(0)``), so the chains look like independent draws
to ArviZ: ``az.ess`` reports about ``N`` and ``r_hat`` about 1, and the MCSE
``az.summary`` prints beside a mean (about ``sd/√N``) is an upper bound on
the draws' distance from the exact mean, which is of order ``1/N``. The exact
distances of the means and standard deviations ``az.summary`` computes from
these draws are returned with them (:func:`representative_draws`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..memory import check_memory

__all__ = ["check_shape", "element_shape", "representative_draws"]

#: The seed of the fixed order the quantile draws are put in.
ORDER_SEED = 0


def element_shape(labels, dims) -> tuple[int, ...]:
    """The shape of a latent from its element labels ``name[i,j]`` (``()`` for a scalar)."""
    if not dims:
        return ()
    indices = np.array([[int(i) for i in lb.split("[", 1)[1][:-1].split(",")] for lb in labels])
    return tuple(int(k) for k in indices.max(axis=0) + 1)


def check_shape(draws, chains) -> int:
    """Refuse a bad ``draws`` (at least 2) or ``chains`` (at least 1); the number of draws."""
    for value, name, least in ((draws, "draws", 2), (chains, "chains", 1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(draws) * int(chains)


def representative_draws(
    joint: xr.DataArray, marginals: dict, latents: dict, draws: int, chains: int
) -> tuple[xr.Dataset, float, float]:
    """The exact joint's ``chains × draws`` quantiles as a ``posterior`` group, and their errors.

    Parameters
    ----------
    joint : xarray.DataArray
        Posterior probabilities, one dimension per latent scalar (integer
        coordinates: its values); sums to 1.
    marginals : dict
        ``label -> `` its marginal pmf (a DataArray over its values), for every
        dimension of ``joint``.
    latents : dict
        ``name -> (element labels, dims)``; a latent appears when every
        element of it is a dimension of ``joint``.
    draws, chains : int
        The draws per chain and the number of chains.

    Returns
    -------
    (xarray.Dataset, float, float)
        The draws (int64, dims ``chain``, ``draw`` and the latent's own), and
        the largest distance, over the latent scalars, of the draws' mean and
        of their standard deviation (``ddof=1``, as ArviZ's) from the exact ones.
    """
    n = check_shape(draws, chains)
    check_memory(
        8.0 * joint.size + 8.0 * n * (joint.ndim + 3),
        f"draws: {chains} chains × {draws} draws of a {joint.size}-cell exact posterior",
    )
    flat = np.asarray(joint.values, dtype=np.float64).reshape(-1)
    cdf = np.cumsum(flat)
    quantiles = (np.arange(n) + 0.5) / n * cdf[-1]
    cells = np.minimum(np.searchsorted(cdf, quantiles, side="right"), flat.size - 1)
    del cdf, quantiles
    cells = cells[np.random.default_rng(ORDER_SEED).permutation(n)]
    index = np.unravel_index(cells, joint.shape)
    values = {
        label: np.asarray(joint[label].values, dtype=np.int64)[i]
        for label, i in zip(joint.dims, index, strict=True)
    }
    mean_error = sd_error = 0.0
    for label in values:
        pmf = np.asarray(marginals[label].values, dtype=np.float64)
        support = marginals[label][label].values.astype(np.float64)
        mean = float(pmf @ support) / float(pmf.sum())
        sd = float(np.sqrt(max(float(pmf @ (support - mean) ** 2) / float(pmf.sum()), 0.0)))
        drawn = values[label].astype(np.float64)
        mean_error = max(mean_error, abs(float(drawn.mean()) - mean))
        sd_error = max(sd_error, abs(float(drawn.std(ddof=1)) - sd))
    arrays = {}
    for name, (labels, dims) in latents.items():
        if not all(label in values for label in labels):
            continue
        stacked = np.stack([values[label] for label in labels], axis=-1)
        arrays[name] = (
            ("chain", "draw", *dims),
            stacked.reshape(chains, draws, *element_shape(labels, dims)),
        )
    coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    return xr.Dataset(arrays, coords=coords), mean_error, sd_error
