"""The block-group attack of Kazan & Reiter (2023), Sec. 3.2, 4.3 and S3–S4, computed exactly.

The adversary of the single-block attack also sees the block group g2 that
contains block g1: the noisy count ``x2*`` of g2 and ``y1*``, the sum of the
noisy counts of the d other blocks of g2. Latents: ``X1 ∈ {m, m+1}`` (prior
``P[X1 = m+1] = p``) and ``X2 ≥ X1``, the count of g2 (prior :mod:`.prior`).
The releases are

    x1* = X1 + Z1,   x2* = X2 + Z2,   y1* = (X2 - X1) + Zy,

with ``Z1 ~ DG(σ1²)``, ``Z2 ~ DG(σ2²)`` and ``Zy`` the sum of d iid
``DG(σ1²)`` (exact, or the paper's approximation (3.7)), or other noise given
as ``mechanism=``: :mod:`.noise_laws`. Every function takes the keyword
arguments of :func:`attack_setting`.

The package's modules: :mod:`~.noise_laws` (the three releases' noise),
:mod:`~.setting` (the checked arguments), :mod:`~.prior` (the prior of
``X2 | X1``, S4), :mod:`~.exact_posterior` (the joint posterior (S3.4) of one
set of releases), :mod:`~.pymc_model` (the same joint in PyMC),
:mod:`~.releases` (the data holder's measures over every release),
:mod:`~.maps` (those measures for many truths from one decision map),
:mod:`~.case` (a concrete case) and :mod:`~.paper_sampler` (what the paper's
Gibbs sampler computes).
"""

from ..._lazy import lazy_names
from .case import BlockGroupCase
from .exact_posterior import exact_k2_window, posterior, x1_posterior
from .maps import MAX_SPAN, maps_apply, measures_by_truth
from .noise_laws import SUM_NOISE_CHOICES, BlockGroupNoise, noise_model, resolved_sum_noise
from .paper_sampler import stationary_x1_probability
from .prior import BlockGroupPrior, bounded_uniform, conditional_pmf, improper_uniform, point_mass
from .releases import decision_map, log_sums, release_grid, release_measures, x1_log_ratio
from .setting import AttackSetting, attack_setting

__all__ = [
    "MAX_SPAN",
    "SUM_NOISE_CHOICES",
    "AttackSetting",
    "BlockGroupCase",
    "BlockGroupNoise",
    "BlockGroupPrior",
    "attack_setting",
    "bounded_uniform",
    "conditional_pmf",
    "decision_map",
    "exact_k2_window",
    "improper_uniform",
    "log_sums",
    "maps_apply",
    "measures_by_truth",
    "model",
    "noise_model",
    "point_mass",
    "posterior",
    "release_grid",
    "release_measures",
    "resolved_sum_noise",
    "stationary_x1_probability",
    "x1_log_ratio",
    "x1_posterior",
]

# The PyMC model is imported on first use: the closed forms need no PyMC.
__getattr__, __dir__ = lazy_names(__name__, {"model": ".pymc_model"}, globals())
