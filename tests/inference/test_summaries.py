"""Summaries give the same kind of answer for a sampled DataTree and an Enumeration."""

import numpy as np
import pytest
import xarray as xr
from xarray import DataTree

from adversary.inference import Enumeration, event_indicator, marginal_pmf, posterior_probability


@pytest.fixture
def table():
    # X1 in {0, 1}, X2 in {0, 1, 2}; cell (1, 0) impossible (X2 >= X1).
    joint = np.array([[0.1, 0.2, 0.1], [0.0, 0.4, 0.2]])
    return Enumeration.from_table(
        xr.DataArray(joint, dims=("X1", "X2"), coords={"X1": [0, 1], "X2": [0, 1, 2]}),
        log_normaliser=0.0,
        omitted_mass=0.0,
        ranges={"X1": (0, 1), "X2": (0, 2)},
    )


@pytest.fixture
def tree(table):
    # 2 chains x 10 draws whose empirical distribution is exactly the table.
    cells = [(0, 0)] * 1 + [(0, 1)] * 2 + [(0, 2)] * 1 + [(1, 1)] * 4 + [(1, 2)] * 2
    x1 = np.array([c[0] for c in cells] * 2).reshape(2, 10)
    x2 = np.array([c[1] for c in cells] * 2).reshape(2, 10)
    posterior = xr.Dataset(
        {"X1": (("chain", "draw"), x1), "X2": (("chain", "draw"), x2)},
        coords={"chain": [0, 1], "draw": np.arange(10)},
    )
    return DataTree.from_dict({"posterior": posterior})


@pytest.mark.parametrize(
    "event",
    [
        {"X1": 1},
        {"X1": 1, "X2": 2},
        lambda v: v["X2"] > v["X1"],
        lambda v: (v["X1"] == 0) | (v["X2"] == 0),
    ],
)
def test_posterior_probability_is_the_same_for_both_paths(table, tree, event):
    exact = posterior_probability(table, event)
    sampled = posterior_probability(tree, event)
    assert isinstance(exact, float) and isinstance(sampled, float)
    assert sampled == pytest.approx(exact, abs=1e-12)


def test_known_values(table):
    assert posterior_probability(table, {"X1": 1}) == pytest.approx(0.6)
    assert posterior_probability(table, lambda v: v["X2"] - v["X1"] >= 1) == pytest.approx(0.5)


def test_marginal_pmf_is_the_same_for_both_paths(table, tree):
    for var in ("X1", "X2"):
        exact = marginal_pmf(table, var, support=range(-1, 4))
        sampled = marginal_pmf(tree, var, support=range(-1, 4))
        assert exact.dims == sampled.dims == (var,)
        assert exact.name == sampled.name == "probability"
        xr.testing.assert_allclose(exact, sampled)
    np.testing.assert_allclose(marginal_pmf(table, "X2").values, [0.1, 0.6, 0.3])


def test_event_indicator_feeds_arviz(tree):
    indicator = event_indicator(tree, {"X1": 1})
    assert indicator.dims == ("chain", "draw")
    assert float(indicator.mean()) == pytest.approx(0.6)


def test_bad_events_and_variables(table, tree):
    with pytest.raises(TypeError, match="event must be a mapping"):
        posterior_probability(table, 3)
    with pytest.raises(ValueError, match="event: an empty mapping"):
        posterior_probability(tree, {})
    with pytest.raises(KeyError, match="X3"):
        posterior_probability(tree, {"X3": 1})
    with pytest.raises(KeyError, match="X3"):
        marginal_pmf(table, "X3")
    with pytest.raises(TypeError, match="result must be a sampled DataTree"):
        posterior_probability([1, 2], {"X1": 1})
