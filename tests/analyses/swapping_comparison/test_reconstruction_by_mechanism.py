"""Reconstruction by block size for DP and swapping: the exact limits and a hand count."""

import math

import numpy as np
import pytest

from adversary.analyses.swapping_comparison.reconstruction import (
    dp_reconstruction,
    release_reconstruction,
    swap_reconstruction,
)
from adversary.population.synthetic import synthetic_population
from adversary.swapping import HouseholdSwapping, assign_households


def test_release_reconstruction_counts_records_and_exact_blocks_by_bin():
    true = np.zeros((3, 4), dtype=int)
    true[0] = [3, 2, 0, 0]  # 5 persons, bin <10
    true[1] = [10, 5, 5, 0]  # 20 persons, bin 10-49
    true[2] = [1, 0, 0, 1]  # 2 persons, bin <10
    released = true.copy()
    released[0] = [2, 2, 1, 0]  # one record wrong
    table = release_reconstruction(true, released)
    assert table.loc["<10", "overlap_share"] == pytest.approx((4 + 2) / 7)
    assert table.loc["<10", "exact_block"] == 0.5
    assert table.loc["10-49", "overlap_share"] == 1 and table.loc["10-49", "exact_block"] == 1
    assert table.loc["all", "overlap_share"] == pytest.approx(26 / 27)
    assert table.loc["all", "exact_block"] == pytest.approx(2 / 3)
    assert table.loc["all", "blocks"] == 3 and table.loc["all", "persons"] == 27
    assert math.isnan(table.loc[">=250", "overlap_share"])


def test_an_unswapped_release_rebuilds_every_block_and_a_swapped_one_fewer():
    persons = assign_households(synthetic_population(3000, seed=4), seed=4)
    mechanism = HouseholdSwapping(0.5, within="county")
    table = swap_reconstruction(persons, mechanism, 0.0, seeds=2)
    assert (table["overlap_share"] == 1).all() and (table["exact_block"] == 1).all()
    assert (table["overlap_share_se"] == 0).all()
    assert table.loc["all", "persons"] == 3000
    swapped = swap_reconstruction(persons, mechanism, 0.5, seeds=2)
    assert 0 < swapped.loc["all", "overlap_share"] < 1
    assert swapped.loc["all", "exact_block"] < 1


def test_dp_reconstruction_without_noise_is_the_studys_exact_limit():
    persons = synthetic_population(3000, seed=4)
    table = dp_reconstruction(persons, scale=math.inf, per_bin=2, draws=10, tune=0, chains=1)
    assert (table["overlap_share"] == 1).all() and (table["exact_block"] == 1).all()
    assert table.loc["all", "blocks"] == table.drop(index="all")["blocks"].sum()
    assert table.loc["all", "persons"] == table.drop(index="all")["persons"].sum() > 0
