"""adversary.reports.conventions: the paper's headline risks under both noise conventions.

Every DAS value is the scenario function called with ``convention="das"``,
and also the paper-convention function at ρ/2 (``σ² = 1/ρ = 1/(2 · ρ/2)``);
every paper value is the function with ``convention="paper"``. A coarse grid
(1e-3) keeps the S1.3, S5 and unknown-attribute sums quick; their error
bounds are then below 1e-7.
"""

import numpy as np
import pandas as pd
import pytest

from adversary.analyses import sequential
from adversary.budget import get_preset
from adversary.reports.conventions import SCENARIOS, convention_table, headline_cases
from adversary.scenarios import multi_level as ml
from adversary.scenarios import post_processing as pp
from adversary.scenarios import single_block as sb
from adversary.scenarios import unknown_attribute as ua
from adversary.scenarios.block_group.prior import bounded_uniform, improper_uniform
from adversary.scenarios.block_group.releases import decision_map

GRID = 1e-3
PRIORS = {"1/2": 1 / 2, "1/5": 1 / 5, "1/10": 1 / 10, "1/50": 1 / 50, "1/864": 1 / 864}
BUDGET = get_preset("pl94-2020-persons")
BLOCK = BUDGET.rho("block", "detailed")
GROUP = BUDGET.rho("block_group", "detailed")


@pytest.fixture(scope="module")
def table():
    return convention_table(grid_width=GRID)


def _rows(table, scenario, quantity):
    rows = table[(table["scenario"] == scenario) & (table["quantity"] == quantity)]
    return rows.set_index("prior")


def test_layout(table):
    assert list(table.columns) == [
        "scenario",
        "location",
        "quantity",
        "prior",
        "paper_convention",
        "das_convention",
        "ratio",
    ]
    assert list(dict.fromkeys(table["scenario"])) == list(SCENARIOS)
    counts = table.groupby("scenario", sort=False).size().to_dict()
    assert counts == {
        "single_block": 15,
        "block_group": 2,
        "multi_level": 5,
        "post_processing": 5,
        "sequential": 5,
        "unknown_attribute": 10,
    }
    assert not table.duplicated(["scenario", "quantity", "prior"]).any()
    assert np.all(np.isfinite(table[["paper_convention", "das_convention", "ratio"]]))


def test_ratio_is_das_over_paper(table):
    np.testing.assert_allclose(
        table["ratio"], table["das_convention"] / table["paper_convention"], rtol=1e-15
    )


def test_paper_column_is_table_5(table):
    # Kazan & Reiter Table 5, as printed (the paper's convention).
    risk = _rows(table, "single_block", "marginal_risk")["paper_convention"]
    assert risk.round(2).tolist() == [1.05, 1.13, 1.17, 1.21, 1.22]
    posterior = _rows(table, "single_block", "marginal_posterior")["paper_convention"]
    assert posterior.round(3).tolist()[:4] == [0.524, 0.225, 0.117, 0.024]


@pytest.mark.parametrize(
    ("quantity", "function"),
    [
        ("marginal_posterior", sb.marginal_posterior),
        ("marginal_risk", sb.marginal_risk),
        ("correct_decision_probability", sb.correct_decision_probability),
    ],
)
def test_single_block(table, quantity, function):
    rows = _rows(table, "single_block", quantity)
    p = np.array(list(PRIORS.values()))
    assert list(rows.index) == list(PRIORS)
    das = function(p, BLOCK, 0, 1, "das")
    np.testing.assert_allclose(rows["das_convention"], das, rtol=1e-13)
    np.testing.assert_allclose(rows["paper_convention"], function(p, BLOCK, 0, 1), rtol=1e-13)
    # σ² = 1/ρ is the paper's noise for ρ/2.
    np.testing.assert_allclose(rows["das_convention"], function(p, BLOCK / 2, 0, 1), rtol=1e-13)


def test_block_group(table):
    rows = _rows(table, "block_group", "correct_decision_probability")
    for x2_prior, label in (
        (improper_uniform(), "1/2, X2 | X1 ~ Uniform{k1, k1+1, …}"),
        (bounded_uniform(10), "1/2, X2 | X1 ~ Uniform{k1, …, 10}"),
    ):
        common = {"prior": 0.5, "d": 27, "x2_prior": x2_prior}
        for convention, column in (("paper", "paper_convention"), ("das", "das_convention")):
            expected = decision_map(
                (1, 1, 0), rho1=BLOCK, rho2=GROUP, convention=convention, **common
            ).attrs["correct_decision_probability"]
            assert rows.loc[label, column] == pytest.approx(expected, rel=1e-12)
        halved = decision_map((1, 1, 0), rho1=BLOCK / 2, rho2=GROUP / 2, **common)
        assert rows.loc[label, "das_convention"] == pytest.approx(
            halved.attrs["correct_decision_probability"], rel=1e-9
        )


