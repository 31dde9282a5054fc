"""The S6 attack as a PyMC model, whose exact posterior is (S6.7)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._validation import as_probability
from ...distributions import BernoulliCount, DiscreteGaussian, NoiseRelease
from ...distributions.tabulated_noise import TabulatedNoise
from ...measures.noise import resolve
from .release_noise import mechanism_tables
from .releases import attack_setting, released_value
from .rule import post_process_graph

__all__ = ["model"]


def model(x1_tilde, prior, rho=None, **setting):
    """The S6 attack as a PyMC model: latents ``X1``, ``x1_star``, ``y1_star``; ``x̃1`` observed.

    - ``X1 ~ BernoulliCount(known=m, p)``: ``X1 ∈ {m, m+1}``, ``P[X1 = m+1] = p``;
    - ``x1_star ~ DiscreteGaussian(X1, σ²)``: the unpublished noisy block count;
    - ``y1_star ~ DiscreteGaussian(x2 - X1, d σ²)``: the unpublished sum of the other
      d blocks' noisy counts, by the approximation (3.7), with ``x2`` known;
    - ``Potential("x1_tilde")``: the indicator likelihood (S6.4),
      ``log 1[x̃1 = f(x1*, y1*, x̃2)]`` (0 or ``-inf``), with ``f`` of (S6.3) in
      integer arithmetic (:func:`post_process_graph`).

    Summing the latents ``x1_star`` and ``y1_star`` out gives (S6.5)–(S6.6),
    so the posterior of ``X1`` is (S6.7) (:func:`posterior` with the default
    ``exact_sum=False``). The noisy counts start at ``x1* = x̃1``,
    ``y1* = x̃2 - x̃1``, where ``x̄1 = x̃1`` exactly, so the start is feasible.

    ``setting`` is the keyword arguments of :func:`.releases.attack_setting`; with ρ
    only the approximation (3.7) is modelled (``exact_sum`` true is refused). ``x1_star``
    and ``y1_star`` are unbounded: :func:`adversary.inference.enumerate_posterior` needs
    stated ranges for them (a dozen standard deviations around both
    hypotheses' centres suffice), and under Gibbs sampling they mix slowly
    when ``x̃1`` is interior (given ``y1*``, the indicator leaves ``x1*`` one or
    two values), while ``X1`` mixes well.

    With a ``mechanism`` other than the discrete Gaussian, ``x1_star`` is a
    :func:`~adversary.distributions.NoiseRelease` and ``y1_star`` the exact sum
    of d noises, tabulated (:func:`~adversary.distributions.tabulated_noise.TabulatedNoise`,
    cut at ``tail_mass`` unless bounded): (S6.7) with the exact sum. With
    bounded noise the start above may lie off the support; give ``initvals``
    to the sampler then.
    """
    chosen = attack_setting(**setting)
    d, x2, x2_tilde, known = chosen.d, chosen.x2, chosen.x2_tilde, chosen.known
    x1_tilde = released_value(x1_tilde, x2_tilde)
    prior = as_probability(prior, "prior")
    sigma2, mech = resolve(rho, chosen.convention, chosen.mechanism)
    if mech is None and chosen.exact_sum:
        raise ValueError(
            "exact_sum: the model has y1* by the approximation (3.7) only; with rho give "
            "exact_sum=False (or None)"
        )
    for name, value in (("x1_tilde", x1_tilde), ("prior", prior), ("rho", sigma2)):
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a single number for one model, got {value!r}")
    x1_tilde, prior = int(x1_tilde), float(prior)

    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=known, p=prior)
        starts = {"x1_star": np.int64(x1_tilde), "y1_star": np.int64(x2_tilde - x1_tilde)}
        if mech is None:
            sigma2 = float(sigma2)
            x1_star = DiscreteGaussian("x1_star", mu=x1, sigma2=sigma2, initval=starts["x1_star"])
            y1_star = DiscreteGaussian(
                "y1_star", mu=np.int64(x2) - x1, sigma2=d * sigma2, initval=starts["y1_star"]
            )
        else:
            _, sums = mechanism_tables(d, mech, chosen.tail_mass)
            x1_star = NoiseRelease("x1_star", mu=x1, mechanism=mech, initval=starts["x1_star"])
            y1_star = TabulatedNoise(
                "y1_star", mu=np.int64(x2) - x1, table=sums, initval=starts["y1_star"]
            )
        released = post_process_graph(x1_star, y1_star, x2_tilde, d)
        pm.Potential(
            "x1_tilde",
            pt.switch(pt.eq(released, np.int64(x1_tilde)), np.float64(0.0), np.float64(-np.inf)),
        )
    return attack
