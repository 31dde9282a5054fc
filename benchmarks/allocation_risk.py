"""One allocation's risk under every attack (issue 24: under 30 s on 2 cores), and the
reconstruction attack's exact posteriors against recomputing every histogram per release set.

Usage (from the repository root)::

    .venv/bin/python benchmarks/allocation_risk.py [--preset NAME] [--replications R] [--json]

Measured in one process:

- ``attacks``: :func:`adversary.analyses.allocation_risk.allocation_risk` of
  the preset (default the 2020 persons file) under every attack with its
  defaults (five priors, block sizes 1–3), the wall-clock of each attack
  (``seconds_<attack>``) and the total against the issue's target;
- ``reconstruction``: for each block size, the data holder's reconstruction
  measures over ``--replications`` release sets by
  :func:`~adversary.scenarios.reconstruction.data_holder.holder_measures`
  (:class:`~adversary.scenarios.reconstruction.posterior.ExactPosteriors`: the
  histograms, their log prior and released counts once, each query's pmf
  tabulated over the ``n + 1`` counts) against the baseline, the previous
  algorithm written out here (all of them recomputed per release set and
  each query's pmf evaluated at every histogram), on the same release sets:
  ``ratio`` is the baseline's time over the new one's; ``difference`` the
  largest difference of the measures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from adversary.analyses.allocation_risk import allocation_risk, reconstruction_case
from adversary.budget import DEFAULT_PRESET, get_preset
from adversary.scenarios.reconstruction.data_holder import holder_measures
from adversary.scenarios.reconstruction.measures import posterior_measures
from adversary.scenarios.reconstruction.posterior import (
    HistogramPosterior,
    compositions,
    log_prior,
)
from adversary.scenarios.reconstruction.simulate import drawn_releases

#: The issue's target for one allocation under every attack, in seconds.
TARGET_S = 30.0


def _baseline(case, replications: int, seed: int) -> dict:
    """The previous algorithm: every histogram, its prior and counts per release set."""
    rng = np.random.default_rng(seed)
    shares, exact = [], []
    for _ in range(replications):
        releases = drawn_releases(case, case.truth, rng)
        histograms = compositions(case.n, case.n_cells)
        counts = histograms.astype(np.int64) @ case.incidence().T
        log_weights = log_prior(case, histograms) + sum(
            m.logpmf(releases[q] - counts[:, q]) for q, m in enumerate(case.noise())
        )
        weights = np.exp(log_weights - log_weights.max())
        posterior = HistogramPosterior(histograms, weights / weights.sum(), "exact")
        row = posterior_measures(posterior, case.truth, case.tie_rule)
        shares.append(row.overlap_share)
        exact.append(row.map_exact)
    return {"overlap_share": float(np.mean(shares)), "map_exact": float(np.mean(exact))}


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def reconstruction_row(allocation, n: int, replications: int, seed: int) -> dict:
    case = reconstruction_case(n, allocation)
    new, new_s = _timed(
        holder_measures, case, replications=replications, releases="sampled", seed=seed
    )
    old, old_s = _timed(_baseline, case, replications, seed)
    difference = max(abs(new[key]["mean"] - old[key]) for key in old)
    return {
        "n": n,
        "new_s": new_s,
        "baseline_s": old_s,
        "ratio": old_s / new_s,
        "difference": difference,
    }


def run(preset: str = DEFAULT_PRESET, replications: int = 20, sizes=(1, 2, 3), seed=0) -> dict:
    allocation = get_preset(preset)
    risk, total_s = _timed(
        allocation_risk,
        allocation,
        block_sizes=sizes,
        reconstruction_replications=replications,
        seed=seed,
    )
    seconds = {
        k.removeprefix("seconds_"): v for k, v in risk.attrs.items() if k.startswith("seconds_")
    }
    return {
        "preset": preset,
        "attacks": {
            "seconds": seconds,
            "total_s": total_s,
            "target_s": TARGET_S,
            "within_target": total_s < TARGET_S,
        },
        "reconstruction": [reconstruction_row(allocation, n, replications, seed) for n in sizes],
        # the share of the 2 cores other work took: the timings' context
        "environment": {"cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0]},
    }


def format_table(result: dict) -> str:
    attacks = result["attacks"]
    lines = [f"allocation_risk({result['preset']!r}), every attack:"]
    lines += [f"  {name:<18}{s:>8.2f} s" for name, s in attacks["seconds"].items()]
    lines.append(
        f"  {'total':<18}{attacks['total_s']:>8.2f} s (target < {attacks['target_s']:.0f} s: "
        f"{'met' if attacks['within_target'] else 'NOT met'})"
    )
    lines.append(f"{'n':>4}{'new s':>9}{'baseline s':>12}{'ratio':>8}{'difference':>12}")
    for r in result["reconstruction"]:
        lines.append(
            f"{r['n']:>4}{r['new_s']:>9.2f}{r['baseline_s']:>12.2f}{r['ratio']:>8.1f}"
            f"{r['difference']:>12.1e}"
        )
    lines.append(f"load average {result['environment']['load_average_1min']:.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default=DEFAULT_PRESET)
    parser.add_argument("--replications", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.preset, args.replications, seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
