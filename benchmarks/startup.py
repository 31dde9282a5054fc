"""Start-up of the command line: how long a command imports before it computes.

Each measurement is a fresh ``python -X importtime -m adversary ARGS`` process:
``wall s`` is its whole run, seen from the parent; ``imports s`` the sum of the
top-level imports ``-X importtime`` lists (every module the command loads,
before and while it computes); ``bare s`` a ``python -c pass`` of the same
interpreter. A command starts computing after about ``bare + imports``
seconds (``start s``); the rest of ``wall`` is its computation and output.

Commands (the shipped cases need no file; ``run`` takes a model file of one
latent count and two releases, written to a temporary folder):

- ``help`` — ``adversary --help``;
- ``risk dare_county``, ``risk granville_county``, ``risk every_query`` —
  closed forms, exact sums and a simulation of the releases;
- ``run coin.py`` — a factory model, enumerated through PyMC.

Run ``python benchmarks/startup.py [--repeat R] [--json]``; see
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COIN = textwrap.dedent(
    """
    import pymc as pm
    from adversary.distributions import BernoulliCount, DiscreteGaussian

    PRIORS = {"1/4": 0.25}
    TRUTH = {"X": 4}

    def model(prior=0.25):
        with pm.Model() as m:
            x = BernoulliCount("X", known=3, p=prior)
            DiscreteGaussian("first", mu=x, rho=0.5, observed=4)
            DiscreteGaussian("second", mu=x, rho=0.5, observed=5)
        return m
    """
)
COMMANDS = {
    "help": ["--help"],
    "risk dare_county": ["risk", "dare_county"],
    "risk granville_county": ["risk", "granville_county"],
    "risk every_query": ["risk", "every_query"],
    "run coin.py": ["run", "{coin}"],
}
#: ``-X importtime``'s line for a module imported at the top level (no indentation).
_TOP_LEVEL = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| [^ ]", re.MULTILINE)


def timed(arguments: list[str], env: dict) -> tuple[float, float]:
    """``(wall seconds, seconds of top-level imports)`` of one ``python -X importtime`` run."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{done.stderr[-2000:]}")
    return wall, sum(int(us) for us in _TOP_LEVEL.findall(done.stderr)) / 1e6


def run(repeat: int, names=tuple(COMMANDS)) -> dict:
    """Every command ``repeat`` times, interleaved; medians of wall, imports and start."""
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={ROOT / 'build' / 'pytensor'}"}
    env["MPLBACKEND"] = "Agg"
    times = {name: {"wall": [], "imports": []} for name in names}
    bare = []
    with tempfile.TemporaryDirectory() as folder:
        coin = Path(folder) / "coin.py"
        coin.write_text(COIN)
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - start)
            for name in names:
                arguments = [a.format(coin=coin) for a in COMMANDS[name]]
                wall, imports = timed(["-m", "adversary", *arguments], env)
                times[name]["wall"].append(wall)
                times[name]["imports"].append(imports)
    bare_s = statistics.median(bare)
    rows = []
    for name in names:
        imports = statistics.median(times[name]["imports"])
        rows.append(
            {
                "command": name,
                "wall_s": statistics.median(times[name]["wall"]),
                "imports_s": imports,
                "start_s": bare_s + imports,
            }
        )
    return {
        "repeat": repeat,
        "bare_s": bare_s,
        "load_average_1min": os.getloadavg()[0],
        "results": rows,
    }


def table(result: dict) -> str:
    lines = [
        f"median of {result['repeat']} processes, bare interpreter {result['bare_s']:.2f} s, "
        f"load average {result['load_average_1min']:.1f}",
        f"{'command':<24}{'wall s':>8}{'imports s':>11}{'start s':>9}",
    ]
    for row in result["results"]:
        lines.append(
            f"{row['command']:<24}{row['wall_s']:>8.2f}{row['imports_s']:>11.2f}"
            f"{row['start_s']:>9.2f}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="processes per command")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be a positive integer, got {args.repeat}")
    names = tuple(args.commands.split(","))
    unknown = sorted(set(names) - set(COMMANDS))
    if unknown:
        parser.error(f"--commands: unknown {', '.join(unknown)}; have {', '.join(COMMANDS)}")
    result = run(args.repeat, names)
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
