"""TopDown-style post-processing: noisy measurements to consistent non-negative integer tables.

The 2020 PL 94-171 tables are not the noisy measurements but TopDown's
output: weighted least squares under the hierarchy's consistency and the
invariants, non-negativity, then integers (JASON 2022, Sec. 5.1 and 6.3).

- :mod:`.solver` — JASON's closed-form solver and iterative non-negativity
  step (Sec. 6.3.4), the exact non-negative fit of disjoint sums by its KKT
  conditions, and the same problem by scipy;
- :mod:`.rounding` — integers that keep a total;
- :mod:`.hierarchy` — :func:`topdown` on a small tree of units;
- :mod:`.bias` — the bias measure B of eq. (6-3) and its windowed mean;
- :mod:`.every_query` — TopDown with every PL 94-171 query over a synthetic
  state (GLS per unit, non-negativity for any ``AᵀWA``, county subtrees on Dask).
"""

from __future__ import annotations

from .bias import bias_measure, windowed_mean
from .every_query import (
    every_query_runs,
    every_query_topdown,
    nonnegative_family_fit,
    truth_tables,
)
from .hierarchy import (
    check_parents,
    children_of,
    consistency_constraints,
    topdown,
    topdown_many,
)
from .rounding import round_keeping_total
from .solver import constrained_wls, jason_iteration, nonnegative_wls, scipy_wls

__all__ = [
    "bias_measure",
    "check_parents",
    "children_of",
    "consistency_constraints",
    "constrained_wls",
    "every_query_runs",
    "every_query_topdown",
    "jason_iteration",
    "nonnegative_family_fit",
    "nonnegative_wls",
    "round_keeping_total",
    "scipy_wls",
    "topdown",
    "topdown_many",
    "truth_tables",
    "windowed_mean",
]
