"""Smoke test of benchmarks/swapping_posterior.py: one call per case and its report."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("swapping_posterior")


def test_a_short_run_times_every_case_and_reports_the_rates(bench, capsys):
    assert bench.main(["--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "block_250" in out and "dp" in out
    result = bench.run(repeat=1)
    assert result["persons"] == {"shipped": 45, "block_250": 250}
    assert result["ratio_to_dp"]["dp"] == 1.0
    no_swapping = result["prior_1_10"]["0.0"]
    assert no_swapping["posterior_at_1"] == 1.0 and no_swapping["marginal_risk"] == 10.0
