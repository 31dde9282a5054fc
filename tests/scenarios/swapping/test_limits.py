"""Limits of the attack under swapping: no swapping, certain swapping, bad input."""

import numpy as np
import pytest

from adversary.scenarios.swapping import single_block as sb
from adversary.scenarios.swapping.block import Composition
from adversary.scenarios.swapping.laws import HouseholdSwapLaw


@pytest.fixture
def block(cells):
    """The target alone; the others know one more adult black person (m = 1)."""
    w, b, c0 = cells.adult_white, cells.adult_black, cells.child_white
    return ((b,), (w, w, c0), (b, w)), (0, 0)


@pytest.mark.parametrize("prior", [0.02, 0.5, 0.9])
def test_rate_zero_is_the_no_noise_limit(block, cells, small_composition, prior):
    households, target = block
    arguments = (households, target, cells.adult_black, cells.adult_white)
    law = HouseholdSwapLaw(0.0)
    m = 1
    assert sb.posterior(m + 1, prior, *arguments, law, small_composition) == 1.0
    assert sb.posterior(m, prior, *arguments, law, small_composition) == 0.0
    for release in (m - 1, m + 2, 7, -1):
        with pytest.raises(ValueError, match=rf"release \[{release}\] is impossible under every"):
            sb.posterior(release, prior, *arguments, law, small_composition)
    measures = sb.marginal_measures(prior, *arguments, law, small_composition)
    assert measures.marginal_posterior == 1.0 and measures.correct_decision_probability == 1.0
    assert measures.marginal_risk == pytest.approx(1 / prior)


@pytest.mark.parametrize("prior", [0.02, 0.3])
def test_certain_swapping_with_the_prior_as_composition_tells_nothing(block, cells, prior):
    """Rate 1 and a composition whose share of c among adults is the prior (the alternative
    taking the rest): every household is replaced, the release carries no information."""
    households, target = block
    adult = np.zeros(56)
    adult[[cells.adult_black, cells.adult_white]] = prior, 1 - prior
    child = np.zeros(56)
    child[cells.child_white] = 1.0
    composition = Composition(voting_age=adult, other=child)
    arguments = (households, target, cells.adult_black, cells.adult_white)
    law = HouseholdSwapLaw(1.0)
    pmf = sb.release_pmf(*arguments, law, composition)
    for release in np.flatnonzero(pmf):
        assert sb.posterior(int(release), prior, *arguments, law, composition) == pytest.approx(
            prior, rel=1e-12
        )
    measures = sb.marginal_measures(prior, *arguments, law, composition)
    assert measures.marginal_risk == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target": (3, 0)}, r"target must be \(household index, member index\)"),
        ({"target": (0, 1)}, r"target must be \(household index, member index\)"),
        ({"target_cell": 56}, r"target_cell must be a cell code from 0 to 55, got 56"),
        ({"alternative_cell": -1}, r"alternative_cell must be a cell code from 0 to 55"),
        ({"alternative_cell": 15}, r"alternative_cell must differ from target_cell"),
        ({"households": ((15,), ())}, r"households\[1\] must be a non-empty sequence"),
        ({"households": ((15,), (14, 99))}, r"households\[1\] member must be a cell code"),
        ({"prior": 1.0}, r"prior must lie strictly between 0 and 1"),
    ],
)
def test_bad_input_is_one_line_naming_it(block, cells, small_composition, change, message):
    households, target = block
    arguments = {
        "release": 1,
        "prior": 0.1,
        "households": households,
        "target": target,
        "target_cell": cells.adult_black,
        "alternative_cell": cells.adult_white,
        "law": HouseholdSwapLaw(0.1),
        "composition": small_composition,
    }
    with pytest.raises(ValueError, match=message):
        sb.posterior(**(arguments | change))


@pytest.mark.parametrize("rate", [1.5, -0.1, float("nan")])
def test_rate_outside_the_unit_interval(rate):
    with pytest.raises(ValueError, match=rf"rate must be in \[0, 1\], got {rate}"):
        HouseholdSwapLaw(rate)


@pytest.mark.parametrize(
    ("kind", "values", "message"),
    [
        ("voting_age", np.full(56, 1 / 56), r"voting_age must put no mass on cells that are not"),
        ("other", np.zeros(55), r"other must be 56 non-negative shares"),
    ],
)
def test_bad_composition(small_composition, kind, values, message):
    fields = {"voting_age": small_composition.voting_age, "other": small_composition.other}
    with pytest.raises(ValueError, match=message):
        Composition(**(fields | {kind: values}))


def test_composition_from_counts_uses_household_persons(cells):
    counts = np.zeros(56, dtype=int)
    counts[[cells.adult_white, cells.adult_black, cells.child_white]] = 30, 10, 20
    counts[28 + cells.adult_white] = 1000  # group quarters: never swapped in
    composition = Composition.from_counts(counts)
    assert composition.voting_age[cells.adult_black] == pytest.approx(0.25)
    assert composition.other[cells.child_white] == 1.0
    with pytest.raises(ValueError, match="counts: no other persons in households"):
        Composition.from_counts(np.where(np.arange(56) == cells.adult_white, 5, 0))


def test_the_decision_is_the_posterior_mode(block, cells, small_composition):
    households, target = block
    setting = (households, target, cells.adult_black, cells.adult_white)
    for rate, release, prior, expected in [
        (0.0, 2, 0.01, cells.adult_black),  # m + 1: disclosed whatever the prior
        (0.0, 1, 0.99, cells.adult_white),
        (0.3, 2, 0.5, cells.adult_black),
        (0.3, 2, 0.001, cells.adult_white),
    ]:
        law = HouseholdSwapLaw(rate)
        posterior = sb.posterior(release, prior, *setting, law, small_composition)
        assert (posterior > 0.5) == (expected == cells.adult_black)
        assert sb.decision(release, prior, *setting, law, small_composition) == expected


def test_a_tied_decision_follows_the_tie_rule(block, cells, small_composition):
    """At rate 1 the posterior is the prior: p = 1/2 is a tie."""
    households, target = block
    setting = (households, target, cells.adult_black, cells.adult_white)
    law = HouseholdSwapLaw(1.0)
    assert sb.decision(1, 0.5, *setting, law, small_composition, tie_rule="largest") == 15
    assert sb.decision(1, 0.5, *setting, law, small_composition, tie_rule="smallest") == 14
    with pytest.raises(ValueError, match="rng: the decision is tied"):
        sb.decision(1, 0.5, *setting, law, small_composition)
