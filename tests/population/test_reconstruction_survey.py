"""Reconstruction at population scale: the Dask survey equals the in-process study."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import (
    ReconstructionStudy,
    reconstruction_by_block_size,
)
from adversary.cli import main
from adversary.population.reconstruction import load_reconstruction_study, survey
from adversary.population.synthetic import synthetic_geography, synthetic_population

STUDY = ReconstructionStudy(
    per_bin=2, scales=(4.0, math.inf), conventions=("das",), draws=150, tune=30, seed=5
)
PERSONS = 6_000


@pytest.fixture(scope="module")
def in_process():
    return reconstruction_by_block_size(synthetic_population(PERSONS, seed=1), study=STUDY)


def test_synthetic_and_table_surveys_equal_the_in_process_study(
    in_process, client_one, client_two, tmp_path
):
    # On workers (the synthetic county generated there, or a table counted on the client),
    # with one worker or two, every row is the in-process study's, to the last digit.
    synthetic = survey(synthetic_geography(PERSONS, seed=1), STUDY, client=client_two)
    pd.testing.assert_frame_equal(synthetic.rows, in_process)
    table = tmp_path / "persons.parquet"
    synthetic_population(PERSONS, seed=1).to_parquet(table)
    out = tmp_path / "out"
    from_table = survey(table, STUDY, out, client=client_one)
    pd.testing.assert_frame_equal(from_table.rows, in_process)
    assert from_table.stats["blocks_sampled"] == len(in_process) // 2
    assert sorted(p.name for p in out.iterdir()) == [
        "blocks.csv",
        "plots",
        "summary.csv",
        "summary.json",
    ]
    written = json.loads((out / "summary.json").read_text())
    assert written["study"]["scales"] == [4.0, "inf"] and written["version"]
    overall = [r for r in written["summary"] if r["bin"] == "all" and r["scale"] == "inf"]
    assert overall[0]["overlap_share"] == 1.0
    low, high = overall[0]["baseline_overlap_share_low"], overall[0]["baseline_overlap_share_high"]
    assert low < overall[0]["baseline_overlap_share"] < high


def test_the_cli_runs_a_reconstruction_model(tmp_path, capsys):
    model = tmp_path / "study.py"
    model.write_text(
        "from adversary.analyses.reconstruction_study import ReconstructionStudy\n"
        "RECONSTRUCTION = ReconstructionStudy(per_bin=2, scales=(16.0,), conventions=('paper',),\n"
        "    draws=100, tune=20)\n"
    )
    argv = ["population", "--synthetic", "5000", "--model", str(model), "--workers", "1"]
    argv += ["--out", str(tmp_path / "out"), "--no-progress"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["data"] == {"synthetic": 5000, "states": 1, "seed": 0}
    assert {r["bin"] for r in result["summary"]} >= {"<10", "all"}
    assert main([*argv, "--partitions", "2"]) == 2
    assert "--partitions does not apply to a reconstruction model" in capsys.readouterr().err
    model.write_text("RECONSTRUCTION = 3\n")
    with pytest.raises(ValueError, match="RECONSTRUCTION must be a ReconstructionStudy"):
        load_reconstruction_study(model)


def test_a_census_survey_says_so_instead_of_nan(tmp_path, capsys):
    # Ten persons make one block: its bin is sampled whole, so there is no sampling error
    # to show — said in words on the terminal, 0 in the files, and no NaN anywhere.
    model = tmp_path / "study.py"
    model.write_text(
        "from adversary.analyses.reconstruction_study import ReconstructionStudy\n"
        "RECONSTRUCTION = ReconstructionStudy(scales=(16.0,), conventions=('paper',),\n"
        "    draws=50, tune=10)\n"
    )
    out = tmp_path / "out"
    argv = ["population", "--synthetic", "10", "--model", str(model), "--workers", "1"]
    assert main([*argv, "--out", str(out), "--no-progress", "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text and text.count("census of the bin: no sampling error") == 2
    summary = pd.read_csv(out / "summary.csv")
    assert summary["census"].all() and summary.notna().all().all()
    assert (summary["overlap_share_se"] == 0).all()
    assert (summary["overlap_share_low"] == summary["overlap_share"]).all()
    assert "NaN" not in (out / "summary.json").read_text()


def test_the_shipped_model_declares_the_study():
    study = load_reconstruction_study("population_reconstruction")
    assert (study.per_bin, study.classification, study.conventions) == (
        20,
        "reduced",
        ("paper", "das"),
    )
    assert study.scales == (1.0, 4.0, 16.0, math.inf)
    assert np.isclose(study.cells.n_cells, 56)
