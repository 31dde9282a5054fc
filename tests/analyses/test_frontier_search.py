"""The evaluation of a family and the search over share simplexes, on closed forms.

Two queries measured at one level with ρ_i = s_i ρ: the accuracy evaluator
gives σ_i² = 1/(2 ρ_i) (the paper's convention), the risk evaluator the
marginal risk (Kazan & Reiter (3.4)) of the single-block attack on the Dare
County target when query 1 is its release (ρ₁ = s₁ρ), by the package's exact
sums. Minimising w₁σ₁² + w₂σ₂² over s₁ + s₂ = 1 gives s₁ = √w₁/(√w₁ + √w₂);
with a marginal-risk limit that binds, s₁ρ is :func:`choose_rho`'s answer.
"""

import math
import time
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.analyses.choose_rho import choose_rho, with_rho
from adversary.analyses.frontier import (
    at_most,
    evaluate,
    least_risky,
    most_accurate,
    query_shares,
    weighted_sum,
)
from adversary.analyses.frontier.variables import Variables
from adversary.budget import BudgetAllocation, get_preset
from adversary.model_files import load_case
from adversary.time_budget import TimeBudgetError, time_budget

DARE = load_case("dare_county")
PRIOR = "1/864"
QUERIES = {"block": ["q1", "q2"]}

TWO = BudgetAllocation(
    name="two",
    description="two queries at one level",
    rho_total=Fraction(1),
    levels=("block",),
    level_labels=("Block",),
    queries=("q1", "q2"),
    query_labels=("Query 1", "Query 2"),
    level_shares=(Fraction(1),),
    query_shares=((Fraction(1, 2), Fraction(1, 2)),),
)


def accuracy(allocation) -> xr.Dataset:
    """σ² = 1/(2ρ) of every (query, level)."""
    levels, queries = allocation.levels, allocation.queries
    variance = [[1 / (2 * allocation.rho(lv, q)) for lv in levels] for q in queries]
    return xr.Dataset(
        {"variance": (("metric", "level"), variance)},
        coords={"metric": list(queries), "level": list(levels)},
    )


def risk(allocation) -> xr.Dataset:
    """The exact single-block marginal risk of the truth when query 1 is the release."""
    measures = with_rho(DARE, allocation.rho("block", "q1")).marginal_measures(PRIOR)
    value = measures.marginal_risk
    return xr.Dataset(
        {
            "marginal_risk": (("attack", "prior"), [[value]]),
            "risk_bound": (("attack", "prior"), [[value + measures.risk_error_bound]]),
        },
        coords={"attack": ["single_block"], "prior": [PRIOR]},
    )


def _weights(w1, w2) -> xr.DataArray:
    return xr.DataArray([[w1], [w2]], dims=("metric", "level"), coords=accuracy(TWO).coords)


def _limit(threshold):
    return {"risk": at_most("risk_bound", threshold)}


def _most_accurate(threshold=None, **settings):
    """The most accurate split for weights 4, 1 (under a risk threshold, if any)."""
    limits = None if threshold is None else _limit(threshold)
    objective = weighted_sum("variance", _weights(4.0, 1.0))
    return most_accurate(TWO, objective, limits, **{"accuracy": accuracy, "risk": risk, **settings})


def _recomputed_risk(allocation) -> float:
    """The marginal risk plus its error bound at the allocation's ρ₁, computed afresh."""
    measures = with_rho(DARE, allocation.rho("block", "q1")).marginal_measures(PRIOR)
    return measures.marginal_risk + measures.risk_error_bound


# --- evaluation --------------------------------------------------------------------------------


def test_evaluate_stacks_both_evaluators_and_describes_the_allocations():
    family = query_shares(TWO, "block", [[0.25, 0.75], [Fraction(1, 3), Fraction(2, 3)]])
    result = evaluate(family, accuracy, risk)
    assert list(result["allocation"].values) == [a.name for a in family]
    assert result["variance"].dims == ("allocation", "metric", "level")
    assert result["marginal_risk"].dims == ("allocation", "attack", "prior")
    np.testing.assert_allclose(
        result["variance"].sel(level="block").values, [[2, 2 / 3], [1.5, 0.75]]
    )
    assert result["marginal_risk"].values[0, 0, 0] == pytest.approx(
        float(with_rho(DARE, 0.25).marginal_measures(PRIOR).marginal_risk), rel=1e-15
    )
    np.testing.assert_allclose(result["rho"].values[:, 0, :], [[0.25, 0.75], [1 / 3, 2 / 3]])
    np.testing.assert_allclose(
        result["query_share"].values[:, 0, :], [[0.25, 0.75], [1 / 3, 2 / 3]]
    )
    assert result["rho_total"].values.tolist() == [1.0, 1.0]
    assert result["level_share"].dims == ("allocation", "budget_level")


