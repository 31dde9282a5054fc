"""The measures phase of a population run: each distinct parameter tuple computed once.

The distinct tuples of all partitions are merged (:func:`merge_tuples`) and
each is computed once, for every budget and prior, in tasks spread over the
workers (:func:`submit_measures`, over :mod:`.measures`), and gathered into
one table per attack (:func:`gathered_tables`), the block-group rows in key
order (:func:`in_key_order`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..memory import current_budget, within_budget
from .measures import (
    BLOCK_GROUP_KEY,
    MEASURES,
    block_group_batch,
    block_group_by_d,
    multi_level_measures,
    single_block_measures,
)

__all__ = [
    "TUPLES_PER_TASK",
    "gathered_tables",
    "in_key_order",
    "merge_tuples",
    "submit_measures",
]

#: Block-group parameter tuples per measure task.
TUPLES_PER_TASK = 16
#: Key columns of each attack's measures.
KEYS = {"single_block": (), "block_group": BLOCK_GROUP_KEY, "multi_level": ("levels",)}


def merge_tuples(frames, name):
    """The distinct tuples of attack ``name`` in the partitions' ``frames``, with their persons
    summed, in key order."""
    keys = list(BLOCK_GROUP_KEY) if name == "block_group" else ["levels"]
    return (
        pd.concat(frames, ignore_index=True).groupby(keys, sort=True)["persons"].sum().reset_index()
    )


def submit_measures(client, model, tuples) -> dict[str, list]:
    """``(future, tuples it computes)`` per task: per budget (single block), per budget and ℓ,
    per budget and d (block group; blocks alone in their block group by 16).

    Each task computes under the caller's memory budget, wherever it runs.
    """
    memory = current_budget()

    def submit(function, *args):
        return client.submit(within_budget, memory, function, *args)

    futures: dict[str, list] = {}
    for attack in model.attacks:
        futures[attack] = []
        for budget in model.budgets:
            if attack == "single_block":
                futures[attack].append((submit(single_block_measures, model, budget), 1))
            elif attack == "multi_level":
                for levels in tuples["multi_level"]["levels"]:
                    task = submit(multi_level_measures, model, budget, int(levels))
                    futures[attack].append((task, 1))
            else:
                futures[attack] += _block_group_tasks(submit, model, budget, tuples["block_group"])
    return futures


def _block_group_tasks(submit, model, budget, tuples: pd.DataFrame) -> list:
    """Blocks alone in their block group (d = 0) in batches; every other d in one task.

    ``(future, tuples)`` per task.

    Each task's rows are in key order, and the tasks in order of their first
    key's d, so :func:`in_key_order` restores the tuples' order.
    """
    keys = tuples[list(BLOCK_GROUP_KEY)].to_numpy(np.int64)
    alone = keys[keys[:, 2] == 0]
    tasks = []
    for first in range(0, len(alone), TUPLES_PER_TASK):
        batch = alone[first : first + TUPLES_PER_TASK]
        tasks.append((submit(block_group_batch, model, budget, batch), len(batch)))
    for d in np.unique(keys[keys[:, 2] > 0, 2]):
        mine = keys[keys[:, 2] == d, :2]
        tasks.append((submit(block_group_by_d, model, budget, int(d), mine), len(mine)))
    return tasks


def in_key_order(table: pd.DataFrame, model) -> pd.DataFrame:
    """Block-group rows by budget, key ``(x2, m, d)`` and prior, in the model's orders."""
    order = {
        "budget": table["budget"].map({b: i for i, b in enumerate(model.budgets)}),
        "prior": table["prior"].map({p: i for i, p in enumerate(model.priors)}),
    }
    keys = ["_budget", *BLOCK_GROUP_KEY, "_prior"]
    ranked = table.assign(_budget=order["budget"], _prior=order["prior"])
    return (
        ranked.sort_values(keys, kind="stable")
        .drop(columns=["_budget", "_prior"])
        .reset_index(drop=True)
    )


def gathered_tables(client, futures: dict[str, list], model) -> dict[str, pd.DataFrame]:
    """Each attack's measures from its tasks ``futures`` (:func:`submit_measures`), in one table:
    columns ``budget``, ``prior``, the attack's key and the measures.

    An attack with no tuples (no one in a small cell) has an empty table of
    those columns, so that the join assesses no one rather than failing.
    """
    tables = {}
    for attack, tasks in futures.items():
        frames = client.gather([future for future, _ in tasks])
        if frames:
            tables[attack] = pd.concat(frames, ignore_index=True)
        else:
            columns = {"budget": pd.Series(dtype=object), "prior": pd.Series(dtype=object)}
            columns |= {key: pd.Series(dtype=np.int64) for key in KEYS[attack]}
            columns |= {measure: pd.Series(dtype=np.float64) for measure in MEASURES}
            tables[attack] = pd.DataFrame(columns)
    if "block_group" in tables:
        tables["block_group"] = in_key_order(tables["block_group"], model)
    return tables
