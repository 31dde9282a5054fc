"""Smoke test of benchmarks/population.py: its per-record baseline equals the assessment."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "population.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("population_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_records_without_deduplication_equal_the_assessment(bench, model, reference):
    records = reference.records
    for _, record in records.sample(5, random_state=1).iterrows():
        computed = bench._record_measures(model, record)
        assert len(computed) == 2 * len(model.attacks) * len(model.priors) * len(model.budgets)
        for column, value in computed.items():
            # the assessment takes every block-group truth of one d from one decision map
            # (scenarios.block_group.maps): equal to the per-record sums to rounding
            assert value == pytest.approx(record[column], rel=0, abs=1e-12), column


def test_the_block_group_phase_one_by_one_equals_the_maps(bench, model, reference):
    phase = bench._block_group_phase(model, reference.parameters)
    assert phase["tuples"] == len(
        reference.parameters.query("attack == 'block_group'").drop_duplicates(
            ["cell_block_group", "known_count", "other_blocks"]
        )
    )
    assert phase["max_abs_difference"] <= 1e-12 and phase["per_tuple_s"] > 0 < phase["maps_s"]
