"""Empirical privacy loss (Petti & Flaxman 2020) and its exact counterpart.

A count ``x`` released as ``o = x + Z`` with integer noise ``Z`` of known pmf
``p`` is compared with the neighbouring count ``x - s``; the *privacy loss* of
the output is ``L(z) = log p(z) - log p(z + s)`` with ``z = o - x``. Petti &
Flaxman's empirical privacy loss ``EPL = max_x |EPL(x)|`` estimates
``max |L|`` over a range from C residuals, through a Gaussian kernel density
estimate of their pmf.

The package's modules: :mod:`~.integer_noise` (the noise, :class:`IntegerNoise`),
:mod:`~.exact` (``L``, its distribution, ``max |L|`` on a range and the
posterior it gives), :mod:`~.kde` (the kernel density estimate and the
estimator's large-sample limit), :mod:`~.estimator` (the EPL estimator, one-
and two-sample) and :mod:`~.table_sa1` (Petti & Flaxman's Table SA1, redrawn).
"""

from .estimator import (
    EmpiricalPrivacyLoss,
    additive_mechanism,
    empirical_privacy_loss,
    empirical_privacy_loss_two_sample,
    percentile_grid,
    simulate_neighbouring_outputs,
)
from .exact import (
    PrivacyLossDistribution,
    exact_empirical_privacy_loss,
    max_privacy_loss,
    posterior_from_privacy_loss,
    privacy_loss,
    privacy_loss_distribution,
)
from .integer_noise import DEFAULT_TAIL_MASS, IntegerNoise
from .kde import BandwidthUnits, kde_limit_privacy_loss, kernel_bandwidth, log_kde
from .table_sa1 import (
    SA1_NOTEBOOK,
    SA1_NOTEBOOK_EPSILONS,
    SA1_NOTEBOOK_SETTINGS,
    SA1_PRINTED,
    SA1_RESIDUALS,
    SA1_SEED,
    petti_flaxman_residuals,
    petti_flaxman_sa1,
)

__all__ = [
    "DEFAULT_TAIL_MASS",
    "SA1_NOTEBOOK",
    "SA1_NOTEBOOK_EPSILONS",
    "SA1_NOTEBOOK_SETTINGS",
    "SA1_PRINTED",
    "SA1_RESIDUALS",
    "SA1_SEED",
    "BandwidthUnits",
    "EmpiricalPrivacyLoss",
    "IntegerNoise",
    "PrivacyLossDistribution",
    "additive_mechanism",
    "empirical_privacy_loss",
    "empirical_privacy_loss_two_sample",
    "exact_empirical_privacy_loss",
    "kde_limit_privacy_loss",
    "kernel_bandwidth",
    "log_kde",
    "max_privacy_loss",
    "percentile_grid",
    "petti_flaxman_residuals",
    "petti_flaxman_sa1",
    "posterior_from_privacy_loss",
    "privacy_loss",
    "privacy_loss_distribution",
    "simulate_neighbouring_outputs",
]
