"""Smoke test of benchmarks/accuracy.py: a short run on a small state and its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("accuracy")


def test_a_short_run_times_every_method_and_reports_the_state_total_exact(bench):
    result = bench.run(persons=5_000, repeat=1)
    assert set(result["seconds"]) == {"geography", "reduced"}
    assert result["ratio"]["geography"] == 1.0
    assert result["rmse"]["total"]["state"] == pytest.approx(0.0, abs=1e-6)
    assert result["rmse"]["total"]["block"] > 0 and result["units"]["block"] > 1
    assert "target < 1 s" in bench.format_table(result)
