"""Effective samples per second on a block's records: our exact Gibbs steps vs peers.

The model is a block of ``PERSONS`` = 12 persons, each in one of ``CELLS`` = 8
cells (a ``pm.Categorical`` per person, uniform prior), released as the 8 noisy
cell counts ``x*_k = n_k + Z_k``, ``Z_k ~ DG(0, σ²)``, ``σ² = 1/(2ρ)`` with
ρ = 0.1 (the paper's convention). The adversary reconstructs who is where.
The true persons and the releases are drawn once from ``--seed``.

Three samplers of the posterior run in one process, interleaved, each with the
same chains, tuning/burn-in and draws, on one core:

1. ``ours`` — :func:`adversary.inference.sample`: exact Gibbs updates of each person,
   all persons one role (one compiled conditional, :mod:`adversary.inference.roles`).
2. ``pymc`` — plain :func:`pymc.sample`: PyMC's default step for categorical
   variables (``CategoricalGibbsMetropolis`` in PyMC 6.4).
3. ``numpy`` — a plain numpy Gibbs loop: each person is taken out of the counts
   and put back in a cell drawn from its full conditional, all 8 cells scored
   at once (``log P ∝ (2(x*_k - n_k) - 1)/(2σ²)`` for the counts ``n`` without it).

Estimands: ``P[person 0 in its true cell]`` (the mean of that indicator) and
``E[n_0]``, the count of cell 0. Exact values by enumeration of the count
vectors (the persons are exchangeable under the uniform prior):
``P[n | x*] ∝ multinomial(n) Π_k DG(x*_k - n_k)`` over the C(19, 7) = 50,388
compositions of 12 into 8 cells, and ``P[person 0 in k] = E[n_k]/12``.

Run ``python benchmarks/gibbs_block_records.py [--quick] [--json]``; see
``benchmarks/README.md``. Reported for the issue's model (b): per-sweep speed
against the numpy loop, and the warm-up (compilation) time.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported

import _gibbs as harness  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from scipy import special  # noqa: E402

from adversary import inference  # noqa: E402
from adversary.distributions import DiscreteGaussian  # noqa: E402
from adversary.noise import discrete_gaussian, noise_variance  # noqa: E402
from adversary.scenarios.reconstruction.posterior import compositions  # noqa: E402

PERSONS = 12
CELLS = 8
RHO = 0.1
SAMPLERS = ("ours", "pymc", "numpy")
FULL = {"chains": 4, "tune": 500, "draws": 5000}
QUICK = {"chains": 2, "tune": 200, "draws": 1000}
WARMUP = {"tune": 0, "draws": 20}


@dataclass(frozen=True)
class Block:
    """The block's true persons (cell of each) and its released counts."""

    persons: tuple[int, ...]
    releases: tuple[int, ...]

    @classmethod
    def drawn(cls, seed: int) -> Block:
        rng = np.random.default_rng(seed)
        persons = rng.integers(CELLS, size=PERSONS)
        counts = np.bincount(persons, minlength=CELLS)
        noise = discrete_gaussian.sample(_sigma2(), size=CELLS, rng=rng)
        return cls(tuple(int(p) for p in persons), tuple(int(x) for x in counts + noise))

    def model(self) -> pm.Model:
        with pm.Model() as model:
            cells = [pm.Categorical(f"P{i}", p=np.full(CELLS, 1.0 / CELLS)) for i in range(PERSONS)]
            counts = pt.stack([sum(pt.eq(c, k) for c in cells) for k in range(CELLS)])
            DiscreteGaussian("releases", mu=counts, rho=RHO, observed=np.array(self.releases))
        return model


def _sigma2() -> float:
    return float(noise_variance(RHO, "paper"))


@dataclass(frozen=True)
class Exact:
    """The exact posterior summaries every sampler is checked against."""

    p_person0: float  # P[person 0 in its true cell | releases]
    mean_n0: float  # E[n_0 | releases]
    var_n0: float


def exact_reference(block: Block) -> Exact:
    """The posterior of the count vector by enumeration; person 0's cell by exchangeability."""
    counts = compositions(PERSONS, CELLS)
    log_multinomial = special.gammaln(PERSONS + 1) - special.gammaln(counts + 1).sum(axis=1)
    releases = np.array(block.releases)
    log_likelihood = discrete_gaussian.logpmf(releases - counts, _sigma2()).sum(axis=1)
    log_weight = log_multinomial + log_likelihood
    weight = np.exp(log_weight - log_weight.max())
    weight /= weight.sum()
    mean = weight @ counts
    n0 = counts[:, 0]
    mean_n0 = float(weight @ n0)
    return Exact(
        p_person0=float(mean[block.persons[0]] / PERSONS),
        mean_n0=mean_n0,
        var_n0=float(weight @ (n0 - mean_n0) ** 2),
    )


