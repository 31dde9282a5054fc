"""Population assessment: records per second on 1 and 2 workers, and what de-duplication saves.

Usage (from the repository root)::

    export PYTENSOR_FLAGS=base_compiledir=$PWD/build/pytensor
    .venv/bin/python benchmarks/population.py [--persons N] [--model NAME] [--sample K]
                                              [--seed S] [--quick] [--json]

One synthetic state of ``--persons`` people (default 200 000;
:mod:`adversary.population.synthetic`) is assessed under the population model
(default the shipped ``population_gvhr``: three attacks, three priors, three
budgets) twice, end to end through :func:`adversary.population.engine.assess`:
on a local cluster of 1 worker and on one of 2 workers (one thread each).
Before its timed run each cluster assesses a small population once, so that
the workers have imported the package; cluster start-up is not timed.

Reported:

- the peak resident memory of each worker (over its warm-up and timed run)
  and of the client process;
- ``records/s``: input records (persons) over the wall-clock of the whole
  assessment (generation on the workers, counts, measures, join, summary; no
  files written), for each worker count, and the ratio 2 workers / 1 worker;
- the block-group attack's distinct tuples computed in one process twice:
  one by one (``block_group_batch``, the engine before truth-independent
  maps) and with one decision map per ``(budget, d)`` for every truth and
  prior (``block_group_by_d``, what the engine runs), their ratio and the
  largest difference of their numbers;
- the time of the measures phase (each distinct parameter tuple once, on
  1 worker) against computing every assessed record's measures without
  de-duplication: each attack's scenario function called with the record's
  own arguments, for every budget and prior, in one process. That is timed on
  ``--sample`` random assessed records (default 200) and scaled to all of
  them; the sampled records' numbers are checked equal to the assessment's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault(
    "PYTENSOR_FLAGS",
    f"base_compiledir={Path(__file__).resolve().parents[1] / 'build' / 'pytensor'}",
)

import numpy as np
import pandas as pd

from adversary.population.cluster import local_cluster
from adversary.population.engine import assess
from adversary.population.measures import (
    BLOCK_GROUP_KEY,
    block_group_batch,
    block_group_by_d,
    block_group_measures,
    multi_level_measures,
    single_block_measures,
)
from adversary.population.model import load_population_model
from adversary.population.partition import measure_column
from adversary.population.synthetic import synthetic_geography


def _peak_rss_mb() -> float:
    """This process's peak resident set size, in MB (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed_run(n_workers, geography, model, warmup):
    with local_cluster(n_workers) as client:
        assess(warmup, model, client=client)
        start = time.perf_counter()
        result = assess(geography, model, client=client)
        wall = time.perf_counter() - start
        workers_mb = sorted(client.run(_peak_rss_mb).values())
    return result, wall, {"workers_mb": workers_mb, "client_mb": _peak_rss_mb()}


def _block_group_phase(model, parameters) -> dict:
    """The block-group tuples one by one and by one map per (budget, d), in this process."""
    rows = parameters[parameters["attack"] == "block_group"]
    keys = rows[list(BLOCK_GROUP_KEY)].drop_duplicates().to_numpy(np.int64)
    start = time.perf_counter()
    one_by_one = pd.concat([block_group_batch(model, b, keys) for b in model.budgets])
    per_tuple = time.perf_counter() - start
    start = time.perf_counter()
    frames = []
    for budget in model.budgets:
        if np.any(keys[:, 2] == 0):
            frames.append(block_group_batch(model, budget, keys[keys[:, 2] == 0]))
        for d in np.unique(keys[keys[:, 2] > 0, 2]):
            frames.append(block_group_by_d(model, budget, int(d), keys[keys[:, 2] == d, :2]))
    by_map = time.perf_counter() - start
    columns = ["budget", "prior", *BLOCK_GROUP_KEY]
    joined = one_by_one.merge(pd.concat(frames), on=columns, suffixes=("", "_map"))
    worst = max(
        float(np.max(np.abs(joined[m] - joined[f"{m}_map"])))
        for m in ("marginal_risk", "correct_decision_probability")
    )
    return {
        "tuples": len(keys),
        "distinct_d": int(np.unique(keys[:, 2]).size),
        "per_tuple_s": per_tuple,
        "maps_s": by_map,
        "ratio_per_tuple_over_maps": per_tuple / by_map,
        "max_abs_difference": worst,
    }


