"""Cross-classifications of a block's persons and the 2020 PL 94-171 tables on them.

A :class:`Classification` is a product of attributes (household/group
quarters, voting age, Hispanic origin, race); its cells are the persons'
possible records, in C order of the attributes. A released table keeps some
attributes and sums over the others: each of its counts is the sum of a set of
cells. :func:`pl94_queries` lists the counts of the 2020 redistricting data's
queries at block level on a classification (JASON 2022, Figure 5-3; the
detailed query is every attribute), each with its ρ from a budget preset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...budget import BudgetAllocation, as_allocation

__all__ = ["DETAILED", "PL94_QUERIES", "REDUCED", "Classification", "pl94_queries"]


@dataclass(frozen=True)
class Classification:
    """Attributes ``((name, levels), …)``; the cells are their combinations, in C order."""

    attributes: tuple[tuple[str, int], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.attributes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(size for _, size in self.attributes)

    @property
    def n_cells(self) -> int:
        return math.prod(self.sizes)

    def cell_labels(self) -> tuple[str, ...]:
        """``"hhgq=0,voting_age=1,…"`` for every cell, in cell order."""
        return tuple(
            ",".join(f"{name}={level}" for name, level in zip(self.names, index, strict=True))
            for index in np.ndindex(*self.sizes)
        )

    def levels(self) -> np.ndarray:
        """Each cell's level of each attribute (cells × attributes), in cell order."""
        return np.array(list(np.ndindex(*self.sizes)), dtype=np.int64).reshape(self.n_cells, -1)

    def margin_of_cells(self, kept: tuple[str, ...]) -> np.ndarray:
        """For each cell, the index of its count in the table keeping only ``kept`` attributes."""
        unknown = [a for a in kept if a not in self.names]
        if unknown:
            raise ValueError(f"kept: {unknown} are not attributes of {self.names}")
        columns = [self.names.index(a) for a in self.names if a in kept]
        levels = self.levels()
        if not columns:
            return np.zeros(self.n_cells, dtype=np.int64)
        kept_sizes = [self.sizes[c] for c in columns]
        return np.ravel_multi_index(tuple(levels[:, columns].T), kept_sizes).astype(np.int64)

    def table(self, kept: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
        """The table keeping ``kept``: one tuple of cell indices per released count."""
        margin = self.margin_of_cells(kept)
        return tuple(
            tuple(int(c) for c in np.flatnonzero(margin == m)) for m in range(margin.max() + 1)
        )

    def independent_prior(self, marginals: dict) -> tuple[float, ...]:
        """Cell probabilities with independent attributes: ``{attribute: level probabilities}``."""
        if set(marginals) != set(self.names):
            raise ValueError(f"marginals must give a distribution for each of {self.names}")
        prior = np.ones(())
        for name, size in self.attributes:
            p = np.asarray(marginals[name], dtype=np.float64)
            if p.shape != (size,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
                raise ValueError(f"marginals[{name!r}] must be {size} probabilities summing to 1")
            prior = np.multiply.outer(prior, p)
        return tuple(float(x) for x in prior.reshape(-1))


#: The 2020 PL 94-171 queries at block level: the attributes each keeps (``hhinstlevels``,
#: which needs the eight household/group-quarters types, is left out).
PL94_QUERIES = {
    "total": (),
    "race": ("race",),
    "hispanic": ("hispanic",),
    "voting_age": ("voting_age",),
    "hhgq": ("hhgq",),
    "hispanic_race": ("hispanic", "race"),
    "voting_age_race": ("voting_age", "race"),
    "voting_age_hispanic": ("voting_age", "hispanic"),
    "voting_age_hispanic_race": ("voting_age", "hispanic", "race"),
    "detailed": ("hhgq", "voting_age", "hispanic", "race"),
}

#: A reduced cross-classification: household or group quarters (2) × voting age (2) ×
#: Hispanic (2) × race (7: the six single races and "two or more"), 56 cells.
REDUCED = Classification((("hhgq", 2), ("voting_age", 2), ("hispanic", 2), ("race", 7)))
#: The full detailed query: household/group-quarters type (8) × voting age (2) ×
#: Hispanic (2) × race (63 combinations), 2 016 cells.
DETAILED = Classification((("hhgq", 8), ("voting_age", 2), ("hispanic", 2), ("race", 63)))


def pl94_queries(
    classification: Classification,
    names=None,
    *,
    budget: str | BudgetAllocation = "pl94-2020-persons",
    level: str = "block",
    scale: float = 1.0,
) -> tuple[tuple[tuple[int, ...], ...], tuple[float, ...], tuple[str, ...]]:
    """The released counts of the PL 94-171 queries ``names`` (default all ten) on a classification.

    Returns ``(queries, rhos, labels)``: one tuple of cell indices, one ρ
    (the query's share of ``budget`` — a preset's name, an allocation or a budget
    file, :func:`~adversary.budget.as_allocation` — at ``level``, times ``scale``) and one
    label (``"race[3]"``) per released count.
    """
    names = tuple(PL94_QUERIES) if names is None else tuple(names)
    unknown = [q for q in names if q not in PL94_QUERIES]
    if unknown:
        raise ValueError(f"names: {unknown} are not PL 94-171 queries; have {list(PL94_QUERIES)}")
    preset = as_allocation(budget, "budget")
    queries, rhos, labels = [], [], []
    for query in names:
        rho = float(preset.rho(level, query)) * float(scale)
        for index, cells in enumerate(classification.table(PL94_QUERIES[query])):
            queries.append(cells)
            rhos.append(rho)
            labels.append(f"{query}[{index}]")
    return tuple(queries), tuple(rhos), tuple(labels)
