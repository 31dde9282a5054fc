"""Household swapping of a million-person state, against giving it households.

Usage (from the repository root)::

    .venv/bin/python benchmarks/swapping.py [--persons N] [--rate R] [--repeat K]
                                            [--workers W] [--seed S] [--json]

One seeded synthetic state of ``--persons`` people (default 10⁶;
:func:`adversary.population.synthetic.synthetic_population`) is timed, in one
process, interleaved ``--repeat`` times (3; the fastest of each kept):

- ``households``: :func:`adversary.swapping.assign_households` on it — the
  baseline, the step every swapping study runs first;
- ``cells``: :func:`adversary.analyses.reconstruction_study.block_cells` of its
  persons (the 56 cells), a second baseline;
- ``swap <within>``: :meth:`HouseholdSwapping.swap_with_summary` at ``--rate``
  (0.05) within the county, the tract and the state (the issue's target: under
  30 s for the million persons on 2 cores);
- ``cell key``: :meth:`adversary.swapping.cell_key.CellKeyMethod.tables` of the
  persons (every unit's 56 cells and their perturbed values; p-table V = 2, E = 4).

Then, once, :func:`adversary.swapping.tables.swapped_tables` of the county swap
on this process and on a local cluster of ``--workers`` processes (2; started
and warmed up on a small state before the timed call), checked to give the
same tables. ``ratio`` is each time over the households' time. Each swap's
realised share of households swapped is reported with its ``z`` against the
binomial: ``(swapped - rate·n) / sqrt(n·rate·(1 - rate))``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported

from _gibbs import environment

from adversary.analyses.reconstruction_study import block_cells
from adversary.noise import CellKeyNoise
from adversary.population.cluster import local_cluster
from adversary.population.synthetic import synthetic_population
from adversary.swapping import HouseholdSwapping, assign_households
from adversary.swapping.cell_key import CellKeyMethod
from adversary.swapping.tables import swapped_tables

#: The issue's target for swapping a million-person state, in seconds (2 cores).
TARGET_S = 30.0
WITHIN = ("county", "tract", "state")


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def _same_tables(a, b) -> bool:
    return all(a[level].dataset.identical(b[level].dataset) for level in a.children)


def _tables(persons, households, rate, workers, seed) -> dict:
    mechanism = HouseholdSwapping(rate)
    here, in_process = _timed(swapped_tables, households, mechanism, seed=seed)
    with local_cluster(workers) as client:
        small = assign_households(persons.head(5_000), seed=seed)
        swapped_tables(small, mechanism, seed=seed, client=client)
        there, on_cluster = _timed(swapped_tables, households, mechanism, seed=seed, client=client)
    return {
        "in_process_s": in_process,
        "cluster_s": on_cluster,
        "workers": workers,
        "same_tables": _same_tables(here.swapped, there.swapped),
    }


def run(
    persons: int = 1_000_000, rate: float = 0.05, repeat: int = 3, workers: int = 2, seed: int = 0
) -> dict:
    population = synthetic_population(persons, seed=seed)
    method = CellKeyMethod(CellKeyNoise(2.0, 4))
    times = {"households": [], "cells": [], **{f"swap {w}": [] for w in WITHIN}, "cell key": []}
    realised = {}
    for _ in range(repeat):
        households, seconds = _timed(assign_households, population, seed=seed)
        times["households"].append(seconds)
        times["cells"].append(_timed(block_cells, population)[1])
        for within in WITHIN:
            mechanism = HouseholdSwapping(rate, within=within)
            (_, summary), seconds = _timed(mechanism.swap_with_summary, households, seed=seed)
            times[f"swap {within}"].append(seconds)
            n = summary.households
            realised[within] = {
                "households": n,
                "selected": summary.selected,
                "swapped": summary.swapped,
                "partners": summary.partners,
                "balanced": summary.balanced,
                "no_partner": summary.no_partner,
                "rate": summary.rate,
                "z": (summary.swapped - rate * n) / (n * rate * (1 - rate)) ** 0.5,
            }
        times["cell key"].append(_timed(method.tables, households, seed=seed)[1])
    best = {name: min(values) for name, values in times.items()}
    slowest_swap = max(best[f"swap {w}"] for w in WITHIN)
    return {
        "persons": persons,
        "rate": rate,
        "seconds": best,
        "ratio": {name: best[name] / best["households"] for name in best},
        "realised": realised,
        "tables": _tables(population, households, rate, workers, seed),
        "target_s": TARGET_S,
        "within_target": slowest_swap < TARGET_S,
        "environment": environment(),
    }


def format_table(result: dict) -> str:
    lines = [
        f"{result['persons']:,} persons, rate {result['rate']:g}",
        f"{'':<14}{'seconds':>10}{'ratio':>9}",
    ]
    for name, seconds in result["seconds"].items():
        lines.append(f"{name:<14}{seconds:>10.3f}{result['ratio'][name]:>9.2f}")
    lines.append(
        f"slowest swap under the target ({result['target_s']:.0f} s): "
        f"{'met' if result['within_target'] else 'NOT met'}"
    )
    lines.append(
        f"{'within':<8}{'households':>11}{'selected':>9}{'swapped':>9}{'partners':>9}"
        f"{'balanced':>9}{'no_partner':>11}{'rate':>9}{'z':>7}"
    )
    for within, row in result["realised"].items():
        lines.append(
            f"{within:<8}{row['households']:>11,}{row['selected']:>9,}{row['swapped']:>9,}"
            f"{row['partners']:>9,}{row['balanced']:>9,}{row['no_partner']:>11,}"
            f"{row['rate']:>9.5f}{row['z']:>7.2f}"
        )
    tables = result["tables"]
    lines.append(
        f"swapped_tables (county): {tables['in_process_s']:.2f} s in process, "
        f"{tables['cluster_s']:.2f} s on {tables['workers']} workers; "
        f"same tables: {tables['same_tables']}"
    )
    lines.append(f"load average {result['environment']['load_average_1min']:.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.persons, args.rate, args.repeat, args.workers, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
