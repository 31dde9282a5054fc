"""Swapping at population scale: each person's measures are the single-block attack's."""

import json

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.cli import main
from adversary.population.swapping import SwappingStudy, load_swapping_study
from adversary.population.swapping_survey import survey
from adversary.population.synthetic import synthetic_population
from adversary.scenarios.reconstruction import REDUCED
from adversary.scenarios.swapping.block import VOTING_AGE, Composition
from adversary.scenarios.swapping.laws import HouseholdSwapLaw
from adversary.scenarios.swapping.single_block import marginal_measures
from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw
from adversary.swapping import HouseholdSwapping, assign_households
from adversary.swapping.targeted import TargetedRecordSwapping

HOUSEHOLD = HouseholdSwapping(0.25, within="county")
TRS = TargetedRecordSwapping()
STUDY = SwappingStudy(
    mechanisms={"household": HOUSEHOLD, "trs": TRS},
    priors={"1/2": 0.5, "1/10": 0.1},
    per_bin=6,
    seed=4,
)


@pytest.fixture(scope="module")
def persons():
    """A tiny synthetic state of two states, its blocks of fewer than 60 persons kept (cheap)."""
    everyone = synthetic_population(4000, states=2, seed=2)
    sizes = everyone.groupby("block")["record_id"].transform("size")
    return everyone[sizes < 60].reset_index(drop=True)


@pytest.fixture(scope="module")
def result(persons, client_one):
    return survey(persons, STUDY, client=client_one)


def _block(people: pd.DataFrame, record_id: int):
    """The record's block as households of cells, its (household, member), its county's counts."""
    me = people.loc[people["record_id"] == record_id].iloc[0]
    mine = people[(people["block"] == me["block"]) & (people["hhgq"] == 0)]
    households = [g.sort_values("record_id") for _, g in mine.groupby("household", sort=True)]
    block = tuple(tuple(int(c) for c in g["cell"]) for g in households)
    [(h, m)] = [
        (h, list(g["record_id"]).index(record_id))
        for h, g in enumerate(households)
        if record_id in set(g["record_id"])
    ]
    return block, (h, m), int(me["cell"])


def _county_composition(people: pd.DataFrame, county: int, county_column) -> Composition:
    in_county = (county_column == county) & (people["hhgq"] == 0).to_numpy()
    return Composition.from_counts(np.bincount(people.loc[in_county, "cell"], minlength=56))


def test_each_person_s_measures_are_the_single_block_attack_s(persons, result):
    # Rebuilt here from the persons: the block's households, the target, the mechanism's
    # law and its county's published composition, then marginal_measures itself.
    people = assign_households(persons, seed=STUDY.seed)
    people["cell"] = block_cells(people, REDUCED)
    run = TRS.run(people, seed=STUDY.seed)
    trs_law = TargetedSwapLaw.from_mechanism(TRS, donor_rate=run.donor_rates())
    household_swapped = HOUSEHOLD.swap(people, seed=STUDY.seed)
    records = result.records
    assert len(records) >= 10 and set(records["block_size_bin"]) >= {"<10", "10-49"}
    for record in records.head(8).to_dict("records"):
        block, target, cell = _block(people, record["record_id"])
        assert cell == record["cell"]
        alternative = record["alternative_cell"]
        # the alternative: a household cell of the target's voting age, the block's commonest
        assert alternative != cell and VOTING_AGE[alternative] == VOTING_AGE[cell]
        others = [c for h in block for c in h]
        others.remove(cell)
        counts = np.bincount(others, minlength=56)
        same = [c for c in range(28) if VOTING_AGE[c] == VOTING_AGE[cell] and c != cell]
        if counts[same].max() > 0:
            assert counts[alternative] == counts[same].max()
        laws = {
            "household": (HouseholdSwapLaw(0.25), people["county"].to_numpy()),
            "trs": (trs_law, run.persons["county"].to_numpy()),
        }
        for mechanism, (law, county_column) in laws.items():
            composition = _county_composition(people, record["county"], county_column)
            for prior, p in STUDY.priors.items():
                expected = marginal_measures(
                    p, block, target, cell, alternative, law, composition, STUDY.tie_rule
                )
                got_risk = record[f"{mechanism}:{prior}:marginal_risk"]
                got_correct = record[f"{mechanism}:{prior}:p_correct"]
                assert abs(got_risk - expected.marginal_risk) <= 1e-12
                assert abs(got_correct - expected.correct_decision_probability) <= 1e-12
    # the realised protection: each record's household swapped or not, as the mechanisms did
    flags = pd.Series(household_swapped["swapped"].to_numpy(), index=people["record_id"])
    assert (records["household:swapped"] == flags.loc[records["record_id"]].to_numpy()).all()
    flags = pd.Series(run.persons["swapped"].to_numpy(), index=people["record_id"])
    assert (records["trs:swapped"] == flags.loc[records["record_id"]].to_numpy()).all()


