"""Smoke test of benchmarks/topdown_every_query.py: a small state, both estimators consistent,
its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("topdown_every_query")


def test_a_small_state_is_published_consistently_by_both(bench):
    result = bench.run(2_000, workers=1, seed=1)
    assert result["units"]["state"] == 1 and result["units"]["block"] > 10
    for row in result["rows"].values():
        assert row["consistent"] and row["mean_abs_error"]["state"] >= 0
    assert result["rows"]["detailed only"]["ratio"] == 1.0
    assert "every query" in bench.format_table(result)
