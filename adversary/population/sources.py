"""What a population run assesses: a validated table, or a synthetic geography.

A table (a path or a DataFrame) is read and checked on the client
(:func:`~adversary.population.schema.validate`) before anything runs, and its
partitions are scattered to the workers (:class:`TableSource`). A synthetic
geography's persons are generated on the workers, county by county, from the
seeded skeleton (:class:`SyntheticSource`, :func:`synthetic_partition`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cluster import scatter
from .schema import COUNT, GEOGRAPHY, RECORD_ID, PopulationInputError, read_table, validate
from .synthetic import Geography, synthetic_persons

__all__ = ["SyntheticSource", "TableSource", "described", "source_of", "synthetic_partition"]


class TableSource:
    """A validated table held by the client; partitions are scattered and kept on the workers."""

    regenerated = False

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def units(self, level: str) -> pd.DataFrame:
        keys = ["county"] if level == "county" else ["county", "tract"]
        return self.frame.groupby(keys, sort=True)[COUNT].sum().rename("persons").reset_index()

    def futures(self, client, level: str, assignment: pd.DataFrame) -> list:
        index = self.frame[[level]].merge(assignment[[level, "partition"]], on=level, how="left")
        groups = self.frame.groupby(index["partition"].to_numpy(), sort=True)
        frames = [part.reset_index(drop=True) for _, part in groups]
        return scatter(client, frames)

    @property
    def persons(self) -> int:
        return int(self.frame[COUNT].sum())

    def unit_counts(self) -> dict[str, int]:
        return {level: int(self.frame[level].nunique()) for level in GEOGRAPHY}

    @property
    def rows(self) -> int:
        return len(self.frame)


class SyntheticSource:
    """A synthetic geography; each partition's persons are generated on a worker.

    ``regenerated``: a partition's persons are generated afresh in each phase
    that needs them (counts, small cells, join) and never kept, so a worker
    holds only the partitions it is working on.
    """

    regenerated = True

    def __init__(self, geography: Geography, characteristics):
        self.geography = geography
        self.characteristics = list(characteristics)
        missing = [c for c in self.characteristics if c not in _SYNTHETIC_CHARACTERISTICS]
        if missing:
            raise ValueError(
                "characteristics: a synthetic population has "
                f"{', '.join(_SYNTHETIC_CHARACTERISTICS)}; the model asks for {', '.join(missing)}"
            )

    def units(self, level: str) -> pd.DataFrame:
        keys = ["county"] if level == "county" else ["county", "tract"]
        return (
            self.geography.blocks.groupby(keys, sort=True)["size"]
            .sum()
            .rename("persons")
            .reset_index()
        )

    def recipes(self, level: str, assignment: pd.DataFrame) -> list[tuple]:
        """The arguments of :func:`synthetic_partition` for each partition, in order."""
        every = self.geography.blocks
        blocks = every.merge(assignment[[level, "partition"]], on=level)
        first = self.geography.counties().set_index("county_index")["first_record"]
        out = []
        for _, part in blocks.groupby("partition", sort=True):
            counties = np.unique(part["county_index"])
            # Whole counties are generated (a county's persons do not depend on how it is
            # partitioned); with tracts, the partition keeps its own.
            out.append(
                (
                    every[every["county_index"].isin(counties)],
                    first.reindex(counties).to_dict(),
                    self.geography.seed,
                    self.characteristics,
                    None if level == "county" else np.unique(part["tract"]),
                )
            )
        return out

    @property
    def persons(self) -> int:
        return self.geography.persons

    def unit_counts(self) -> dict[str, int]:
        return self.geography.units()

    @property
    def rows(self) -> int:
        return self.geography.persons


_SYNTHETIC_CHARACTERISTICS = ("age", "sex", "voting_age", "hispanic", "race", "hhgq")


def synthetic_partition(blocks, first_records, seed, characteristics, tracts):
    """The persons of a partition: its counties' (``blocks`` holds all their blocks), or of
    its ``tracts`` among them when partitioned by tract."""
    frames = []
    for county_index, first in sorted(first_records.items()):
        persons = synthetic_persons(blocks, county_index, seed, first)
        if tracts is not None:
            persons = persons[persons["tract"].isin(tracts)]
        frames.append(persons)
    frame = pd.concat(frames, ignore_index=True)
    frame[COUNT] = np.ones(len(frame), dtype=np.int64)
    return frame[[*GEOGRAPHY, *characteristics, COUNT, RECORD_ID]]


def described(data) -> dict:
    """What was assessed, in JSON: enough to run it again."""
    if isinstance(data, Geography):
        states = int(data.blocks["state"].nunique())
        return {"synthetic": data.persons, "states": states, "seed": data.seed}
    if isinstance(data, pd.DataFrame):
        return {"table": "DataFrame", "rows": len(data)}
    return {"path": str(data)}


def source_of(data, model):
    """``data`` (a path, a DataFrame or a :class:`~adversary.population.synthetic.Geography`) as
    the source of a run under ``model``; a table is read and validated here."""
    chars = list(model.characteristics)
    if isinstance(data, Geography):
        return SyntheticSource(data, chars)
    if isinstance(data, pd.DataFrame):
        frame, file = data, None
    else:
        frame, file = read_table(data, [*GEOGRAPHY, *chars, COUNT, RECORD_ID]), data
    source = TableSource(validate(frame, chars, file=file))
    if source.persons == 0:
        shape = "has no rows" if source.rows == 0 else "counts no one (every count is 0)"
        message = f"nothing to assess: the table {shape}"
        raise PopulationInputError(message if file else f"data: {message}", file=file)
    return source
