"""The frontier study: its evaluators and frontier_study against closed forms and brute force."""

from fractions import Fraction

import numpy as np
import pytest

from adversary.analyses.allocation_risk import allocation_risk, parse_risk_profile
from adversary.analyses.frontier import evaluators
from adversary.analyses.frontier.evaluators import accuracy_evaluator, risk_evaluator
from adversary.analyses.frontier.families import level_shares, query_shares
from adversary.analyses.frontier.study import frontier_study
from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_geography

ATTACKS = ("single_block", "unknown_attribute")
PRIORS = (0.5, 0.1, 0.02)


@pytest.fixture(scope="module")
def base():
    return get_preset("pl94-2020-persons")


@pytest.fixture(scope="module")
def geography():
    return synthetic_geography(20_000, seed=3)


def test_error_score_is_one_for_the_reference_and_half_at_twice_rho(base, geography):
    accuracy = accuracy_evaluator(geography, base)
    own = accuracy(base)["error_score"]
    assert own.sizes["metric"] >= 3
    np.testing.assert_array_equal(own.values, 1.0)
    # every σ² is 1/ρ: doubling the total ρ halves every variance, so the score is 1/2 exactly
    doubled = accuracy(base.with_rho_total(2 * base.rho_total))["error_score"]
    np.testing.assert_allclose(doubled.values, 0.5, rtol=1e-12)


def _brute_score(allocation, profile):
    measures = allocation_risk(allocation, attacks=list(ATTACKS), priors=PRIORS)
    limit = profile(np.asarray(PRIORS))
    out = {}
    for attack in ATTACKS:
        upper = (measures["ratio"] + measures["ratio_error"]).sel(attack=attack).values
        out[attack] = float(np.max(upper / limit))
    return out


def test_risk_score_is_the_largest_bound_over_the_profile(base):
    spec = "piecewise:0.02=4,0.5=2"
    profile = parse_risk_profile(spec)
    risk = risk_evaluator(ATTACKS, PRIORS, profile=spec)
    for allocation in (base, base.with_rho_total(Fraction(1, 2))):
        scores = risk(allocation)["risk_score"]
        expected = _brute_score(allocation, profile)
        for attack in ATTACKS:
            assert float(scores.sel(attack=attack)) == pytest.approx(expected[attack], rel=1e-12)
    # without a profile the limit is 1: the score is the largest ratio plus its error bound
    plain = risk_evaluator(ATTACKS, PRIORS)(base)
    measures = allocation_risk(base, attacks=list(ATTACKS), priors=PRIORS)
    upper = (measures["ratio"] + measures["ratio_error"]).max("prior")
    np.testing.assert_allclose(plain["risk_score"].values, upper.values, rtol=1e-12)


def test_risk_is_cached_by_the_rho_the_attack_reads(base, monkeypatch):
    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs["attacks"])
        return allocation_risk(*args, **kwargs)

    monkeypatch.setattr(evaluators, "allocation_risk", counting)
    risk = risk_evaluator(["single_block"], PRIORS)
    first = risk(base)
    assert len(calls) == 1
    # the tract's detailed share moves, the block's detailed ρ does not: same measures, no new call
    (other,) = query_shares(base, "tract", [[Fraction(1, 2)]], queries=["detailed"])
    assert other.rho("tract", "detailed") != base.rho("tract", "detailed")
    assert other.rho("block", "detailed") == base.rho("block", "detailed")
    second = risk(other)
    assert len(calls) == 1
    assert second.identical(first)
    # the block's detailed share moves: a new call
    (moved,) = query_shares(base, "block", [[Fraction(1, 2)]], queries=["detailed"])
    risk(moved)
    assert len(calls) == 2


def _dominates(a, b):
    return bool(np.all(a <= b) and np.any(a < b))


@pytest.fixture(scope="module")
def study(base, geography):
    family = [
        base.with_rho_total(base.rho_total / 2),
        base.with_rho_total(base.rho_total * 2),
        *level_shares(base, [[Fraction(1, 20)], [Fraction(1, 5)]], levels=["block"]),
        *query_shares(base, "block", [[Fraction(1, 2)]], queries=["detailed"]),
    ]
    return frontier_study(
        base,
        geography,
        family=family,
        attacks=ATTACKS,
        priors=PRIORS,
        profile="constant:3",
        search_levels=("block_group", "block"),
        progress=False,
    )


def _objectives(evaluation):
    risk = evaluation["risk_score"].transpose("allocation", "attack").values
    error = evaluation["error_score"].transpose("allocation", "metric").values
    return np.hstack([risk, error])


def test_within_limits_and_the_frontier_by_brute_force(study):
    evaluation = study.tree["evaluation"].to_dataset()
    within = (evaluation["risk_score"] <= 1).all("attack").values
    np.testing.assert_array_equal(evaluation["within_limits"].values, within)
    values = _objectives(evaluation)
    n = len(values)
    dominated = [any(_dominates(values[j], values[i]) for j in range(n)) for i in range(n)]
    np.testing.assert_array_equal(evaluation["on_frontier"].values, ~np.array(dominated))
    names = [str(a) for a in evaluation["allocation"].values]
    ref = names.index(evaluation.attrs["reference"])
    by = sorted(names[j] for j in range(n) if _dominates(values[j], values[ref]))
    placed = study.tree["dominance"].to_dataset()
    assert bool(placed["dominated"]) == bool(by)
    got = sorted(str(a) for a in placed["dominator"].values) if "dominator" in placed.dims else []
    assert got == by


