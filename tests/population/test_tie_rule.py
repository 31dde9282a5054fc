"""The population model's tie rule reaches the single-block and block-group computations."""

from dataclasses import replace

import pytest

from adversary.population.measures import block_group_measures, single_block_measures
from adversary.scenarios.block_group.case import BlockGroupCase
from adversary.scenarios.block_group.prior import point_mass
from adversary.scenarios.single_block import SingleBlockCase

RULES = ("split", "largest", "smallest")


def test_the_tie_rule_is_checked_and_described(model):
    with pytest.raises(ValueError, match="tie_rule must be one of"):
        replace(model, tie_rule="first")
    assert model.tie_rule == "split"
    assert replace(model, tie_rule="largest").describe()["tie_rule"] == "largest"


@pytest.mark.parametrize("rule", RULES)
def test_block_group_ties_are_counted_by_the_model_rule(model, rule):
    """p = 1/2, d = 3 and a point mass on X2: the log odds are 0 on whole lines of releases."""
    model = replace(model, x2_prior=point_mass(2), tie_rule=rule)
    rhos = model.rhos("x4")
    rows = block_group_measures(model, "x4", 2, 0, 3).set_index("prior")
    case = BlockGroupCase(
        "g",
        releases=(1, 2, 1),
        truth=(1, 2, 1),
        priors={"1/2": 0.5},
        rho1=rhos["block"],
        rho2=rhos["block_group"],
        d=3,
        x2_prior=point_mass(2),
        tie_rule=rule,
    )
    expected = case.marginal_measures()
    assert rows.loc["1/2", "correct_decision_probability"] == (
        expected.correct_decision_probability
    )
    assert rows.loc["1/2", "marginal_risk"] == expected.marginal_risk
    tied = case.decision_map()
    tied_mass = float(tied["release_probability"].where(tied["tied"], 0).sum())
    assert tied_mass > 1e-3  # so the rules differ: the tie decides X1 = 1 under "largest"
    split = replace(case, tie_rule="split").marginal_measures()
    shift = {"split": 0.0, "largest": 0.5, "smallest": -0.5}[rule] * tied_mass
    assert expected.correct_decision_probability == pytest.approx(
        split.correct_decision_probability + shift, abs=1e-12
    )


@pytest.mark.parametrize("rule", RULES)
def test_single_block_gets_the_model_rule(model, rule):
    model = replace(model, tie_rule=rule)
    rows = single_block_measures(model, "x4").set_index("prior")
    for label, p in model.priors.items():
        case = SingleBlockCase("s", rho=model.rhos("x4")["block"], priors={label: p}, tie_rule=rule)
        measures = case.marginal_measures()
        assert rows.loc[label, "correct_decision_probability"] == (
            measures.correct_decision_probability
        )
        assert rows.loc[label, "marginal_risk"] == measures.marginal_risk
