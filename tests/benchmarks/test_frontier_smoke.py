"""Smoke test of benchmarks/frontier.py: a short run on a small state and its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("frontier")


def test_a_short_run_evaluates_the_family_and_reports_the_projection(bench):
    result = bench.run(allocations=3, persons=20_000, attacks="single_block")
    assert result["allocations"] == 3 and result["attacks"] == ["single_block"]
    assert 1 <= result["pareto"] <= 3
    assert result["projected_100_s"] == pytest.approx(100 * result["per_allocation_s"])
    assert "100 allocations:" in bench.format_table(result)
