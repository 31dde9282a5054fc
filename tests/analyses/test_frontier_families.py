"""Families of allocations: exact shares summing to exactly 1, the others kept in proportion,
grids counted against brute force, distinct names, and one-line errors."""

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversary.analyses.frontier import families
from adversary.budget import get_preset
from adversary.memory import MemoryBudgetError, memory_budget

BASE = get_preset("pl94-2020-persons")
LEVELS = BASE.levels


def _exact(allocation):
    """Every set of shares is Fractions summing to exactly 1."""
    assert all(isinstance(s, Fraction) for s in allocation.level_shares)
    assert sum(allocation.level_shares) == 1
    for row in allocation.query_shares:
        assert all(isinstance(s, Fraction) for s in row)
        assert sum(row) == 1


def _ratios_kept(new, old, others):
    """The shares of ``others`` are the base's times one common factor (exactly)."""
    factors = {new[i] / old[i] for i in others if old[i]}
    assert len(factors) <= 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=6, max_size=6))
def test_level_shares_over_every_level_sum_to_exactly_one(weights):
    vector = [w / sum(weights) for w in weights]  # floats summing to 1 up to rounding
    [allocation] = families.level_shares(BASE, [vector])
    _exact(allocation)
    assert [float(s) for s in allocation.level_shares] == pytest.approx(vector, abs=1e-8)
    assert allocation.query_shares == BASE.query_shares
    assert allocation.rho_total == BASE.rho_total


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(LEVELS), min_size=1, max_size=5, unique=True),
    st.lists(st.floats(0.001, 1.0), min_size=6, max_size=6),
    st.floats(0.05, 0.99),
)
def test_chosen_level_shares_are_set_and_the_others_keep_their_ratios(chosen, weights, mass):
    values = [mass * w / sum(weights[: len(chosen)]) for w in weights[: len(chosen)]]
    [allocation] = families.level_shares(BASE, [values], levels=chosen)
    _exact(allocation)
    index = [LEVELS.index(level) for level in chosen]
    for i, value in zip(index, values, strict=True):
        assert allocation.level_shares[i] == Fraction(value).limit_denominator(10**9)
    others = [i for i in range(len(LEVELS)) if i not in index]
    _ratios_kept(allocation.level_shares, BASE.level_shares, others)


def test_a_float_share_is_read_as_its_short_fraction():
    [allocation] = families.level_shares(BASE, [[0.3, 0.2]], levels=["block", "tract"])
    assert allocation.level_shares[5] == Fraction(3, 10)
    assert allocation.level_shares[3] == Fraction(1, 5)
    others = sum(BASE.level_shares[i] for i in (0, 1, 2, 4))
    assert allocation.level_shares[0] == BASE.level_shares[0] * Fraction(1, 2) / others


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda v: sum(v) > 0.1))
def test_query_shares_within_one_level(weights):
    values = [w / sum(weights) * Fraction(1, 2) for w in weights]
    [allocation] = families.query_shares(
        BASE, "tract", [values], queries=["detailed", "total", "race"]
    )
    _exact(allocation)
    tract = LEVELS.index("tract")
    assert [allocation.query_shares[i] for i in range(len(LEVELS)) if i != tract] == [
        BASE.query_shares[i] for i in range(len(LEVELS)) if i != tract
    ]
    row = allocation.query_shares[tract]
    assert row[BASE.queries.index("detailed")] == Fraction(values[0]).limit_denominator(10**9)
    _ratios_kept(row, BASE.query_shares[tract], range(2, 10))
    assert allocation.level_shares == BASE.level_shares


def test_rho_totals_keep_every_share():
    family = families.rho_totals(BASE, [1, 2.56, Fraction(10, 3)])
    assert [a.rho_total for a in family] == [1, Fraction(64, 25), Fraction(10, 3)]
    assert [a.name for a in family] == [
        "pl94-2020-persons rho=1",
        "pl94-2020-persons rho=2.56",
        "pl94-2020-persons rho=3.33333",
    ]
    for a in family:
        _exact(a)
        assert (a.level_shares, a.query_shares) == (BASE.level_shares, BASE.query_shares)