def test_the_summary_is_the_stratified_sample_s(result):
    summary, records = result.summary, result.records
    for mechanism in STUDY.mechanisms:
        for prior in STUDY.priors:
            rows = summary[(summary["mechanism"] == mechanism) & (summary["prior"] == prior)]
            column = records[f"{mechanism}:{prior}:marginal_risk"]
            for row in rows[rows["block_size_bin"] != "all"].to_dict("records"):
                values = column[records["block_size_bin"] == row["block_size_bin"]].to_numpy()
                n, big_n = values.size, row["assessed"]
                assert n == row["sampled"] and n == min(big_n, STUDY.per_bin)
                assert row["mean_marginal_risk"] == pytest.approx(values.mean(), rel=1e-12)
                se = np.sqrt((1 - n / big_n) * values.var(ddof=1) / n) if n < big_n else 0.0
                assert row["mean_marginal_risk_se"] == pytest.approx(se, rel=1e-12, abs=1e-15)
                above = (values > 1.5).mean() * big_n
                assert row["risk_above_1.5"] == pytest.approx(above, rel=1e-12, abs=1e-12)
            bins = rows[rows["block_size_bin"] != "all"]
            overall = rows[rows["block_size_bin"] == "all"].iloc[0]
            assert overall["assessed"] == bins["assessed"].sum()
            weighted = (bins["assessed"] * bins["mean_marginal_risk"]).sum() / overall["assessed"]
            assert overall["mean_marginal_risk"] == pytest.approx(weighted, rel=1e-12)
    assert result.stats["persons_assessed"] == summary["assessed"].iloc[-1]


def test_the_same_bytes_on_one_and_two_workers(persons, client_one, client_two, tmp_path):
    study = SwappingStudy(mechanisms={"household": HOUSEHOLD}, priors={"1/2": 0.5}, per_bin=4)
    for name, client in (("one", client_one), ("two", client_two)):
        survey(persons, study, tmp_path / name, client=client, plots=False)
    for name in ("records.parquet", "summary.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_the_share_swapped_is_the_rate_within_binomial_error(persons, client_one):
    # Household swapping picks households regardless of their persons' cells: the share of
    # the assessed persons whose household moved is the rate, within binomial error.
    rate = 0.3
    study = SwappingStudy(mechanisms={"h": HouseholdSwapping(rate)}, priors={"1/2": 0.5})
    small = persons[persons.groupby("block")["record_id"].transform("size") < 20]
    found = survey(small, study, client=client_one)
    n = len(found.records)
    share = found.summary.iloc[-1]["swapped_share"]
    assert n > 100 and abs(share - rate) < 4 * np.sqrt(rate * (1 - rate) / n)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"mechanisms": {}}, "mechanisms must map at least one label"),
        ({"mechanisms": {"x": 3}}, r"mechanisms\['x'\] must be a HouseholdSwapping"),
        ({"mechanisms": {"a:b": HOUSEHOLD}}, "labels must be strings without ':'"),
        ({"priors": {"0": 0.0}}, "priors must lie strictly between 0 and 1"),
        ({"per_bin": 1}, "per_bin must be an integer >= 2"),
        ({"small_cell_max": 0}, "small_cell_max must be an integer >= 1"),
        ({"composition": "tract"}, "composition must be one of"),
        ({"risk_thresholds": ()}, "risk_thresholds must hold at least one"),
    ],
)
def test_a_bad_study_is_refused_in_one_line(changes, message):
    with pytest.raises((ValueError, TypeError), match=message):
        SwappingStudy(**changes)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "swapping.py"
    path.write_text(
        "from adversary.population.swapping import SwappingStudy\n"
        "from adversary.swapping import HouseholdSwapping\n"
        "SWAPPING = SwappingStudy(mechanisms={'h 10%': HouseholdSwapping(0.1)},\n"
        "    priors={'1/10': 0.1}, per_bin=2)\n"
    )
    return path


