"""Which noisy counts show the target's record to an adversary who knows everyone else.

At every geographic level the 2020 release measures the target's record in
every PL 94-171 query whose table holds their cell: the detailed (GVHR) count,
but also the total, the race count, the Hispanic count, … each with its own ρ
from the budget preset. An adversary who knows every other record of the unit
subtracts the others' contribution from each released count and is left with
``1[the count holds the target] + noise`` — one more noisy look at the
target's cell per query and level.

:func:`target_looks` lists those looks for a set of cells the target may be
in (the adversary's possible cells) and the cells whose counts they watch:
each look's label, ρ and which possible cells it holds (the incidence). A
count that holds every possible cell (the total, for instance) says nothing
about which one is the target's — its factor is the same for all of them and
cancels from the posterior — and is listed apart (``uninformative``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...budget import BudgetAllocation, as_allocation
from ..reconstruction.classification import PL94_QUERIES, Classification

__all__ = ["QUERY_SETS", "TargetLooks", "query_names", "target_looks"]

#: Named sets of queries: ``"detailed"`` (the one count of Kazan & Reiter's attacks) and
#: ``"all"`` (every PL 94-171 query on the classification, :data:`PL94_QUERIES`).
QUERY_SETS = {"detailed": ("detailed",), "all": tuple(PL94_QUERIES)}


def query_names(queries) -> tuple[str, ...]:
    """``queries`` as a tuple of PL 94-171 query names: a set's name or a list of queries."""
    if isinstance(queries, str):
        if queries in QUERY_SETS:
            return QUERY_SETS[queries]
        queries = (queries,)
    if not hasattr(queries, "__iter__"):
        raise ValueError(
            f"queries must be 'detailed', 'all' or a list of query names, got {queries!r}"
        )
    names = tuple(str(q) for q in queries)
    unknown = [q for q in names if q not in PL94_QUERIES]
    if unknown or not names:
        raise ValueError(
            f"queries must be 'detailed', 'all' or names among {list(PL94_QUERIES)}, "
            f"got {queries!r}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"queries must not repeat a query, got {queries!r}")
    return names


@dataclass(frozen=True)
class TargetLooks:
    """The informative noisy counts of the target's record.

    ``labels[o]`` (``"block:race[3]"``), ``rhos[o]`` and ``incidence[o, j]``
    (count ``o`` holds possible cell ``j``) for each informative count;
    ``uninformative``: the labels of the watched counts that hold every
    possible cell.
    """

    labels: tuple[str, ...]
    rhos: np.ndarray
    incidence: np.ndarray
    uninformative: tuple[str, ...]


def target_looks(
    classification: Classification,
    possible: np.ndarray,
    watched: np.ndarray,
    queries,
    levels=("block",),
    budget: str | BudgetAllocation = "pl94-2020-persons",
    rho_total: float | None = None,
) -> TargetLooks:
    """The counts of ``queries`` at ``levels`` that hold a ``watched`` cell, as looks at the target.

    ``possible`` and ``watched`` are indices of cells of ``classification``;
    each query's ρ at each level is its share of ``budget``'s total ρ (a preset's name, an
    allocation or a budget file, :func:`~adversary.budget.as_allocation`), or of
    ``rho_total`` when given (a query the preset does not measure at a level,
    ρ = 0, gives no count).
    """
    preset = as_allocation(budget, "budget")
    scale = 1.0 if rho_total is None else float(rho_total) / float(preset.rho_total)
    levels = (levels,) if isinstance(levels, str) else tuple(levels)
    if not levels:
        raise ValueError("levels must name at least one level of the budget preset")
    labels, rhos, rows, uninformative = [], [], [], []
    for level in levels:
        for query in query_names(queries):
            rho = float(preset.rho(level, query)) * scale
            if rho == 0.0:
                continue
            margin = classification.margin_of_cells(PL94_QUERIES[query])
            for count in np.unique(margin[watched]):
                row = margin[possible] == count
                label = f"{level}:{query}[{int(count)}]"
                if row.all():
                    uninformative.append(label)
                    continue
                labels.append(label)
                rhos.append(rho)
                rows.append(row)
    incidence = np.array(rows, dtype=bool).reshape(len(rows), len(possible))
    return TargetLooks(tuple(labels), np.array(rhos), incidence, tuple(uninformative))
