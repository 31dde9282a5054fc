"""Effective samples per second on a block's records seen through ten noisy tables.

The model (the issue's model (c)) is a block of ``PERSONS`` = 50 persons, each
in one of the 56 cells of a reduced 2020 cross-classification, household/group
quarters (2) × voting age (2) × Hispanic (2) × race (7), a ``pm.Categorical``
vector (one element per person) with a prior drawn once (the block's tract).
The release is the ten overlapping noisy marginals of the 2020 PL 94-171
queries on those cells — total, race, hispanic, voting_age, hhgq,
hispanic×race, voting_age×race, voting_age×hispanic, voting_age×hispanic×race
and detailed — each ``x*_q = A_q n + Z_q``, ``Z_q ~ DG(0, 1/(2ρ_q))`` with the
block-level ρ of that query in the 2020 persons budget (the paper's
convention). The truth and the releases are drawn once from ``--seed``.

Samplers, interleaved in one process, one core, same chains and draws:

1. ``ours`` — :func:`adversary.inference.sample`: one exact Gibbs step for the
   persons (one role: one compiled conditional scores all 56 cells at once);
2. ``pymc`` — plain :func:`pymc.sample` (``CategoricalGibbsMetropolis``);
3. ``numpy`` — a numpy Gibbs loop: each person leaves the ten tables' counts
   and re-enters a cell drawn from its full conditional, all 56 cells scored
   at once from the ten tables (``Σ_q (2(x*_q - m_q) - 1)/(2σ_q²)`` at the
   cell's margin of each table, plus the log prior).

Estimands: ``P[person 0 in its true cell]`` and the reconstruction overlap
``Σ_k min(n_k, truth_k) / 50`` (the share of true records in a posterior
draw). No exact value exists (the posterior has 56⁵⁰ states), so the table
reports each sampler's estimate and the ``z`` of its difference from the
numpy loop's with both Monte Carlo standard errors.

Run ``python benchmarks/gibbs_block_tables.py [--quick] [--json] [--cold]``.
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
import pymc as pm  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

from adversary.budget import get_preset  # noqa: E402
from adversary.distributions import DiscreteGaussian  # noqa: E402
from adversary.noise import discrete_gaussian  # noqa: E402
from adversary.scenarios.reconstruction import PL94_QUERIES, REDUCED  # noqa: E402

PERSONS = 50
ATTRIBUTES = REDUCED.attributes  # hhgq 2 × voting_age 2 × hispanic 2 × race 7
CELLS = REDUCED.n_cells
QUERIES = PL94_QUERIES  # the ten queries: the attributes each keeps
SAMPLERS = ("ours", "pymc", "numpy")
FULL = {"chains": 4, "tune": 200, "draws": 2000}
QUICK = {"chains": 2, "tune": 100, "draws": 500}
WARMUP = {"tune": 0, "draws": 5}


def margins() -> dict[str, np.ndarray]:
    """``{query: the index of each detailed cell's margin in that query's table}``."""
    return {q: REDUCED.margin_of_cells(kept) for q, kept in QUERIES.items()}


def sigma2s() -> dict[str, float]:
    """Each query's noise variance ``1/(2ρ_q)``, ρ_q its block-level share of the 2020 budget."""
    budget = get_preset("pl94-2020-persons")
    return {q: 1.0 / (2.0 * float(budget.rho("block", q))) for q in QUERIES}


def table_counts(cells: np.ndarray) -> dict[str, np.ndarray]:
    """The ten tables of a block whose persons are in ``cells``."""
    detailed = np.bincount(cells, minlength=CELLS)
    return {
        q: np.bincount(index, weights=detailed, minlength=index.max() + 1).astype(np.int64)
        for q, index in margins().items()
    }


@dataclass(frozen=True)
class Block:
    """The prior of each cell, the true persons' cells and the ten released tables."""

    prior: tuple[float, ...]
    persons: tuple[int, ...]
    releases: dict

    @classmethod
    def drawn(cls, seed: int) -> Block:
        rng = np.random.default_rng(seed)
        prior = rng.dirichlet(np.full(CELLS, 0.5))
        persons = rng.choice(CELLS, size=PERSONS, p=prior)
        tables = table_counts(persons)
        variances = sigma2s()
        releases = {
            q: tuple(
                int(x)
                for x in counts + discrete_gaussian.sample(variances[q], counts.size, rng=rng)
            )
            for q, counts in tables.items()
        }
        return cls(tuple(float(p) for p in prior), tuple(int(c) for c in persons), releases)

    def model(self) -> pm.Model:
        variances = sigma2s()
        with pm.Model() as model:
            persons = pm.Categorical("P", p=np.array(self.prior), shape=PERSONS)
            counts = pt.eq(persons[:, None], np.arange(CELLS)[None, :]).sum(axis=0)
            cube = counts.reshape([size for _, size in ATTRIBUTES])  # the cross-classification
            names = [name for name, _ in ATTRIBUTES]
            for q, kept in QUERIES.items():
                dropped = tuple(k for k, name in enumerate(names) if name not in kept)
                table = cube.sum(axis=dropped) if dropped else cube
                DiscreteGaussian(
                    f"x_{q}",
                    mu=table.reshape((-1,)),
                    sigma2=variances[q],
                    observed=np.array(self.releases[q]),
                )
        return model


