"""The geography of an accuracy study as a tree of units, and its tables of counts per unit.

Two forms are read:

- a synthetic :class:`adversary.population.synthetic.Geography` (its ``blocks``
  frame, one row per block with the columns ``state`` … ``block``);
- the **table format**: an :class:`xarray.DataTree` with one child node per
  level, named ``"state"``, ``"county"``, ``"tract"``, ``"block_group"``,
  ``"block"`` (the levels present must be the first ones of that list, from
  ``"state"`` on), each a Dataset with the integer coordinate ``unit`` (the
  unit's identifier) and the coordinate ``parent`` on dimension ``unit`` (the
  parent's identifier, −1 for a state), and — in a table of counts — the
  variable ``counts`` of dimensions ``("run", "unit", "cell")`` for published
  runs or ``("unit", "cell")`` for the truth.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..._validation import as_counts, as_exact_reals, as_integers
from ...memory import affordable_rows
from ..queries import LEVELS

__all__ = ["LEVELS", "Tree", "as_tree", "level_counts", "published_runs"]


@dataclass(frozen=True)
class Tree:
    """``levels`` (``LEVELS[:k]``); per level the unit identifiers ``units[level]`` and the
    position of each unit's parent among the previous level's units ``parents[level]``
    (−1 at the state level)."""

    levels: tuple[str, ...]
    units: dict[str, np.ndarray]
    parents: dict[str, np.ndarray]

    def family_sizes(self, level: str) -> np.ndarray:
        """For each unit of ``level``, the number of children of its parent (``n``)."""
        parents = self.parents[level]
        return np.bincount(parents)[parents]


def as_tree(geography) -> Tree:
    """The :class:`Tree` of a synthetic ``Geography`` or of a table-format ``DataTree``."""
    if isinstance(geography, xr.DataTree):
        return _from_tables(geography)
    blocks = getattr(geography, "blocks", None)
    if blocks is None or not all(level in getattr(blocks, "columns", ()) for level in LEVELS):
        raise TypeError(
            f"geography must be a synthetic Geography or an xarray.DataTree of levels, "
            f"got {type(geography).__name__}"
        )
    units = {"state": np.unique(as_integers(blocks["state"].to_numpy(), "geography state"))}
    parents = {"state": np.full(units["state"].size, -1)}
    for upper, level in itertools.pairwise(LEVELS):
        pairs = blocks[[level, upper]].drop_duplicates().sort_values(level)
        ids = as_integers(pairs[level].to_numpy(), f"geography {level}")
        if np.any(ids[1:] == ids[:-1]):
            raise ValueError(f"geography: a {level} lies in more than one {upper}")
        units[level] = ids
        parents[level] = np.searchsorted(units[upper], pairs[upper].to_numpy())
    return Tree(LEVELS, units, parents)


def _from_tables(data: xr.DataTree) -> Tree:
    present = [level for level in LEVELS if level in data.children]
    if not present or tuple(present) != LEVELS[: len(present)]:
        raise ValueError(
            f"geography: the tree's levels must be the first of {LEVELS} from 'state' on, "
            f"got {list(data.children)}"
        )
    units, parents = {}, {}
    for index, level in enumerate(present):
        node = data[level].dataset
        if "unit" not in node.coords or "parent" not in node.coords:
            raise ValueError(f"geography[{level!r}] needs the coordinates 'unit' and 'parent'")
        ids = as_integers(node["unit"].values, f"geography[{level!r}] unit")
        parent = as_integers(node["parent"].values, f"geography[{level!r}] parent")
        if ids.ndim != 1 or ids.size == 0 or np.unique(ids).size != ids.size:
            raise ValueError(f"geography[{level!r}] unit must be distinct identifiers")
        if node["parent"].dims != ("unit",):
            raise ValueError(f"geography[{level!r}] parent must be on dimension 'unit'")
        if index == 0:
            if np.any(parent != -1):
                raise ValueError("geography['state'] parent must be -1 for every state")
            position = np.full(ids.size, -1)
        else:
            upper = units[present[index - 1]]
            position = np.minimum(np.searchsorted(upper, parent), upper.size - 1)
            if np.any(upper[position] != parent):
                missing = parent[upper[position] != parent][0]
                raise ValueError(f"geography[{level!r}] parent {missing} is not a unit above it")
        order = np.argsort(ids, kind="stable")
        units[level], parents[level] = ids[order], position[order]
    return Tree(tuple(present), units, parents)


def _counts(data, level: str, units: np.ndarray, dims: tuple[str, ...], cells: int, name: str):
    """``data[level].counts`` checked (dims ``dims``, ``cells`` cells, the units of ``units``)
    and the order putting its units in the order of ``units`` (``None`` if they are)."""
    if not isinstance(data, xr.DataTree) or level not in data.children:
        raise ValueError(f"{name} must be an xarray.DataTree with a node {level!r}")
    node = data[level].dataset
    if "counts" not in node or node["counts"].dims != dims or "unit" not in node.coords:
        raise ValueError(f"{name}[{level!r}] needs a variable 'counts' of dims {dims}")
    if node.sizes["cell"] != cells:
        raise ValueError(f"{name}[{level!r}] counts must have {cells} cells (the classification)")
    ids = as_integers(node["unit"].values, f"{name}[{level!r}] unit")
    if ids.size != units.size or not np.array_equal(np.sort(ids), units):
        raise ValueError(f"{name}[{level!r}] must hold the same units as the geography")
    order = None if np.array_equal(ids, units) else np.argsort(ids, kind="stable")
    return node["counts"], order


def level_counts(data, level: str, units: np.ndarray, cells: int, name: str = "truth"):
    """The true counts ``data[level].counts`` (dims ``("unit", "cell")``, ``cells`` cells, the
    units of ``units`` in that order) as float64 counts >= 0."""
    counts, order = _counts(data, level, units, ("unit", "cell"), cells, name)
    values = counts.values if order is None else counts.values[order]
    return as_counts(values, f"{name}[{level!r}] counts").astype(np.float64)


def published_runs(data, level: str, units: np.ndarray, cells: int, name: str = "published"):
    """The runs of ``data[level].counts`` (dims ``("run", "unit", "cell")``, at least 2 runs)
    in chunks that fit the memory budget, at 32 bytes per run, unit and cell (the float64
    counts, a reordered copy, and the caller's errors on fewer vectors than cells): each a
    float64 array (runs × units in the order of ``units`` × cells)."""
    counts, order = _counts(data, level, units, ("run", "unit", "cell"), cells, name)
    runs = counts.sizes["run"]
    if runs < 2:
        raise ValueError(f"{name}[{level!r}] must hold at least 2 runs (the SE is over runs)")
    chunk = affordable_rows(32.0 * units.size * cells, runs, f"{name}[{level!r}] runs")
    array = counts.values
    for start in range(0, runs, chunk):
        values = array[start : start + chunk]
        yield as_exact_reals(
            values if order is None else values[:, order], f"{name}[{level!r}] counts"
        )
