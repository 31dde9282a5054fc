"""Smoke test of benchmarks/allocation_risk.py: the baseline agrees with the new posteriors."""

import pytest

from adversary.budget import get_preset


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("allocation_risk")


def test_the_baseline_reconstruction_agrees_with_exact_posteriors(bench):
    for n in (1, 2):
        row = bench.reconstruction_row(get_preset(), n, replications=3, seed=1)
        assert row["difference"] < 1e-12 and row["n"] == n
