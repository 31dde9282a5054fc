"""Reconstruction measures under ties: one rule (the package's), whatever the cells' order."""

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.cli import main
from adversary.scenarios.reconstruction import (
    ReconstructionCase,
    exact_posterior,
    holder_measures,
    posterior_measures,
    prior_measures,
    prior_posterior,
    reconstruct,
)
from adversary.scenarios.reconstruction.ties import match_rate


def uniform_case(k: int, truth, **changes) -> ReconstructionCase:
    """``sum(truth)`` persons, ``k`` equally likely cells, only the total released."""
    fields = dict(
        name="uniform",
        n=sum(truth),
        cells=tuple(f"c{i}" for i in range(k)),
        prior=(1 / k,) * k,
        queries=[tuple(range(k))],
        rhos=0.5,
        releases=(sum(truth),),
        truth=tuple(truth),
    )
    return ReconstructionCase(**{**fields, **changes})


@pytest.mark.parametrize("k", [2, 3, 5])
def test_one_person_among_k_equal_cells_is_guessed_with_chance_one_in_k(k):
    # Every cell is a most probable histogram and an equally confident record: the adversary
    # picks one uniformly, right with probability 1/k whichever cell holds the person.
    for where in range(k):
        truth = np.eye(k, dtype=int)[where]
        result = reconstruct(uniform_case(k, truth), "exact")
        for measures in (result, result["baseline"]):
            assert measures["map_exact"] == pytest.approx(1 / k, abs=1e-15)
            assert measures["match_rate"] == pytest.approx((1 / k,), abs=1e-15)
            assert measures["map_modes"] == k and measures["map_histogram"] is None
        closed = prior_measures(uniform_case(k, truth))
        assert closed.map_exact == pytest.approx(1 / k, abs=1e-15)
        assert closed.match_rate == pytest.approx((1 / k,), abs=1e-15)


def test_the_prior_alone_over_100_000_cells_is_right_by_chance():
    # Three persons in 100 000 equally likely cells: C(100 000, 3) most probable histograms
    # (three distinct cells), and 3 true records among 100 000 equally confident ones.
    k = 100_000
    truth = np.zeros(k, dtype=int)
    truth[[4, 50_000, 99_999]] = 1
    case = uniform_case(k, truth)
    for first in (truth, np.roll(truth, -4)):  # the persons in cells 0, … or elsewhere
        baseline = prior_measures(case.replace(truth=tuple(int(x) for x in first)))
        assert baseline.map_modes == math.comb(k, 3)
        assert baseline.map_exact == pytest.approx(1 / math.comb(k, 3), rel=1e-12)
        assert baseline.match_rate == pytest.approx((3 / k,) * 3, rel=1e-12)


def brute_match_rate(at_least: np.ndarray, truth) -> np.ndarray:
    """Mean over every order of the records that ranks them by ``at_least`` (ties in any order)."""
    n, k = at_least.shape
    records = [(round(float(at_least[j, c]), 12), truth[c] > j) for c in range(k) for j in range(n)]
    curves = []
    for order in itertools.permutations(range(len(records))):
        ranked = sorted(order, key=lambda i: -records[i][0])  # stable: ties in the order's order
        curves.append(np.cumsum([records[i][1] for i in ranked[:n]]) / np.arange(1, n + 1))
    return np.mean(curves, axis=0)


@pytest.mark.parametrize(
    "prior, truth",
    [
        ((1 / 3, 1 / 3, 1 / 3), (1, 1, 0)),
        ((0.25, 0.25, 0.5), (0, 1, 1)),
        ((0.4, 0.4, 0.2), (2, 0, 0)),
    ],
)
def test_the_match_rate_is_the_mean_over_every_order_of_tied_records(prior, truth):
    case = uniform_case(3, truth, prior=prior)
    for posterior in (exact_posterior(case), prior_posterior(case)):
        h, p = posterior.histograms, posterior.probabilities
        at_least = np.stack([p @ (h >= j) for j in range(1, 3)])
        expected = brute_match_rate(at_least, truth)
        assert posterior_measures(posterior, truth).match_rate == pytest.approx(expected, abs=1e-12)
    assert prior_measures(case).match_rate == pytest.approx(
        brute_match_rate(np.stack([p_at_least(prior, 2, j) for j in (1, 2)]), truth), abs=1e-12
    )


def p_at_least(prior, n, j):
    """P(h_k ≥ j) under the multinomial, by enumeration of the histograms."""
    out = np.zeros(len(prior))
    for h in itertools.product(range(n + 1), repeat=len(prior)):
        if sum(h) == n:
            weight = math.factorial(n) * math.prod(
                p**x / math.factorial(x) for p, x in zip(prior, h, strict=True)
            )
            out += weight * (np.array(h) >= j)
    return out


