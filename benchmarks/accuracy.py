"""The analytic accuracy of an allocation on a synthetic state, against building that state.

Usage (from the repository root)::

    .venv/bin/python benchmarks/accuracy.py [--persons N] [--repeat R] [--detailed] [--json]

Measured in one process, interleaved ``--repeat`` times (the fastest of each
kept), on one seeded synthetic state of ``--persons`` people (default 10⁶; the
issue's target is under 1 s):

- ``geography``: :func:`adversary.population.synthetic.synthetic_geography` —
  the baseline, the least any study of that state does;
- ``analytic``: :func:`adversary.topdown.accuracy.analytic_accuracy` of the
  2020 allocation (``pl94-2020-persons``, DAS convention) at every level, on the
  56-cell classification: the tree read from the blocks, one GLS covariance
  solve per level, the scalar recursion over every unit, the means;
- with ``--detailed``, the same on the 2 016-cell classification (its
  ``AᵀWA`` of 2 600 × 2 016 queries per level dominates).

``ratio`` is each time over the geography's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported

from _gibbs import environment

from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_geography
from adversary.scenarios.reconstruction import DETAILED, REDUCED
from adversary.topdown.accuracy import LEVELS, analytic_accuracy

#: The issue's target for the analytic accuracy of a million-person state, in seconds.
TARGET_S = 1.0


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def run(persons: int = 1_000_000, repeat: int = 3, detailed: bool = False, seed: int = 0) -> dict:
    allocation = get_preset()
    classifications = {"reduced": REDUCED} | ({"detailed": DETAILED} if detailed else {})
    times = {"geography": [], **{name: [] for name in classifications}}
    for _ in range(repeat):
        geography, seconds = _timed(synthetic_geography, persons, seed=seed)
        times["geography"].append(seconds)
        for name, classification in classifications.items():
            result, seconds = _timed(
                analytic_accuracy,
                allocation,
                geography,
                classification=classification,
                levels=LEVELS,
            )
            times[name].append(seconds)
            if name == "reduced":
                rmse = result["rmse"].to_pandas()
    best = {name: min(values) for name, values in times.items()}
    return {
        "persons": persons,
        "units": geography.units(),
        "seconds": best,
        "ratio": {name: best[name] / best["geography"] for name in best},
        "target_s": TARGET_S,
        "within_target": best["reduced"] < TARGET_S,
        "rmse": {metric: rmse.loc[metric].to_dict() for metric in rmse.index},
        "environment": environment(),
    }


def format_table(result: dict) -> str:
    units = ", ".join(f"{n:,} {level}" for level, n in result["units"].items())
    lines = [f"{result['persons']:,} persons: {units}", f"{'':<12}{'seconds':>10}{'ratio':>9}"]
    for name, seconds in result["seconds"].items():
        lines.append(f"{name:<12}{seconds:>10.3f}{result['ratio'][name]:>9.2f}")
    lines.append(
        f"analytic accuracy (56 cells): {result['seconds']['reduced']:.3f} s "
        f"(target < {result['target_s']:.0f} s: {'met' if result['within_target'] else 'NOT met'})"
    )
    lines.append("rmse of the linear estimator, pl94-2020-persons, das:")
    for metric, row in result["rmse"].items():
        lines.append(f"  {metric:<14}" + "".join(f"{k} {v:8.3f}  " for k, v in row.items()))
    lines.append(f"load average {result['environment']['load_average_1min']:.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--detailed", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.persons, args.repeat, args.detailed, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
