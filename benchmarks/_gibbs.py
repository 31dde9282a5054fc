"""What the Gibbs benchmarks share: interleaved timed chains, ESS per second, the report.

A benchmark gives, per sampler, a function running one chain and returning its
draws of each estimand (arrays over draws), its sampling-loop time and the rest
of its wall-clock time; and the exact mean and variance of each estimand. This
module runs the samplers' chains interleaved, computes ArviZ's ESS of each
estimand's mean, ESS per second, the ratio to ``ours`` and the bias in Monte
Carlo standard errors, and formats the report (``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import arviz as az
import numpy as np
import pymc as pm
import xarray as xr


@dataclass(frozen=True)
class Estimand:
    """A quantity the samplers estimate by a posterior mean; its exact mean and variance."""

    key: str  # prefix of its result fields, e.g. "x1"
    label: str  # column heading, e.g. "P[X1=1]"
    mean: float
    variance: float


@dataclass
class Run:
    """One sampler's draws (``values``: estimand key → (chain, draw) array) and its timings."""

    name: str
    values: dict
    sampling_s: float  # sampling loops (tuning + draws), summed over chains
    setup_s: float  # everything else in the timed calls, summed over chains
    warmup_s: float = 0.0  # the first, short call in this process (JIT compilation)
    steps: list = field(default_factory=list)


#: ``pm.sample``'s options for one timed chain: one core, no progress bar, no diagnostics.
ONE_CHAIN = {"chains": 1, "cores": 1, "progressbar": False, "compute_convergence_checks": False}


def timed_pymc_chain(sample: Callable, model, tune: int, draws: int, seed: int):
    """One chain by ``sample`` (``pm.sample``-like): its posterior, loop time and other time."""
    start = time.perf_counter()
    with model:
        tree = sample(draws=draws, tune=tune, random_seed=seed, **ONE_CHAIN)
    wall = time.perf_counter() - start
    sampling = float(tree["sample_stats"].attrs["sampling_time"])
    return tree["posterior"].to_dataset().isel(chain=0), sampling, wall - sampling


def pymc_runners(chain: Callable) -> dict:
    """``{"ours": …, "pymc": …}``: ``chain(sample, subject, tune, draws, seed)`` with our sampler
    (:func:`adversary.inference.sample`) and with plain :func:`pymc.sample`."""
    from adversary import inference

    return {"ours": partial(chain, inference.sample), "pymc": partial(chain, pm.sample)}


def run_samplers(
    runners: dict, steps: dict, chains, tune, draws, seed, warmup=None, cold_warmup=None
) -> list:
    """Every sampler's chains, interleaved (chain 0 of each, then chain 1 of each, …).

    ``runners[name](tune, draws, seed)`` runs one chain and returns ``(values,
    sampling_s, setup_s)``. Interleaving spreads any load from other processes
    over all samplers alike. Chain ``c`` of every sampler uses seed ``seed +
    c``. With ``warmup`` (``{"tune": …, "draws": …}``) each sampler first runs
    one short chain whose wall-clock time — mostly JIT compilation on a cold
    start — is reported as ``warmup_s``. With ``cold_warmup`` (``name ->
    seconds``: that chain timed in a fresh process with an empty compile cache of
    its own) ``warmup_s`` is that instead: in one process the first sampler's
    warm-up would compile what a later one reuses (the model's log-p, PyTensor's
    C module, numba's start), so a shared cache favours whichever runs later.
    """
    warm = dict.fromkeys(runners, 0.0)
    if warmup:
        for name, runner in runners.items():
            start = time.perf_counter()
            runner(warmup["tune"], warmup["draws"], seed)  # also with cold_warmup: its state
            warm[name] = time.perf_counter() - start if cold_warmup is None else cold_warmup(name)
    parts = {name: [] for name in runners}
    for chain in range(chains):
        for name, runner in runners.items():
            parts[name].append(runner(tune, draws, seed + chain))
    runs = []
    for name, chain_parts in parts.items():
        values, sampling, setup = zip(*chain_parts, strict=True)
        stacked = {key: np.stack([v[key] for v in values]) for key in values[0]}
        runs.append(
            Run(name, stacked, float(sum(sampling)), float(sum(setup)), warm[name], steps[name])
        )
    return runs


