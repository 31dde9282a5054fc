"""The tables released after swapping: cell counts of every unit, swapped and true, on Dask.

:func:`swapped_tables` swaps a population of persons with a mechanism (any
object with ``swap(persons, *, seed)``, e.g.
:class:`~.household_swapping.HouseholdSwapping`) and counts the persons of
every cell of ``classification`` (default the 56 cells of ``REDUCED``) in
every unit of every level, after swapping and before, in the format of
:func:`adversary.topdown.every_query.truth_tables` (one ``xarray.DataTree``
node per level, ``counts`` of dims ``("unit", "cell")``) so that a swapped
release compares with a TopDown one unit by unit.

**Partitions.** The persons are cut into groups of whole areas of the
mechanism's ``within`` level (``state`` for a mechanism without one: any
mechanism seeded per state, or per a unit inside one, gives the same result),
about equal in persons (:func:`adversary.population.phases.assign_partitions`).
Each partition is swapped and counted on its own: a task on the Dask
``client`` (or a local cluster of ``workers``, :mod:`adversary.population.cluster`),
else in turn on this process. A mechanism seeds each area by its own
identifier, so the tables are the same bytes for any number of partitions and
workers.

:func:`mean_absolute_error` is the accuracy of a release at one level: the
mean over units and cells of ``|released - true|``.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ..analyses.reconstruction_study import block_cells
from ..population.cluster import cluster_client, scatter, worker_count
from ..population.phases import assign_partitions
from ..population.schema import GEOGRAPHY
from ..scenarios.reconstruction.classification import REDUCED, Classification
from ..topdown.every_query import LEVELS, truth_tables
from .households import HOUSEHOLD

__all__ = ["SwappedTables", "mean_absolute_error", "swapped_tables"]


@dataclass(frozen=True)
class SwappedTables:
    """:func:`swapped_tables`' result: ``truth`` and ``swapped`` (the tables before and after
    swapping, :func:`~adversary.topdown.every_query.truth_tables`' format), ``households``
    (group quarters excluded) and ``households_swapped`` (households that moved)."""

    truth: xr.DataTree
    swapped: xr.DataTree
    households: int
    households_swapped: int

    @property
    def rate(self) -> float:
        """The realised share of households swapped (0 with no household)."""
        return self.households_swapped / self.households if self.households else 0.0


def _partition_counts(persons, mechanism, seed, classification):
    """One partition swapped: the persons per (geography, cell) before and after, and its
    households and households swapped."""
    out = mechanism.swap(persons, seed=seed)
    cell = block_cells(persons, classification)
    keys = [*GEOGRAPHY, "cell"]
    counts = [
        frame[list(GEOGRAPHY)].assign(cell=cell).groupby(keys, sort=True).size()
        for frame in (persons, out)
    ]
    members = out[out[HOUSEHOLD].to_numpy() >= 0]
    moved = members.groupby(HOUSEHOLD, sort=False)["swapped"].first()
    return counts, len(moved), int(moved.sum())


def _tables(parts, index, classification) -> xr.DataTree:
    counts = pd.concat([part[0][index] for part in parts]).rename("count").reset_index()
    return truth_tables(counts, classification)


def swapped_tables(
    persons: pd.DataFrame,
    mechanism,
    *,
    seed: int,
    classification: Classification = REDUCED,
    partitions: int | None = None,
    client=None,
    workers: int | None = None,
) -> SwappedTables:
    """``persons`` (with a ``household`` column) swapped by ``mechanism`` with ``seed``, and
    the cell counts of every unit before and after (module docstring).

    ``partitions``: groups of whole ``within`` areas (default one per worker, or one
    without Dask); ``client``: a Dask client to run them on; ``workers``: without a
    client, the processes of a local cluster started for the call (default: no
    cluster, the partitions in turn on this process).
    """
    if not isinstance(persons, pd.DataFrame):
        raise TypeError(f"persons must be a pandas DataFrame, got {type(persons).__name__}")
    if not callable(getattr(mechanism, "swap", None)):
        raise TypeError(f"mechanism must have a swap(persons, *, seed) method, got {mechanism!r}")
    if not isinstance(classification, Classification):
        raise TypeError(f"classification must be a Classification, got {classification!r}")
    if partitions is not None and (
        isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1
    ):
        raise ValueError(f"partitions must be an integer >= 1, got {partitions!r}")
    level = getattr(mechanism, "within", "state")
    if level not in persons.columns:
        raise ValueError(f"persons: no {level!r} column (the mechanism's within)")
    distributed = client is not None or workers is not None
    with cluster_client(client, None, workers, None) if distributed else nullcontext() as dask:
        n_workers = worker_count(dask) if distributed else 1
        units = persons.groupby(level, sort=True).size().rename("persons").reset_index()
        count = min(partitions or n_workers, max(len(units), 1))
        assignment = assign_partitions(units, count)
        position = assignment.set_index(level)["partition"].reindex(persons[level]).to_numpy()
        frames = [persons[position == p] for p in range(int(assignment["partition"].max()) + 1)]
        args = (mechanism, seed, classification)
        if distributed:
            scattered = scatter(dask, frames)
            parts = dask.gather(
                [dask.submit(_partition_counts, f, *args, pure=False) for f in scattered]
            )
        else:
            parts = [_partition_counts(frame, *args) for frame in frames]
    return SwappedTables(
        truth=_tables(parts, 0, classification),
        swapped=_tables(parts, 1, classification),
        households=sum(part[1] for part in parts),
        households_swapped=sum(part[2] for part in parts),
    )


def mean_absolute_error(truth: xr.DataTree, release: xr.DataTree, level: str = "block") -> float:
    """The mean over the units of ``level`` and the cells of ``|release - truth|``.

    Both in :func:`~adversary.topdown.every_query.truth_tables`' format with the same
    units (e.g. :class:`SwappedTables`' ``truth`` and ``swapped``, or a TopDown release).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    true, released = truth[level].dataset, release[level].dataset
    if not np.array_equal(true["unit"].values, released["unit"].values):
        raise ValueError(f"release: its {level} units are not the truth's")
    difference = released["counts"].values.astype(np.float64) - true["counts"].values
    return float(np.abs(difference).mean())
