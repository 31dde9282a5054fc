"""The frontier of budget allocations: accuracy against disclosure risk (issue 24, point 5).

Which release to make — the total zCDP ρ and its split over levels and queries
(:class:`~adversary.budget.BudgetAllocation`) — weighed by two evaluators the
caller supplies: ``accuracy(allocation)`` and ``risk(allocation)``, each an
:class:`xarray.Dataset`.

- :mod:`.families` — lists of allocations from a base: totals scaled, level
  shares or query shares varied (given, or a grid over the simplex), or explicit;
- :func:`evaluate` — both evaluators over a family, stacked along ``allocation``;
- :func:`pareto_set`, :func:`dominance` — the non-dominated allocations, and
  whether (and by how much) a reference allocation is dominated;
- :func:`most_accurate`, :func:`least_risky` — SLSQP over the share simplexes
  under limits, every answer re-checked; :func:`weighted_sum` and
  :func:`at_most` build their objectives and limits.
"""

from .evaluation import BUDGET_COORDINATES, evaluate
from .families import (
    explicit,
    level_share_grid,
    level_shares,
    query_share_grid,
    query_shares,
    rho_totals,
    simplex_grid,
)
from .pareto import ParetoSet, dominance, objectives, pareto_set
from .search import DEFAULT_OPTIONS, SearchResult, least_risky, most_accurate
from .targets import at_most, weighted_sum

__all__ = [
    "BUDGET_COORDINATES",
    "DEFAULT_OPTIONS",
    "ParetoSet",
    "SearchResult",
    "at_most",
    "dominance",
    "evaluate",
    "explicit",
    "least_risky",
    "level_share_grid",
    "level_shares",
    "most_accurate",
    "objectives",
    "pareto_set",
    "query_share_grid",
    "query_shares",
    "rho_totals",
    "simplex_grid",
    "weighted_sum",
]
