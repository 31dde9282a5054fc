"""TopDown's non-negative fit: the KKT fit by one sort against JASON's iteration, and one parent
with a million children.

Usage (from the repository root)::

    .venv/bin/python benchmarks/topdown.py [--children N] [--sizes 1000,10000] [--seed S] [--json]

Measured in one process, on the same measurements (discrete-Gaussian-like
noise of variance 25 around small counts, so that about a third of the
estimates end at 0):

- ``fit``: one sum of ``n`` measurements for each of ``--sizes``, by
  :func:`adversary.topdown.nonnegative_wls` (the KKT fit, one sort) and by
  :func:`adversary.topdown.jason_iteration` (the previous algorithm: the most
  negative estimate fixed per round, then a full re-solve) — the baseline;
  ``ratio`` is the iteration's time over the fit's, and ``difference`` the
  largest absolute difference of their estimates;
- ``topdown``: :func:`adversary.topdown.topdown` of one parent with
  ``--children`` children (default 10⁶; the issue's target is under 2 s),
  against one ``numpy.argsort`` of the same measurements (the least a
  sort-based fit does), measured in the same run: ``ratio`` is TopDown's time
  over the sort's. The published counts are checked: non-negative integers
  summing to the parent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from adversary.topdown import jason_iteration, nonnegative_wls, topdown

#: The issue's target for one parent with a million children, in seconds.
TARGET_S = 2.0
VARIANCE = 25.0


def measurements(size: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """``size`` noisy counts of small true counts (0 to 4), and their true total."""
    truth = rng.integers(0, 5, size)
    return truth + rng.normal(0.0, np.sqrt(VARIANCE), size), float(truth.sum())


def _timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def fit_row(size: int, rng: np.random.Generator) -> dict:
    """One sum of ``size`` measurements by the KKT fit and by JASON's iteration."""
    noisy, total = measurements(size, rng)
    ones = np.ones(size)
    fast, fit_s = _timed(nonnegative_wls, noisy, VARIANCE, ones, [total])
    slow, iteration_s = _timed(jason_iteration, noisy, VARIANCE, ones, [total])
    return {
        "size": size,
        "zeros": int(np.count_nonzero(fast == 0)),
        "fit_s": fit_s,
        "iteration_s": iteration_s,
        "ratio": iteration_s / fit_s,
        "difference": float(np.max(np.abs(fast - slow))),
    }


def topdown_row(children: int, rng: np.random.Generator) -> dict:
    """TopDown of one parent with ``children`` children, against one argsort of them."""
    noisy, total = measurements(children, rng)
    parents = np.zeros(children + 1, dtype=np.int64)
    parents[0] = -1
    published, topdown_s = _timed(topdown, np.concatenate([[total], noisy]), VARIANCE, parents)
    _, sort_s = _timed(np.argsort, -noisy / VARIANCE)
    consistent = bool(published[1:].sum() == published[0] and published.min() >= 0)
    return {
        "children": children,
        "topdown_s": topdown_s,
        "argsort_s": sort_s,
        "ratio": topdown_s / sort_s,
        "target_s": TARGET_S,
        "within_target": topdown_s < TARGET_S,
        "consistent": consistent,
    }


def run(sizes, children: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "fit": [fit_row(size, rng) for size in sizes],
        "topdown": topdown_row(children, rng),
        "environment": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "load_average_1min": os.getloadavg()[0],
        },
    }


def format_table(result: dict) -> str:
    lines = [f"{'n':>9}{'zeros':>8}{'fit s':>10}{'iteration s':>13}{'ratio':>9}{'difference':>12}"]
    for r in result["fit"]:
        lines.append(
            f"{r['size']:>9}{r['zeros']:>8}{r['fit_s']:>10.4f}{r['iteration_s']:>13.3f}"
            f"{r['ratio']:>9.0f}{r['difference']:>12.1e}"
        )
    t = result["topdown"]
    lines += [
        "ratio = JASON's iteration's time over the KKT fit's",
        f"topdown, one parent with {t['children']:,} children: {t['topdown_s']:.2f} s "
        f"(target < {t['target_s']:.0f} s: {'met' if t['within_target'] else 'NOT met'}); "
        f"one argsort of them {t['argsort_s']:.3f} s; ratio {t['ratio']:.1f}; "
        f"consistent non-negative integers: {t['consistent']}",
        f"load average {result['environment']['load_average_1min']:.1f}",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=1_000_000)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    result = run(sizes, args.children, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
