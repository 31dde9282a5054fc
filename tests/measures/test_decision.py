"""The one decision rule (3.5) and its tie rules (3.6), against brute force."""

import itertools

import numpy as np
import pytest

from adversary.measures import decision as dec

RULES = dec.TIE_RULES


def brute_force_credit(scores, truth, rule, tol=1e-9):
    """What (3.6) counts for one row of log scores, by the definitions."""
    best = max(scores)
    tied = [k for k, s in enumerate(scores) if s >= best - tol]
    if rule == "split":
        return (truth in tied) / len(tied)
    chosen = tied[-1] if rule == "largest" else tied[0]
    return float(chosen == truth)


@pytest.mark.parametrize("rule", RULES)
def test_truth_credit_is_the_definition(rule):
    rng = np.random.default_rng(5)
    # Scores on a coarse lattice, so that ties are frequent.
    scores = rng.integers(-3, 3, size=(400, 4)).astype(np.float64) * 0.5
    truth = rng.integers(0, 4, size=400)
    got = dec.truth_credit(scores, truth, rule)
    expected = [brute_force_credit(s, t, rule) for s, t in zip(scores, truth, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_weights_sum_to_one_and_rounding_ties():
    scores = np.array([[np.log(0.3) + np.log(2.0), np.log(0.6), -np.inf]])  # equal up to rounding
    weights = dec.decision_weights(scores, "split")
    np.testing.assert_allclose(weights, [[0.5, 0.5, 0.0]])
    assert dec.decision_weights(scores, "largest").tolist() == [[0.0, 1.0, 0.0]]
    assert dec.decision_weights(scores, "smallest").tolist() == [[1.0, 0.0, 0.0]]


def test_certain_values_and_impossible_rows():
    np.testing.assert_array_equal(dec.decision_weights([[np.inf, 0.0]], "split"), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="log_scores: some row has no possible value"):
        dec.decision_weights([[-np.inf, -np.inf]])
    with pytest.raises(ValueError, match="log_scores: contains NaN"):
        dec.decision_weights([[np.nan, 0.0]])


@pytest.mark.parametrize("rule", RULES)
def test_binary_credit_agrees_with_two_value_scores(rule):
    log_odds = np.array([-2.0, -1e-12, 0.0, 3e-10, 1.0])
    for upper in (True, False):
        scores = np.stack([np.zeros_like(log_odds), log_odds], axis=-1)
        np.testing.assert_array_equal(
            dec.binary_credit(log_odds, upper, rule),
            dec.truth_credit(scores, int(upper), rule, tolerance=dec.TIE_TOLERANCE),
        )


@pytest.mark.parametrize("rule", RULES)
def test_competition_credit_is_the_expectation_over_independent_competitors(rule):
    """Each competitor independently below, tied or above: enumerate all 3^K outcomes."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        k = rng.integers(1, 5)
        probabilities = rng.dirichlet(np.ones(3), size=k)  # (below, tied, above)
        before = rng.random(k) < 0.5
        expected = 0.0
        for outcome in itertools.product(range(3), repeat=k):
            mass = np.prod([probabilities[i, o] for i, o in enumerate(outcome)])
            if 2 in outcome:
                continue
            tied = [i for i, o in enumerate(outcome) if o == 1]
            if rule == "split":
                credit = 1.0 / (1 + len(tied))
            elif rule == "smallest":
                credit = float(not any(before[i] for i in tied))
            else:
                credit = float(all(before[i] for i in tied))
            expected += mass * credit
        got = dec.competition_credit(probabilities[:, 0], probabilities[:, 1], before, rule)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_decide_breaks_ties_by_rule_or_by_a_seeded_draw():
    values = np.array([3, 4, 7])
    scores = np.array([[0.0, 1.0, 1.0], [2.0, 0.0, 1.0]])
    np.testing.assert_array_equal(dec.decide(values, scores, "largest"), [7, 3])
    np.testing.assert_array_equal(dec.decide(values, scores, "smallest"), [4, 3])
    with pytest.raises(ValueError, match=r"rng: the decision is tied between \[4, 7\]"):
        dec.decide(values, scores, "split")
    draws = [dec.decide(values, scores[:1], "split", rng=seed)[0] for seed in range(400)]
    assert set(draws) == {4, 7}
    share = np.mean(np.array(draws) == 7)
    assert abs(share - 0.5) <= 4 * np.sqrt(0.25 / 400)
    assert dec.decide(values, scores[:1], "split", rng=7) == dec.decide(
        values, scores[:1], "split", rng=7
    )


def test_tie_rule_and_tolerance_checks():
    with pytest.raises(ValueError, match="tie_rule must be one of split, largest, smallest"):
        dec.check_tie_rule("first")
    assert dec.tie_tolerance(1.0) == dec.TIE_TOLERANCE
    assert dec.tie_tolerance(1e10) > dec.TIE_TOLERANCE
