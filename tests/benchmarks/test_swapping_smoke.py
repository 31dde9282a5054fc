"""Smoke test of benchmarks/swapping.py: a short run on a small state and its report (no timing)."""

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("swapping")


def test_a_short_run_times_every_step_and_counts_the_swaps(bench):
    result = bench.run(persons=5_000, rate=0.2, repeat=1, workers=1)
    assert set(result["seconds"]) == {
        "households",
        "cells",
        "swap county",
        "swap tract",
        "swap state",
        "cell key",
    }
    assert result["ratio"]["households"] == 1.0
    for row in result["realised"].values():
        assert row["swapped"] == (
            row["selected"] - row["balanced"] - row["no_partner"] + row["partners"]
        )
        assert row["rate"] == row["swapped"] / row["households"] > 0
    assert result["tables"]["same_tables"]
    assert "target (30 s)" in bench.format_table(result)
