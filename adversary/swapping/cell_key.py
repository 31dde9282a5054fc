"""The cell key method on tables (Bach 2020; the 2021 EU censuses), alone or after swapping.

**Record keys.** Every record gets a key, uniform on ``[0, 1)``: the top 53 bits
of the SplitMix64 hash (Steele, Lea & Flood 2014) of its ``record_id``
mixed with the hashed ``seed``, over ``2⁵³``. A key depends on its record's
identifier and the seed alone, so it is the same however the records are
partitioned or ordered; distinct identifiers give keys that behave as
independent uniforms (what the tests check of them).

**Cell keys.** A cell's key is the fractional part of the sum of its records'
keys (Bach 2020, Sec. 3.1), computed exactly: keys are held as integers
``k ∈ [0, 2⁵³)`` and summed modulo ``2⁵³`` (unsigned 64-bit sums wrap modulo
``2⁶⁴``, a multiple of ``2⁵³``), so the key does not depend on the order of
the sum either. Every unit of every level has its own cells, so its own keys
(a tract's cell key is the fractional part of the sum of its blocks' keys).

**Noise.** The cell's noise is the p-table's inverse cdf at the cell key: with
``C(z) = P[Z ≤ z]`` of the p-table (:class:`~adversary.noise.CellKeyNoise`,
``z ∈ {-E, …, E}``), the noise is the smallest ``z`` with ``C(z) > key``. A
uniform key gives noise distributed as the p-table; the same cell (the same
records) released twice gets the same noise.

**Small counts.** The published count is the count plus its noise. A cell of
count ``n`` with ``0 < n < E`` draws its noise from the p-table *conditioned
on* ``z ≥ -n`` (the inverse cdf of the conditional at the same key), so no
output is negative; a cell of count 0 stays 0, as in the EU method. (The ESS
``ptable`` tool instead re-solves the maximum-entropy problem for each small
count; the conditioned rows are a stated simplification: their mean is
above zero.) Cells of count ``≥ E`` get the p-table itself.

:class:`SwapThenCellKey` composes a swapping mechanism with the method, as
the 2021 EU censuses (targeted record swapping, then the cell key method on
the tables of the swapped records).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ..analyses.reconstruction_study import block_cells
from ..memory import check_memory
from ..noise import CellKeyNoise
from ..scenarios.reconstruction.classification import REDUCED, Classification
from ..topdown.every_query import LEVELS, truth_tables
from ..topdown.every_query.tables import level_dataset

__all__ = ["KEY_BITS", "CellKeyMethod", "SwapThenCellKey", "record_keys"]

#: Bits of a key: keys are integers in [0, 2**KEY_BITS), divided by 2**KEY_BITS.
KEY_BITS = 53
_KEY_MASK = np.uint64(2**KEY_BITS - 1)
#: A constant mixed into the seed so record keys do not reuse other streams' seeds.
_DOMAIN = np.uint64(0x5EED_CE11_0000_0005)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of ``x + γ`` (wrapping unsigned 64-bit arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _integer_keys(record_id, seed: int) -> np.ndarray:
    """Each record's key as an integer in ``[0, 2**KEY_BITS)`` (module docstring)."""
    ids = np.asarray(record_id)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("record_id must hold integers")
    salt = _splitmix64(np.array([seed], dtype=np.uint64) ^ _DOMAIN)
    return _splitmix64(ids.astype(np.int64).view(np.uint64) ^ salt) >> np.uint64(64 - KEY_BITS)


def _checked_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return int(seed)


def record_keys(record_id, *, seed: int) -> np.ndarray:
    """The record keys of ``record_id`` (integers) with ``seed``: float64 in ``[0, 1)``."""
    return _integer_keys(record_id, _checked_seed(seed)) / 2.0**KEY_BITS


def _truth(persons: pd.DataFrame, cell: np.ndarray, classification) -> xr.DataTree:
    """The true tables of ``persons`` whose cells are ``cell``."""
    return truth_tables(persons[list(LEVELS)].assign(cell=cell), classification)


def _key_tables(persons: pd.DataFrame, cell: np.ndarray, truth: xr.DataTree, seed: int) -> dict:
    """``{level: units × cells}`` cell keys (float64 in [0, 1)) on ``truth``'s units."""
    keys = _integer_keys(persons["record_id"].to_numpy(), seed)
    n_cells = truth["block"].dataset.sizes["cell"]
    out = {}
    for level in LEVELS:
        units = truth[level].dataset["unit"].values
        index = pd.Index(units).get_indexer(persons[level].to_numpy()) * n_cells + cell
        order = np.argsort(index, kind="stable")
        starts = np.flatnonzero(np.diff(index[order], prepend=-1))
        sums = np.zeros(units.size * n_cells, dtype=np.uint64)
        if order.size:
            sums[index[order][starts]] = np.add.reduceat(keys[order], starts)
        out[level] = ((sums & _KEY_MASK) / 2.0**KEY_BITS).reshape(units.size, n_cells)
    return out


