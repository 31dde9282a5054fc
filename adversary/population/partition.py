"""The work on one partition (a group of whole counties, or tracts): pure functions.

Every function takes a partition's table and returns a new one; none depends
on which other units share the partition, so a population run's results do
not depend on how the units are grouped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .measures import BLOCK_GROUP_KEY, MEASURES
from .model import LEVELS, PopulationModel
from .schema import COUNT, GEOGRAPHY, RECORD_ID
from .synthetic import BLOCK_SIZE_BINS, block_size_bin

__all__ = [
    "CELL_COLUMNS",
    "assessed_records",
    "cell_counts",
    "finish",
    "measure_column",
    "parameter_tuples",
]

#: Count of the record's cell at each level (block first): ``x1``, ``x2``, ….
CELL_COLUMNS = {level: f"cell_{level}" for level in LEVELS}


def measure_column(attack: str, budget: str, prior: str, measure: str) -> str:
    """Name of a measure column of the per-record table: ``attack:budget:prior:measure``."""
    return f"{attack}:{budget}:{prior}:{measure}"


def cell_counts(frame: pd.DataFrame, characteristics, level: str) -> pd.DataFrame:
    """Persons per ``(level unit, cell)``: columns ``level``, the characteristics, ``count``."""
    keys = [level, *characteristics]
    return frame.groupby(keys, sort=True, observed=True, dropna=False)[COUNT].sum().reset_index()


def assessed_records(
    frame: pd.DataFrame,
    model: PopulationModel,
    upper: dict[str, pd.DataFrame],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The partition's records in small cells, with their counts; and persons per size bin.

    ``upper`` holds :func:`cell_counts` summed over all partitions for the
    levels the partition does not contain whole (the state, for county
    partitions). Returns the records with ``count > 0`` whose cell has at most
    ``model.small_cell_max`` people in their block, with ``block_size``,
    ``block_size_bin``, the cell count at each level (:data:`CELL_COLUMNS`),
    ``other_blocks`` (d: the block group's other blocks in the data, empty
    ones included), ``known_count`` (``m = x1 - 1``) and ``levels`` (ℓ: the
    levels, from the block up, where the cell has at most ``small_cell_max``
    people), sorted by ``(county, record_id)``; and one row per size bin with
    ``persons`` (all) and ``persons_assessed``.
    """
    chars = list(model.characteristics)
    limit = int(model.small_cell_max)
    work = frame.copy()
    cell = work.groupby(chars, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    work["_cell"] = cell
    work["block_size"] = work.groupby("block", sort=False)[COUNT].transform("sum")
    work["other_blocks"] = work.groupby("block_group", sort=False)["block"].transform("nunique") - 1
    for level in LEVELS:
        column = CELL_COLUMNS[level]
        if level in upper:
            table = upper[level].rename(columns={COUNT: column})
            work = work.merge(table, on=[level, *chars], how="left", sort=False, validate="m:1")
            work[column] = work[column].fillna(0).astype(np.int64)
        else:
            work[column] = work.groupby([level, "_cell"], sort=False)[COUNT].transform("sum")
    work["block_size_bin"] = block_size_bin(work["block_size"].to_numpy())
    small = np.column_stack([work[CELL_COLUMNS[lv]].to_numpy() <= limit for lv in LEVELS])
    keep = (work[COUNT].to_numpy() > 0) & small[:, 0]
    work["levels"] = small.sum(axis=1)
    work["known_count"] = work[CELL_COLUMNS["block"]] - 1

    bins = pd.DataFrame(
        {
            "block_size_bin": pd.Categorical(
                list(BLOCK_SIZE_BINS), categories=list(BLOCK_SIZE_BINS), ordered=True
            )
        }
    )
    persons = work.groupby("block_size_bin", observed=False)[COUNT].sum()
    assessed = work[keep].groupby("block_size_bin", observed=False)[COUNT].sum()
    bins["persons"] = persons.reindex(bins["block_size_bin"]).fillna(0).to_numpy(np.int64)
    bins["persons_assessed"] = assessed.reindex(bins["block_size_bin"]).fillna(0).to_numpy(np.int64)

    columns = [
        RECORD_ID,
        *GEOGRAPHY,
        *chars,
        COUNT,
        "block_size",
        "block_size_bin",
        *CELL_COLUMNS.values(),
        "other_blocks",
        "known_count",
        "levels",
    ]
    out = work.loc[keep, columns].rename(columns={COUNT: "persons"})
    out = out.sort_values(["county", RECORD_ID], kind="stable").reset_index(drop=True)
    for column in (*CELL_COLUMNS.values(), "other_blocks", "known_count", "levels", "block_size"):
        out[column] = out[column].astype(np.int64)
    return out, bins


def parameter_tuples(records: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Distinct parameter tuples of assessed records, with the persons who have each."""
    bg = list(BLOCK_GROUP_KEY)
    return {
        "block_group": records.groupby(bg, sort=True)["persons"].sum().reset_index(),
        "multi_level": records.groupby(["levels"], sort=True)["persons"].sum().reset_index(),
    }


def finish(
    records: pd.DataFrame, model: PopulationModel, tables: dict[str, pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Join the measures to the records; count persons above each threshold.

    ``tables`` maps each attack to its measures (:mod:`.measures`) for every
    budget and prior. Returns the per-record table (one measure column per
    attack, budget, prior and measure, :func:`measure_column`), the persons
    above each threshold by size bin, and the same by county.
    """
    out = records.copy()
    keys = {"single_block": [], "block_group": list(BLOCK_GROUP_KEY), "multi_level": ["levels"]}
    for attack in model.attacks:
        table = tables[attack]
        for budget in model.budgets:
            for prior in model.priors:
                part = table[(table["budget"] == budget) & (table["prior"] == prior)]
                names = {m: measure_column(attack, budget, prior, m) for m in MEASURES}
                part = part[[*keys[attack], *MEASURES]].rename(columns=names)
                if keys[attack]:
                    out = out.merge(part, on=keys[attack], how="left", sort=False, validate="m:1")
                else:
                    for name in names.values():
                        out[name] = float(part[name].iloc[0])
                missing = out[list(names.values())].isna().any(axis=1).to_numpy()
                if missing.any():  # pragma: no cover - a bug, not bad input
                    raise RuntimeError(f"{attack}: no measures for some records")
    by_bin, by_county = [], []
    thresholds = {
        "marginal_risk": model.risk_thresholds,
        "correct_decision_probability": model.decision_thresholds,
    }
    persons = out["persons"].to_numpy()
    for attack in model.attacks:
        for budget in model.budgets:
            for prior in model.priors:
                for measure in MEASURES:
                    values = out[measure_column(attack, budget, prior, measure)].to_numpy()
                    for threshold in thresholds[measure]:
                        above = np.where(values > threshold, persons, 0)
                        labels = {
                            "attack": attack,
                            "budget": budget,
                            "prior": prior,
                            "measure": measure,
                            "threshold": threshold,
                        }
                        frame = pd.DataFrame(
                            {"block_size_bin": out["block_size_bin"], "persons_above": above}
                        )
                        counts = frame.groupby("block_size_bin", observed=False)[
                            "persons_above"
                        ].sum()
                        by_bin.append(
                            pd.DataFrame(
                                {**labels, "block_size_bin": list(BLOCK_SIZE_BINS)}
                            ).assign(
                                persons_above=counts.reindex(list(BLOCK_SIZE_BINS))
                                .fillna(0)
                                .to_numpy(np.int64)
                            )
                        )
                        county = (
                            pd.DataFrame({"county": out["county"], "persons_above": above})
                            .groupby("county", sort=True)["persons_above"]
                            .sum()
                        )
                        county = county[county > 0]
                        by_county.append(
                            pd.DataFrame(
                                {
                                    "county": county.index,
                                    **labels,
                                    "persons_above": county.to_numpy(np.int64),
                                }
                            )
                        )
    return out, pd.concat(by_bin, ignore_index=True), pd.concat(by_county, ignore_index=True)