def test_search_answers_meet_the_profile_when_checked_directly(study):
    evaluation = study.tree["evaluation"].to_dataset()
    assert "search_most_accurate" in evaluation.attrs
    profile = parse_risk_profile("constant:3")
    for kind in ("most_accurate", "least_risky"):
        name = evaluation.attrs.get(f"search_{kind}")
        if name is None:
            continue
        allocation = study.allocations[name]
        if kind == "most_accurate":
            scores = _brute_score(allocation, profile)
            assert max(scores.values()) <= 1 + 1e-9
            assert bool(evaluation["within_limits"].sel(allocation=name))
        else:
            errors = evaluation["error_score"].sel(allocation=name).values
            assert np.all(errors <= 1 + 1e-6)


def test_an_unreachable_profile_is_reported_not_raised(base, geography):
    # the ratio is never below 1, so a limit of 1 at every prior cannot be met (its error bound > 0)
    result = frontier_study(
        base,
        geography,
        family=[],
        attacks=["single_block"],
        priors=PRIORS,
        profile="constant:1",
        searches=("most_accurate",),
        # one varied share: SLSQP finds the limits incompatible in a few steps (with two it
        # wanders ~500 evaluations before phase one proves them so; the report is the same)
        search_levels=("block",),
        progress=False,
    )
    evaluation = result.tree["evaluation"].to_dataset()
    assert "search_most_accurate" not in evaluation.attrs
    failed = evaluation.attrs["search_most_accurate_failed"]
    assert "meets the limits" in failed
    # no total ρ meets a ratio of 1 either (choose_rho refuses the threshold): said, not raised
    assert "attack single_block binds at every total rho" in failed
    assert not evaluation["within_limits"].values.any()


def test_runs_give_a_simulation_beside_the_analytic_mae(base):
    from adversary.analyses.reconstruction_study import block_cells
    from adversary.population.synthetic import synthetic_population
    from adversary.topdown.every_query import truth_tables

    persons = synthetic_population(20_000, seed=5)
    truth = truth_tables(persons.assign(cell=block_cells(persons)))
    result = frontier_study(
        base,
        truth,
        family=[],
        attacks=["single_block"],
        priors=PRIORS,
        searches=(),
        truth=truth,
        runs=2,
        progress=False,
    )
    simulation = result.tree["simulation"].to_dataset()
    assert {"mae", "mae_se", "analytic_mae"} <= set(simulation.data_vars)
    assert list(simulation["allocation"].values) == [base.name]
    assert np.isfinite(simulation["analytic_mae"].values).all()
    assert (simulation["mae"].values >= 0).all() and (simulation["mae_se"].values >= 0).all()


@pytest.mark.parametrize(
    ("options", "word"),
    [({"runs": 1}, "runs"), ({"runs": 2}, "truth"), ({"searches": ("nope",)}, "searches")],
)
def test_bad_options_name_themselves(base, geography, options, word):
    with pytest.raises(ValueError, match=word):
        frontier_study(base, geography, family=[], attacks=["single_block"], **options)


def test_an_iterate_past_the_linear_constraint_is_scaled_back(base):
    # SLSQP may step past Σ chosen ≤ 1 − min_share; the vector still names an allocation
    from adversary.analyses.frontier.variables import Variables

    variables = Variables(base, ["block_group", "block"], None, None, 0.01)
    allocation = variables.allocation(np.array([0.6, 0.41]), "past")
    shares = dict(zip(allocation.levels, allocation.level_shares, strict=True))
    room = 1 - Fraction(0.01)
    assert shares["block_group"] + shares["block"] == room
    assert shares["block_group"] / shares["block"] == Fraction(0.6) / Fraction(0.41)
    assert sum(allocation.level_shares) == 1


def test_without_a_profile_no_limit_is_checked_and_the_search_is_unconstrained(base, geography):
    result = frontier_study(
        base,
        geography,
        family=level_shares(base, [[Fraction(1, 10)]], levels=["block"]),
        attacks=["single_block"],
        priors=PRIORS,
        searches=("most_accurate",),
        search_levels=("block_group", "block"),
        progress=False,
    )
    evaluation = result.tree["evaluation"].to_dataset()
    assert evaluation["within_limits"].values.all()
    # the risk scores are the marginal risks themselves (limit 1), above 1 for any release
    assert (evaluation["risk_score"] > 1).all()
    answer = evaluation.attrs["search_most_accurate"]
    # no risk limit: the answer is at least as accurate as every allocation evaluated
    mean_error = evaluation["error_score"].mean("metric")
    assert float(mean_error.sel(allocation=answer)) <= float(mean_error.min()) + 1e-6