@dataclass(frozen=True)
class CellKeyMethod:
    """The cell key method (module docstring) with the p-table ``noise``.

    Parameters
    ----------
    noise : CellKeyNoise
        The p-table: :class:`~adversary.noise.CellKeyNoise` ``(target_variance, bound)``
        (variance ``V`` in ``(0, E(E+1)/3]``, bound ``E ≥ 1``), no default.
    classification : Classification, default ``REDUCED``
        The cells of the tables (56 for ``REDUCED``).
    """

    noise: CellKeyNoise
    classification: Classification = REDUCED

    name = "cell_key"

    def __post_init__(self):
        if not isinstance(self.noise, CellKeyNoise):
            raise TypeError(f"noise must be a CellKeyNoise (the p-table), got {self.noise!r}")
        if not isinstance(self.classification, Classification):
            raise TypeError(f"classification must be a Classification, got {self.classification!r}")

    @property
    def label(self) -> str:
        return f"cell key method ({self.noise.label})"

    def noise_of(self, counts, keys) -> np.ndarray:
        """The noise of cells of ``counts`` (integers ≥ 0) and cell ``keys`` (in [0, 1)):
        the inverse cdf of the p-table, conditioned on ``z ≥ -count``, at the key; 0 for a
        count of 0 (module docstring). Vectorised; int64."""
        counts = np.asarray(counts)
        keys = np.asarray(keys, dtype=np.float64)
        if not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 0):
            raise ValueError("counts must be integers >= 0")
        if np.any(~((keys >= 0) & (keys < 1))):
            raise ValueError("keys must lie in [0, 1)")
        bound = self.noise.bound
        z = np.arange(-bound, bound + 1)
        cdf = np.cumsum(self.noise.pmf(z))
        cdf /= cdf[-1]
        lowest = np.maximum(-counts, -bound)
        below = np.where(lowest > -bound, cdf[np.maximum(lowest + bound - 1, 0)], 0.0)
        position = np.searchsorted(cdf, below + keys * (1.0 - below), side="right")
        # (a key within rounding of 1 can land past C(E) = 1: it is the last row's)
        noise = np.minimum(position, 2 * bound) - bound
        return np.where(counts == 0, 0, noise).astype(np.int64)

    def tables(self, persons: pd.DataFrame, *, seed: int) -> tuple[xr.DataTree, xr.DataTree]:
        """``(truth, released)``: the cell counts of every unit of every level of
        ``persons`` (``record_id``, the geography and the classification's columns) in
        :func:`~adversary.topdown.every_query.truth_tables`' format, and the same perturbed
        by the method with record keys of ``seed``."""
        seed = _checked_seed(seed)
        if not isinstance(persons, pd.DataFrame):
            raise TypeError(f"persons must be a pandas DataFrame, got {type(persons).__name__}")
        if "record_id" not in persons.columns:
            raise ValueError("persons: no 'record_id' column (the record keys' identifiers)")
        cell = block_cells(persons, self.classification)
        truth = _truth(persons, cell, self.classification)
        units = sum(truth[level].dataset.sizes["unit"] for level in LEVELS)
        check_memory(
            8.0 * 2 * units * self.classification.n_cells,
            f"persons ({units} units × {self.classification.n_cells} cells of keys)",
        )
        keys = _key_tables(persons, cell, truth, seed)
        nodes = {}
        for level in LEVELS:
            node = truth[level].dataset
            counts = node["counts"].values
            released = counts + self.noise_of(counts, keys[level])
            nodes[level] = level_dataset(released, node["unit"].values, node["parent"].values)
        return truth, xr.DataTree.from_dict(nodes)


@dataclass(frozen=True)
class SwapThenCellKey:
    """Swapping, then the cell key method on the swapped tables (the 2021 EU censuses).

    Parameters
    ----------
    swapping
        Any swapping mechanism (an object with ``swap(persons, *, seed)``, e.g.
        :class:`~.household_swapping.HouseholdSwapping`), no default.
    cell_key : CellKeyMethod
        The cell key method applied to the swapped persons' tables, no default.
    """

    swapping: object
    cell_key: CellKeyMethod

    def __post_init__(self):
        if not callable(getattr(self.swapping, "swap", None)):
            raise TypeError(
                f"swapping must have a swap(persons, *, seed) method, got {self.swapping!r}"
            )
        if not isinstance(self.cell_key, CellKeyMethod):
            raise TypeError(f"cell_key must be a CellKeyMethod, got {self.cell_key!r}")

    @property
    def name(self) -> str:
        return f"{self.swapping.name}+{self.cell_key.name}"

    @property
    def label(self) -> str:
        return f"{self.swapping.label}, then {self.cell_key.label}"

    def swap(self, persons: pd.DataFrame, *, seed: int) -> pd.DataFrame:
        """The swapping mechanism's :meth:`swap` (the records before the tables are made)."""
        return self.swapping.swap(persons, seed=seed)

    def tables(self, persons: pd.DataFrame, *, seed: int) -> tuple[xr.DataTree, xr.DataTree]:
        """``(truth, released)``: the true tables of ``persons`` and those of the persons
        swapped with ``seed`` perturbed by the cell key method (record keys of ``seed``)."""
        classification = self.cell_key.classification
        truth = _truth(persons, block_cells(persons, classification), classification)
        return truth, self.cell_key.tables(self.swap(persons, seed=seed), seed=seed)[1]
