"""One attack, every route, one number: P[correct] (3.6) and the marginal risk (3.4).

The unknown-attribute attack with three categories under a uniform prior at the
2020 block ρ ties the Bayes decision on 17% of the release mass, so the routes
agree only if they decide ties by the same rule. Each route is computed as a
user reaches it: the case's closed form, the scenario function, the exact sum
over the release grid of the case's PyMC model, the same attack written as a
PyMC model factory (``adversary.attack``), a sweep, the command line on a model
file, and Monte Carlo (within its standard errors).
"""

import json
import textwrap

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

import adversary
from adversary.cli import main
from adversary.distributions import DiscreteGaussian, FinitePmf
from adversary.measures.decision import TIE_RULES
from adversary.scenarios import unknown_attribute as ua
from adversary.scenarios.unknown_attribute import UnknownAttributeCase

RHO = 2.56 * 165 / 4099 * 3945 / 4097  # the 2020 block-level detailed query
UNIFORM = (1 / 3, 1 / 3, 1 / 3)
CASE = UnknownAttributeCase(
    name="three categories, uniform prior",
    categories=("a", "b", "c"),
    known_counts=(0, 0, 0),
    priors={"uniform": UNIFORM},
    true_category="a",
    rho=RHO,
    observed_releases=(1, 0, 0),
)


def three_cells(prior=UNIFORM, rho=RHO, releases=(1, 0, 0)):
    """The same attack as a user writes it: the category C, its cell counts, three releases."""
    with pm.Model() as model:
        category = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.cast(pt.eq(pt.arange(3), category), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, observed=list(releases))
    return model


FACTORY_FILE = f"""
import pymc as pm
import pytensor.tensor as pt

from adversary.distributions import DiscreteGaussian, FinitePmf

PRIORS = {{"uniform": (1 / 3, 1 / 3, 1 / 3)}}
TRUTH = {{"C": 0}}


def model(prior=(1 / 3, 1 / 3, 1 / 3), rho={RHO!r}, releases=(1, 0, 0)):
    with pm.Model() as attack:
        category = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.cast(pt.eq(pt.arange(3), category), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, observed=list(releases))
    return attack
"""


@pytest.fixture(scope="module")
def routes():
    """P[correct] and the marginal risk by every exact route, for every tie rule."""
    out = {}
    for rule in TIE_RULES:
        case = CASE.replace(tie_rule=rule)
        closed = case.marginal_measures("uniform")
        function = ua.marginals(UNIFORM, RHO, 0, tie_rule=rule)
        grid = adversary.exact_measures(case.model("uniform"), case.true_latents, tie_rule=rule)
        factory = adversary.attack(
            three_cells, priors={"uniform": UNIFORM}, truth={"C": 0}, tie_rule=rule
        ).marginal_measures("uniform")
        swept = adversary.sweep(case, progress=False).sel(prior="uniform")
        out[rule] = {
            "closed form": (closed.correct_decision_probability, closed.marginal_risk),
            "scenario function": (
                function.correct_decision_probability,
                function.marginal_risk,
            ),
            "release grid": (grid.correct_decision_probability, grid.marginal_risk),
            "model factory": (factory.correct_decision_probability, factory.marginal_risk),
            "sweep": (
                float(swept["correct_decision_probability"]),
                float(swept["marginal_risk"]),
            ),
            "bound": closed.error_bound + grid.error_bound + factory.error_bound,
        }
    return out


@pytest.mark.parametrize("rule", TIE_RULES)
def test_every_exact_route_gives_one_number(routes, rule):
    values = routes[rule]
    bound = values.pop("bound") + 1e-13
    reference = values["closed form"]
    for route, (correct, risk) in values.items():
        assert correct == pytest.approx(reference[0], abs=bound), route
        assert risk == pytest.approx(reference[1], abs=3 * bound), route


def test_the_tie_rules_differ_by_the_tied_mass(routes):
    correct = {rule: routes[rule]["closed form"][0] for rule in TIE_RULES}
    # Ties here are between the truth and one or two others: split lies strictly between.
    assert correct["smallest"] > correct["split"] > correct["largest"]
    assert correct["smallest"] - correct["largest"] > 0.1


def test_monte_carlo_agrees_within_its_standard_errors(routes):
    simulated = adversary.monte_carlo_measures(
        CASE.model("uniform"), CASE.true_latents, releases=20_000, random_seed=7
    )
    errors = simulated.details["standard_errors"]
    correct, risk = routes["split"]["closed form"]
    assert abs(simulated.correct_decision_probability - correct) <= (
        4 * errors["correct_decision_probability"]
    )
    assert abs(simulated.marginal_risk - risk) <= 4 * errors["marginal_risk"]


@pytest.mark.parametrize("rule", TIE_RULES)
def test_the_command_line_gives_the_same_number(routes, rule, tmp_path, capsys):
    path = tmp_path / "three_cells.py"
    path.write_text(textwrap.dedent(FACTORY_FILE))
    for model in (str(path), "unknown_ethnicity"):
        assert main(["risk", model, "--tie-rule", rule, "--json", "--out", str(tmp_path)]) == 0
        rows = json.loads(capsys.readouterr().out)["rows"]
        if model == "unknown_ethnicity":  # two categories: the shipped case, its own numbers
            case = adversary.load_case("unknown_ethnicity").replace(tie_rule=rule)
            expected = [
                case.marginal_measures(r["prior"]).correct_decision_probability for r in rows
            ]
        else:
            expected = [routes[rule]["closed form"][0]]
        np.testing.assert_allclose(
            [r["correct_decision_probability"] for r in rows], expected, rtol=0, atol=1e-12
        )