def test_the_cli_runs_a_swapping_model(model_file, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["population", "--synthetic", "300", "--model", str(model_file), "--workers", "1"]
    assert main([*argv, "--out", str(out), "--no-progress", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["data"] == {"synthetic": 300, "states": 1, "seed": 0}
    assert printed["study"]["mechanisms"] == {"h 10%": HouseholdSwapping(0.1).label}
    assert {k: v for k, v in printed.items() if k != "data"} == json.loads(
        (out / "summary.json").read_text()
    )
    records = pd.read_parquet(out / "records.parquet")
    assert len(records) == printed["stats"]["persons_sampled"] > 0
    assert {"h 10%:1/10:marginal_risk", "h 10%:1/10:p_correct", "h 10%:swapped"} <= set(records)
    assert sorted(p.name for p in out.iterdir()) == [
        "plots",
        "records.parquet",
        "summary.csv",
        "summary.json",
    ]
    assert [p.name for p in (out / "plots").iterdir()] == ["marginal_risk_by_block_size.png"]
    overall = [r for r in printed["summary"] if r["block_size_bin"] == "all"]
    assert overall[0]["assessed"] == printed["stats"]["persons_assessed"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--partitions", "2"], "--partitions does not apply to a swapping model (SWAPPING)"),
        (["--partition-by", "tract"], "--partition-by does not apply to a swapping model"),
        (["--budget", "pl94-2020-persons"], "--budget does not apply to a swapping model"),
    ],
)
def test_the_cli_refuses_what_does_not_apply(model_file, tmp_path, capsys, extra, message):
    argv = ["population", "--synthetic", "300", "--model", str(model_file)]
    assert main([*argv, "--out", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_table_and_a_wrong_declaration_are_refused(model_file, tmp_path, capsys):
    table = tmp_path / "persons.parquet"
    synthetic_population(100, seed=1).to_parquet(table)
    argv = ["population", str(table), "--model", str(model_file), "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "runs on --synthetic PERSONS only" in capsys.readouterr().err
    model_file.write_text("SWAPPING = 3\n")
    with pytest.raises(ValueError, match="SWAPPING must be a SwappingStudy"):
        load_swapping_study(model_file)


def test_the_shipped_model_declares_both_mechanisms():
    study = load_swapping_study("population_swapping")
    assert study.mechanisms == {
        "household 4%": HouseholdSwapping(0.04, within="county"),
        "trs 5%": TargetedRecordSwapping(),
    }
    assert study.priors == {"1/2": 0.5, "1/10": 0.1, "1/50": 0.02}


def test_a_state_with_nobody_to_assess_is_refused_before_any_cluster(persons):
    in_group_quarters = persons.assign(hhgq=1)
    with pytest.raises(ValueError, match=r"none of the [\d,]+ lives in a household .* nothing"):
        survey(in_group_quarters, STUDY)
