"""Reconstruction speed: effective samples of the overlap per second, two blocks, two samplers.

Blocks (the issue's speed targets):

- ``reduced50`` — 50 persons on the reduced 56-cell cross-classification with
  the ten PL 94-171 tables (130 noisy counts), the shipped case
  ``reconstruction_block`` with ``n = 50`` and a truth and releases drawn
  from seed 7;
- ``detailed20`` — the shipped case ``reconstruction_detailed``: 20 persons on
  the 2 016 cells of the detailed query, ten tables (2 600 noisy counts).

Samplers, in one process, one chain each, the same draws:

- ``persons`` — :func:`~adversary.scenarios.reconstruction.sampled_posterior`
  (``sampler="direct"``): one cell per person, the compiled sweep of
  :mod:`~adversary.scenarios.reconstruction.kernel` run directly (exact
  updates, the tables kept up to date);
- ``persons_pymc`` — the same sweep as a PyMC step
  (:class:`~adversary.scenarios.reconstruction.step.PersonsGibbs` under
  :func:`adversary.inference.sample`, ``sampler="pymc"``);
- ``histogram`` — ``latent="histogram"`` under PyMC: the package's generic
  pair moves (:class:`adversary.inference.TransferGibbs`) on the histogram, the
  baseline.

Reported: wall-clock of the whole call (model, compilation on the current
cache, sampling), the ESS of the overlap ``Σ_k min(h_k, t_k)`` (ArviZ, mean),
ESS per second and its ratio to the baseline. Targets: ESS ≥ 1 000 of the
overlap in under a minute for ``reduced50`` and under five for ``detailed20``.

Run ``python benchmarks/reconstruction.py [--draws N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported

import numpy as np  # noqa: E402
from _gibbs import environment, ess  # noqa: E402

from adversary.model_files import load_module  # noqa: E402
from adversary.scenarios.reconstruction import sampled_posterior  # noqa: E402
from adversary.scenarios.reconstruction.simulate import simulated  # noqa: E402

#: sampler name: (latent, sampler) of :func:`sampled_posterior`
SAMPLERS = {
    "persons": ("persons", "direct"),
    "persons_pymc": ("persons", "pymc"),
    "histogram": ("histogram", "pymc"),
}


def blocks() -> dict:
    """The two benchmark blocks."""
    reduced = load_module("reconstruction_block").CASE
    return {
        "reduced50": simulated(reduced.replace(n=50, truth=None, releases=None), seed=7),
        "detailed20": load_module("reconstruction_detailed").CASE,
    }


def measure(case, name: str, draws: int, tune: int = 200, seed: int = 1) -> dict:
    """One chain of ``draws`` after ``tune`` sweeps: wall-clock, ESS of the overlap, ESS/s."""
    latent, sampler = SAMPLERS[name]
    start = time.perf_counter()
    posterior = sampled_posterior(
        case, draws=draws, tune=tune, chains=1, random_seed=seed, latent=latent, sampler=sampler
    )
    wall = time.perf_counter() - start
    overlap = np.minimum(posterior.draws, np.array(case.truth)).sum(axis=-1)
    size = ess(overlap)
    return {
        "wall_s": wall,
        "ess_overlap": size,
        "ess_per_s": size / wall,
        "mean": float(overlap.mean()),
    }


def run(draws: int, tune: int = 200) -> dict:
    results = {}
    for name, case in blocks().items():
        rows = {sampler: measure(case, sampler, draws, tune) for sampler in SAMPLERS}
        for row in rows.values():
            row["ratio"] = row["ess_per_s"] / rows["histogram"]["ess_per_s"]
        results[name] = rows
    return {"draws": draws, "tune": tune, "results": results, "environment": environment()}


def format_table(result: dict) -> str:
    lines = [
        f"one chain of {result['draws']} draws after {result['tune']} sweeps, one core",
        f"{'block':<12}{'sampler':<14}{'wall s':>8}{'ESS':>8}{'ESS/s':>9}{'ratio':>9}{'mean':>9}",
    ]
    for name, rows in result["results"].items():
        for latent, r in rows.items():
            lines.append(
                f"{name:<12}{latent:<14}{r['wall_s']:>8.1f}{r['ess_overlap']:>8.0f}"
                f"{r['ess_per_s']:>9.1f}{r['ratio']:>9.2f}{r['mean']:>9.3f}"
            )
    lines.append("ratio = ESS/s over the histogram pair moves'; mean = the overlap's mean")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--tune", type=int, default=200, help="sweeps discarded first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    result = run(args.draws, args.tune)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
