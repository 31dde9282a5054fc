"""Accuracy of the 2020 release and of a swapping release: closed forms and brute force."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.swapping_comparison import (
    dg_mean_absolute,
    equal_accuracy_rate,
    measurement_accuracy,
    release_mae,
    swap_accuracy,
    topdown_accuracy,
)
from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_population
from adversary.scenarios.reconstruction import REDUCED


@pytest.mark.parametrize("sigma2", [0.05, 1.0, 10.077968, 400.0])
def test_dg_mean_absolute_is_the_direct_sum(sigma2):
    k = np.arange(-4000, 4001, dtype=np.float64)
    weights = np.exp(-(k**2) / (2 * sigma2))
    assert dg_mean_absolute(sigma2) == pytest.approx(
        np.sum(np.abs(k) * weights) / weights.sum(), rel=1e-12
    )


def test_dg_mean_absolute_tends_to_the_normal_and_to_its_first_terms_for_small_sigma():
    # Euler–Maclaurin at the kink of |x|: 2 Σ_{k≥1} k e^{-k²/2σ²} = 2σ² − 1/6 + O(1/σ²)
    sigma = 1e3
    normal = math.sqrt(2 / math.pi) * sigma
    assert dg_mean_absolute(sigma**2) == pytest.approx(
        normal - 1 / (6 * math.sqrt(2 * math.pi) * sigma), abs=1e-9
    )
    # σ² = 0.1: q = e^{-5}, the terms |k| ≤ 2 (|k| = 3 weighs q⁹ ≈ 3e-20)
    q = math.exp(-5)
    assert dg_mean_absolute(0.1) == pytest.approx(
        (2 * q + 4 * q**4) / (1 + 2 * q + 2 * q**4), rel=1e-14
    )


def test_measurements_of_2020_at_the_block_are_the_detailed_query_noise():
    table = measurement_accuracy()
    # Kazan & Reiter Table 2: block GVHR ρ ≈ 0.0992; DAS σ² = 1/ρ
    assert table.loc["block", "rho_detailed"] == pytest.approx(0.0992, abs=5e-5)
    assert table.loc["block", "sigma2_detailed"] == pytest.approx(
        1 / table.loc["block", "rho_detailed"]
    )
    assert table.loc["block", "mae_detailed"] == pytest.approx(
        dg_mean_absolute(1 / get_preset().rho("block", "detailed"))
    )
    # the other queries add information: the GLS estimate is better than the detailed alone
    normal = math.sqrt(2 / math.pi * table.loc["block", "sigma2_detailed"])
    assert table.loc["block", "mae_gls"] < normal


def test_gls_with_the_detailed_query_alone_is_its_normal_mean_absolute_error():
    alone = get_preset().with_query_shares("block", {"detailed": 1})
    table = measurement_accuracy(alone, levels="block", scale=4.0)
    rho = 4 * 2.56 * 165 / 4099
    assert table.loc["block", "rho_detailed"] == pytest.approx(rho)
    assert table.loc["block", "mae_gls"] == pytest.approx(math.sqrt(2 / (math.pi * rho)))


def test_topdown_accuracy_is_smaller_with_more_budget_and_has_a_standard_error():
    persons = synthetic_population(3000, seed=2)
    at_2020 = topdown_accuracy(persons, runs=3, seed=1)
    richer = topdown_accuracy(persons, scale=1e4, runs=3, seed=1)
    assert (at_2020["mae_se"] > 0).all()
    # σ ≈ 0.03 at ρ × 10⁴: every published count is the truth
    assert (richer["mae"] == 0).all()
    assert (at_2020["mae"] > 5 * at_2020["mae_se"]).all()


@dataclasses.dataclass(frozen=True)
class _Exchange:
    """A test double: exchanges the places of two given households (whatever the rate > 0)."""

    rate: float
    pair: tuple = (0, 0)

    def swap(self, persons, *, seed):
        out = persons.copy()
        if self.rate > 0:
            a, b = self.pair
            one, two = persons["household"] == a, persons["household"] == b
            for column in ("state", "county", "tract", "block_group", "block"):
                place_a = persons.loc[one, column].iloc[0]
                place_b = persons.loc[two, column].iloc[0]
                out.loc[one, column] = place_b
                out.loc[two, column] = place_a
        out["swapped"] = out["block"] != persons["block"]
        return out


def _persons():
    # two tracts of one block each, and a third block; household = smallest record id
    rows = [
        # record, tract, block, household, voting_age, hispanic, race (OMB code)
        (0, 1, 10, 0, 1, 0, 0),
        (1, 1, 10, 0, 0, 0, 0),
        (2, 1, 10, 2, 1, 1, 1),
        (3, 2, 20, 3, 1, 1, 2),
        (4, 2, 20, 3, 0, 0, 0),
        (5, 2, 21, 5, 1, 0, 0),
    ]
    frame = pd.DataFrame(
        rows, columns=["record_id", "tract", "block", "household", "voting_age", "hispanic", "race"]
    )
    return frame.assign(
        hhgq=0, state=1, county=1, block_group=frame["block"] // 10 + 100 * frame["tract"]
    )


def test_one_exchange_costs_twice_the_households_l1_distance_over_blocks_and_cells():
    persons = _persons()
    table = swap_accuracy(persons, _Exchange(0.0, (0, 3)), [0.0, 0.5], seeds=2)
    at = table.set_index(["rate", "level"])["mae"]
    assert at[(0.0, "block")] == 0 and at[(0.0, "tract")] == 0
    # household 0: cells (va 1, white), (va 0, white); household 3: (va 1, hisp, black),
    # (va 0, white): they share one cell, so L1 = 2 and each block moves by 2
    assert at[(0.5, "block")] == pytest.approx(2 * 2 / (3 * REDUCED.n_cells))
    assert at[(0.5, "tract")] == pytest.approx(2 * 2 / (2 * REDUCED.n_cells))
    assert table["mae_se"].max() == 0  # the double does not depend on the seed


def test_release_mae_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="released must be releases"):
        release_mae(np.zeros((2, 3, 4)), np.zeros((3, 5)))


def test_equal_accuracy_interpolates_and_brackets_on_the_grid_by_the_band():
    rates = [0.0, 0.1, 0.2, 0.3, 0.4]
    mae = [0.0, 1.0, 2.0, 3.0, 4.0]
    found = equal_accuracy_rate(rates, mae, [0, 0.1, 0.1, 0.1, 0.1], target=1.5)
    assert found.rate == pytest.approx(0.15)
    assert (found.low, found.high) == (0.1, 0.2)
    assert found.increasing
    # a band of ±0.98 at 2.0 reaches below 1.5: the bracket widens to the next grid rate
    wide = equal_accuracy_rate(rates, mae, [0, 0.5, 0.5, 0.5, 0.5], target=1.5)
    assert (wide.low, wide.high) == (0.0, 0.3)
    never = equal_accuracy_rate(rates, mae, [0.0] * 5, target=5.0)
    assert math.isinf(never.rate) and math.isinf(never.high) and never.low == 0.4
    assert (found.outcome, never.outcome) == ("reached", "more accurate at every rate")
    # an error above the target from the lowest rate on: never as accurate
    worse = equal_accuracy_rate([0.1, 0.2], [2.0, 3.0], [0.0, 0.0], target=1.0)
    assert (worse.rate, worse.outcome) == (0.1, "less accurate at every rate")


def test_equal_accuracy_refuses_bad_rates():
    with pytest.raises(ValueError, match="rates must be increasing"):
        equal_accuracy_rate([0.2, 0.1], [0, 1], [0, 0], target=0.5)
    with pytest.raises(ValueError, match="rates must be increasing"):
        swap_accuracy(_persons(), _Exchange(0.0), [0.0, 1.5])


@pytest.fixture(scope="module")
def households():
    from adversary.swapping import assign_households

    return assign_households(synthetic_population(5000, seed=3), seed=3)


def test_household_swapping_error_is_0_at_rate_0_and_bounded_by_twice_the_persons_moved(
    households,
):
    from adversary.swapping import HouseholdSwapping

    mechanism = HouseholdSwapping(0.0, within="county")
    rates = [0.0, 0.01, 0.04]
    table = swap_accuracy(households, mechanism, rates, seeds=4, levels=("block",))
    mae = table.set_index("rate")["mae"]
    assert mae[0.0] == 0 and table.loc[table["rate"] == 0, "mae_se"].iloc[0] == 0
    blocks = households["block"].nunique()
    for rate in rates[1:]:
        moved = np.mean(
            [
                HouseholdSwapping(rate, within="county").swap(households, seed=s)["swapped"].sum()
                for s in range(4)
            ]
        )
        # each moved person changes two blocks' cells by at most one each
        bound = 2 * moved / (blocks * REDUCED.n_cells)
        assert 0 < mae[rate] <= bound
    assert mae[0.01] < mae[0.04]


def test_the_equal_accuracy_bracket_holds_the_rate_whose_error_was_the_target(households):
    from adversary.swapping import HouseholdSwapping

    mechanism = HouseholdSwapping(0.0, within="county")
    measured = swap_accuracy(households, mechanism, [0.15], seeds=6, seed=100, levels=("block",))
    grid = swap_accuracy(
        households, mechanism, [0.0, 0.05, 0.1, 0.2, 0.3], seeds=6, levels=("block",)
    )
    found = equal_accuracy_rate(
        grid["rate"], grid["mae"], grid["mae_se"], measured["mae"][0], measured["mae_se"][0]
    )
    assert found.increasing
    assert found.low <= 0.15 <= found.high
    assert found.low < found.rate < found.high