def test_multi_level(table):
    rows = _rows(table, "multi_level", "marginal_risk")
    p = np.array(list(PRIORS.values()))
    rhos = ml.rhos_2020(6)
    for convention, column in (("paper", "paper_convention"), ("das", "das_convention")):
        expected = ml.marginal_risk(p, rhos, 0, None, convention, grid_width=GRID)
        np.testing.assert_allclose(rows[column], expected, rtol=1e-12)
    halved = ml.marginal_risk(p, rhos / 2, grid_width=GRID)
    np.testing.assert_allclose(rows["das_convention"], halved, rtol=1e-6)
    # At every level the DAS noise makes the risk smaller.
    assert np.all(rows["ratio"] < 1)


def test_post_processing(table):
    rows = _rows(table, "post_processing", "marginal_risk")
    p = np.array(list(PRIORS.values()))
    scenario = {"d": 27, "x2": 1, "x2_tilde": 10}
    for convention, column in (("paper", "paper_convention"), ("das", "das_convention")):
        expected = pp.marginal_risk(p, BLOCK, convention=convention, **scenario)
        np.testing.assert_allclose(rows[column], expected, rtol=1e-13)
    np.testing.assert_allclose(
        rows["das_convention"], pp.marginal_risk(p, BLOCK / 2, **scenario), rtol=1e-12
    )


def test_two_releases(table):
    rows = _rows(table, "sequential", "marginal_risk")
    p = np.array(list(PRIORS.values()))
    for convention, column in (("paper", "paper_convention"), ("das", "das_convention")):
        result = sequential.marginals(p, [BLOCK, BLOCK], convention=convention, grid_width=GRID)
        np.testing.assert_allclose(rows[column], result.marginal_risk, rtol=1e-12)
    per_release = sequential.marginals(
        p, [BLOCK, BLOCK], convention=("das", "das"), grid_width=GRID
    )
    np.testing.assert_allclose(rows["das_convention"], per_release.marginal_risk, rtol=1e-12)
    # Two DAS releases at ρ carry the paper's single release at ρ (two at ρ/2 each):
    # equal to within the grid's error bound.
    np.testing.assert_allclose(rows["das_convention"], sb.marginal_risk(p, BLOCK, 0, 1), rtol=1e-6)


@pytest.mark.parametrize(
    ("quantity", "function", "options"),
    [
        ("marginal_risk", ua.marginal_risk, {"grid_width": GRID}),
        ("correct_decision_probability", ua.correct_decision_probability, {}),
    ],
)
def test_unknown_attribute(table, quantity, function, options):
    rows = _rows(table, "unknown_attribute", quantity)
    for label, p in PRIORS.items():
        prior = np.array([p, 1 - p])
        for convention, column in (("paper", "paper_convention"), ("das", "das_convention")):
            expected = function(prior, BLOCK, 0, convention=convention, **options)
            assert rows.loc[label, column] == pytest.approx(float(expected), rel=1e-12)
        halved = function(prior, BLOCK / 2, 0, **options)
        assert rows.loc[label, "das_convention"] == pytest.approx(float(halved), rel=1e-9)


def test_preset_sets_every_rho():
    production = get_preset("pl94-2020-persons-production")
    block = production.rho("block", "detailed")
    cases = headline_cases("pl94-2020-persons-production")
    assert cases["single_block"].rho == block
    assert cases["post_processing"].rho == block
    assert cases["unknown_attribute"].rho == block
    assert (cases["block_group"].rho1, cases["block_group"].rho2) == (
        block,
        production.rho("block_group", "detailed"),
    )
    np.testing.assert_array_equal(
        cases["multi_level"].rhos, ml.rhos_2020(6, preset="pl94-2020-persons-production")
    )
    table = convention_table("pl94-2020-persons-production", scenarios=["single_block"])
    rows = _rows(table, "single_block", "marginal_risk")
    p = np.array(list(PRIORS.values()))
    np.testing.assert_allclose(
        rows["das_convention"], sb.marginal_risk(p, block, 0, 1, "das"), rtol=1e-13
    )


def test_default_preset_is_the_shipped_cases():
    from adversary.model_files import load_case

    cases = headline_cases()
    assert cases["single_block"] == load_case("dare_county")
    assert cases["multi_level"] == load_case("unique_many_levels")
    assert cases["block_group"] == load_case("granville_county")


def test_scenarios_selects_rows():
    table = convention_table(scenarios="post_processing")
    assert set(table["scenario"]) == {"post_processing"}
    assert isinstance(table, pd.DataFrame) and len(table) == 5


@pytest.mark.parametrize("scenarios", [["single_block", "tract"], [], "Table 5"])
def test_unknown_scenario_is_refused(scenarios):
    with pytest.raises(ValueError, match="scenarios"):
        convention_table(scenarios=scenarios)


def test_unknown_preset_is_refused():
    with pytest.raises(ValueError, match="preset"):
        convention_table("pl94-2010")
