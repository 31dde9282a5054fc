"""The cell key method: keys by record, the same noise for the same cell, the p-table's law."""

import numpy as np
import pytest
from scipy import stats

from adversary.noise import CellKeyNoise
from adversary.population.synthetic import synthetic_population
from adversary.swapping import HouseholdSwapping, assign_households
from adversary.swapping.cell_key import CellKeyMethod, SwapThenCellKey, record_keys

PTABLE = CellKeyNoise(2.0, 4)
METHOD = CellKeyMethod(PTABLE)


@pytest.fixture(scope="module")
def persons():
    return assign_households(synthetic_population(20_000, seed=9), seed=1)


def _chi_square_p(observed, expected_probabilities):
    expected = observed.sum() * expected_probabilities
    return stats.chisquare(observed, expected).pvalue


def test_record_keys_are_uniform_and_depend_on_the_record_and_seed_only():
    ids = np.arange(200_000, dtype=np.int64) * 7 + 3
    keys = record_keys(ids, seed=1)
    assert ((keys >= 0) & (keys < 1)).all()
    assert stats.kstest(keys, "uniform").pvalue > 1e-3
    # Successive keys are uncorrelated (a hash, not a counter).
    assert abs(np.corrcoef(keys[:-1], keys[1:])[0, 1]) < 4 / np.sqrt(keys.size)
    assert np.array_equal(record_keys(ids[::-1], seed=1), keys[::-1])
    assert np.array_equal(record_keys(ids[5:9], seed=1), keys[5:9])
    assert not np.array_equal(record_keys(ids, seed=2), keys)


def test_noise_is_the_ptable_inverse_cdf_at_the_key():
    z = np.arange(-4, 5)
    cdf = np.cumsum(PTABLE.pmf(z))
    # Just below and at each step of the cdf, for a large count.
    for j in range(8):
        assert METHOD.noise_of(np.array([50]), np.array([cdf[j] - 1e-9]))[0] == z[j]
        assert METHOD.noise_of(np.array([50]), np.array([cdf[j] + 1e-9]))[0] == z[j + 1]
    assert METHOD.noise_of(np.array([50]), np.array([0.0]))[0] == -4
    assert METHOD.noise_of(np.array([50]), np.array([np.nextafter(1.0, 0)]))[0] == 4
    assert METHOD.noise_of(np.array([0, 0]), np.array([0.0, 0.99])).tolist() == [0, 0]


def test_noise_of_many_cells_follows_the_ptable_and_small_counts_its_conditionals():
    rng = np.random.default_rng(4)
    keys = rng.random(200_000)
    z = np.arange(-4, 5)
    for count in (4, 9, 1, 2, 3):
        noise = METHOD.noise_of(np.full(keys.size, count), keys)
        probabilities = np.where(z >= -count, PTABLE.pmf(z), 0.0)
        probabilities /= probabilities.sum()
        observed = np.bincount(noise + 4, minlength=9)
        support = probabilities > 0
        assert observed[~support].sum() == 0 and (count + noise >= 0).all()
        assert _chi_square_p(observed[support], probabilities[support]) > 1e-3


def test_released_tables_keys_from_records_and_the_same_cell_gets_the_same_noise(persons):
    truth, released = METHOD.tables(persons, seed=3)
    again_truth, again = METHOD.tables(persons.sample(frac=1.0, random_state=2), seed=3)
    for level in truth.children:
        assert released[level].dataset.identical(again[level].dataset)
        assert truth[level].dataset.identical(again_truth[level].dataset)
    # A county alone: its blocks' cells have the same records, so the same keys and noise.
    county = persons["county"].iloc[0]
    _, alone = METHOD.tables(persons[persons["county"] == county], seed=3)
    blocks = alone["block"].dataset
    mine = released["block"].dataset.sel(unit=blocks["unit"].values)
    assert np.array_equal(blocks["counts"].values, mine["counts"].values)
    assert not released["block"].dataset.identical(
        METHOD.tables(persons, seed=4)[1]["block"].dataset
    )


def test_released_cells_are_count_plus_bounded_noise_with_the_ptable_law(persons):
    truth, released = METHOD.tables(persons, seed=5)
    large = []
    for level in ("block", "block_group"):
        n = truth[level].dataset["counts"].values
        noisy = released[level].dataset["counts"].values
        noise = noisy - n
        assert (noisy >= 0).all() and (np.abs(noise) <= 4).all() and (noise[n == 0] == 0).all()
        large.append(noise[n >= 4])
    large = np.concatenate(large)
    assert large.size > 1_000
    observed = np.bincount(large + 4, minlength=9)
    assert _chi_square_p(observed, PTABLE.pmf(np.arange(-4, 5))) > 1e-3


def test_a_tract_cells_key_is_the_fractional_sum_of_its_records_keys(persons):
    from adversary.analyses.reconstruction_study import block_cells

    truth, released = METHOD.tables(persons, seed=6)
    tract = persons["tract"].iloc[0]
    cells = block_cells(persons)
    node = released["tract"].dataset.sel(unit=tract)
    true = truth["tract"].dataset.sel(unit=tract)["counts"].values
    for cell in np.flatnonzero(true)[:5]:
        ids = persons["record_id"].to_numpy()[(persons["tract"] == tract) & (cells == cell)]
        key = np.sum(record_keys(ids, seed=6).astype(np.longdouble)) % 1
        expected = METHOD.noise_of(np.array([true[cell]]), np.array([float(key)]))[0]
        assert node["counts"].values[cell] == true[cell] + expected


def test_swap_then_cell_key_perturbs_the_swapped_tables(persons):
    swapping = HouseholdSwapping(0.2)
    both = SwapThenCellKey(swapping, METHOD)
    truth, released = both.tables(persons, seed=2)
    swapped_truth, expected = METHOD.tables(swapping.swap(persons, seed=2), seed=2)
    assert released["block"].dataset.identical(expected["block"].dataset)
    assert not truth["block"].dataset.identical(swapped_truth["block"].dataset)
    assert truth["county"].dataset.identical(swapped_truth["county"].dataset)
    assert both.swap(persons, seed=2).equals(swapping.swap(persons, seed=2))
    assert both.name == "swapping+cell_key"
    assert both.label.startswith("household swapping (rate 0.2") and "cell key method" in both.label


def test_bad_arguments_are_one_line(persons):
    with pytest.raises(TypeError, match=r"^noise must be a CellKeyNoise"):
        CellKeyMethod(2.0)
    with pytest.raises(TypeError, match=r"^swapping must have a swap"):
        SwapThenCellKey(object(), METHOD)
    with pytest.raises(TypeError, match=r"^cell_key must be a CellKeyMethod"):
        SwapThenCellKey(HouseholdSwapping(0.1), PTABLE)
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0"):
        record_keys([1, 2], seed=-1)
    with pytest.raises(ValueError, match=r"^keys must lie in \[0, 1\)"):
        METHOD.noise_of([3], [1.0])
    with pytest.raises(ValueError, match=r"^counts must be integers >= 0"):
        METHOD.noise_of([-1], [0.5])
    with pytest.raises(ValueError, match="no 'record_id' column"):
        METHOD.tables(persons.drop(columns="record_id"), seed=0)
