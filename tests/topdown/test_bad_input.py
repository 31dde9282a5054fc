"""Bad input to every public function of adversary.topdown: one line naming the argument.

Issue 23, points 2 and 10: counts beyond 2**53 came back negative (int64 wrapped) or with a
NumPy warning only; dependent constraints, shapes, NaN, infinities, non-positive variances
and huge totals surfaced as NumPy or SciPy errors ("Singular matrix", broadcast messages,
``rint``'s TypeError)."""

import numpy as np
import pytest

from adversary.topdown import (
    bias_measure,
    check_parents,
    children_of,
    consistency_constraints,
    constrained_wls,
    jason_iteration,
    nonnegative_wls,
    round_keeping_total,
    scipy_wls,
    topdown,
    topdown_many,
    windowed_mean,
)
from adversary.topdown.counties import Counties, state_runs, synthetic_counties
from adversary.topdown.solver import nonnegative_sum_fit

HUGE = "must be finite numbers of magnitude at most 9007199254740992 \\(2\\*\\*53\\)"
TREE = [-1, 0, 0]
ONES = np.ones((3, 1))
SOLVERS = {
    "constrained_wls": constrained_wls,
    "nonnegative_wls": nonnegative_wls,
    "jason_iteration": jason_iteration,
    "scipy_wls": scipy_wls,
}


def _counties(**changes):
    fields = {
        "population": np.array([5, 7, 9]),
        "state": np.array([0, 0, 1]),
        "fairfax": 0,
        "lancaster": 1,
    }
    return Counties(**{**fields, **changes})


def _solver_cases():
    """The same bad arguments for every least-squares solver."""
    rows = [
        ("noisy", ([1.0, np.nan, 2.0], 1.0, ONES, [3]), ValueError, "noisy " + HUGE),
        ("noisy", ([1.0, np.inf, 2.0], 1.0, ONES, [3]), ValueError, "noisy " + HUGE),
        ("noisy", ([1e19, 5e18, 5e18], 1.0, ONES, [3]), ValueError, "noisy " + HUGE),
        ("noisy", ([[1.0, 2.0, 3.0]], 1.0, ONES, [3]), ValueError, "noisy must be a non-empty"),
        ("noisy", ([], 1.0, ONES, [3]), ValueError, "noisy must be a non-empty"),
        ("noisy", (["a", "b", "c"], 1.0, ONES, [3]), TypeError, "noisy must be numeric"),
        ("variances", ([1.0, 2, 3], [1.0, 2.0], ONES, [3]), ValueError, "variances must be one"),
        ("variances", ([1.0, 2, 3], np.ones((3, 3)), ONES, [3]), ValueError, "variances must be"),
        ("variances", ([1.0, 2, 3], 0.0, ONES, [3]), ValueError, "variances must be > 0"),
        ("variances", ([1.0, 2, 3], -1.0, ONES, [3]), ValueError, "variances must be > 0"),
        ("variances", ([1.0, 2, 3], np.nan, ONES, [3]), ValueError, "variances must be finite"),
        ("variances", ([1.0, 2, 3], np.inf, ONES, [3]), ValueError, "variances must be finite"),
        ("variances", ([1.0, 2, 3], 1e-320, ONES, [3]), ValueError, "variances must be > 0"),
        ("variances", ([1.0, 2, 3], "one", ONES, [3]), TypeError, "variances must be numeric"),
        ("constraints", ([1.0, 2, 3], 1.0, np.ones((2, 1)), [3]), ValueError, "constraints must"),
        ("constraints", ([1.0, 2, 3], 1.0, np.ones((1, 3)), [3]), ValueError, "constraints must"),
        ("constraints", ([1.0, 2, 3], 1.0, [[1], [np.nan], [1]], [3]), ValueError, "constraints"),
        ("constraints", ([1.0, 2, 3], 1.0, "sum", [3]), TypeError, "constraints must be numeric"),
        ("totals", ([1.0, 2, 3], 1.0, ONES, [3, 4]), ValueError, "totals must hold one value"),
        ("totals", ([1.0, 2, 3], 1.0, ONES, [np.nan]), ValueError, "totals " + HUGE),
        ("totals", ([1.0, 2, 3], 1.0, ONES, [np.inf]), ValueError, "totals " + HUGE),
        ("totals", ([1.0, 2, 3], 1.0, ONES, [1e300]), ValueError, "totals " + HUGE),
        ("totals", ([1.0, 2, 3], 1.0, ONES, [2**70]), ValueError, "totals " + HUGE),
        ("totals", ([1.0, 2, 3], 1.0, ONES, ["3"]), TypeError, "totals must be numeric"),
    ]
    return [
        pytest.param(function, arguments, error, message, id=f"{name}-{argument}-{i}")
        for name, function in SOLVERS.items()
        for i, (argument, arguments, error, message) in enumerate(rows)
    ]