@pytest.mark.parametrize(("parts", "steps"), [(1, 1), (2, 5), (3, 7), (4, 6), (3, 3)])
def test_simplex_grid_is_every_positive_lattice_point(parts, steps):
    grid = families.simplex_grid(parts, steps)
    brute = [
        tuple(Fraction(k, steps) for k in p)
        for p in itertools.product(range(1, steps + 1), repeat=parts)
        if sum(p) == steps
    ]
    assert sorted(grid) == sorted(brute)
    assert len(grid) == math.comb(steps - 1, parts - 1)
    assert all(sum(p) == 1 for p in grid)


def test_level_share_grid_places_the_others_total_on_the_simplex():
    family = families.level_share_grid(BASE, ["block", "block_group"], 5)
    assert len(family) == math.comb(4, 2)  # block, block_group and the others' total
    assert len({a.name for a in family}) == len(family)
    for a in family:
        _exact(a)
        _ratios_kept(a.level_shares, BASE.level_shares, range(4))
    assert {(a.level_shares[5], a.level_shares[4]) for a in family} == {
        (Fraction(i, 5), Fraction(j, 5)) for i in range(1, 4) for j in range(1, 4) if i + j < 5
    }


def test_query_share_grid_over_every_query_of_a_level():
    family = families.query_share_grid(BASE, "block", ["total", "detailed"], 4)
    assert len(family) == 3  # the others' total is the third coordinate
    full = families.query_share_grid(BASE, "county", list(BASE.queries), 11)
    assert len(full) == 1 and set(full[0].query_shares[2]) == {Fraction(1, 11)}
    for a in [*family, *full]:
        _exact(a)


def test_names_can_be_given_and_must_be_distinct():
    family = families.rho_totals(BASE, [1, 2], names=["low", "high"])
    assert [a.name for a in family] == ["low", "high"]
    with pytest.raises(ValueError, match="names must give 2 names"):
        families.rho_totals(BASE, [1, 2], names=["one"])
    with pytest.raises(ValueError, match="distinct names; repeated: 'same'"):
        families.rho_totals(BASE, [1, 2], names=["same", "same"])
    with pytest.raises(ValueError, match="distinct names"):
        families.explicit([BASE, BASE])
    assert families.explicit([BASE, *family]) == [BASE, *family]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: families.level_shares(BASE, [[0.6, 0.6]], levels=["us", "state"]), "more than 1"),
        (lambda: families.level_shares(BASE, [[0.1] * 6]), "sum to 1, got sum 0.6"),
        (
            lambda: families.level_shares(BASE, [[0.5, 0.5]], levels=["us", "nation"]),
            "levels must be one",
        ),
        (lambda: families.level_shares(BASE, [[0.5, 0.5]], levels=["us", "us"]), "distinct keys"),
        (lambda: families.level_shares(BASE, [[0.5]], levels=["us", "state"]), "2 entries each"),
        (lambda: families.level_shares(BASE, [[float("nan")]], levels=["us"]), "finite"),
        (lambda: families.level_shares(BASE, []), "at least one vector"),
        (
            lambda: families.query_shares(BASE, "us", [[0.05] * 10], queries=BASE.queries[1:]),
            "the others have share 0",
        ),
        (lambda: families.rho_totals(BASE, [0]), "rho_total must be a number > 0"),
        (lambda: families.rho_totals(BASE, ["2"]), "totals must be numbers"),
        (lambda: families.simplex_grid(3, 2), "steps must be at least 3"),
        (lambda: families.explicit([BASE, "x"]), "BudgetAllocations"),
    ],
)
def test_bad_input_is_one_line_naming_it(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_a_grid_too_large_for_the_memory_budget_is_refused_before_it_is_built():
    with memory_budget("1MiB"), pytest.raises(MemoryBudgetError, match="steps=60"):
        families.level_share_grid(BASE, ["block", "tract", "county"], 60)
