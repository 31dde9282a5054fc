"""The Pareto set and dominance, against brute force over random objective tables (ties
included) and a dominance table worked out by hand."""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from adversary.analyses.frontier import dominance, objectives, pareto_set


def _evaluation(risk: np.ndarray, error: np.ndarray) -> xr.Dataset:
    """``risk`` (n, 2) over two priors, ``error`` (n, 2, 1) over two metrics and one level."""
    names = [f"a{i}" for i in range(len(risk))]
    return xr.Dataset(
        {
            "marginal_risk": (("allocation", "prior"), risk),
            "variance": (("allocation", "metric", "level"), error),
            "ignored": ("allocation", np.zeros(len(risk))),
        },
        coords={
            "allocation": names,
            "prior": ["1/2", "1/864"],
            "metric": ["total", "detailed"],
            "level": ["block"],
        },
    )


def _dominates(a, b) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(
        x < y for x, y in zip(a, b, strict=True)
    )


tables = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        arrays(np.int64, (n, 2), elements=st.integers(1, 4)),
        arrays(np.int64, (n, 2, 1), elements=st.integers(1, 4)),
    )
)


@settings(max_examples=150, deadline=None)
@given(tables)
def test_pareto_set_against_brute_force(table):
    risk, error = table
    evaluation = _evaluation(risk.astype(float), error.astype(float))
    front, dominated_by = pareto_set(evaluation, risks=["marginal_risk"], errors="variance")
    rows = [list(r) + list(e.ravel()) for r, e in zip(risk, error, strict=True)]
    n = len(rows)
    brute = [[_dominates(rows[j], rows[i]) for j in range(n)] for i in range(n)]
    assert dominated_by.values.tolist() == brute
    members = [f"a{i}" for i in range(n) if not any(brute[i])]
    assert list(front["allocation"].values) == members
    for i in range(n):
        name = f"a{i}"
        if name in members:  # a dominated allocation never appears in the set
            assert not any(_dominates(rows[j], rows[i]) for j in range(n))
        else:  # every non-member is dominated by a member
            assert any(_dominates(rows[int(m[1:])], rows[i]) for m in members)
    xr.testing.assert_identical(front, evaluation.sel(allocation=members))


def test_objective_labels_name_each_coordinate():
    evaluation = _evaluation(np.ones((2, 2)), np.ones((2, 2, 1)))
    matrix = objectives(evaluation, risks=["marginal_risk"], errors=["variance"])
    assert list(matrix["objective"].values) == [
        "marginal_risk[prior=1/2]",
        "marginal_risk[prior=1/864]",
        "variance[metric=total, level=block]",
        "variance[metric=detailed, level=block]",
    ]
    assert list(matrix["kind"].values) == ["risk", "risk", "error", "error"]


def test_dominance_factors_worked_by_hand():
    # reference r: risks (2, 2), errors (4, 8).
    # a: risks (1, 2), errors (3, 6)   dominates; error factor min(4/3, 8/6) = 4/3, risk 1
    # b: risks (1, 1), errors (2, 8)   dominates; error factor min(2, 1) = 1, risk 2
    # c: risks (1, 1), errors (1, 9)   does not (error 9 > 8)
    # d: risks (2, 2), errors (4, 8)   equals r: does not dominate it
    risk = np.array([[2, 2], [1, 2], [1, 1], [1, 1], [2, 2]], float)
    error = np.array([[4, 8], [3, 6], [2, 8], [1, 9], [4, 8]], float)[:, :, None]
    evaluation = _evaluation(risk, error)
    result = dominance(evaluation, "a0", risks=["marginal_risk"], errors=["variance"])
    assert bool(result["dominated"])
    assert list(result["dominator"].values) == ["a1", "a2"]
    assert result["error_factor"].values.tolist() == pytest.approx([4 / 3, 1.0])
    assert result["risk_factor"].values.tolist() == pytest.approx([1.0, 2.0])
    assert float(result["largest_error_factor"]) == pytest.approx(4 / 3)
    assert float(result["largest_risk_factor"]) == pytest.approx(2.0)
    assert result.attrs["reference"] == "a0"


def test_an_undominated_reference_has_factors_of_one():
    evaluation = _evaluation(np.array([[1.0, 1.0], [2.0, 2.0]]), np.ones((2, 2, 1)))
    result = dominance(evaluation, "a0", risks="marginal_risk", errors="variance")
    assert not bool(result["dominated"]) and result.sizes["dominator"] == 0
    assert float(result["largest_error_factor"]) == 1.0
    assert float(result["largest_risk_factor"]) == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"risks": ["risk"]}, "risks must name variables of the evaluation"),
        ({}, "at least one variable"),
        ({"risks": ["variance"], "errors": ["variance"]}, "must not both select"),
    ],
)
def test_bad_selections(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pareto_set(_evaluation(np.ones((2, 2)), np.ones((2, 2, 1))), **kwargs)


def test_bad_values_and_references():
    evaluation = _evaluation(np.array([[1.0, np.nan], [1.0, 1.0]]), np.ones((2, 2, 1)))
    with pytest.raises(ValueError, match="'marginal_risk' has values that are not finite"):
        pareto_set(evaluation, risks="marginal_risk")
    good = _evaluation(np.ones((2, 2)), np.ones((2, 2, 1)))
    with pytest.raises(ValueError, match="reference must name an allocation"):
        dominance(good, "production", risks="marginal_risk", errors="variance")
    with pytest.raises(ValueError, match="each select at least one"):
        dominance(good, "a0", risks="marginal_risk")
    zero = _evaluation(np.ones((2, 2)), np.zeros((2, 2, 1)))
    with pytest.raises(ValueError, match="must be > 0"):
        dominance(zero, "a0", risks="marginal_risk", errors="variance")
    with pytest.raises(TypeError, match="'allocation' dimension"):
        pareto_set(good.isel(allocation=0), risks="marginal_risk")
