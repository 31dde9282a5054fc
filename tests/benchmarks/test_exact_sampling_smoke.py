"""Smoke test of benchmarks/exact_sampling.py: a short run, equal draws, its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("exact_sampling")


def test_a_short_run_compares_equal_draws(bench):
    result = bench.run(sizes=(300,), repeat=1, sigma2={"2": 2.0, "1e-3": 1e-3})
    assert [(r["sigma2"], r["draws"]) for r in result["rows"]] == [("2", 300), ("1e-3", 300)]
    assert all(r["same_draws"] and r["ratio"] > 0 for r in result["rows"])
    assert result["load_s"] > 0
    assert "loading the compiled sampler" in bench.format_table(result)
