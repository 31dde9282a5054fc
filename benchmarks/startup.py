"""Start-up of the command line: how long a command imports before it computes.

Each measurement is a fresh ``python -X importtime -m adversary ARGS`` process:
``wall s`` is its whole run, seen from the parent; ``imports s`` the sum of the
top-level imports ``-X importtime`` lists (every module the command loads,
before and while it computes); ``bare s`` a ``python -c pass`` of the same
interpreter. A command starts computing after about ``bare + imports``
seconds (``start s``); the rest of ``wall`` is its computation and output.

Commands (the factory's file is written to a temporary folder):

- ``help`` — ``adversary --help``;
- ``risk-dare``, ``risk-granville``, ``risk-every-query`` — ``adversary risk``
  on three shipped cases: closed forms, exact sums, a simulation of the releases;
- ``run-factory`` — ``adversary run`` on a factory model file (the
  three-category attack), enumerated through PyMC.

Bytecode is cached as ``make`` caches it (``build/pycache``, even where the
environment sets ``PYTHONDONTWRITEBYTECODE``) and one unrecorded round runs
first, so every measured process imports compiled bytecode, as a user's
second command does. Compiling from source instead makes the imports about
three times as long (pandas, xarray and scipy.special: 3.0 s against 0.9 s here).

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
#: A factory model file of the three-category attack: cell C among three, each count released.
THREE_CELLS = textwrap.dedent(
    """
    import pymc as pm
    from adversary.distributions import DiscreteGaussian, FinitePmf

    PRIORS = {"skewed": (0.5, 0.3, 0.2)}
    TRUTH = {"C": 0}

    def model(prior=(0.5, 0.3, 0.2)):
        with pm.Model() as m:
            cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
            for k, (known, release) in enumerate([(5, 6), (2, 2), (0, 1)]):
                DiscreteGaussian(f"x{k}", mu=known + (cell == k), rho=0.0992, observed=release)
        return m
    """
)
COMMANDS = {
    "help": ["--help"],
    "risk-dare": ["risk", "dare_county"],
    "risk-granville": ["risk", "granville_county"],
    "risk-every-query": ["risk", "every_query"],
    "run-factory": ["run", "{factory}"],
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


def run(repeat: int, names=tuple(COMMANDS), pycache: Path = ROOT / "build" / "pycache") -> dict:
    """Every command ``repeat`` times, interleaved; medians of wall, imports and start.

    ``pycache``: where the processes cache their bytecode (``PYTHONPYCACHEPREFIX``).
    """
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={ROOT / 'build' / 'pytensor'}"}
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    times = {name: {"wall": [], "imports": []} for name in names}
    bare = []
    with tempfile.TemporaryDirectory() as folder:
        factory = Path(folder) / "three_cells.py"
        factory.write_text(THREE_CELLS)
        for _ in range(repeat + 1):  # the first round writes the bytecode and compile caches
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
            bare.append(time.perf_counter() - start)
            for name in names:
                arguments = [a.format(factory=factory) for a in COMMANDS[name]]
                wall, imports = timed(["-m", "adversary", *arguments], env)
                times[name]["wall"].append(wall)
                times[name]["imports"].append(imports)
    bare_s = statistics.median(bare[1:])
    rows = []
    for name in names:
        imports = statistics.median(times[name]["imports"][1:])
        rows.append(
            {
                "command": name,
                "wall_s": statistics.median(times[name]["wall"][1:]),
                "imports_s": imports,
                "start_s": bare_s + imports,
            }
        )
    return {
        "repeat": repeat,
        "pycache": env["PYTHONPYCACHEPREFIX"],
        "bare_s": bare_s,
        "load_average_1min": os.getloadavg()[0],
        "results": rows,
    }


def table(result: dict) -> str:
    lines = [
        f"median of {result['repeat']} processes, bare interpreter {result['bare_s']:.2f} s, "
        f"load average {result['load_average_1min']:.1f}, bytecode cached in {result['pycache']}",
        f"{'command':<18}{'wall s':>8}{'imports s':>11}{'start s':>9}",
    ]
    for row in result["results"]:
        lines.append(
            f"{row['command']:<18}{row['wall_s']:>8.2f}{row['imports_s']:>11.2f}"
            f"{row['start_s']:>9.2f}"
        )
    return "\n".join(lines)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=_positive, default=3, help="processes per command")
    parser.add_argument(
        "--commands", nargs="+", choices=list(COMMANDS), default=list(COMMANDS), metavar="NAME"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(args.repeat, tuple(args.commands))
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
