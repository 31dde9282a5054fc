"""Effective samples per second on the block-group attack: our exact Gibbs steps vs peers.

The model is the Granville County ED 39-14 case (``models/granville_county.py``;
Kazan & Reiter Sec. 4.3, Table 7 releases ``x1* = 2, x2* = 1, y1* = -1``,
``p = 1/2``, ``X2 | X1 = k1 ~ Uniform{k1, k1+1, …}``, (3.7) for ``y1*``). Three
samplers of its posterior (S3.4) run in one process, one after the other, each
with the same chains, tuning/burn-in and draws, on one core:

1. ``ours`` — :func:`adversary.inference.sample`: exact Gibbs steps
   (``BoundedGibbs`` for ``X1``, (S3.9); ``WindowGibbs`` for ``X2``, (S3.14)).
2. ``pymc`` — plain :func:`pymc.sample` on the same model: whatever PyMC
   assigns to integer variables (``Metropolis`` for both, in PyMC 6.4).
3. ``numpy`` — a plain Python/numpy Gibbs loop writing (S3.9) and (S3.14)
   out directly, with the constraint ``X2 ≥ X1`` in both updates.

For each, the effective sample size (ArviZ ``az.ess``, ``method="mean"``: the
ESS of the posterior mean, which is what the estimates below are) of the
indicator ``1[X1 = m + 1]`` (so of ``P[X1 = m+1]``, the adversary's posterior
that the target has the characteristic) and of ``X2``, divided by the
wall-clock time of the sampling loop (tuning + draws, compilation excluded),
and the ratio of that rate to ours. Compilation is reported separately: the
first run of each sampler in the process (``warmup_s``, a short run that
triggers the numba JIT) and the set-up of the measured run (``setup_s``: its
wall-clock time minus its sampling loop — building the model's functions,
step assignment, start checks, trace conversion).

Every sampler's estimates are compared with the exact posterior (enumeration
by :func:`adversary.scenarios.block_group.posterior`): the bias and its size
in Monte Carlo standard errors, ``MCSE = sqrt(Var_exact / ESS)``.

Run ``python benchmarks/gibbs_block_group.py [--quick] [--json]``; see
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={_ROOT / 'build' / 'pytensor'}")

import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
import xarray as xr  # noqa: E402

from adversary import inference  # noqa: E402
from adversary.model_files import load_case  # noqa: E402
from adversary.noise import discrete_gaussian, noise_variance  # noqa: E402

SAMPLERS = ("ours", "pymc", "numpy")

# Full run: long enough that ArviZ's ESS of PyMC's Metropolis chains is stable
# (short Metropolis runs of slowly mixing discrete variables overstate it).
FULL = {"chains": 4, "tune": 1000, "draws": 25_000}
QUICK = {"chains": 4, "tune": 500, "draws": 5_000}
WARMUP = {"tune": 0, "draws": 20}
TAIL_MASS = 1e-12  # X2 grid of the numpy loop: conditional mass left outside


@dataclass
class Exact:
    """The exact posterior summaries every sampler is checked against."""

    p_x1: float  # P[X1 = m + 1 | releases]
    mean_x2: float  # E[X2 | releases]
    var_x2: float
    omitted_mass: float


@dataclass
class Run:
    """One sampler's draws (arrays of shape (chain, draw)) and its timings in seconds."""

    name: str
    x1: np.ndarray
    x2: np.ndarray
    sampling_s: float  # sampling loops (tuning + draws), summed over chains
    setup_s: float  # everything else in the timed calls, summed over chains
    warmup_s: float = 0.0  # the first, short call in this process (JIT compilation)
    steps: list = field(default_factory=list)


def exact_reference(case) -> Exact:
    """Posterior of ``X1`` and ``X2`` by enumeration of (S3.4)."""
    joint = case.posterior()
    x2 = joint.sum("X1")
    mean = float((x2 * x2["X2"]).sum())
    var = float((x2 * (x2["X2"] - mean) ** 2).sum())
    return Exact(
        p_x1=float(joint.sel(X1=case.known_count + 1).sum()),
        mean_x2=mean,
        var_x2=var,
        omitted_mass=float(joint.attrs["omitted_mass"]),
    )