def estimands(exact: Exact) -> list[harness.Estimand]:
    """``P[person 0 in its true cell]`` and ``E[n_0]``, with their exact values."""
    p = exact.p_person0
    return [
        harness.Estimand("p0", "P[P0=t]", p, p * (1 - p)),
        harness.Estimand("n0", "E[n0]", exact.mean_n0, exact.var_n0),
    ]


def _values(block: Block, cells: np.ndarray) -> dict:
    """The estimands' draws from the persons' cells, an array (draw, person)."""
    return {"p0": cells[:, 0] == block.persons[0], "n0": (cells == 0).sum(axis=1)}


def _pymc_chain(sample, block, tune, draws, seed):
    posterior, sampling, setup = harness.timed_pymc_chain(sample, block.model(), tune, draws, seed)
    cells = np.stack([posterior[f"P{i}"].values for i in range(PERSONS)], axis=1)
    return _values(block, cells), sampling, setup


def numpy_gibbs_chain(releases, n_iter: int, rng: np.random.Generator) -> np.ndarray:
    """One chain of the persons' Gibbs sampler in plain numpy: ``(n_iter, PERSONS)`` cells.

    Person i's full conditional given the others' counts ``n`` is
    ``∝ exp(-(x*_k - n_k - 1)²/(2σ²) + (x*_k - n_k)²/(2σ²)) = exp((2(x*_k - n_k) - 1)/(2σ²))``
    (uniform prior). The start puts everyone in cell 0.
    """
    releases = np.asarray(releases, dtype=np.float64)
    scale = 1.0 / (2.0 * _sigma2())
    cells = np.zeros(PERSONS, dtype=np.int64)
    counts = np.bincount(cells, minlength=CELLS).astype(np.float64)
    out = np.empty((n_iter, PERSONS), dtype=np.int64)
    for sweep in range(n_iter):
        for person in range(PERSONS):
            counts[cells[person]] -= 1.0
            log_w = (2.0 * (releases - counts) - 1.0) * scale
            cdf = np.cumsum(np.exp(log_w - log_w.max()))
            cell = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
            cells[person] = cell
            counts[cell] += 1.0
        out[sweep] = cells
    return out


def numpy_chain(block, tune, draws, seed):
    """One chain of the numpy loop; ``tune`` sweeps of burn-in are dropped."""
    start = time.perf_counter()
    cells = numpy_gibbs_chain(block.releases, tune + draws, np.random.default_rng(seed))[tune:]
    return _values(block, cells), time.perf_counter() - start, 0.0


CHAIN_RUNNERS = {**harness.pymc_runners(_pymc_chain), "numpy": numpy_chain}


def _step_names(block: Block) -> dict:
    from pymc.sampling.mcmc import assign_step_methods

    ours = inference.assign_steps(block.model())
    _, selected = assign_step_methods(block.model())
    return {
        "ours": [f"{type(s).__name__} on {len(s.vars)} persons, one role" for s in ours],
        "pymc": [f"{cls.__name__} on {len(vars)} persons" for cls, vars in selected.items()],
        "numpy": ["numpy loop, all cells scored at once"],
    }


def run_benchmark(config: dict, seed: int = 12, samplers=SAMPLERS, warmup: bool = True) -> dict:
    """All samplers on the block drawn from ``seed``, in this process; a JSON-ready result."""
    block = Block.drawn(seed)
    exact = exact_reference(block)
    runners = {name: CHAIN_RUNNERS[name] for name in samplers}
    steps = {name: _step_names(block)[name] for name in samplers}
    result = harness.compare_samplers(
        block, runners, steps, estimands(exact), config, seed, WARMUP if warmup else None
    )
    result["config"]["rho"] = RHO
    return {"block": asdict(block), **result, "exact": asdict(exact)}


def format_table(result: dict) -> str:
    """The result as a plain-text report."""
    exact = result["exact"]
    heading = f"A block of {PERSONS} persons in {CELLS} cells, releases "
    heading += f"{result['block']['releases']} (ρ = {RHO})"
    known = f"exact: P[person 0 in its cell] = {exact['p_person0']:.5f}, "
    known += f"E[n0] = {exact['mean_n0']:.5f}"
    return harness.report(result, heading, known, estimands(Exact(**exact)))


if __name__ == "__main__":
    runs = {"full": FULL, "quick": QUICK, "seed": 12}
    sys.exit(harness.main(__doc__, run_benchmark, format_table, runs))