def test_evaluate_refuses_evaluators_that_do_not_fit():
    family = query_shares(TWO, "block", [[0.25, 0.75], [0.5, 0.5]])
    with pytest.raises(TypeError, match=r"accuracy must return an xarray\.Dataset"):
        evaluate(family, lambda a: 1.0, risk)
    with pytest.raises(ValueError, match="name their variables apart"):
        evaluate(family, accuracy, accuracy)
    with pytest.raises(ValueError, match="same 'metric' coordinates"):
        evaluate(family, lambda a: accuracy(a).assign_coords(metric=[a.name, "x"]), risk)


def test_a_family_projected_over_the_time_budget_is_refused_after_one_evaluation():
    calls = []

    def slow(allocation):
        calls.append(allocation.name)
        time.sleep(0.05)
        return accuracy(allocation)

    family = query_shares(TWO, "block", [[k / 100, 1 - k / 100] for k in range(1, 100)])
    with time_budget("1s"), pytest.raises(TimeBudgetError, match="evaluating 99 allocations"):
        evaluate(family, slow, risk)
    assert len(calls) == 1


def test_evaluate_shows_its_progress_on_stderr(capsys):
    family = query_shares(TWO, "block", [[0.25, 0.75], [0.5, 0.5]])
    evaluate(family, accuracy, risk, progress=True)
    captured = capsys.readouterr()
    assert "allocations" in captured.err and "2/2" in captured.err
    assert captured.out == ""


# --- (i) the two-query closed form -------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(st.floats(0.05, 20.0), st.floats(0.05, 20.0))
def test_two_queries_split_as_the_square_roots_of_their_weights(w1, w2):
    result = most_accurate(
        TWO,
        weighted_sum("variance", _weights(w1, w2)),
        accuracy=accuracy,
        risk=risk,
        queries=QUERIES,
    )
    s1 = float(result.allocation.query_shares[0][0])
    assert s1 == pytest.approx(math.sqrt(w1) / (math.sqrt(w1) + math.sqrt(w2)), abs=1e-6)
    assert sum(result.allocation.query_shares[0]) == 1
    best = (math.sqrt(w1) + math.sqrt(w2)) ** 2 / 2  # the objective's minimum
    assert result.objective == pytest.approx(best, rel=1e-10)
    assert result.evaluation["variance"].values[0, 0, 0] == 1 / (
        2 * result.allocation.rho("block", "q1")
    )


THREE = BudgetAllocation(
    name="three levels",
    description="one query at each of three levels",
    rho_total=Fraction(2),
    levels=("a", "b", "c"),
    level_labels=("A", "B", "C"),
    queries=("q",),
    query_labels=("Q",),
    level_shares=(Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)),
    query_shares=((Fraction(1),),) * 3,
)


@pytest.mark.parametrize("levels", [["a", "b", "c"], ["a", "b"], ["c"]])
def test_level_shares_split_as_the_square_roots_of_their_weights(levels):
    """Σ w_l σ_l² with σ_l² = 1/(2 s_l ρ): s_l ∝ √w_l, whichever levels are the variables (the
    others take the rest: ["c"] alone varies c against a and b kept 2 : 1)."""
    weights = xr.DataArray(
        [[1.0, 4.0, 9.0]], dims=("metric", "level"), coords=accuracy(THREE).coords
    )
    result = most_accurate(
        THREE,
        weighted_sum("variance", weights),
        accuracy=accuracy,
        risk=lambda a: xr.Dataset(),
        levels=levels,
    )
    shares = [float(s) for s in result.allocation.level_shares]
    if levels == ["c"]:  # a and b keep 2 : 1; the best c against them in closed form
        a = math.sqrt(1.0 * 3 / 2 + 4.0 * 3)  # s_c minimises (1·3/2 + 4·3)/(1 − s_c) + 9/s_c
        expected = [2 / 3 * a / (a + 3), 1 / 3 * a / (a + 3), 3 / (a + 3)]
    else:
        expected = [1 / 6, 2 / 6, 3 / 6]
    assert shares == pytest.approx(expected, abs=1e-6)
    assert sum(result.allocation.level_shares) == 1


def test_the_search_starts_from_the_base_with_shares_raised_to_min_share():
    """The 2020 US level measures no total population (share 0): varied, it starts at
    min_share, the queries not varied keeping their ratios; shares sum to exactly 1."""
    production = get_preset("pl94-2020-persons")
    variables = Variables(production, None, {"us": ["total", "detailed"]}, (1.0, 4.0), 1e-6)
    start = variables.allocation(variables.start(), "start")
    us = start.query_shares[0]
    assert us[0] == Fraction(1e-6) and us[10] == Fraction(float(production.query_shares[0][10]))
    assert sum(us) == 1 and start.query_shares[1:] == production.query_shares[1:]
    ratios = {us[j] / production.query_shares[0][j] for j in range(1, 10)}
    assert len(ratios) == 1
    assert start.rho_total == Fraction(2.56)
    assert variables.describe() == "query shares of total, detailed at us; rho_total in [1, 4]"


