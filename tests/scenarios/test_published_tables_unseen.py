"""Simulated published-tables measures: the error bound covers the runs whose table is unseen.

Issue 23 review: with many blocks the tables outnumber the draws, the cross-fitted law has
never seen most runs' tables, their posterior is the prior, and the batches agree — the
standard error was ~0 (30 blocks: 1.9e-17) while the posterior sat at the prior. The error
bound now adds the share of such runs (``details["unseen_tables"]``)."""

import pytest

from adversary.scenarios.published_tables import PublishedAttributeCase, PublishedTablesCase


def _case(**changes):
    fields = {"name": "bg", "priors": {"p": 0.5}, "known_counts": (1,) * 5}
    return PublishedTablesCase(**fields | {"rho_block": 2.0, "rho_parent": 2.0} | changes)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_simulated_measures_within_their_bound_of_the_exact_sum(seed):
    exact = _case(method="exact", tail_mass=1e-3).marginal_measures()  # 729 noise vectors
    simulated = _case(method="simulation", draws=100, seed=seed).marginal_measures()
    assert simulated.details["unseen_tables"] > 0.0
    for name in ("marginal_posterior", "correct_decision_probability"):
        error = abs(getattr(simulated, name) - getattr(exact, name))
        assert error <= simulated.error_bound + exact.error_bound, name


def test_every_table_unseen_bounds_nothing():
    # 30 blocks of one person: no two of 2,000 runs publish the same 31 counts, so every
    # run's posterior is the prior (0.5) and the measures may be anywhere in [0, 1]
    case = PublishedTablesCase(
        name="bg", priors={"p": 0.5}, known_counts=(1,) * 30, draws=2000, method="simulation"
    )
    measures = case.marginal_measures()
    assert measures.marginal_posterior == pytest.approx(0.5, abs=1e-12)
    assert measures.details["unseen_tables"] == 1.0
    assert measures.error_bound >= 1.0


def test_a_grid_of_many_blocks_refused_in_a_short_line():
    # 200 blocks and their block group, about 29 noise values each: 10^290 or so vectors
    case = PublishedAttributeCase(
        name="a",
        categories=("x", "y"),
        priors={"u": (0.5, 0.5)},
        known_counts=((0,) * 200, (1,) * 200),
        true_category="x",
    )
    with pytest.raises(ValueError, match=r"^tail_mass: .* would have about 10\^\d+ vectors") as e:
        case.marginal_measures()
    assert len(str(e.value)) < 200