@pytest.mark.parametrize("tie_rule", ["split", "smallest", "largest"])
@pytest.mark.parametrize(
    "prior, concentration, n",
    [
        ((1 / 3,) * 3, None, 2),
        ((0.25, 0.25, 0.5), None, 3),
        ((1 / 3,) * 3, 3.0, 3),
        ((0.2, 0.4, 0.4), 5.0, 2),
    ],
)
def test_the_prior_modes_in_closed_form_are_the_enumerated_ones(tie_rule, prior, concentration, n):
    # (1/3,)*3 with concentration 3: α_k = 1, every histogram equally likely (10 modes).
    for truth in itertools.product(range(n + 1), repeat=3):
        if sum(truth) != n:
            continue
        case = uniform_case(3, truth, prior=prior, concentration=concentration, tie_rule=tie_rule)
        closed = prior_measures(case)
        enumerated = posterior_measures(prior_posterior(case), truth, tie_rule)
        assert closed.map_modes == enumerated.map_modes
        assert closed.map_exact == pytest.approx(enumerated.map_exact, abs=1e-15)
        assert closed.map_histogram == enumerated.map_histogram
        assert closed.match_rate == pytest.approx(enumerated.match_rate, abs=1e-12)


def test_smallest_and_largest_take_the_first_and_last_in_the_cells_order():
    case = uniform_case(3, (1, 0, 0))
    first = reconstruct(case.replace(tie_rule="smallest"), "exact")
    last = reconstruct(case.replace(tie_rule="largest"), "exact")
    assert first["map_histogram"] == (1, 0, 0) and first["map_exact"] == 1.0
    assert last["map_histogram"] == (0, 0, 1) and last["map_exact"] == 0.0
    assert first["match_rate"] == (1.0,) and last["match_rate"] == (0.0,)
    with pytest.raises(ValueError, match="tie_rule must be one of split, largest, smallest"):
        case.replace(tie_rule="first")


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    k=st.integers(2, 4),
    n=st.integers(1, 3),
)
def test_every_measure_is_the_same_whatever_the_cells_order(data, k, n):
    # Priors with repeated values and releases of a few cells make ties common.
    weights = data.draw(st.lists(st.sampled_from([1, 2, 4]), min_size=k, max_size=k))
    prior = tuple(w / sum(weights) for w in weights)
    truth = data.draw(
        st.lists(st.integers(0, n), min_size=k, max_size=k).filter(lambda t: sum(t) == n)
    )
    released = data.draw(st.lists(st.integers(0, k - 1), max_size=2, unique=True))
    queries = [tuple(range(k)), *[(c,) for c in released]]
    releases = [n, *[truth[c] + data.draw(st.integers(-1, 1)) for c in released]]
    permutation = data.draw(st.permutations(range(k)))
    case = uniform_case(k, truth, prior=prior, queries=queries, releases=tuple(releases))
    where = {old: new for new, old in enumerate(permutation)}
    relabelled = case.replace(
        cells=tuple(case.cells[c] for c in permutation),
        prior=tuple(prior[c] for c in permutation),
        truth=tuple(truth[c] for c in permutation),
        queries=[tuple(sorted(where[c] for c in q)) for q in queries],
    )
    ours, theirs = reconstruct(case, "exact"), reconstruct(relabelled, "exact")
    for a, b in ((ours, theirs), (ours["baseline"], theirs["baseline"])):
        for key in ("p_true_histogram", "expected_overlap", "map_exact", "match_rate"):
            assert a[key] == pytest.approx(b[key], abs=1e-12), key
        assert a["map_modes"] == b["map_modes"]
    closed = prior_measures(case)
    assert closed.map_exact == pytest.approx(theirs["baseline"]["map_exact"], abs=1e-12)
    assert closed.match_rate == pytest.approx(theirs["baseline"]["match_rate"], abs=1e-12)


def test_the_data_holders_exact_match_rate_splits_ties():
    # One person in two equally likely cells, only the total released: whatever the release,
    # the two histograms tie, so the exact-reconstruction rate is 1/2 wherever the person is.
    for truth in ((1, 0), (0, 1)):
        grid = holder_measures(uniform_case(2, truth, releases=None), releases="grid")
        assert grid["map_exact"]["mean"] == pytest.approx(0.5, abs=1e-12)
        assert grid["match_rate"] == pytest.approx([0.5], abs=1e-12)
        assert grid["baseline"]["map_exact"] == 0.5 and grid["tie_rule"] == "split"


def test_ranking_counts_the_ties_at_the_edge_of_the_top_r():
    # Records 0.9 (true), then four tied at 0.5 (one true): the top 2 hold 1 + 1/4 true.
    at_least = np.array([[0.9, 0.5, 0.5, 0.5], [0.5, 0.0, 0.0, 0.0]])
    curve = match_rate(at_least, np.array([1, 1, 0, 0]), "split")
    assert curve == pytest.approx((1.0, (1 + 1 / 4) / 2), abs=1e-15)


def test_the_command_line_states_the_tie_rule(case_file, capsys):
    model = case_file(
        "uniform",
        n="1",
        cells="('a', 'b', 'c')",
        prior="(1/3, 1/3, 1/3)",
        queries="[(0, 1, 2)]",
        rhos="0.5",
        releases="(1,)",
        truth="(0, 0, 1)",
    )
    assert main(["reconstruct", model, "--method", "exact", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["map_exact"] == pytest.approx(1 / 3) and result["tie_rule"] == "split"
    assert main(["reconstruct", model, "--method", "exact", "--tie-rule", "largest"]) == 0
    out = capsys.readouterr().out
    assert "P[most probable histogram is true]" in out and "1.0000" in out
    assert main(["risk", model, "--tie-rule", "smallest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["map_exact"]["mean"] == 0.0
