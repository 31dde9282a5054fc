"""The block-group attack as a PyMC model: the same joint as the exact posterior (S3.4)."""

from __future__ import annotations

import pymc as pm

from ...distributions import BernoulliCount, DiscreteGaussian
from ...distributions.noise_release import NoiseRelease
from ...distributions.tabulated_noise import TabulatedNoise
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import DiscreteGaussianNoise
from .setting import _validated_releases, attack_setting

__all__ = ["model"]


def model(x1_release, x2_release, y1_release, **setting) -> pm.Model:
    """The block-group attack as a PyMC model: latents ``X1``, ``X2``; releases observed.

    ``setting``: the keyword arguments of :func:`attack_setting`.

    The same joint as :func:`~.exact_posterior.posterior` (S3.4): ``X1 ~ BernoulliCount(m, p)``,
    ``X2 | X1`` from ``x2_prior`` (with ``X2 ≥ X1``), ``x1* ~ DG(X1, σ1²)``,
    ``x2* ~ DG(X2, σ2²)``, and ``y1* = X2 - X1 + Zy`` with ``Zy`` from (3.7)
    or the exact sum (a tabulated noise). With ``mechanism`` (not discrete
    Gaussian) ``x1*`` and ``x2*`` are :func:`~adversary.distributions.NoiseRelease`
    variables and ``Zy`` the tabulated sum.
    """
    releases = _validated_releases(x1_release, x2_release, y1_release)
    setting = attack_setting(**setting)
    noise = setting.noise
    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=setting.known, p=setting.prior)
        x2 = setting.x2_prior.pymc_variable("X2", x1, setting.known)
        for name, mu, mech, value in (
            ("x1_release", x1, noise.block, releases[0]),
            ("x2_release", x2, noise.group, releases[1]),
        ):
            if isinstance(mech, DiscreteGaussianNoise):
                DiscreteGaussian(name, mu=mu, sigma2=mech.sigma2, observed=value)
            else:
                NoiseRelease(name, mu=mu, mechanism=mech, observed=value)
        if isinstance(noise.sum_noise, FinitePmf):
            TabulatedNoise("y1_release", mu=x2 - x1, table=noise.sum_noise, observed=releases[2])
        else:
            DiscreteGaussian("y1_release", mu=x2 - x1, sigma2=noise.sum_noise, observed=releases[2])
    return attack