def ess(values: np.ndarray) -> float:
    """ArviZ's ESS of the mean of a (chain, draw) array."""
    data = xr.DataArray(values.astype(np.float64), dims=("chain", "draw"))
    return float(az.ess(data, method="mean"))


def summarise(run: Run, estimands: list[Estimand], tune: int) -> dict:
    """ESS, ESS per second and each estimate's error against the exact value, for one run."""
    chains, draws = next(iter(run.values.values())).shape
    row = {
        "sampler": run.name,
        "steps": run.steps,
        "chains": int(chains),
        "draws": int(draws),
        "sampling_s": run.sampling_s,
        "setup_s": run.setup_s,
        "warmup_s": run.warmup_s,
        "us_per_sweep": 1e6 * run.sampling_s / (chains * (tune + draws)),
    }
    for estimand in estimands:
        values = run.values[estimand.key]
        size = ess(values)
        estimate = float(values.mean())
        variance = float(np.var(values)) if math.isnan(estimand.variance) else estimand.variance
        mcse = math.sqrt(variance / size)
        row |= {
            f"{estimand.key}_estimate": estimate,
            f"{estimand.key}_exact": estimand.mean,
            f"{estimand.key}_ess": size,
            f"{estimand.key}_ess_per_s": size / run.sampling_s,
            f"{estimand.key}_mcse": mcse,
            f"{estimand.key}_bias": estimate - estimand.mean,
            f"{estimand.key}_z": (estimate - estimand.mean) / mcse,
        }
    return row


def add_ratios(rows: list[dict], estimands: list[Estimand]) -> list[dict]:
    """Each sampler's ESS per second divided by ours (``ours`` must be among the rows)."""
    ours = next(r for r in rows if r["sampler"] == "ours")
    for row in rows:
        for estimand in estimands:
            key = estimand.key
            row[f"{key}_ratio"] = row[f"{key}_ess_per_s"] / ours[f"{key}_ess_per_s"]
    return rows


def against_reference(rows: list[dict], estimands: list[Estimand], reference: str) -> list[dict]:
    """Where no exact value is known: bias and ``z`` against the ``reference`` sampler's estimate.

    ``z = (estimate - reference estimate) / sqrt(MCSE² + reference MCSE²)``
    (each MCSE from the draws' variance and ArviZ's ESS).
    """
    base = next(r for r in rows if r["sampler"] == reference)
    for row in rows:
        for estimand in estimands:
            key = estimand.key
            difference = row[f"{key}_estimate"] - base[f"{key}_estimate"]
            spread = math.hypot(row[f"{key}_mcse"], base[f"{key}_mcse"])
            row[f"{key}_bias"] = difference
            row[f"{key}_z"] = difference / spread if row is not base else 0.0
    return rows


def environment() -> dict:
    """Versions, the machine and its load: what the measured times depend on."""
    import pytensor

    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "pymc": pm.__version__,
        "pytensor": pytensor.__version__,
        "arviz": az.__version__,
        "numpy": np.__version__,
        "pytensor_linker": str(pytensor.config.linker),
        "load_average_1min": os.getloadavg()[0],
    }


def report(result: dict, heading: str, exact: str, estimands: list[Estimand]) -> str:
    """The plain-text report: ``heading`` (the model), the run, ``exact`` and the tables."""
    cfg, env = result["config"], result["environment"]
    lines = [
        f"{heading}, {cfg['chains']} chains × {cfg['draws']} draws after {cfg['tune']} "
        "tuning/burn-in sweeps each,",
        f"one core, chains interleaved across samplers, seeds {cfg['seed']}.."
        f"{cfg['seed'] + cfg['chains'] - 1}, load average {env['load_average_1min']:.1f}",
        exact,
        "",
        *report_lines(result["results"], estimands),
    ]
    return "\n".join(lines)


