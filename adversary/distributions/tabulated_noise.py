"""A release whose noise has a tabulated pmf: ``X* = mu + Z``, ``Z ~`` a :class:`FinitePmf`.

The block-group attack's ``y1*`` carries the sum of d discrete Gaussian noises;
its exact pmf (:func:`adversary.noise.sums.sum_of_discrete_gaussians`) is a
table, not a formula. :func:`TabulatedNoise` declares such a release in a PyMC
model with an exact log-p (``-inf`` off the table) and exact random draws.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..noise.finite_pmf import FinitePmf
from ._params import checked_observed

__all__ = ["TabulatedNoise", "shifted_noise"]


def TabulatedNoise(name: str, mu, table: FinitePmf, **kwargs):
    """``name = mu + Z`` with ``P[Z = z] = table.pmf(z)``; ``mu`` an integer tensor or number."""
    if not isinstance(table, FinitePmf):
        raise TypeError(f"table must be a FinitePmf, got {table!r}")
    start, size = table.start, table.probabilities.size
    probabilities = table.probabilities / table.probabilities.sum()
    with np.errstate(divide="ignore"):
        log_probabilities = pt.as_tensor_variable(np.log(probabilities))

    def logp(value, mu):
        index = pt.cast(value - mu - start, "int64")
        inside = pt.and_(pt.ge(index, 0), pt.lt(index, size))
        return pt.switch(inside, log_probabilities[pt.clip(index, 0, size - 1)], -np.inf)

    def random(mu, rng=None, size=None):
        return np.asarray(mu) + start + rng.choice(probabilities.size, p=probabilities, size=size)

    return shifted_noise(name, mu, logp, random, **kwargs)


def shifted_noise(name: str, mu, logp, random, offset=0, **kwargs):
    """An int64 release ``name = mu + Z`` as a :class:`pymc.CustomDist`.

    ``logp(value, mu)`` and ``random(mu, rng, size)`` are the release's; the
    support point (the sampler's start) is ``mu + offset`` (``offset`` a mode of
    ``Z``, so that the start is possible).
    """

    checked_observed(kwargs.get("observed"), name)

    def support_point(rv, size, mu):
        point = pt.cast(mu, "int64") + offset
        return point if size is None else pt.full(size, point)

    return pm.CustomDist(
        name,
        mu,
        logp=logp,
        random=random,
        support_point=support_point,
        dtype="int64",
        **kwargs,
    )
