"""The block-group attack of Kazan & Reiter (2023), Sec. 3.2, 4.3 and S3–S4, computed exactly.

The package's modules: :mod:`~.exact_posterior` (the noise laws, the checked
setting, the exact joint posterior (S3.4) of one set of releases and its PyMC
model), :mod:`~.prior` (the prior of ``X2 | X1``, S4), :mod:`~.releases` (the
data holder's measures over every release), :mod:`~.maps` (those measures for
many truths from one decision map), :mod:`~.case` (a concrete case) and
:mod:`~.paper_sampler` (what the paper's Gibbs sampler computes).
"""

from .case import BlockGroupCase
from .exact_posterior import (
    SUM_NOISE_CHOICES,
    AttackSetting,
    BlockGroupNoise,
    attack_setting,
    model,
    noise_model,
    posterior,
    x1_posterior,
)
from .maps import MAX_SPAN, maps_apply, measures_by_truth
from .paper_sampler import stationary_x1_probability
from .prior import BlockGroupPrior, bounded_uniform, conditional_pmf, improper_uniform, point_mass
from .releases import decision_map, log_sums, release_grid, release_measures, x1_log_ratio

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
    "stationary_x1_probability",
    "x1_log_ratio",
    "x1_posterior",
]