@pytest.mark.parametrize(("function", "arguments", "error", "message"), _solver_cases())
def test_solvers_name_the_bad_argument(function, arguments, error, message):
    with pytest.raises(error, match=f"^{message}") as raised:
        function(*arguments)
    assert "\n" not in str(raised.value)


DEPENDENT = np.column_stack([np.ones(3), 2 * np.ones(3)])

CASES = [
    # nonnegative fits: totals no non-negative estimates can meet
    (lambda: nonnegative_wls([1.0, 2], 1.0, np.ones(2), [-1]), ValueError, "totals must be >= 0"),
    (lambda: jason_iteration([1.0, 2], 1.0, np.ones(2), [-1]), ValueError, "totals must be >= 0"),
    (lambda: nonnegative_wls([1.0, 2], 1.0, np.zeros(2), [1]), ValueError, "totals: a positive"),
    # dependent constraints whose totals contradict each other (was "Singular matrix")
    (lambda: constrained_wls([1.0, 2, 3], 1.0, DEPENDENT, [6, 7]), ValueError, "totals: no"),
    (lambda: nonnegative_wls([1.0, 2, 3], 1.0, DEPENDENT, [6, 7]), ValueError, "totals: no"),
    # the vectorised fit of one sum
    (lambda: nonnegative_sum_fit([1.0, 2], 1.0, 3), ValueError, "noisy must be rows × units"),
    (lambda: nonnegative_sum_fit([[1.0, np.nan]], 1.0, 3), ValueError, "noisy " + HUGE),
    (lambda: nonnegative_sum_fit([[1.0, 2]], [1.0, 2, 3], 3), ValueError, "variances must be one"),
    (lambda: nonnegative_sum_fit([[1.0, 2]], 0.0, 3), ValueError, "variances must be > 0"),
    (lambda: nonnegative_sum_fit([[1.0, 2]], 1.0, [3, 4]), ValueError, "totals must be sums"),
    (lambda: nonnegative_sum_fit([[1.0, 2]], 1.0, -3), ValueError, "totals must be sums"),
    (lambda: nonnegative_sum_fit([[1.0, 2]], 1.0, 2.0**60), ValueError, "totals " + HUGE),
    # rounding
    (lambda: round_keeping_total([0.5, 0.5], 1.5), ValueError, "total must be an integer"),
    (lambda: round_keeping_total([0.5, 0.5], 3), ValueError, "values must sum to total"),
    (lambda: round_keeping_total([0.5, 0.5], "1"), TypeError, "total must be numeric"),
    (lambda: round_keeping_total([0.5, 0.5], [1, 1]), ValueError, "total must be an integer"),
    (lambda: round_keeping_total([1e300, 0], 1e300), ValueError, "values " + HUGE),
    (lambda: round_keeping_total([0.5, 0.5], 2**70), ValueError, "total " + HUGE),
    (lambda: round_keeping_total([np.nan, 1.0], 1), ValueError, "values " + HUGE),
    (lambda: round_keeping_total([[0.5, 0.5]], 1), ValueError, "values must be a vector"),
    # the hierarchy
    (lambda: check_parents([0, 0]), ValueError, "parents: unit 0 must be the root"),
    (lambda: check_parents([-1, 2, 0]), ValueError, "parents: every unit's parent must be"),
    (lambda: check_parents([-1.0, 0.0]), ValueError, "parents must be a non-empty vector"),
    (lambda: check_parents([[-1, 0]]), ValueError, "parents must be a non-empty vector"),
    (lambda: check_parents("root"), ValueError, "parents must be a non-empty vector"),
    (lambda: children_of([-1, 0.5]), ValueError, "parents must be a non-empty vector"),
    (lambda: consistency_constraints(TREE, invariant=np.nan), ValueError, "invariant " + HUGE),
    (lambda: consistency_constraints(TREE, invariant=-1), ValueError, "invariant must be counts"),
    (lambda: consistency_constraints(TREE, invariant=[1, 2]), ValueError, "invariant must be one"),
    (lambda: consistency_constraints(TREE, invariant="a"), TypeError, "invariant must be numeric"),
    (lambda: topdown([1e19, 5e18, 5e18], 1, [-1, 0, 0]), ValueError, "noisy " + HUGE),
    (lambda: topdown([1.0, np.nan, 3.0], 1.0, TREE), ValueError, "noisy " + HUGE),
    (lambda: topdown([1.0, -np.inf, 3.0], 1.0, TREE), ValueError, "noisy " + HUGE),
    (lambda: topdown([1.0, 1.0], 1.0, TREE), ValueError, "noisy must hold one measurement"),
    (lambda: topdown(np.ones((3, 2, 2)), 1.0, TREE), ValueError, "noisy must hold one"),
    (lambda: topdown(["1", "2", "3"], 1.0, TREE), TypeError, "noisy must be numeric"),
    (lambda: topdown([3.0, 1, 2], [1.0, 2.0], TREE), ValueError, "variances must be one"),
    (lambda: topdown([3.0, 1, 2], 0.0, TREE), ValueError, "variances must be > 0"),
    (lambda: topdown([3.0, 1, 2], -4.0, TREE), ValueError, "variances must be > 0"),
    (lambda: topdown([3.0, 1, 2], np.nan, TREE), ValueError, "variances must be finite"),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, invariant=2**70), ValueError, "invariant " + HUGE),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, invariant=1e300), ValueError, "invariant " + HUGE),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, invariant=-3), ValueError, "invariant must be"),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, invariant=2.5), ValueError, "invariant must be"),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, invariant=[3, 3]), ValueError, "invariant must be"),
    (lambda: topdown([3.0, 1, 2], 1.0, TREE, rounded="no"), TypeError, "rounded must be"),
    (lambda: topdown([3.0, 1, 2], 1.0, [0, 0, 0]), ValueError, "parents: unit 0 must be"),
    (lambda: topdown_many([[3.0, 1, 2]], 1.0, TREE, [2**53 + 2]), ValueError, "invariant " + HUGE),
    (lambda: topdown_many([[3.0, 1, 2]], 1.0, TREE, [3, 3]), ValueError, "invariant must be one"),
    (lambda: topdown_many([3.0, 1, 2], 1.0, TREE), ValueError, "rows must be measurements"),
    (lambda: topdown_many([[3.0, 1]], 1.0, TREE), ValueError, "rows must be measurements"),
    (lambda: topdown_many([[3.0, 1, np.nan]], 1.0, TREE), ValueError, "rows " + HUGE),
    (lambda: topdown_many([[2.0**60, 1, 2]], 1.0, TREE), ValueError, "rows " + HUGE),
    (lambda: topdown_many([[3.0, 1, 2]], np.ones(4), TREE), ValueError, "variances must be one"),
    (lambda: topdown_many([[3.0, 1, 2]], 1.0, TREE, rounded=1), TypeError, "rounded must be"),
    # the bias measure
    (lambda: bias_measure([[1.0, np.nan]], [1.0, 1.0]), ValueError, "published " + HUGE),
    (lambda: bias_measure([[1.0, 2.0]], [1.0, np.inf]), ValueError, "truth " + HUGE),
    (lambda: bias_measure([[1.0, 2.0]], [1.0, 2.0, 3.0]), ValueError, "published must be runs"),
    (lambda: bias_measure([1.0, 2.0], [1.0, 2.0]), ValueError, "published must be runs"),
    (lambda: bias_measure([[1.0, 2.0]], "truth"), TypeError, "truth must be numeric"),
    (lambda: windowed_mean([1.0], [1.0], 0), ValueError, "window must be an integer"),
    (lambda: windowed_mean([1.0], [1.0], 2.5), ValueError, "window must be an integer"),
    (lambda: windowed_mean([1.0, np.inf], [1.0, 2.0]), ValueError, "values must be a vector"),
    (lambda: windowed_mean(["a"], [1.0]), TypeError, "values must be numbers"),
    (lambda: windowed_mean([1.0, 2.0], [1.0]), ValueError, "key must hold one value per"),
    (lambda: windowed_mean([1.0, 2.0], [1.0, np.nan]), ValueError, "key must be finite"),
    # the counties of JASON's experiment
    (lambda: _counties(population=[5, -7, 9]), ValueError, "population must be counts >= 0"),
    (lambda: _counties(population=[5, 7.5, 9]), ValueError, "population must be counts >= 0"),
    (lambda: _counties(population=[5, np.nan, 9]), ValueError, "population " + HUGE),
    (lambda: _counties(population=[2**52, 2**52, 9]), ValueError, "population must sum to at"),
    (lambda: _counties(population=[[5, 7, 9]]), ValueError, "population must be a vector"),
    (lambda: _counties(population="many"), TypeError, "population must be numeric"),
    (lambda: _counties(state=[0, 0]), ValueError, "state must hold one state index"),
    (lambda: _counties(state=[0.0, 0.0, 1.0]), ValueError, "state must hold one state index"),
    (lambda: _counties(state=[0, -1, 1]), ValueError, "state must hold one state index"),
    (lambda: _counties(fairfax=3), ValueError, "fairfax must be a county index"),
    (lambda: _counties(lancaster="Lancaster"), ValueError, "lancaster must be a county index"),
    (lambda: _counties().of_state(2), ValueError, "state must be a state index"),
    (lambda: _counties().of_state(True), ValueError, "state must be a state index"),
    (lambda: synthetic_counties(seed="x"), TypeError, "seed must be an integer >= 0"),
    (lambda: synthetic_counties(seed=-1), ValueError, "seed must be an integer >= 0"),
    (lambda: state_runs("counties", 1.0, 2), TypeError, "counties must be Counties"),
    (lambda: state_runs(_counties(), 0.0, 2), ValueError, "sigma must be finite and > 0"),
    (lambda: state_runs(_counties(), np.nan, 2), ValueError, "sigma must be finite and > 0"),
    (lambda: state_runs(_counties(), np.inf, 2), ValueError, "sigma must be finite and > 0"),
    (lambda: state_runs(_counties(), 1e300, 2), ValueError, "sigma must be at most 2\\*\\*47"),
    (lambda: state_runs(_counties(), [1.0, 2.0], 2), ValueError, "sigma must be a scalar"),
    (lambda: state_runs(_counties(), 1.0, 0), ValueError, "runs must be an integer >= 1"),
    (lambda: state_runs(_counties(), 1.0, 2.0), ValueError, "runs must be an integer >= 1"),
    (lambda: state_runs(_counties(), 1.0, 10**12), ValueError, "runs \\(10"),
    (lambda: state_runs(_counties(), 1.0, 2, seed="x"), TypeError, "seed must be an integer"),
]


@pytest.mark.parametrize(("call", "error", "message"), CASES)
def test_bad_input_is_one_line_naming_the_argument(call, error, message):
    with pytest.raises(error, match=f"^{message}") as raised:
        call()
    assert "\n" not in str(raised.value)


def test_counts_up_to_2_to_the_53_come_back_exactly():
    """The bound refused above is float64's: every integer up to 2**53 is held exactly."""
    big = 2**53
    published = topdown([big, big // 2 + 0.4, big // 2 - 0.4], 1.0, TREE)
    assert published.tolist() == [big, big // 2, big // 2]
    assert topdown([3.0, 1, 2], 1.0, TREE, invariant=big - 1)[0] == big - 1
    assert round_keeping_total([big / 2, big / 2], big).tolist() == [big // 2, big // 2]
