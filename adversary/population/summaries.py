"""The join phase of a population run, on the client: records written, summaries added up.

Each partition's join is collected in partition order and its records
written (:func:`collect`); the persons above each threshold are added up by
attack, budget, prior and block size (:func:`summary_table`), and every
distinct parameter tuple is listed with its measures and persons
(:func:`parameter_table`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .measures import BLOCK_GROUP_KEY
from .model import PopulationModel
from .synthetic import BLOCK_SIZE_BINS

__all__ = ["collect", "parameter_table", "summary_table"]


def collect(submit, n_partitions: int, window: int, staging, bar):
    """Each partition's join in order: write its records (or keep them); collect summaries.

    At most ``window`` joins are submitted ahead of the one collected, so the
    workers hold a few partitions' finished records, not all of them.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, schema, kept, n_records = None, None, [], 0
    by_bin, by_county = [], []
    pending = {}
    try:
        for i in range(n_partitions):
            for ahead in range(len(pending) + i, min(n_partitions, i + window)):
                pending[ahead] = submit(ahead)
            future = pending.pop(i)
            part = future.result()
            future.release()
            bar.advance(int(part["persons"]))
            by_bin.append(part["by_bin"])
            by_county.append(part["by_county"])
            records = part["records"]
            n_records += len(records)
            if staging is None:
                kept.append(records)
                continue
            table = pa.Table.from_pandas(records, schema=schema, preserve_index=False)
            if writer is None:
                schema = table.schema
                writer = pq.ParquetWriter(staging / "records.parquet", schema)
            writer.write_table(table)
    finally:
        for future in pending.values():
            future.cancel()
        if writer is not None:
            writer.close()
    by_bin = pd.concat(by_bin, ignore_index=True)
    if staging is None:
        return pd.concat(kept, ignore_index=True), by_bin, by_county
    return n_records, by_bin, by_county


def summary_table(by_bin: pd.DataFrame, bins: pd.DataFrame, model: PopulationModel) -> pd.DataFrame:
    """Persons above each threshold by attack, budget, prior and block size bin (and ``"all"``),
    from the partitions' ``by_bin`` counts and the persons per bin ``bins``, in the model's
    orders."""
    labels = ["attack", "budget", "prior", "measure", "threshold"]
    summed = by_bin.groupby([*labels, "block_size_bin"], sort=False)["persons_above"].sum()
    summed = summed.reset_index()
    total = summed.groupby(labels, sort=False)["persons_above"].sum().reset_index()
    total["block_size_bin"] = "all"
    out = pd.concat([summed, total], ignore_index=True)
    persons = bins["persons"].to_dict()
    assessed = bins["persons_assessed"].to_dict()
    persons["all"], assessed["all"] = (
        int(bins["persons"].sum()),
        int(bins["persons_assessed"].sum()),
    )
    out["block_size_bin"] = out["block_size_bin"].astype(str)
    out["persons_assessed"] = out["block_size_bin"].map(assessed).astype(np.int64)
    out["persons"] = out["block_size_bin"].map(persons).astype(np.int64)
    out["budget_scale"] = out["budget"].map(model.budgets).astype(float)
    out["prior_value"] = out["prior"].map(model.priors).astype(float)
    order = {
        "attack": {a: i for i, a in enumerate(model.attacks)},
        "budget": {b: i for i, b in enumerate(model.budgets)},
        "prior": {p: i for i, p in enumerate(model.priors)},
        "block_size_bin": {b: i for i, b in enumerate([*BLOCK_SIZE_BINS, "all"])},
        "measure": {"marginal_risk": 0, "correct_decision_probability": 1},
    }
    sort_keys = [out[k].map(v) for k, v in order.items()]
    out = out.assign(**{f"_{k}": s for k, s in zip(order, sort_keys, strict=True)})
    out = out.sort_values(
        ["_attack", "_budget", "_prior", "_measure", "threshold", "_block_size_bin"]
    )
    columns = [
        "attack",
        "budget",
        "budget_scale",
        "prior",
        "prior_value",
        "measure",
        "threshold",
        "block_size_bin",
        "persons_above",
        "persons_assessed",
        "persons",
    ]
    out = out[columns].reset_index(drop=True)
    out["persons_above"] = out["persons_above"].astype(np.int64)
    return out


def parameter_table(tables, tuples, model, assessed) -> pd.DataFrame:
    """Every distinct tuple of each attack with its measures (``tables``) and the persons who
    have it (``assessed`` persons for the single block, whose tuple is the release's)."""
    frames = []
    for attack in model.attacks:
        table = tables[attack].copy()
        if attack == "block_group":
            table = table.merge(tuples["block_group"], on=list(BLOCK_GROUP_KEY), how="left")
        elif attack == "multi_level":
            table = table.merge(tuples["multi_level"], on=["levels"], how="left")
        else:
            table["persons"] = assessed
        table.insert(0, "attack", attack)
        frames.append(table)
    out = pd.concat(frames, ignore_index=True)
    for column in (*BLOCK_GROUP_KEY, "levels"):
        if column in out:
            out[column] = out[column].astype("Int64")
    out["prior_value"] = out["prior"].map(model.priors).astype(float)
    return out
