"""The discrete Gaussian as a PyMC distribution: ``X = mu + Z``, ``Z ~ DG(0, σ²)``.

The release mechanism of Kazan & Reiter: a noisy count ``x* = x + Z`` with
likelihood ``P[X* = x* | X = x] ∝ exp(-(x* - x)²/(2σ²))``, i.e. ``e^{-ρ(x*-x)²}``
with ``σ² = 1/(2ρ)`` under the paper's convention (their (3.1), (S3.4)) or
``σ² = 1/ρ`` under the 2020 DAS convention. The log-p includes the exact
normaliser (the Jacobi theta series of :mod:`adversary.noise.discrete_gaussian`,
re-expressed in PyTensor), so it is a proper log-pmf in ``x*`` *and* in σ² —
a model may put a prior on ρ. Random draws use the exact sampler of Canonne,
Kamath & Steinke (2020) from layer 1.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.shape_utils import rv_size_is_none

from ..noise import discrete_gaussian as _dg
from ._params import IntegerDiscrete, as_integer_param, integer_rv, is_symbolic, resolve_sigma2

__all__ = ["DiscreteGaussian", "DiscreteGaussianRV", "discrete_gaussian", "log_normaliser"]

_TWO_PI = np.float64(2.0 * np.pi)
_TWO_PI_SQ = np.float64(2.0 * np.pi**2)
_HALF = np.float64(0.5)
_ONE = np.float64(1.0)
_TWO = np.float64(2.0)
_N_SQUARED = np.arange(1, _dg.N_TERMS + 1, dtype=np.float64) ** 2


def log_normaliser(sigma2):
    """``log Σ_k exp(-k²/(2σ²))`` as a PyTensor graph (float64, differentiable in σ²).

    The same two theta series as :func:`adversary.noise.discrete_gaussian.log_normaliser`:
    the direct one ``1 + 2 Σ q^{n²}``, ``q = e^{-1/(2σ²)}``, or its Poisson dual
    ``√(2πσ²)(1 + 2 Σ q̃^{n²})``, ``q̃ = e^{-2π²σ²}``, whichever has the smaller
    ratio; ``N_TERMS`` terms leave a relative error below
    :data:`~adversary.noise.discrete_gaussian.NORMALISER_TRUNCATION_BOUND` (~4e-34).
    """
    sigma2 = pt.cast(pt.as_tensor_variable(sigma2), "float64")
    a_direct = _ONE / (_TWO * sigma2)
    a_dual = _TWO_PI_SQ * sigma2
    dual = pt.gt(a_dual, a_direct)
    a = pt.switch(dual, a_dual, a_direct)
    s0 = pt.exp(-a[..., None] * _N_SQUARED).sum(axis=-1)
    prefactor = pt.switch(dual, _HALF * pt.log(_TWO_PI * sigma2), np.float64(0.0))
    return prefactor + pt.log1p(_TWO * s0)


def _layer1_sampler():
    """Layer 1's exact sampler ``sample(sigma2, size=None, rng=None)``, found at call time."""
    from ..noise import discrete_gaussian as layer1

    if hasattr(layer1, "sample"):
        return layer1.sample
    from ..noise.exact_sampling import sample

    return sample


@integer_rv("(),()->()", ("DiscreteGaussian", "\\operatorname{DG}"))
def discrete_gaussian(rng, mu, sigma2, size):
    """``mu + DG(0, σ²)`` drawn with the exact Canonne–Kamath–Steinke sampler (int64)."""
    sample = _layer1_sampler()
    mu = np.asarray(mu)
    sigma2 = np.asarray(sigma2, dtype=np.float64)
    shape = tuple(size) if size is not None else np.broadcast_shapes(mu.shape, sigma2.shape)
    if np.issubdtype(mu.dtype, np.floating):
        if np.any(mu != np.round(mu)):
            raise ValueError(f"mu must be integer-valued to draw a discrete Gaussian, got {mu}")
        mu = np.round(mu)
    mu = np.broadcast_to(mu.astype(np.int64), shape)
    sigma2 = np.broadcast_to(sigma2, shape)
    noise = np.empty(shape, dtype=np.int64)
    for s2 in np.unique(sigma2):
        at = sigma2 == s2
        noise[at] = np.asarray(sample(float(s2), size=int(at.sum()), rng=rng), dtype=np.int64)
    return mu + noise


DiscreteGaussianRV = type(discrete_gaussian)


class DiscreteGaussian(IntegerDiscrete):
    r"""Discrete Gaussian on the integers centred at an integer ``mu``.

    ``P[X = x] = exp(-(x - mu)²/(2σ²)) / Σ_k exp(-k²/(2σ²))``.

    Parameters
    ----------
    mu : int or integer tensor
        Centre (the true count). A number must be integer-valued; a tensor is
        checked inside the log-p (a non-integer ``mu`` gives log-p ``-inf``).
    sigma2 : float or tensor, optional
        Noise variance parameter σ² > 0.
    rho : float or tensor, optional
        zCDP parameter ρ > 0 instead of ``sigma2``; σ² follows ``convention``.
    convention : {"paper", "das"}
        ``"paper"``: σ² = 1/(2ρ), the likelihood ``e^{-ρ(x*-x)²}`` of Kazan &
        Reiter (3.1); ``"das"``: σ² = 1/ρ as in 2020 production. Used only with
        ``rho``.

    Notes
    -----
    The sum of ``d`` independent ``DG(σ²)`` is *not* ``DG(dσ²)``; Kazan & Reiter's
    approximation (3.7) uses ``DiscreteGaussian(mu, sigma2=d * σ²)`` for it.
    """

    rv_op = discrete_gaussian

    @classmethod
    def dist(cls, mu=0, sigma2=None, *, rho=None, convention="paper", **kwargs):
        sigma2 = resolve_sigma2(sigma2, rho, convention)
        if is_symbolic(mu):
            mu = pt.as_tensor_variable(mu)
            if mu.dtype.startswith(("int", "uint")):
                mu = pt.cast(mu, "int64")
            else:
                mu = pt.cast(mu, "float64")
        else:
            mu = as_integer_param(mu, "mu")
        return super().dist([mu, sigma2], **kwargs)

    def support_point(rv, size, mu, sigma2):
        point = mu if mu.dtype.startswith(("int", "uint")) else pt.round(mu)
        point = pt.cast(point, "int64").copy()  # a new node (see priors._fill)
        if not rv_size_is_none(size):
            point = pt.full(size, point)
        return point

    def logp(value, mu, sigma2):
        diff = pt.cast(value - mu, "float64")
        res = -(diff**2) / (_TWO * sigma2) - log_normaliser(sigma2)
        conditions = [pt.gt(sigma2, np.float64(0.0))]
        if not mu.dtype.startswith(("int", "uint")):
            conditions.append(pt.eq(mu, pt.round(mu)))
        return check_parameters(res, *conditions, msg="sigma2 > 0, mu integer-valued")
