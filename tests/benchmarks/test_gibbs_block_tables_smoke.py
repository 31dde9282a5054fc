"""Smoke test of benchmarks/gibbs_block_tables.py: its tables, model and numpy loop agree.

The PyMC model's log-p (tables as sums of the cross-classified counts) equals
the numpy formula on the benchmark's margins; the numpy loop's score
formula for a person equals the model's full conditional, up to a constant. No timing is
asserted; ``ours`` is tested against enumeration in ``tests/inference``.
"""

import numpy as np
import pytest

from adversary.inference.safe import safe_compile_kwargs
from adversary.noise import discrete_gaussian as dg


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("gibbs_block_tables")


@pytest.fixture(scope="module")
def block(bench):
    return bench.Block.drawn(5)


def numpy_logp(bench, block, cells):
    """Log prior of every person plus the ten tables' discrete Gaussian log-pmfs."""
    tables = bench.table_counts(cells)
    variances = bench.sigma2s()
    log = np.log(np.array(block.prior))[cells].sum()
    for q, counts in tables.items():
        log += dg.logpmf(np.array(block.releases[q]) - counts, variances[q]).sum()
    return log


def test_ten_tables_over_56_cells(bench, block):
    assert bench.CELLS == 56 and len(bench.QUERIES) == 10
    sizes = {q: len(x) for q, x in block.releases.items()}
    assert sizes == {
        "total": 1,
        "race": 7,
        "hispanic": 2,
        "voting_age": 2,
        "hhgq": 2,
        "hispanic_race": 14,
        "voting_age_race": 14,
        "voting_age_hispanic": 4,
        "voting_age_hispanic_race": 28,
        "detailed": 56,
    }
    tables = bench.table_counts(np.array(block.persons))
    assert all(int(t.sum()) == bench.PERSONS for t in tables.values())


def test_model_log_p_is_the_numpy_formula(bench, block):
    model = block.model()
    # three evaluations: PyTensor's Python VM (made safe for counts summed from booleans, as
    # the package compiles), not a numba compile of the whole block
    logp = model.compile_logp(**safe_compile_kwargs(None, "FAST_COMPILE"))
    rng = np.random.default_rng(1)
    for _ in range(3):
        cells = rng.integers(bench.CELLS, size=bench.PERSONS)
        assert float(logp({"P": cells})) == pytest.approx(numpy_logp(bench, block, cells), abs=1e-8)


def test_the_loops_score_formula_is_the_model_conditional(bench, block):
    # The numpy loop scores person i's cells by Σ_q (2(x*_q - m_q) - 1)/(2σ_q²) at each
    # cell's margins plus the log prior; that must be the model's full conditional.
    cells = bench.numpy_gibbs_chain(block, 2, np.random.default_rng(3))[-1]
    person = 7
    scores = []
    for k in range(bench.CELLS):
        trial = cells.copy()
        trial[person] = k
        scores.append(numpy_logp(bench, block, trial))
    scores = np.array(scores)
    # The loop's own score vector for that person, rebuilt from its formula.
    index, variances = bench.margins(), bench.sigma2s()
    others = np.delete(cells, person)
    log_w = np.log(np.array(block.prior))
    for q, margin in index.items():
        table = np.bincount(margin[others], minlength=margin.max() + 1)
        log_w = (
            log_w
            + ((2.0 * (np.array(block.releases[q]) - table) - 1.0) / (2 * variances[q]))[margin]
        )
    np.testing.assert_allclose(log_w - log_w[0], scores - scores[0], atol=1e-9)


def test_report_lists_the_numpy_loop(bench):
    result = bench.run_benchmark(
        {"chains": 1, "tune": 2, "draws": 20}, samplers=("numpy",), warmup=False
    )
    (row,) = result["results"]
    assert row["sampler"] == "numpy" and row["overlap_z"] == 0.0
    assert "exact: unknown" in bench.format_table(result)