def _draws(tree, name) -> np.ndarray:
    return np.asarray(tree["posterior"][name].transpose("chain", "draw").values)[0]


def _pymc_chain(sample, case, tune, draws, seed):
    """One chain by ``sample`` (a ``pm.sample``-like function): draws, loop time, other time."""
    model = case.model()
    start = time.perf_counter()
    with model:
        tree = sample(
            draws=draws,
            tune=tune,
            chains=1,
            cores=1,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    wall = time.perf_counter() - start
    sampling = float(tree["sample_stats"].attrs["sampling_time"])
    return _draws(tree, "X1"), _draws(tree, "X2"), sampling, wall - sampling


def ours_chain(case, tune, draws, seed):
    """One chain of our exact Gibbs steps, :func:`adversary.inference.sample`."""
    return _pymc_chain(inference.sample, case, tune, draws, seed)


def pymc_chain(case, tune, draws, seed):
    """One chain of plain :func:`pymc.sample`: PyMC's default steps for the model."""
    return _pymc_chain(pm.sample, case, tune, draws, seed)


def ours_steps(case) -> list[str]:
    """The steps :func:`adversary.inference.sample` assigns."""
    return [
        f"{type(s).__name__}{[v.name for v in s.vars]}"
        for s in inference.assign_steps(case.model())
    ]


def pymc_steps(case) -> list[str]:
    """The step methods plain ``pm.sample`` assigns to the model's free variables."""
    from pymc.sampling.mcmc import assign_step_methods

    _, selected = assign_step_methods(case.model())
    return [f"{cls.__name__}{[v.name for v in vars]}" for cls, vars in selected.items()]


def _numpy_parameters(case) -> dict:
    if case.x2_prior.kind != "improper_uniform" or case.sum_noise != "approximate":
        raise ValueError(
            "the numpy loop implements the improper uniform X2 prior and the (3.7) "
            f"approximation only; got {case.x2_prior.describe()}, sum_noise={case.sum_noise!r}"
        )
    prior = case.priors[next(iter(case.priors))]
    # e^{-ρ(x*-x)²} = e^{-(x*-x)²/(2σ²)}: the paper's ρ1, ρ2 and ρ1/d under its convention.
    a1 = 1 / (2 * float(noise_variance(case.rho1, case.convention)))
    a2 = 1 / (2 * float(noise_variance(case.rho2, case.convention)))
    return {
        "releases": case.releases,
        "a1": a1,
        "a2": a2,
        "ay": a1 / case.d,
        "prior": prior,
        "known": case.known_count,
    }


def numpy_gibbs_chain(params: dict, n_iter: int, rng: np.random.Generator) -> np.ndarray:
    """One chain of the block-group Gibbs sampler, (S3.9) and (S3.14) in plain numpy.

    Returns an ``(n_iter, 2)`` integer array of ``(X1, X2)`` after each sweep.
    The start is the prior mode of ``X1`` and ``X2 = X1``, which is feasible.
    """
    x1r, x2r, y1r = params["releases"]
    a1, a2, ay, p, m = params["a1"], params["a2"], params["ay"], params["prior"], params["known"]
    k1_values = np.array([m, m + 1])
    log_k1_prior = np.log(np.array([1 - p, p]))
    log_k1_x1 = log_k1_prior - a1 * (x1r - k1_values) ** 2
    # X2 | X1 = k1: ∝ e^{-a2 (x2*-k2)²} e^{-ay (y1* - (k2-k1))²} 1[k2 ≥ k1], a discrete
    # Gaussian with precision a = a2 + ay and centre c(k1), truncated below at k1 (S3.14).
    a = a2 + ay
    # Half-width holding all but TAIL_MASS of a DG(1/(2a)), +1 for the non-integer centre.
    reach = int(discrete_gaussian.cutoff(1 / (2 * a), TAIL_MASS)) + 1
    out = np.empty((n_iter, 2), dtype=np.int64)
    k1 = m + int(p > 0.5)
    k2 = k1
    for i in range(n_iter):
        # (S3.9): X1 | X2 = k2 on {m, m+1}; the value m+1 is impossible when k2 < m+1.
        log_w = log_k1_x1 - ay * (y1r - (k2 - k1_values)) ** 2
        log_w = np.where(k2 >= k1_values, log_w, -np.inf)
        w = np.exp(log_w - log_w.max())
        k1 = int(k1_values[int(rng.random() * (w[0] + w[1]) >= w[0])])
        # (S3.14): X2 | X1 = k1 on a grid around the centre, never below k1.
        centre = (a2 * x2r + ay * (y1r + k1)) / a
        grid = np.arange(
            max(k1, math.floor(centre) - reach), max(k1, math.ceil(centre)) + reach + 1
        )
        log_w = -a2 * (x2r - grid) ** 2 - ay * (y1r - (grid - k1)) ** 2
        cdf = np.cumsum(np.exp(log_w - log_w.max()))
        k2 = int(grid[np.searchsorted(cdf, rng.random() * cdf[-1], side="right")])
        out[i] = k1, k2
    return out


def numpy_chain(case, tune, draws, seed):
    """One chain of the plain numpy Gibbs loop; ``tune`` sweeps of burn-in are dropped."""
    start = time.perf_counter()
    params = _numpy_parameters(case)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    states = numpy_gibbs_chain(params, tune + draws, np.random.default_rng(seed))[tune:]
    sampling = time.perf_counter() - start
    return states[:, 0], states[:, 1], sampling, setup


CHAIN_RUNNERS = {"ours": ours_chain, "pymc": pymc_chain, "numpy": numpy_chain}
STEP_NAMES = {
    "ours": ours_steps,
    "pymc": pymc_steps,
    "numpy": lambda case: ["numpy loop (S3.9), (S3.14)"],
}


def run_samplers(case, chains, tune, draws, seed, samplers=SAMPLERS, warmup=True) -> list[Run]:
    """Every sampler's chains, interleaved (chain 0 of each, then chain 1 of each, …).

    Interleaving spreads any load from other processes over all samplers alike.
    Chain ``c`` of every sampler uses seed ``seed + c``. Before the timed
    chains, each sampler runs one short chain (``WARMUP``) whose wall-clock
    time — mostly JIT compilation on a cold start — is reported as ``warmup_s``.
    """
    warm = dict.fromkeys(samplers, 0.0)
    if warmup:
        for name in samplers:
            start = time.perf_counter()
            CHAIN_RUNNERS[name](case, WARMUP["tune"], WARMUP["draws"], seed)
            warm[name] = time.perf_counter() - start
    parts = {name: [] for name in samplers}
    for chain in range(chains):
        for name in samplers:
            parts[name].append(CHAIN_RUNNERS[name](case, tune, draws, seed + chain))
    runs = []
    for name in samplers:
        x1, x2, sampling, setup = zip(*parts[name], strict=True)
        runs.append(
            Run(
                name,
                np.stack(x1),
                np.stack(x2),
                float(sum(sampling)),
                float(sum(setup)),
                warm[name],
                STEP_NAMES[name](case),
            )
        )
    return runs


def _ess(values: np.ndarray) -> float:
    data = xr.DataArray(values.astype(np.float64), dims=("chain", "draw"))
    return float(az.ess(data, method="mean"))


def summarise(run: Run, exact: Exact, known: int, tune: int) -> dict:
    """ESS, ESS per second and the estimates' error against the exact posterior, for one run."""
    indicator = (run.x1 == known + 1).astype(np.float64)
    row = {
        "sampler": run.name,
        "steps": run.steps,
        "chains": int(run.x1.shape[0]),
        "draws": int(run.x1.shape[1]),
        "sampling_s": run.sampling_s,
        "setup_s": run.setup_s,
        "warmup_s": run.warmup_s,
        "us_per_sweep": 1e6 * run.sampling_s / (run.x1.shape[0] * (tune + run.x1.shape[1])),
    }
    for key, values, estimate, truth, var in (
        ("x1", indicator, indicator.mean(), exact.p_x1, exact.p_x1 * (1 - exact.p_x1)),
        ("x2", run.x2, run.x2.mean(), exact.mean_x2, exact.var_x2),
    ):
        ess = _ess(values)
        mcse = math.sqrt(var / ess)
        row |= {
            f"{key}_estimate": float(estimate),
            f"{key}_exact": truth,
            f"{key}_ess": ess,
            f"{key}_ess_per_s": ess / run.sampling_s,
            f"{key}_mcse": mcse,
            f"{key}_bias": float(estimate) - truth,
            f"{key}_z": (float(estimate) - truth) / mcse,
        }
    return row


def add_ratios(rows: list[dict]) -> list[dict]:
    """Each sampler's ESS per second divided by ours (``ours`` must be among the rows)."""
    ours = next(r for r in rows if r["sampler"] == "ours")
    for row in rows:
        for key in ("x1", "x2"):
            row[f"{key}_ratio"] = row[f"{key}_ess_per_s"] / ours[f"{key}_ess_per_s"]
    return rows


def run_benchmark(
    config: dict, seed: int = 20230, samplers=SAMPLERS, case=None, warmup: bool = True
) -> dict:
    """All samplers on the Granville model in this process; a JSON-ready result."""
    case = load_case("granville_county") if case is None else case
    exact = exact_reference(case)
    runs = run_samplers(case, seed=seed, samplers=samplers, warmup=warmup, **config)
    rows = [summarise(run, exact, case.known_count, config["tune"]) for run in runs]
    if "ours" in samplers:
        add_ratios(rows)
    return {
        "case": case.name,
        "config": {**config, "seed": seed, "cores": 1},
        "exact": asdict(exact),
        "results": rows,
        "environment": _environment(),
    }


def _environment() -> dict:
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


def format_table(result: dict) -> str:
    """The result as a plain-text report."""
    cfg, exact, env = result["config"], result["exact"], result["environment"]
    lines = [
        f"{result['case']}: posterior (S3.4), {cfg['chains']} chains × {cfg['draws']} draws "
        f"after {cfg['tune']} tuning/burn-in sweeps each,",
        f"one core, chains interleaved across samplers, seeds {cfg['seed']}.."
        f"{cfg['seed'] + cfg['chains'] - 1}, load average {env['load_average_1min']:.1f}",
        f"exact: P[X1=1] = {exact['p_x1']:.5f}, E[X2] = {exact['mean_x2']:.5f} "
        f"(omitted mass {exact['omitted_mass']:.1e})",
        "",
        f"{'sampler':<8}{'warmup s':>9}{'setup s':>9}{'sample s':>9}{'µs/sweep':>9}"
        f"{'ESS X1':>9}{'ESS/s X1':>10}{'ratio':>7}{'ESS X2':>9}{'ESS/s X2':>10}{'ratio':>7}",
    ]
    for r in result["results"]:
        lines.append(
            f"{r['sampler']:<8}{r['warmup_s']:>9.2f}{r['setup_s']:>9.2f}{r['sampling_s']:>9.2f}"
            f"{r['us_per_sweep']:>9.0f}"
            f"{r['x1_ess']:>9.0f}{r['x1_ess_per_s']:>10.0f}{r.get('x1_ratio', math.nan):>7.2f}"
            f"{r['x2_ess']:>9.0f}{r['x2_ess_per_s']:>10.0f}{r.get('x2_ratio', math.nan):>7.2f}"
        )
    lines += ["", f"{'sampler':<8}{'P[X1=1]':>9}{'bias':>9}{'z':>6}{'E[X2]':>9}{'bias':>9}{'z':>6}"]
    for r in result["results"]:
        lines.append(
            f"{r['sampler']:<8}{r['x1_estimate']:>9.4f}{r['x1_bias']:>+9.4f}{r['x1_z']:>+6.1f}"
            f"{r['x2_estimate']:>9.4f}{r['x2_bias']:>+9.4f}{r['x2_z']:>+6.1f}"
        )
    lines += ["", "steps: " + "; ".join(f"{r['sampler']}: {r['steps']}" for r in result["results"])]
    lines.append(
        "ratio = ESS/s divided by ours; z = bias / MCSE, MCSE = sqrt(exact variance / ESS)."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"shorter runs {QUICK}")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--seed", type=int, default=20230)
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="pymc")
    result = run_benchmark(QUICK if args.quick else FULL, seed=args.seed)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
