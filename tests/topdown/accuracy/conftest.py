"""Builders for the accuracy tests: allocations by hand and trees in the table format."""

from fractions import Fraction

import numpy as np
import pytest
import xarray as xr

from adversary.budget import BudgetAllocation
from adversary.scenarios.reconstruction import PL94_QUERIES
from adversary.topdown.accuracy import LEVELS


@pytest.fixture(scope="session")
def make_allocation():
    """``make(weights, rho_total=1)``: ``weights[level][query]`` (integers, the rest 0) as
    within-level shares, the levels of ``weights`` sharing ``rho_total`` equally."""

    def make(weights, rho_total=1):
        levels = tuple(weights)
        queries = tuple(PL94_QUERIES)
        rows = []
        for level in levels:
            row = [Fraction(weights[level].get(q, 0)) for q in queries]
            rows.append(tuple(s / sum(row) for s in row))
        return BudgetAllocation(
            name="test",
            description="by hand",
            rho_total=Fraction(rho_total),
            levels=levels,
            level_labels=levels,
            queries=queries,
            query_labels=queries,
            level_shares=tuple(Fraction(1, len(levels)) for _ in levels),
            query_shares=tuple(rows),
        )

    return make


@pytest.fixture(scope="session")
def make_tables():
    """``make(parents, counts=None)``: a DataTree in the table format from, per level (in
    :data:`LEVELS` order), the parent of each unit as a position among the level above's
    units (``[-1]`` for the state); units are numbered 100·(depth + 1) + position.
    ``counts[level]`` (units × cells, or runs × units × cells) becomes the variable
    ``counts``."""

    def make(parents, counts=None):
        nodes, above = {}, None
        for depth, (level, parent) in enumerate(zip(LEVELS, parents, strict=False)):
            units = 100 * (depth + 1) + np.arange(len(parent))
            parent_ids = np.full(len(parent), -1) if above is None else above[np.asarray(parent)]
            data = {}
            if counts is not None:
                values = np.asarray(counts[level])
                dims = ("unit", "cell") if values.ndim == 2 else ("run", "unit", "cell")
                data["counts"] = (dims, values)
            nodes[level] = xr.Dataset(data, coords={"unit": units, "parent": ("unit", parent_ids)})
            above = units
        return xr.DataTree.from_dict(nodes)

    return make
