"""TopDown with every PL 94-171 query: the estimator a budget allocation over queries is tuned for.

At each unit of each level every query funded there is measured; the cells
are estimated by GLS over all of them (:mod:`.operators`), the state fitted to
its invariant total and each level to its parent's published cells, with
non-negativity for any information matrix (:mod:`.nonnegative`) and rounding
that keeps every parent's integer cells (:mod:`.fit`); :mod:`.release` runs it
top down over a synthetic state, county subtrees as Dask tasks, and
:mod:`.tables` holds the tables' ``xarray.DataTree`` format and the truth.
"""

from __future__ import annotations

from .fit import fit_children, fit_state
from .measure import noisy_answers, unit_generator
from .nonnegative import nonnegative_family_fit
from .operators import LEVELS, LevelOperator, level_operator, level_operators
from .release import every_query_runs, every_query_topdown
from .tables import truth_tables

__all__ = [
    "LEVELS",
    "LevelOperator",
    "every_query_runs",
    "every_query_topdown",
    "fit_children",
    "fit_state",
    "level_operator",
    "level_operators",
    "noisy_answers",
    "nonnegative_family_fit",
    "truth_tables",
    "unit_generator",
]
