"""Tables of cell counts at every level as an ``xarray.DataTree``, and the true ones.

The format, for the truth and for every release: one child node per level
(``"state"``, ``"county"``, ``"tract"``, ``"block_group"``, ``"block"``), each
a Dataset with ``counts`` of dims ``("unit", "cell")`` (``("run", "unit",
"cell")`` for several releases), coordinate ``unit`` (the unit's integer id),
``parent`` on ``unit`` (the parent's id, −1 for the state) and ``cell``
``0 … n−1``. Units are ordered by their parent's position, then by id, so
each parent's children are contiguous.

:func:`truth_tables` counts them from a table with columns ``state``,
``county``, ``tract``, ``block_group``, ``block`` and ``cell`` (the cell
index on the classification) and optionally ``count`` (the persons of the
row; default one per row): true cell counts per block, or a synthetic
population's persons with their cells,
``persons.assign(cell=block_cells(persons, classification))``
(:func:`adversary.analyses.reconstruction_study.block_cells`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import xarray as xr

from ...memory import check_memory
from ...scenarios.reconstruction.classification import REDUCED, Classification
from .operators import LEVELS

__all__ = ["Hierarchy", "level_dataset", "truth_tables"]


def level_dataset(counts: np.ndarray, units: np.ndarray, parents: np.ndarray) -> xr.Dataset:
    """One level's node: ``counts`` (units × cells, or runs × units × cells)."""
    dims = ("unit", "cell") if counts.ndim == 2 else ("run", "unit", "cell")
    coords = {"unit": units, "parent": ("unit", parents), "cell": np.arange(counts.shape[-1])}
    if counts.ndim == 3:
        coords["run"] = np.arange(counts.shape[0])
    return xr.Dataset({"counts": (dims, counts)}, coords=coords)


def truth_tables(data: pd.DataFrame, classification: Classification = REDUCED) -> xr.DataTree:
    """The true cell counts of every unit of every level (module docstring)."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a DataFrame, got {type(data).__name__}")
    missing = [c for c in (*LEVELS, "cell") if c not in data.columns]
    if missing:
        raise ValueError(f"data: columns {missing} are missing")
    cells = data["cell"].to_numpy()
    weights = data["count"].to_numpy() if "count" in data.columns else np.ones(len(data))
    if not np.issubdtype(cells.dtype, np.integer) or (
        cells.size and (cells.min() < 0 or cells.max() >= classification.n_cells)
    ):
        raise ValueError(f"data: cell must hold integers 0..{classification.n_cells - 1}")
    if np.any(weights < 0) or np.any(weights != np.round(weights)):
        raise ValueError("data: count must hold integers >= 0")
    geography = data[list(LEVELS)]
    blocks = geography.drop_duplicates().sort_values(list(LEVELS))
    for upper, lower in itertools.pairwise(LEVELS):
        pairs = blocks[[upper, lower]].drop_duplicates()
        if pairs[lower].duplicated().any():
            raise ValueError(f"data: a {lower} lies in two {upper} units")
    n_blocks, n_cells = len(blocks), classification.n_cells
    check_memory(8.0 * 2 * n_blocks * n_cells, f"data ({n_blocks} blocks × {n_cells} cells)")
    position = pd.Index(blocks["block"]).get_indexer(data["block"])
    counts = np.bincount(
        position * n_cells + cells, weights=weights, minlength=n_blocks * n_cells
    ).reshape(n_blocks, n_cells)
    counts = np.rint(counts).astype(np.int64)
    nodes = {}
    for depth in range(len(LEVELS) - 1, -1, -1):
        level = LEVELS[depth]
        units, first = np.unique(blocks[level].to_numpy(), return_index=True)
        order = np.sort(first)  # units in the sorted blocks' order: by parent, then id
        units = blocks[level].to_numpy()[order]
        parents = blocks[LEVELS[depth - 1]].to_numpy()[order] if depth else np.full(1, -1)
        if depth == len(LEVELS) - 1:
            level_counts = counts
        else:
            below = nodes[LEVELS[depth + 1]]
            index = pd.Index(units).get_indexer(below["parent"].values)
            level_counts = np.zeros((units.size, n_cells), dtype=np.int64)
            np.add.at(level_counts, index, below["counts"].values)
        nodes[level] = level_dataset(level_counts, units.astype(np.int64), parents.astype(np.int64))
    return xr.DataTree.from_dict({level: nodes[level] for level in LEVELS})


class Hierarchy:
    """The units of a tree in :func:`truth_tables`'s format: per level the ids, the parents'
    ids, and ``starts`` (the children of the upper level's unit ``f`` are rows
    ``starts[f]:starts[f + 1]``), checked."""

    def __init__(self, tree: xr.DataTree, cells: int):
        if not isinstance(tree, xr.DataTree):
            raise TypeError(f"truth must be an xarray.DataTree, got {type(tree).__name__}")
        missing = [level for level in LEVELS if level not in tree.children]
        if missing:
            raise ValueError(f"truth: levels {missing} are missing")
        self.units, self.parents, self.counts, self.starts = {}, {}, {}, {}
        for depth, level in enumerate(LEVELS):
            node = tree[level].dataset
            counts = node["counts"].values
            if counts.ndim != 2 or counts.shape[1] != cells:
                raise ValueError(
                    f"truth: {level} counts must be units × {cells} cells, got {counts.shape}"
                )
            if not np.issubdtype(counts.dtype, np.integer) or counts.min(initial=0) < 0:
                raise ValueError(f"truth: {level} counts must be integers >= 0")
            self.units[level] = node["unit"].values.astype(np.int64)
            self.parents[level] = node["parent"].values.astype(np.int64)
            self.counts[level] = counts.astype(np.int64)
            if depth == 0:
                if counts.shape[0] != 1:
                    raise ValueError(f"truth: one state, got {counts.shape[0]}")
                continue
            upper = LEVELS[depth - 1]
            index = pd.Index(self.units[upper]).get_indexer(self.parents[level])
            if np.any(index < 0) or np.any(np.diff(index) < 0):
                raise ValueError(f"truth: {level} units must be ordered by their parent in {upper}")
            sizes = np.bincount(index, minlength=self.units[upper].size)
            if np.any(sizes == 0):
                raise ValueError(f"truth: a {upper} unit has no {level} units")
            self.starts[level] = np.concatenate([[0], np.cumsum(sizes)])
