"""The accuracy of an allocation: analytic (the linear TopDown estimator) and simulated.

- :mod:`.metrics` — the counts measured (total, voting age, Hispanic × race) as cell vectors;
- :mod:`.tree` — the geography as a tree, and the table format of counts per unit;
- :mod:`.analytic` — the exact variance of the linear estimator, unit by unit, and its means;
- :mod:`.simulated` — the errors of published TopDown runs against the truth, with their
  Monte Carlo standard errors, and JASON's bias measure by block size.
"""

from __future__ import annotations

from .analytic import analytic_accuracy, level_forms, unit_variances
from .metrics import METRICS, MetricVectors, metric_vectors
from .simulated import simulated_accuracy, simulated_bias
from .tree import LEVELS, Tree, as_tree

__all__ = [
    "LEVELS",
    "METRICS",
    "MetricVectors",
    "Tree",
    "analytic_accuracy",
    "as_tree",
    "level_forms",
    "metric_vectors",
    "simulated_accuracy",
    "simulated_bias",
    "unit_variances",
]
