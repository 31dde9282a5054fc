"""Smoke test of benchmarks/gibbs_block_records.py: its exact reference and numpy loop are right.

The exact reference (enumeration of count vectors, persons exchangeable) is
checked against enumerating the benchmark's own PyMC model on a smaller block;
the numpy Gibbs loop against the reference within 4 Monte Carlo standard errors
from ArviZ's ESS. ``ours`` is :func:`adversary.inference.sample`, tested against
enumeration in ``tests/inference``; no timing is asserted.
"""

import math

import numpy as np
import pytest

from adversary import inference

TINY = {"chains": 2, "tune": 200, "draws": 4000}


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("gibbs_block_records")


def test_compositions_are_every_count_vector(bench):
    rows = bench.compositions(bench.PERSONS, bench.CELLS)
    assert len(rows) == math.comb(bench.PERSONS + bench.CELLS - 1, bench.CELLS - 1) == 50_388
    assert (rows.sum(axis=1) == bench.PERSONS).all() and (rows >= 0).all()
    assert len(np.unique(rows, axis=0)) == len(rows)


def test_exact_reference_equals_enumerating_the_model(bench, monkeypatch):
    # 4 persons in 3 cells: 81 states, small enough to enumerate the PyMC model itself.
    monkeypatch.setattr(bench, "PERSONS", 4)
    monkeypatch.setattr(bench, "CELLS", 3)
    block = bench.Block(persons=(2, 0, 1, 2), releases=(3, -1, 2))
    exact = bench.exact_reference(block)
    table = inference.enumerate_posterior(block.model())
    assert exact.p_person0 == pytest.approx(
        inference.posterior_probability(table, {"P0": 2}), abs=1e-12
    )
    n0 = sum((table.marginal(f"P{i}").sel({f"P{i}": 0})) for i in range(4))
    assert exact.mean_n0 == pytest.approx(float(n0), abs=1e-12)


def test_numpy_loop_agrees_with_the_exact_posterior_within_4_mcse(bench):
    result = bench.run_benchmark(TINY, seed=12, samplers=("numpy",), warmup=False)
    (row,) = result["results"]
    assert row["chains"] == TINY["chains"] and row["draws"] == TINY["draws"]
    for key in ("p0", "n0"):
        assert row[f"{key}_ess"] > 0
        assert abs(row[f"{key}_estimate"] - row[f"{key}_exact"]) <= 4 * row[f"{key}_mcse"]
    assert "ESS/s" in bench.format_table(result)