def report_lines(rows: list[dict], estimands: list[Estimand]) -> list[str]:
    """The speed table (ESS, ESS/s and ratio per estimand) and the accuracy table."""
    heading = f"{'sampler':<8}{'warmup s':>9}{'setup s':>9}{'sample s':>9}{'µs/sweep':>9}"
    widths = {e.key: max(9, len(e.key) + 5) for e in estimands}
    heading += "".join(
        f"{'ESS ' + e.key:>{widths[e.key]}}{'ESS/s':>10}{'ratio':>7}" for e in estimands
    )
    lines = [heading]
    for r in rows:
        line = f"{r['sampler']:<8}{r['warmup_s']:>9.2f}{r['setup_s']:>9.2f}"
        line += f"{r['sampling_s']:>9.2f}{r['us_per_sweep']:>9.0f}"
        for e in estimands:
            ratio = r.get(f"{e.key}_ratio", math.nan)
            ess_column = f"{r[e.key + '_ess']:>{widths[e.key]}.0f}"
            line += f"{ess_column}{r[e.key + '_ess_per_s']:>10.0f}{ratio:>7.2f}"
        lines.append(line)
    accuracy = "".join(f"{e.label:>10}{'bias':>9}{'z':>6}" for e in estimands)
    lines += ["", f"{'sampler':<8}{accuracy}"]
    for r in rows:
        cells = [(r[f"{e.key}_estimate"], r[f"{e.key}_bias"], r[f"{e.key}_z"]) for e in estimands]
        line = "".join(f"{value:>10.4f}{bias:>+9.4f}{z:>+6.1f}" for value, bias, z in cells)
        lines.append(f"{r['sampler']:<8}{line}")
    lines += ["", "steps: " + "; ".join(f"{r['sampler']}: {r['steps']}" for r in rows)]
    lines.append(
        "ratio = ESS/s divided by ours; z = bias / MCSE, MCSE = sqrt(exact variance / ESS)."
    )
    return lines


def compare_samplers(
    subject,
    chain_runners: dict,
    steps: dict,
    estimands: list,
    config: dict,
    seed: int,
    warmup: dict | None,
    cold_warmup=None,
) -> dict:
    """Run ``chain_runners[name](subject, tune, draws, seed)`` of every sampler; the result.

    The JSON-ready ``config`` (with the seed, one core), ``results`` (one
    :func:`summarise` row per sampler, with :func:`add_ratios` when ``ours``
    ran) and ``environment``. ``warmup``, ``cold_warmup``: as for :func:`run_samplers`.
    """
    runners = {
        name: lambda tune, draws, s, run=run: run(subject, tune, draws, s)
        for name, run in chain_runners.items()
    }
    runs = run_samplers(runners, steps, seed=seed, warmup=warmup, cold_warmup=cold_warmup, **config)
    rows = [summarise(run, estimands, config["tune"]) for run in runs]
    if "ours" in chain_runners:
        add_ratios(rows, estimands)
    if "numpy" in chain_runners:
        against_reference(rows, [e for e in estimands if math.isnan(e.mean)], "numpy")
    return {
        "config": {**config, "seed": seed, "cores": 1},
        "results": rows,
        "environment": environment(),
    }


def main(doc: str, run_benchmark: Callable, format_table: Callable, runs: dict, argv=None) -> int:
    """The command line of a benchmark: ``--quick`` or the full run, ``--json``, ``--seed``.

    ``runs`` holds the ``"full"`` and ``"quick"`` configurations and the default ``"seed"``.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"shorter runs {runs['quick']}")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--seed", type=int, default=runs["seed"])
    parser.add_argument(
        "--cold",
        action="store_true",
        help="compile into a new empty cache: 'warmup s' is then the time to the first draws",
    )
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="pymc")
    result = run_benchmark(runs["quick"] if args.quick else runs["full"], seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0
