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

Names are imported on first use: the population engine's workers need only
:mod:`.bias`, not the every-query solver (and what it imports).
"""

from .._lazy import lazy_names

_LAZY = {
    "bias_measure": ".bias",
    "check_parents": ".hierarchy",
    "children_of": ".hierarchy",
    "consistency_constraints": ".hierarchy",
    "constrained_wls": ".solver",
    "every_query_runs": ".every_query",
    "every_query_topdown": ".every_query",
    "jason_iteration": ".solver",
    "nonnegative_family_fit": ".every_query",
    "nonnegative_wls": ".solver",
    "round_keeping_total": ".rounding",
    "scipy_wls": ".solver",
    "topdown": ".hierarchy",
    "topdown_many": ".hierarchy",
    "truth_tables": ".every_query",
    "windowed_mean": ".bias",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
