"""Smoke test of benchmarks/topdown.py: a short run, the fits agree, its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("topdown")


def test_a_short_run_agrees_with_jasons_iteration_and_is_consistent(bench):
    result = bench.run([50, 200], children=5_000, seed=1)
    for row in result["fit"]:
        assert row["difference"] < 1e-9 * row["size"] and 0 < row["zeros"] < row["size"]
    assert result["topdown"]["consistent"] and result["topdown"]["children"] == 5_000
    assert "iteration" in bench.format_table(result)
