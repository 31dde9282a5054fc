"""Swapped tables on Dask: the same bytes on any number of partitions and workers; their MAE."""

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.population.cluster import local_cluster
from adversary.population.synthetic import synthetic_population
from adversary.swapping import HouseholdSwapping, assign_households
from adversary.swapping.tables import mean_absolute_error, swapped_tables


@pytest.fixture(scope="module")
def persons():
    return assign_households(synthetic_population(30_000, seed=3), seed=4)


@pytest.fixture(scope="module")
def in_process(persons):
    return swapped_tables(persons, HouseholdSwapping(0.1, within="tract"), seed=8)


def _identical(a, b):
    return all(a[level].dataset.identical(b[level].dataset) for level in a.children)


def test_the_tables_count_the_swapped_persons_and_the_truth(persons, in_process):
    mechanism = HouseholdSwapping(0.1, within="tract")
    out = mechanism.swap(persons, seed=8)
    for frame, tree in ((persons, in_process.truth), (out, in_process.swapped)):
        table = pd.crosstab(frame["block"], block_cells(frame))
        block = tree["block"].dataset
        expected = table.reindex(index=block["unit"].values, columns=range(56), fill_value=0)
        assert np.array_equal(block["counts"].values, expected.to_numpy())
    moved = out[out["household"] >= 0].drop_duplicates("household")["swapped"]
    assert in_process.households == moved.size
    assert in_process.households_swapped == moved.sum() > 0
    # Tracts (the within areas) keep their tables; blocks do not.
    assert in_process.truth["tract"].dataset.identical(in_process.swapped["tract"].dataset)
    assert mean_absolute_error(in_process.truth, in_process.swapped, "tract") == 0.0
    assert mean_absolute_error(in_process.truth, in_process.swapped, "block") > 0.0


def test_same_bytes_on_any_number_of_partitions_and_workers(persons, in_process):
    mechanism = HouseholdSwapping(0.1, within="tract")
    several = swapped_tables(persons, mechanism, seed=8, partitions=5)
    assert _identical(several.swapped, in_process.swapped)
    # In process is one worker; a local cluster of two runs three partitions.
    with local_cluster(2) as client:
        on_dask = swapped_tables(persons, mechanism, seed=8, partitions=3, client=client)
    assert _identical(on_dask.swapped, in_process.swapped)
    assert _identical(on_dask.truth, in_process.truth)
    assert on_dask.households_swapped == in_process.households_swapped


def test_mean_absolute_error_is_the_mean_of_the_cells_differences(in_process):
    truth = in_process.truth
    release = truth.copy(deep=True)
    counts = release["block"].dataset["counts"].values
    counts[0, 0] += 3
    counts[1, 5] -= 2
    expected = 5 / counts.size
    assert mean_absolute_error(truth, release, "block") == pytest.approx(expected, rel=1e-15)
    assert mean_absolute_error(truth, release, "county") == 0.0
    with pytest.raises(ValueError, match=r"^level must be one of"):
        mean_absolute_error(truth, release, "nation")
    with pytest.raises(ValueError, match="its block units are not the truth's"):
        mean_absolute_error(truth, release.isel(unit=slice(1, None)), "block")


def test_bad_arguments_are_one_line(persons):
    mechanism = HouseholdSwapping(0.1)
    with pytest.raises(TypeError, match=r"^persons must be a pandas DataFrame"):
        swapped_tables(persons.to_numpy(), mechanism, seed=0)
    with pytest.raises(TypeError, match=r"^mechanism must have a swap\(persons"):
        swapped_tables(persons, object(), seed=0)
    with pytest.raises(ValueError, match=r"^partitions must be an integer >= 1"):
        swapped_tables(persons, mechanism, seed=0, partitions=0)
