"""Smoke test of benchmarks/reconstruction.py: its blocks, a short run, its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("reconstruction")


def test_blocks_are_the_issues_two(bench):
    blocks = bench.blocks()
    assert (blocks["reduced50"].n, blocks["reduced50"].n_cells) == (50, 56)
    assert (blocks["detailed20"].n, blocks["detailed20"].n_cells) == (20, 2016)
    assert len(blocks["detailed20"].queries) == 2600


def test_a_short_run_reports_every_sampler(bench):
    result = bench.run(draws=30, tune=5)  # short enough for the kernels' Python tier
    for rows in result["results"].values():
        assert set(rows) == {"persons", "persons_pymc", "histogram"}
        assert rows["histogram"]["ratio"] == 1.0 and rows["persons"]["ess_overlap"] > 0
    assert "ESS/s" in bench.format_table(result)
    assert "30 draws after 5 sweeps" in bench.format_table(result)
