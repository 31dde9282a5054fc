"""Simulated accuracy of hand-built published runs: exact errors, shares off, their Monte Carlo
standard errors and JASON's B by size bin with its jackknife SE."""

import statistics

import numpy as np
import pytest
import xarray as xr

from adversary.memory import memory_budget
from adversary.topdown.accuracy import simulated_accuracy, simulated_bias

PARENTS = [[-1], [0, 0]]  # one state, two counties
# REDUCED cell index: hhgq·28 + voting_age·14 + hispanic·7 + race
ADULT_WHITE, CHILD_WHITE, ADULT_OTHER_RACE = 14, 0, 20


def _truth(county1=0):
    county = np.zeros((2, 56), dtype=np.int64)
    county[0, CHILD_WHITE], county[0, ADULT_WHITE] = 40, 60  # total 100, 60 of voting age
    county[1, ADULT_OTHER_RACE] = county1
    return {"state": county.sum(axis=0, keepdims=True), "county": county}


def _runs(truth, changes):
    """Three runs of the truth with ``changes[(run, county, cell)] = published count``."""
    county = np.repeat(truth["county"][None], 3, axis=0)
    for (run, unit, cell), value in changes.items():
        county[run, unit, cell] = value
    return {"state": np.repeat(truth["state"][None], 3, axis=0), "county": county}


def test_known_errors_give_the_exact_mae_shares_and_standard_errors(make_tables):
    truth = _truth()
    # run 0: +6 adults in county 0; run 1: one person in the empty county 1; run 2: −2 children
    runs = _runs(
        truth, {(0, 0, ADULT_WHITE): 66, (1, 1, ADULT_OTHER_RACE): 1, (2, 0, CHILD_WHITE): 38}
    )
    result = simulated_accuracy(make_tables(PARENTS, runs), make_tables(PARENTS, truth))
    county = result.sel(level="county")
    per_run = {  # total population, per run: mean over the two counties
        "mae": [3.0, 0.5, 1.0],
        "mse": [18.0, 0.5, 2.0],
        "share_off_5": [0.5, 0.5, 0.0],  # 6 > 5 % of 100; the empty county is off with 1
        "share_off_10": [0.0, 0.5, 0.0],
    }
    for name, values in per_run.items():
        assert county[name].sel(metric="total") == pytest.approx(statistics.mean(values))
        assert county[f"{name}_se"].sel(metric="total") == pytest.approx(
            statistics.stdev(values) / np.sqrt(3)
        )
    # voting age: +6 of 60 is off by more than 5 % but not by more than 10 % (strictly)
    assert county["share_off_5"].sel(metric="voting_age") == pytest.approx((0.5 + 0.5) / 3)
    assert county["share_off_10"].sel(metric="voting_age") == pytest.approx(0.5 / 3)
    # Hispanic × race: the mean over its 14 counts of each run's mean absolute error
    assert county["mae"].sel(metric="hispanic_race") == pytest.approx((3 + 0.5 + 1) / 14 / 3)
    # the state is published exactly
    assert float(abs(result.sel(level="state")).to_array().max()) == 0.0
    assert result.attrs["runs"] == 3 and result["mae"].dims == ("metric", "level")


def test_a_constant_error_has_standard_error_zero(make_tables):
    truth = _truth(county1=5)
    runs = {level: np.repeat(counts[None], 4, axis=0) for level, counts in truth.items()}
    runs["county"][:, 0, ADULT_WHITE] += 3
    runs["county"][:, 1, ADULT_OTHER_RACE] -= 1
    result = simulated_accuracy(make_tables(PARENTS, runs), make_tables(PARENTS, truth))
    assert result["mae"].sel(metric="total", level="county") == pytest.approx(2.0)
    for name in ("mae_se", "mse_se", "share_off_5_se", "share_off_10_se"):
        assert float(result[name].max()) == 0.0
    bias = simulated_bias(make_tables(PARENTS, runs), make_tables(PARENTS, truth), level="county")
    assert bias["B"].sel(metric="total", size_bin="100-249") == 1.0  # always upward
    assert bias["B"].sel(metric="total", size_bin="<10") == -1.0  # always downward
    assert float(bias["B_se"].sel(metric="total").fillna(0).max()) == 0.0


