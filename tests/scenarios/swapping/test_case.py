"""The cases under swapping: the attack protocol, the shipped model file, bad input."""

import json

import numpy as np
import pytest

from adversary.cli import main
from adversary.measures.protocol import Attack
from adversary.model_files import load_case
from adversary.scenarios.swapping import (
    HouseholdSwapLaw,
    SwappingBlockCase,
    SwappingUnknownAttributeCase,
    single_block,
    unknown_attribute,
)


@pytest.fixture
def fields(cells, small_composition):
    w, b, c0 = cells.adult_white, cells.adult_black, cells.child_white
    return {
        "name": "small",
        "households": ((b,), (w, w, c0), (b, w)),
        "target_member": (0, 0),
        "target_cell": b,
        "alternative_cell": w,
        "law": HouseholdSwapLaw(0.1),
        "composition": small_composition,
        "priors": {"1/2": 0.5, "1/10": 0.1},
        "observed_release": 2,
    }


def test_the_block_case_is_an_attack(fields):
    case = SwappingBlockCase(**fields)
    assert isinstance(case, Attack)
    assert case.known_count == 1 and case.truth == 2 and case.true_latents == {"X1": 2}
    setting = tuple(fields[k] for k in list(fields)[1:7])
    assert case.posterior("1/10") == single_block.posterior(2, 0.1, *setting)
    measures = case.marginal_measures("1/10")
    assert measures == single_block.marginal_measures(0.1, *setting)
    slower = case.replace(law=HouseholdSwapLaw(0.0))
    assert slower.marginal_measures("1/10").correct_decision_probability == 1.0
    assert "law" in case.parameters() and "priors" not in case.parameters()


def test_the_unknown_attribute_case_is_an_attack(fields, cells):
    candidates = (cells.adult_white, cells.adult_black, cells.adult_asian)
    case = SwappingUnknownAttributeCase(
        name="race",
        households=fields["households"],
        target_member=(0, 0),
        candidates=candidates,
        law=fields["law"],
        composition=fields["composition"],
        priors={"even": (1 / 3, 1 / 3, 1 / 3), "skewed": [0.8, 0.1, 0.1]},
        observed_release=(3, 2, 0),
    )
    assert isinstance(case, Attack) and case.target == "C" and case.true_latents == {"C": 1}
    setting = (fields["households"], (0, 0), candidates, fields["law"], fields["composition"])
    assert case.posterior("skewed") == pytest.approx(
        unknown_attribute.posterior((3, 2, 0), (0.8, 0.1, 0.1), *setting), rel=1e-14
    )
    measures = case.marginal_measures("even")
    assert measures.prior_of_truth == pytest.approx(1 / 3)
    assert measures.marginal_posterior == pytest.approx(
        unknown_attribute.marginal_measures((1 / 3,) * 3, *setting).marginal_posterior
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_member": (5, 0)}, r"^target_member must be \(household index, member index\)"),
        ({"target_cell": 60}, r"^target_cell must be a cell code from 0 to 55, got 60$"),
        ({"alternative_cell": 1.5}, r"^alternative_cell must be a cell code"),
        ({"priors": {"p": 1.2}}, r"^priors must "),
        ({"households": ((15,), (14, 56))}, r"^households\[1\] member must be a cell code"),
        ({"target_member": (1, 0)}, r"^households: the target's cell in the block \(14\)"),
        ({"composition": "county"}, r"^composition must be a Composition, got str$"),
        ({"law": 0.04}, r"^law must have swap_probabilities\(block\), got float$"),
    ],
)
def test_bad_fields_are_one_line_naming_them(fields, change, message):
    fields = fields | change
    if change.get("target_member") == (1, 0):
        fields["target_cell"] = 15
        fields["alternative_cell"] = 17
    with pytest.raises((ValueError, TypeError), match=message):
        SwappingBlockCase(**fields)


def test_the_shipped_case_under_run_and_risk(capsys):
    case = load_case("swapping_block")
    assert sum(map(len, case.households)) == 45 and case.truth == 1 and case.known_count == 0
    assert main(["run", "swapping_block", "--prior", "1/10", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["marginals"]["X1"]["1"] == pytest.approx(case.posterior("1/10"), rel=1e-9)
    assert main(["risk", "swapping_block", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    for row in rows:
        expected = case.marginal_measures(row["prior"])
        assert row["marginal_risk"] == pytest.approx(expected.marginal_risk, rel=1e-12)
    assert main(["choose-rho", "swapping_block", "--max-risk", "2"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_shipped_case_at_rate_zero_is_disclosure():
    case = load_case("swapping_block").replace(law=HouseholdSwapLaw(0.0))
    measures = case.marginal_measures("1/50")
    assert measures.marginal_posterior == 1.0 and measures.correct_decision_probability == 1.0
    assert np.isclose(measures.marginal_risk, 50.0)


def test_the_trs_case_swaps_a_unique_target_for_certain(capsys):
    """Under TRS a voting-age Black target is unique, so their household is risky and swapped
    with probability 1: the count of c tells almost nothing (marginal risk near 1)."""
    case = load_case("trs_block")
    block_c = case.households
    assert case.law.swap_probabilities(block_c)[0] == 1.0
    as_white = ((case.alternative_cell,), *block_c[1:])
    assert case.law.swap_probabilities(as_white)[0] == pytest.approx(0.05 + 0.95 * 0.25)
    measures = case.marginal_measures("1/10")
    assert measures.marginal_risk == pytest.approx(1.0, abs=0.01)
    assert main(["run", "trs_block", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["marginals"]["X1"]["1"] == pytest.approx(case.posterior("1/2"), rel=1e-9)
