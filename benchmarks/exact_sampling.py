"""Exact discrete Gaussian draws: the compiled sampler against the Python one, same draws.

For each σ² and number of draws, one interleaved run times
``adversary.noise.exact_sampling``'s one-at-a-time sampler (CKS Algorithms 1-3 on
Python integers) and the compiled sampler that :func:`~adversary.noise.exact_sampling.sample`
uses for large calls (``adversary.noise._exact_kernel``), from the same seed, and
whether their draws are equal (they must be). Reported: microseconds per draw each way
(the median of ``--repeat`` rounds), their ratio, and what loading the compiled sampler
costs a new process (numba's import and its disk cache), measured in a subprocess.

Run ``python benchmarks/exact_sampling.py [--quick] [--repeat N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules
import numpy as np
from _gibbs import environment

from adversary.noise import exact_sampling as es

# σ² = 1/(2ρ): the 2020 block's ρ (paper convention), a short rational, a wide and a
# tiny noise (most proposals rejected).
SIGMA2 = {"1/(2*0.0992)": 1 / (2 * 0.0992), "2": 2.0, "1e6": 1e6, "1e-3": 1e-3}
SIZES = (1_000, 20_000)

_LOAD = """
import time
started = time.perf_counter()
from adversary.noise import _exact_kernel, exact_sampling
import numpy as np
exact_sampling._compiled_draws(exact_sampling._as_sigma2(2.0), 300, np.random.default_rng(0), 512)
print(time.perf_counter() - started)
"""


SAMPLERS = {"python": es._python_draws, "compiled": es._compiled_draws}


def load_seconds() -> float:
    """A new process's cost of loading the compiled sampler and making its first draws."""
    done = subprocess.run([sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def run(sizes=SIZES, repeat: int = 3, sigma2=None) -> dict:
    sigma2 = SIGMA2 if sigma2 is None else sigma2
    # loaded (and compiled, on an empty cache) before timing
    es._compiled_draws(Fraction(2), 300, np.random.default_rng(0), es._block_size(300))
    rows = []
    for label, value in sigma2.items():
        exact = es._as_sigma2(value)
        for count in sizes:
            times, same = {name: [] for name in SAMPLERS}, True
            for seed in range(repeat):
                made = {}
                for name, draws in SAMPLERS.items():
                    started = time.perf_counter()
                    made[name] = draws(
                        exact, count, np.random.default_rng(seed), es._block_size(count)
                    )
                    times[name].append(time.perf_counter() - started)
                same &= bool(np.array_equal(made["python"], made["compiled"]))
            python, compiled = (statistics.median(times[n]) / count * 1e6 for n in SAMPLERS)
            rows.append(
                {
                    "sigma2": label,
                    "draws": count,
                    "python_us": python,
                    "compiled_us": compiled,
                    "ratio": python / compiled,
                    "same_draws": same,
                }
            )
    return {"rows": rows, "load_s": load_seconds(), "environment": environment()}


def format_table(result: dict) -> str:
    lines = [
        f"{'sigma2':<14}{'draws':>8}{'python µs':>11}{'compiled µs':>13}{'ratio':>8}  same",
    ]
    for r in result["rows"]:
        lines.append(
            f"{r['sigma2']:<14}{r['draws']:>8}{r['python_us']:>11.2f}{r['compiled_us']:>13.3f}"
            f"{r['ratio']:>8.1f}  {r['same_draws']}"
        )
    lines.append(f"loading the compiled sampler in a new process: {result['load_s']:.2f} s")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 000 draws, one round")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes, repeat = ((1_000,), 1) if args.quick else (SIZES, args.repeat)
    result = run(sizes, repeat)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
