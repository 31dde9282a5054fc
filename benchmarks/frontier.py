"""A frontier of many allocations: every attack's risk and the analytic accuracy of each.

Usage (from the repository root)::

    .venv/bin/python benchmarks/frontier.py [--allocations N] [--persons P] [--attacks A,B] [--json]

Measured in one process on one seeded synthetic state of ``--persons`` people
(default 10⁶), against the 2020 allocation (``pl94-2020-persons``, DAS
convention), the issue's target being a search of 100 allocations in under
30 minutes on 2 cores:

- ``one``: the baseline — one allocation's risk under the chosen attacks
  (:func:`adversary.analyses.allocation_risk.allocation_risk`, every attack by
  default) and its analytic accuracy, evaluated once from cold;
- ``family``: :func:`adversary.analyses.frontier.evaluate` of ``--allocations``
  allocations through the frontier's evaluators (:mod:`adversary.analyses.frontier.evaluators`,
  which compute an attack once per distinct tuple of the ρ it reads): the grid
  of the block group's and block's level shares (the others in proportion),
  the first ``N`` points — every point changes the ρ every attack reads, so
  nothing is reused; then the Pareto set.

``ratio`` is the family's time over ``N`` times the baseline's (1: no saving,
below 1: what the shared work saves).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported

from _gibbs import environment

from adversary.analyses.allocation_risk.evaluate import as_attacks
from adversary.analyses.frontier import evaluate, level_share_grid, pareto_set
from adversary.analyses.frontier.evaluators import accuracy_evaluator, risk_evaluator
from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_geography

#: The issue's target for evaluating 100 allocations, in seconds.
TARGET_S = 30 * 60.0
TARGET_ALLOCATIONS = 100


def _family(base, allocations: int):
    steps = 3  # two chosen levels and the others: three shares, one step each at least
    while len(grid := level_share_grid(base, ["block_group", "block"], steps)) < allocations:
        steps += 1
    return grid[:allocations]


def run(allocations: int = 100, persons: int = 1_000_000, attacks=None, seed: int = 0) -> dict:
    base = get_preset()
    geography = synthetic_geography(persons, seed=seed)
    started = time.perf_counter()
    accuracy_evaluator(geography, base)(base)
    risk_evaluator(attacks)(base)
    one = time.perf_counter() - started
    family = _family(base, allocations)
    started = time.perf_counter()
    evaluation = evaluate(family, accuracy_evaluator(geography, base), risk_evaluator(attacks))
    front = pareto_set(evaluation, risks=["risk_score"], errors=["error_score"])
    seconds = time.perf_counter() - started
    return {
        "allocations": len(family),
        "persons": persons,
        "attacks": list(as_attacks(attacks)),
        "seconds": {"one": one, "family": seconds},
        "ratio": seconds / (len(family) * one),
        "per_allocation_s": seconds / len(family),
        "projected_100_s": 100 * seconds / len(family),
        "pareto": int(front.front.sizes["allocation"]),
        "target_s": TARGET_S,
        "within_target": 100 * seconds / len(family) < TARGET_S,
        "environment": environment(),
    }


def format_table(result: dict) -> str:
    return "\n".join(
        [
            f"{result['allocations']} allocations, {result['persons']:,} persons, attacks "
            + ", ".join(result["attacks"]),
            f"one allocation (baseline): {result['seconds']['one']:.2f} s",
            f"family: {result['seconds']['family']:.1f} s "
            f"({result['per_allocation_s']:.2f} s each; ratio {result['ratio']:.2f}); "
            f"Pareto set of {result['pareto']}",
            f"100 allocations: {result['projected_100_s'] / 60:.1f} min projected "
            f"(target < {result['target_s'] / 60:.0f} min: "
            f"{'met' if result['within_target'] else 'NOT met'})",
            f"load average {result['environment']['load_average_1min']:.1f}",
        ]
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--allocations", type=int, default=TARGET_ALLOCATIONS)
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--attacks", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.allocations, args.persons, args.attacks, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
