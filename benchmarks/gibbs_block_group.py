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

import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported

import _gibbs as harness  # noqa: E402
import numpy as np  # noqa: E402

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


def _pymc_chain(sample, case, tune, draws, seed):
    """One chain by ``sample`` (a ``pm.sample``-like function): draws, loop time, other time."""
    posterior, sampling, setup = harness.timed_pymc_chain(sample, case.model(), tune, draws, seed)
    values = {"x1": (posterior["X1"].values == case.known_count + 1), "x2": posterior["X2"].values}
    return values, sampling, setup


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
    return {"x1": states[:, 0] == case.known_count + 1, "x2": states[:, 1]}, sampling, setup


CHAIN_RUNNERS = {**harness.pymc_runners(_pymc_chain), "numpy": numpy_chain}
STEP_NAMES = {
    "ours": ours_steps,
    "pymc": pymc_steps,
    "numpy": lambda case: ["numpy loop (S3.9), (S3.14)"],
}


def estimands(exact: Exact) -> list[harness.Estimand]:
    """``P[X1 = m + 1]`` (the mean of its indicator) and ``E[X2]``, with their exact values."""
    return [
        harness.Estimand("x1", "P[X1=1]", exact.p_x1, exact.p_x1 * (1 - exact.p_x1)),
        harness.Estimand("x2", "E[X2]", exact.mean_x2, exact.var_x2),
    ]


def run_benchmark(
    config: dict, seed: int = 20230, samplers=SAMPLERS, case=None, warmup: bool = True
) -> dict:
    """All samplers on the Granville model in this process; a JSON-ready result."""
    case = load_case("granville_county") if case is None else case
    exact = exact_reference(case)
    runners = {name: CHAIN_RUNNERS[name] for name in samplers}
    steps = {name: STEP_NAMES[name](case) for name in samplers}
    result = harness.compare_samplers(
        case, runners, steps, estimands(exact), config, seed, WARMUP if warmup else None
    )
    return {"case": case.name, **result, "exact": asdict(exact)}


def format_table(result: dict) -> str:
    """The result as a plain-text report."""
    exact = result["exact"]
    known = f"exact: P[X1=1] = {exact['p_x1']:.5f}, E[X2] = {exact['mean_x2']:.5f} "
    known += f"(omitted mass {exact['omitted_mass']:.1e})"
    heading = f"{result['case']}: posterior (S3.4)"
    return harness.report(result, heading, known, estimands(Exact(**exact)))


if __name__ == "__main__":
    runs = {"full": FULL, "quick": QUICK, "seed": 20230}
    sys.exit(harness.main(__doc__, run_benchmark, format_table, runs))