def _record_measures(model, record) -> dict:
    """Every measure of one record, computed for it alone (no de-duplication)."""
    out = {}
    for budget in model.budgets:
        for attack in model.attacks:
            if attack == "single_block":
                table = single_block_measures(model, budget)
            elif attack == "multi_level":
                table = multi_level_measures(model, budget, int(record["levels"]))
            else:
                table = block_group_measures(
                    model,
                    budget,
                    int(record["cell_block_group"]),
                    int(record["known_count"]),
                    int(record["other_blocks"]),
                )
            for row in table.itertuples():
                for measure in ("marginal_risk", "correct_decision_probability"):
                    out[measure_column(attack, budget, row.prior, measure)] = getattr(row, measure)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=200_000)
    parser.add_argument("--model", default="population_gvhr")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2023)
    parser.add_argument("--quick", action="store_true", help="30 000 persons, 50 sampled")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.persons, args.sample = 30_000, 50

    model = load_population_model(args.model)
    geography = synthetic_geography(args.persons, seed=args.seed)
    warmup = synthetic_geography(2_000, seed=args.seed + 1)

    runs = {}
    for n_workers in (1, 2):
        result, wall, memory = _timed_run(n_workers, geography, model, warmup)
        runs[n_workers] = {
            "wall_s": wall,
            "peak_memory": memory,
            "records_per_s": args.persons / wall,
            "assessed_per_s": result.stats["records_assessed"] / wall,
            "timings": result.timings,
            "stats": result.stats,
        }
        if n_workers == 1:
            reference = result

    records = reference.records
    rng = np.random.default_rng(args.seed)
    sample = records.iloc[
        rng.choice(len(records), size=min(args.sample, len(records)), replace=False)
    ]
    start = time.perf_counter()
    worst = 0.0
    for _, record in sample.iterrows():
        for column, value in _record_measures(model, record).items():
            worst = max(worst, abs(value - record[column]))
    per_record = (time.perf_counter() - start) / len(sample)
    without = per_record * len(records)
    measures_1 = runs[1]["timings"]["measures"]
    block_group = (
        _block_group_phase(model, reference.parameters) if "block_group" in model.attacks else None
    )

    out = {
        "config": {
            "persons": args.persons,
            "model": model.name,
            "attacks": list(model.attacks),
            "priors": list(model.priors),
            "budgets": dict(model.budgets),
            "seed": args.seed,
            "sample": len(sample),
        },
        "runs": {str(k): v for k, v in runs.items()},
        "speedup_2_over_1": runs[2]["records_per_s"] / runs[1]["records_per_s"],
        "block_group_maps": block_group,
        "deduplication": {
            "records_assessed": len(records),
            "distinct_tuples": reference.stats["distinct_tuples"],
            "measures_phase_s_1_worker": measures_1,
            "assessment_s_1_worker": runs[1]["wall_s"],
            "without_dedup_s_per_record": per_record,
            "without_dedup_s_estimated": without,
            "ratio_without_over_measures_phase": without / measures_1,
            "ratio_without_over_assessment": without / runs[1]["wall_s"],
            "max_abs_difference_sampled": worst,
        },
        "environment": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
    }
    if args.json:
        json.dump(out, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
        return 0
    print(f"{args.persons:,} persons, {len(records):,} assessed records; model {model.name}")
    print(
        f"{'workers':>7} {'wall s':>8} {'records/s':>10} {'assessed/s':>10}"
        f" {'counts s':>8} {'measures s':>10} {'join s':>7}"
    )
    for k, run in runs.items():
        t = run["timings"]
        print(
            f"{k:>7} {run['wall_s']:>8.1f} {run['records_per_s']:>10,.0f}"
            f" {run['assessed_per_s']:>10,.0f} {t['counts']:>8.1f} {t['measures']:>10.1f}"
            f" {t['join_and_write']:>7.1f}"
        )
    print(f"records/s, 2 workers over 1: {out['speedup_2_over_1']:.2f}")
    for k, run in runs.items():
        memory = run["peak_memory"]
        workers = ", ".join(f"{mb:,.0f}" for mb in memory["workers_mb"])
        print(
            f"peak RSS, {k} worker(s): workers {workers} MB; client {memory['client_mb']:,.0f} MB"
            " (the client's peak is over the whole benchmark so far)"
        )
    if block_group is not None:
        print(
            f"block group, {block_group['tuples']:,} distinct tuples ({block_group['distinct_d']}"
            f" values of d) x {len(model.budgets)} budgets x {len(model.priors)} priors, one"
            f" process: one by one {block_group['per_tuple_s']:.1f} s, one map per (budget, d)"
            f" {block_group['maps_s']:.1f} s: {block_group['ratio_per_tuple_over_maps']:.1f}x;"
            f" largest difference {block_group['max_abs_difference']:.1e}"
        )
    dedup = out["deduplication"]
    print(
        f"distinct tuples per budget and prior: {dedup['distinct_tuples']};"
        f" measures phase on 1 worker {measures_1:.1f} s; without de-duplication"
        f" {per_record * 1e3:.1f} ms per record x {len(records):,} = {without:,.0f} s"
        f" (estimated from {len(sample)} records):"
        f" {dedup['ratio_without_over_measures_phase']:,.0f}x"
        f" the measures phase, {dedup['ratio_without_over_assessment']:,.0f}x the whole assessment;"
        f" sampled records agree to {worst:.1e}"
    )
    print(f"load average {out['environment']['load_average']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
