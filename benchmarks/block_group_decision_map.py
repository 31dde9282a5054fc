"""Benchmark: the block-group decision map (Kazan & Reiter Figure 4), exact, against the baseline.

Both compute the adversary's posterior P[X1 = 1 | x1*, x2*, y1*] for every
release holding all but 1e-15 of the probability under the truth
x1 = x2 = 1 (Granville County ED 39-14, 2020 block and block-group ρ, d = 27,
p = 1/2, X2 | X1 ~ Uniform{k1, k1+1, ...}):

- ``decision_map``: :func:`adversary.scenarios.block_group.releases.decision_map`,
  which factorises the sum over X2 into two small matrix products;
- ``full_enumeration``: the straightforward vectorised enumeration over the
  whole (x1*, x2*, y1*, X1, X2) grid
  (:func:`~adversary.scenarios.block_group.releases.posterior_by_full_enumeration`),
  with X2 over the same window.

Both are timed in the same run (best of ``--repeat`` runs after a warm-up);
the result is their ratio. The two answers are also compared.

    python benchmarks/block_group_decision_map.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from adversary.budget import get_preset
from adversary.scenarios.block_group import noise_model
from adversary.scenarios.block_group.prior import improper_uniform
from adversary.scenarios.block_group.releases import (
    decision_map,
    posterior_by_full_enumeration,
    release_grid,
)

BUDGET = get_preset("pl94-2020-persons")
SETTING = {
    "prior": 0.5,
    "rho1": float(BUDGET.rho("block", "detailed")),
    "rho2": float(BUDGET.rho("block_group", "detailed")),
    "d": 27,
}


def best_time(function, repeat: int) -> tuple[float, object]:
    result = function()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    fast_time, maps = best_time(lambda: decision_map((1, 1), **SETTING), args.repeat)
    noise = noise_model(SETTING["rho1"], SETTING["rho2"], SETTING["d"])
    grid = release_grid((1, 1, 0), noise)
    x2_max = maps.attrs["x2_window"][1]
    slow_time, reference = best_time(
        lambda: posterior_by_full_enumeration(grid, noise, 0.5, improper_uniform(), 0, x2_max),
        max(1, args.repeat // 2),
    )
    cells = maps.posterior.size * 2 * (x2_max + 1)
    result = {
        "releases": int(maps.posterior.size),
        "full_grid_cells": int(cells),
        "decision_map_seconds": fast_time,
        "full_enumeration_seconds": slow_time,
        "speed_ratio": slow_time / fast_time,
        "max_abs_difference": float(np.max(np.abs(maps.posterior.values - reference))),
        "correct_decision_probability": maps.attrs["correct_decision_probability"],
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"releases on the grid:             {result['releases']:,}")
        print(f"cells of the full 5-d grid:       {result['full_grid_cells']:,}")
        print(f"decision_map (best):              {fast_time * 1e3:8.2f} ms")
        print(f"full enumeration (best):          {slow_time * 1e3:8.2f} ms")
        print(f"ratio full / decision_map:        {result['speed_ratio']:8.1f}x")
        print(f"largest difference of posteriors: {result['max_abs_difference']:.2e}")
        print(f"P[correct decision]:              {result['correct_decision_probability']:.6f}")
    return result


if __name__ == "__main__":
    main()
