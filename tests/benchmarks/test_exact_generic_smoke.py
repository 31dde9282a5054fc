"""Smoke test of benchmarks/exact_generic.py: its attacks, generic against hand-written.

Each attack is written there twice, as a user's PyMC factory and as the
hand-written case: their measures agree within their bounds, and on the
issue-26 three-category attack the factory (its ρ a shared scalar after the
first values of the scan, :mod:`adversary.scenarios.parametric`) chooses the
case's ρ.
"""

import pytest

import adversary
from adversary.analyses.choose_rho import choose_rho


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("exact_generic")


@pytest.mark.parametrize("name", ["single block", "unknown attribute", "Granville block group"])
def test_the_users_factory_and_the_case_agree_within_their_bounds(bench, name):
    hand, generic, field, labels = bench.attacks()[name]
    row = bench.compare(name, hand, generic, field, labels[:1], [0.1, 1.0])
    assert row["evaluations"] == 1
    assert row["difference_over_bounds"] <= 1.0
    assert row["ratio"] == pytest.approx(row["generic_s"] / row["hand_s"])


def test_the_three_category_factory_chooses_the_hand_written_rho(bench):
    factory = adversary.attack(bench.three_cells, priors=bench.THREE_PRIORS, truth={"C": 0})
    settings = {"rho_min": 0.05, "points_per_decade": 5, "refine": 2, "tolerance": 0.01}
    generic = choose_rho(factory, 1.5, **settings)
    hand = choose_rho(bench.THREE_CASE, 1.5, **settings)
    assert generic.rho == pytest.approx(hand.rho, rel=1e-12)
    assert generic.binding_prior == hand.binding_prior == "even"
    for label in bench.THREE_PRIORS:
        bound = generic.bound_at_rho[label] + hand.bound_at_rho[label]
        assert generic.measure_at_rho[label] == pytest.approx(hand.measure_at_rho[label], abs=bound)