def _values(block: Block, cells: np.ndarray) -> dict:
    """The estimands' draws from the persons' cells, an array (draw, person)."""
    truth = np.bincount(np.array(block.persons), minlength=CELLS)
    counts = np.apply_along_axis(np.bincount, 1, cells, minlength=CELLS)
    return {
        "p0": cells[:, 0] == block.persons[0],
        "overlap": np.minimum(counts, truth).sum(axis=1) / PERSONS,
    }


def numpy_gibbs_chain(block: Block, n_iter: int, rng: np.random.Generator) -> np.ndarray:
    """One chain of the persons' Gibbs sampler in plain numpy: ``(n_iter, PERSONS)`` cells.

    Person i's full conditional given the others' table counts ``m_q`` is
    ``∝ prior_k exp(Σ_q (2(x*_q - m_q) - 1)/(2σ_q²))`` at cell k's margin of
    each table. The start puts everyone in the most probable cell a priori.
    """
    index = margins()
    scales = {q: 1.0 / (2.0 * s2) for q, s2 in sigma2s().items()}
    releases = {q: np.array(x, dtype=np.float64) for q, x in block.releases.items()}
    log_prior = np.log(np.array(block.prior))
    cells = np.full(PERSONS, int(np.argmax(log_prior)), dtype=np.int64)
    tables = {q: c.astype(np.float64) for q, c in table_counts(cells).items()}
    out = np.empty((n_iter, PERSONS), dtype=np.int64)
    for sweep in range(n_iter):
        for person in range(PERSONS):
            old = cells[person]
            log_w = log_prior.copy()
            for q, margin in index.items():
                tables[q][margin[old]] -= 1.0
                log_w += ((2.0 * (releases[q] - tables[q]) - 1.0) * scales[q])[margin]
            cdf = np.cumsum(np.exp(log_w - log_w.max()))
            cell = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
            cells[person] = cell
            for q, margin in index.items():
                tables[q][margin[cell]] += 1.0
        out[sweep] = cells
    return out


def _pymc_chain(sample, block, tune, draws, seed):
    posterior, sampling, setup = harness.timed_pymc_chain(sample, block.model(), tune, draws, seed)
    return _values(block, posterior["P"].values), sampling, setup


def numpy_chain(block, tune, draws, seed):
    """One chain of the numpy loop; ``tune`` sweeps of burn-in are dropped."""
    start = time.perf_counter()
    cells = numpy_gibbs_chain(block, tune + draws, np.random.default_rng(seed))[tune:]
    return _values(block, cells), time.perf_counter() - start, 0.0


CHAIN_RUNNERS = {**harness.pymc_runners(_pymc_chain), "numpy": numpy_chain}
STEPS = {
    "ours": ["MetropolisedGibbs on P (one role)"],
    "pymc": ["CategoricalGibbsMetropolis on P"],
    "numpy": ["numpy loop, all cells scored from the ten tables"],
}
#: No exact posterior: means and variances are unknown (the report compares with numpy).
ESTIMANDS = [
    harness.Estimand("p0", "P[P0=t]", math.nan, math.nan),
    harness.Estimand("overlap", "overlap", math.nan, math.nan),
]


def run_benchmark(config: dict, seed: int = 5, samplers=SAMPLERS, warmup: bool = True) -> dict:
    """All samplers on the block drawn from ``seed``, in this process; a JSON-ready result."""
    block = Block.drawn(seed)
    runners = {name: CHAIN_RUNNERS[name] for name in samplers}
    steps = {name: STEPS[name] for name in samplers}
    result = harness.compare_samplers(
        block, runners, steps, ESTIMANDS, config, seed, WARMUP if warmup else None
    )
    return {"block": asdict(block), **result}


def format_table(result: dict) -> str:
    """The result as a plain-text report."""
    heading = f"A block of {PERSONS} persons in {CELLS} cells seen through {len(QUERIES)} tables"
    known = "exact: unknown (56^50 states); bias and z below are against the numpy loop's estimate"
    return harness.report(result, heading, known, ESTIMANDS)


if __name__ == "__main__":
    runs = {"full": FULL, "quick": QUICK, "seed": 5}
    sys.exit(harness.main(__doc__, run_benchmark, format_table, runs))