def test_units_are_matched_by_identifier_not_position(make_tables):
    truth = _truth(county1=5)
    runs = _runs(truth, {(0, 0, ADULT_WHITE): 70})
    published = make_tables(PARENTS, runs)
    flipped = published["county"].dataset.isel(unit=[1, 0])
    published = xr.DataTree.from_dict({"state": published["state"].dataset, "county": flipped})
    result = simulated_accuracy(published, make_tables(PARENTS, truth))
    assert result["mae"].sel(metric="total", level="county") == pytest.approx(10 / 2 / 3)


def test_bias_by_size_bin_and_its_jackknife_standard_error(make_tables):
    truth = _truth(county1=5)  # county 0: 100 persons (bin 100-249), county 1: 5 (bin <10)
    runs = _runs(
        truth,
        {
            (0, 0, ADULT_WHITE): 66,
            (1, 1, ADULT_OTHER_RACE): 6,
            (2, 0, CHILD_WHITE): 38,
            (2, 1, ADULT_OTHER_RACE): 4,
        },
    )
    bias = simulated_bias(make_tables(PARENTS, runs), make_tables(PARENTS, truth), level="county")

    def jackknife(replicates):
        replicates = np.array(replicates)
        return np.sqrt(2 / 3 * ((replicates - replicates.mean()) ** 2).sum())

    # county 0's total errs +6, 0, −2: B = (36 − 4)/(36 + 4); without each run: −1, 0.8, 1
    # county 1's errs 0, +1, −1: B = 0; without each run: 0, −1, 1
    expected = {
        ("total", "100-249"): (0.8, jackknife([-1, 0.8, 1])),
        ("total", "<10"): (0.0, jackknife([0, -1, 1])),
        ("hispanic_race", "100-249"): (0.8, jackknife([-1, 0.8, 1])),  # only its count 0 errs
        ("hispanic_race", "<10"): (0.0, jackknife([0, -1, 1])),
    }
    for (metric, size_bin), (b, se) in expected.items():
        assert bias["B"].sel(metric=metric, size_bin=size_bin) == pytest.approx(b)
        assert bias["B_se"].sel(metric=metric, size_bin=size_bin) == pytest.approx(se)
        assert bias["units"].sel(metric=metric, size_bin=size_bin) == 1
    # voting age errs +6, 0, 0 in county 0: B = 1, but without run 0 it has no error at all
    assert bias["B"].sel(metric="voting_age", size_bin="100-249") == 1.0
    assert np.isnan(bias["B_se"].sel(metric="voting_age", size_bin="100-249"))
    assert bias["units"].sel(size_bin=">=250").sum() == 0
    assert np.isnan(bias["B"].sel(metric="total", size_bin=">=250"))


def test_bad_tables_are_refused_naming_them(make_tables):
    truth = _truth()
    tables = make_tables(PARENTS, truth)
    one_run = {level: counts[None] for level, counts in truth.items()}
    with pytest.raises(ValueError, match=r"^published\['state'\] must hold at least 2 runs"):
        simulated_accuracy(make_tables(PARENTS, one_run), tables)
    state_only = make_tables([[-1]], {"state": _runs(truth, {})["state"]})
    with pytest.raises(ValueError, match=r"^published must be an xarray.DataTree with a node"):
        simulated_accuracy(state_only, tables)
    narrow = make_tables(PARENTS, {k: v[..., :10] for k, v in _runs(truth, {}).items()})
    with pytest.raises(ValueError, match=r"^published\['state'\] counts must have 56 cells"):
        simulated_accuracy(narrow, tables)
    with pytest.raises(ValueError, match=r"^level must be one of the truth's levels"):
        simulated_bias(make_tables(PARENTS, _runs(truth, {})), tables, level="block")
    with pytest.raises(ValueError, match=r"^truth\['state'\] needs a variable 'counts'"):
        simulated_accuracy(make_tables(PARENTS, _runs(truth, {})), make_tables(PARENTS))


def test_runs_read_in_chunks_under_a_small_memory_budget_give_the_same_numbers(make_tables):
    truth = _truth(county1=5)
    runs = _runs(truth, {(0, 0, ADULT_WHITE): 70, (1, 1, ADULT_OTHER_RACE): 9})
    published, tables = make_tables(PARENTS, runs), make_tables(PARENTS, truth)
    whole = simulated_accuracy(published, tables)
    with memory_budget(32 * 2 * 56 + 100):  # one run of the two counties at a time
        chunked = simulated_accuracy(published, tables)
    xr.testing.assert_allclose(whole, chunked)
    assert whole["mae"].sel(metric="total", level="county") == pytest.approx((10 + 4) / 2 / 3)