# --- (ii) a risk limit that binds: s₁ρ is choose_rho's answer ----------------------------------


@pytest.mark.parametrize("threshold", [1.5, 1.2])
def test_a_binding_risk_limit_gives_choose_rhos_rho(threshold):
    chosen = choose_rho(DARE, threshold, priors=[PRIOR])
    assert chosen.rho_above < 2 / 3  # the unconstrained optimum (w = 4, 1) exceeds the limit
    result = _most_accurate(threshold, queries=QUERIES)
    rho1 = result.allocation.rho("block", "q1")
    assert chosen.rho * (1 - 1e-6) <= rho1 <= chosen.rho_above
    # (iii) the limit holds when recomputed from scratch, and binds
    assert _recomputed_risk(result.allocation) <= threshold
    assert -1e-6 <= result.constraints["risk"] <= 0


def test_with_the_total_free_the_rest_of_the_budget_goes_to_query_two():
    result = _most_accurate(1.5, queries=QUERIES, rho_total=(0.5, 3.0))
    chosen = choose_rho(DARE, 1.5, priors=[PRIOR])
    assert float(result.allocation.rho_total) == pytest.approx(3.0, rel=1e-9)
    assert chosen.rho * (1 - 1e-6) <= result.allocation.rho("block", "q1") <= chosen.rho_above
    assert result.evaluation["rho_total"].item() == float(result.allocation.rho_total)


# --- (iii) answers meet their limits; least risky; errors ---------------------------------------


def test_least_risky_at_a_variance_limit_is_the_smaller_root():
    """min ρ₁ s.t. 2/s + 1/(2(1 − s)) ≤ 6 (w = 4, 1; ρ = 1): 6s² − 7.5s + 2 = 0's smaller root."""
    total = weighted_sum("variance", _weights(4.0, 1.0))
    result = least_risky(
        TWO,
        weighted_sum("marginal_risk"),
        {"variance": lambda ev: total(ev) / 6 - 1},
        accuracy=accuracy,
        risk=risk,
        queries=QUERIES,
    )
    root = (7.5 - math.sqrt(7.5**2 - 48)) / 12
    s1 = float(result.allocation.query_shares[0][0])
    assert s1 == pytest.approx(root, abs=1e-6)
    assert 2 / s1 + 1 / (2 * (1 - s1)) <= 6  # recomputed by hand
    assert result.allocation.name == "two least risky"


def test_a_loose_tolerance_still_returns_an_allocation_within_its_limit():
    result = _most_accurate(1.5, queries=QUERIES, options={"ftol": 1e-3})
    assert _recomputed_risk(result.allocation) <= 1.5


def test_an_infeasible_problem_names_the_limit_that_binds():
    with pytest.raises(
        ValueError,
        match=r"^constraints: no allocation varying query shares of "
        r"q1, q2 at block meets the limits; 'risk' binds",
    ):
        _most_accurate(1.05, queries=QUERIES, min_share=0.3)


def test_a_limit_exceeded_when_recomputed_is_an_error():
    def drifting(allocation):  # over the limit only for the answer (not deterministic)
        data = risk(allocation)
        return data + 1.0 if allocation.name == "answer" else data

    with pytest.raises(ValueError, match=r"'risk' exceeds its limit by .* when recomputed"):
        _most_accurate(1.5, risk=drifting, queries=QUERIES, name="answer")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "choose something to vary"),
        ({"levels": ["block"]}, "one key holds every share"),
        ({"queries": {"block": ["q3"]}}, "queries must be one of"),
        ({"queries": ["q1", "q2"]}, "queries must be a mapping"),
        ({"queries": QUERIES, "min_share": 0.6}, "min_share"),
        ({"queries": QUERIES, "rho_total": (2, 1)}, "rho_total must be bounds"),
        ({"queries": QUERIES, "rho_total": 2}, "rho_total must be bounds"),
        ({"queries": QUERIES, "options": {"maxiter": 1}}, "maxiter=1"),
    ],
)
def test_bad_settings_are_one_line(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        _most_accurate(**kwargs)  # weights 4, 1: the start is not optimal


def test_bad_objectives_and_limits():
    with pytest.raises(ValueError, match="objective must return one finite number"):
        most_accurate(TWO, lambda ev: np.nan, accuracy=accuracy, risk=risk, queries=QUERIES)
    with pytest.raises(TypeError, match="constraints must be a mapping"):
        most_accurate(TWO, weighted_sum("variance"), [1], accuracy=accuracy, risk=risk)
    with pytest.raises(ValueError, match="limit must be nonzero"):
        at_most("risk_bound", 0.0)
    with pytest.raises(ValueError, match="'mae' is not a variable"):
        most_accurate(TWO, weighted_sum("mae"), accuracy=accuracy, risk=risk, queries=QUERIES)
