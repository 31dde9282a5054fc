"""TopDown with every query over a synthetic state, against the per-cell detailed-only TopDown.

Usage (from the repository root)::

    .venv/bin/python benchmarks/topdown_every_query.py [--persons N] [--workers W] [--seed S]

On one synthetic state of ``--persons`` people (default 10⁶;
:func:`adversary.population.synthetic.synthetic_population`, its persons in the
56 cells of ``REDUCED``), on a local Dask cluster of ``--workers`` processes
(default 2), measured in the same run:

- ``every query``: :func:`adversary.topdown.every_query_topdown` under the
  2020 allocation (``pl94-2020-persons``, every PL 94-171 query at every
  level, GLS per unit, the non-negative fit for a non-diagonal ``AᵀWA``);
- ``detailed only`` (the baseline): the same function under the same
  allocation with every level's share on the detailed query alone — the
  per-cell TopDown of :func:`adversary.topdown.topdown` (``AᵀWA`` diagonal,
  every cell fitted by one sort).

``ratio`` is each time over the baseline's; the issue's target for every
query is under 2 minutes on 2 cores. The published tables are checked
(consistent at every level, non-negative integers, the state's total the
invariant) and each level's mean absolute error per cell is reported.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported (by the analyses and _gibbs)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _gibbs import environment  # noqa: E402

from adversary.analyses.reconstruction_study import block_cells  # noqa: E402
from adversary.budget import get_preset  # noqa: E402
from adversary.population.cluster import local_cluster  # noqa: E402
from adversary.population.synthetic import synthetic_population  # noqa: E402
from adversary.topdown import every_query_topdown, truth_tables  # noqa: E402
from adversary.topdown.every_query import LEVELS  # noqa: E402

#: The issue's target for every query over a million persons on 2 cores, in seconds.
TARGET_S = 120.0
PRESET = get_preset("pl94-2020-persons")


def detailed_only():
    """The preset with every level's budget on the detailed query."""
    row = tuple(Fraction(q == "detailed") for q in PRESET.queries)
    return dataclasses.replace(PRESET, query_shares=(row,) * len(PRESET.levels))


def consistent(tree, total: int) -> bool:
    """Children sum to their parent in every cell, non-negative integers, the state's total."""
    ok = int(tree["state"]["counts"].values.sum()) == total
    for upper, level in itertools.pairwise(LEVELS):
        counts = tree[level]["counts"].values
        index = pd.Index(tree[upper]["unit"].values).get_indexer(tree[level]["parent"].values)
        sums = np.zeros_like(tree[upper]["counts"].values)
        np.add.at(sums, index, counts)
        ok &= counts.dtype == np.int64 and counts.min() >= 0
        ok &= bool(np.array_equal(sums, tree[upper]["counts"].values))
    return bool(ok)


def run(persons: int, workers: int, seed: int = 0) -> dict:
    start = time.perf_counter()
    population = synthetic_population(persons, seed=seed)
    truth = truth_tables(population.assign(cell=block_cells(population)))
    setup_s = time.perf_counter() - start
    total = int(truth["state"]["counts"].values.sum())
    rows = {}
    with local_cluster(workers) as client:
        for name, allocation in (("detailed only", detailed_only()), ("every query", PRESET)):
            start = time.perf_counter()
            tree = every_query_topdown(truth, allocation, seed=seed, client=client)
            seconds = time.perf_counter() - start
            rows[name] = {
                "seconds": seconds,
                "consistent": consistent(tree, total),
                "mean_abs_error": {
                    level: float(
                        np.abs(tree[level]["counts"].values - truth[level]["counts"].values).mean()
                    )
                    for level in LEVELS
                },
            }
    baseline = rows["detailed only"]["seconds"]
    for row in rows.values():
        row["ratio"] = row["seconds"] / baseline
    return {
        "persons": persons,
        "workers": workers,
        "units": {level: int(truth[level].dataset.sizes["unit"]) for level in LEVELS},
        "setup_s": setup_s,
        "rows": rows,
        "target_s": TARGET_S,
        "within_target": rows["every query"]["seconds"] < TARGET_S,
        "environment": environment(),
    }


def format_table(result: dict) -> str:
    units = ", ".join(f"{n:,} {level}" for level, n in result["units"].items())
    lines = [
        f"{result['persons']:,} persons ({units}); {result['workers']} workers; "
        f"population and truth {result['setup_s']:.1f} s",
        f"{'estimator':<15}{'s':>9}{'ratio':>8}  consistent  "
        + "".join(f"{level:>13}" for level in LEVELS),
    ]
    for name, row in result["rows"].items():
        errors = "".join(f"{row['mean_abs_error'][level]:>13.3f}" for level in LEVELS)
        lines.append(
            f"{name:<15}{row['seconds']:>9.1f}{row['ratio']:>8.2f}  {row['consistent']!s:<10}  "
            + errors
        )
    lines += [
        "ratio = time over the detailed-only baseline's; last columns: mean |published - true| "
        "per cell",
        f"every query: target < {result['target_s']:.0f} s: "
        f"{'met' if result['within_target'] else 'NOT met'}; "
        f"load average {result['environment']['load_average_1min']:.1f}",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.persons, args.workers, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
