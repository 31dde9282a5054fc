"""Time to the first draws from an empty compile cache: ours against ``pm.sample``.

Each measurement is a fresh Python process (imports done, model built) timing
one call ``sample(draws=10, tune=0, chains=1)`` from the call to its return,
with PyTensor's ``base_compiledir`` a new empty folder under ``build/``
(removed afterwards): ``cold s``. A second process then samples the same model
with *other data* (releases drawn from another seed) into the same folder:
``other data s``, the cost once the data-independent kernels are on disk.
Samplers: ``ours`` (:func:`adversary.inference.sample`) and ``pymc`` (plain
:func:`pymc.sample` with PyMC's default discrete steps), the repeats
interleaved (ours, pymc, ours, pymc, …) so that load from other processes falls
on both alike. ``ratio`` is ours over pymc (below 1: ours starts faster).

Models:

- ``block12`` — the block of ``gibbs_block_records.py``: 12 ``pm.Categorical``
  persons over 8 cells, the cell counts summed from ``pt.eq``, a
  ``DiscreteGaussian`` on the 8 counts at ρ = 0.1;
- ``user`` — a user's model of two latents: ``n ~ Geometric(0.3)``,
  ``c ~ Categorical(0.2, 0.3, 0.5)``, ``k* ~ DiscreteGaussian(n + c, σ² = 2)``.

Run ``python benchmarks/cold_start.py [--repeat R] [--json]``; see
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("block12", "user")
SAMPLERS = ("ours", "pymc")
PERSONS, CELLS, RHO = 12, 8, 0.1


def build_model(name: str, seed: int):
    """The benchmark's model ``name`` with releases drawn from ``seed``."""
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    from adversary.distributions import DiscreteGaussian

    rng = np.random.default_rng(seed)
    with pm.Model() as model:
        if name == "block12":
            releases = np.bincount(rng.integers(CELLS, size=PERSONS), minlength=CELLS)
            releases = releases + rng.integers(-2, 3, size=CELLS)
            cells = [pm.Categorical(f"P{i}", p=np.full(CELLS, 1 / CELLS)) for i in range(PERSONS)]
            counts = pt.stack([sum(pt.eq(c, k) for c in cells) for k in range(CELLS)])
            DiscreteGaussian("releases", mu=counts, rho=RHO, observed=releases)
        else:
            n = pm.Geometric("n", 0.3)
            c = pm.Categorical("c", p=[0.2, 0.3, 0.5])
            DiscreteGaussian("k_star", mu=n + c, sigma2=2.0, observed=int(rng.integers(2, 9)))
    return model


def child(model_name: str, sampler: str, seed: int) -> None:
    """In a fresh process: the seconds of one short sampling call, printed as JSON."""
    import logging

    import pymc as pm

    from adversary import inference

    logging.getLogger("pymc").setLevel(logging.ERROR)
    model = build_model(model_name, seed)
    sample = inference.sample if sampler == "ours" else pm.sample
    start = time.perf_counter()
    with model:
        sample(
            draws=10,
            tune=0,
            chains=1,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    print(json.dumps({"seconds": time.perf_counter() - start}))


def timed_process(model_name: str, sampler: str, seed: int, compiledir: str) -> float:
    """Run :func:`child` in a new interpreter compiling into ``compiledir``; its seconds."""
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={compiledir}"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, __file__, "--child", model_name, sampler, str(seed)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def run(repeat: int, models=MODELS) -> dict:
    """Every model × sampler ``repeat`` times, interleaved; cold and other-data seconds."""
    (ROOT / "build").mkdir(exist_ok=True)
    times = {(m, s, k): [] for m in models for s in SAMPLERS for k in ("cold", "other")}
    for r in range(repeat):
        for model_name in models:
            for sampler in SAMPLERS:
                folder = tempfile.mkdtemp(prefix="pytensor-cold-", dir=ROOT / "build")
                try:
                    cold = timed_process(model_name, sampler, 1 + r, folder)
                    other = timed_process(model_name, sampler, 1001 + r, folder)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                times[model_name, sampler, "cold"].append(cold)
                times[model_name, sampler, "other"].append(other)
    rows = []
    for model_name in models:
        medians = {
            (s, k): statistics.median(times[model_name, s, k])
            for s in SAMPLERS
            for k in ("cold", "other")
        }
        for sampler in SAMPLERS:
            rows.append(
                {
                    "model": model_name,
                    "sampler": sampler,
                    "cold_s": medians[sampler, "cold"],
                    "other_data_s": medians[sampler, "other"],
                    "cold_ratio": medians[sampler, "cold"] / medians["pymc", "cold"],
                    "cold_all": times[model_name, sampler, "cold"],
                    "other_all": times[model_name, sampler, "other"],
                }
            )
    return {"repeat": repeat, "load_average_1min": os.getloadavg()[0], "results": rows}


def table(result: dict) -> str:
    lines = [
        f"first 10 draws in a fresh process, median of {result['repeat']}, "
        f"load average {result['load_average_1min']:.1f}",
        f"{'model':<9}{'sampler':<8}{'cold s':>8}{'ratio':>7}{'other data s':>14}",
    ]
    for row in result["results"]:
        lines.append(
            f"{row['model']:<9}{row['sampler']:<8}{row['cold_s']:>8.2f}"
            f"{row['cold_ratio']:>7.2f}{row['other_data_s']:>14.2f}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="processes per model and sampler")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--child", nargs=3, metavar=("MODEL", "SAMPLER", "SEED"), help="internal")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    if args.repeat < 1:
        parser.error(f"--repeat must be a positive integer, got {args.repeat}")
    models = tuple(args.models.split(","))
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        parser.error(f"--models: unknown {', '.join(unknown)}; have {', '.join(MODELS)}")
    result = run(args.repeat, models)
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
