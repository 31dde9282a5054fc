"""``adversary choose-rho``: the answer, the JSON keys, model files and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from adversary.analyses.choose_rho import choose_rho
from adversary.cli import SUBCOMMAND_MODULES, main
from adversary.model_files import load_case

MODELS = Path(__file__).resolve().parents[2] / "models"


def run(argv, capsys):
    status = main(["choose-rho", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_is_a_registered_subcommand():
    assert "choose_rho" in SUBCOMMAND_MODULES


def test_json_is_the_api_result(capsys):
    # a sparser scan than the default (same lattice answer; its options reach the search)
    argv = ["dare_county", "--max-risk", "1.5", "--prior", "1/864", "--prior", "1/50"]
    status, out, err = run([*argv, "--points-per-decade", "10", "--refine", "4", "--json"], capsys)
    assert status == 0 and err == ""
    result = json.loads(out)
    assert (result["points_per_decade"], result["refine"]) == (10, 4)
    scan = {"points_per_decade": 10, "refine": 4}
    expected = choose_rho(load_case("dare_county"), 1.5, priors=["1/864", "1/50"], **scan)
    assert result["rho"] == expected.rho and result["rho_above"] == expected.rho_above
    assert result["model"] == "Dare County ED 28-21 (1940)"
    assert (result["field"], result["measure"], result["threshold"]) == (
        "rho",
        "marginal_risk",
        1.5,
    )
    assert result["priors"] == ["1/864", "1/50"] and result["binding_prior"] == "1/864"
    assert result["measure_at_rho"]["1/864"] <= 1.5 < result["measure_above"]["1/864"]
    assert round(result["rho"], 4) == 0.2033
    assert result["epsilon"] == pytest.approx(expected.epsilon)
    assert (result["delta"], result["conversion"]) == (1e-10, "cks")
    assert set(result) == {
        "model",
        "field",
        "measure",
        "threshold",
        "priors",
        "rho",
        "rho_above",
        "binding_prior",
        "measure_at_rho",
        "bound_at_rho",
        "measure_above",
        "bound_above",
        "prior_of_truth",
        "epsilon",
        "delta",
        "conversion",
        "tolerance",
        "rho_min",
        "rho_max",
        "points_per_decade",
        "refine",
        "refine_decades",
        "limited_by_rho_max",
        "evaluations",
        "mechanism",
        "pure_epsilon",
    }
    assert result["mechanism"] is None and result["pure_epsilon"] is None


def test_text_names_the_answer_and_the_binding_prior(capsys):
    status, out, _ = run(
        ["dare_county", "--max-correct-decision", "0.2", "--prior", "1/10", "--delta", "1e-6"],
        capsys,
    )
    assert status == 0
    assert "largest rho keeping the correct-decision probability <= 0.2" in out
    assert "rho = 0.732136" in out and "under prior 1/10" in out
    assert "at delta = 1e-06" in out
    assert "1/10" in out.splitlines()[-3]


def test_model_file_path_and_a_field_of_a_tuple(capsys, tmp_path):
    path = tmp_path / "two_levels.py"
    path.write_text(
        "from adversary.scenarios.multi_level import MultiLevelCase\n"
        "CASE = MultiLevelCase(name='two', rhos=(0.1, 0.25), priors={'1/2': 0.5})\n"
    )
    status, out, _ = run(
        [
            str(path),
            "--max-risk",
            "1.2",
            "--field",
            "rhos[0]",
            "--rho-min",
            "1e-3",
            "--rho-max",
            "10",
            "--tolerance",
            "1e-2",
            "--points-per-decade",
            "5",
            "--refine",
            "2",
            "--json",
        ],
        capsys,
    )
    assert status == 0
    result = json.loads(out)
    assert result["field"] == "rhos[0]" and result["tolerance"] == 1e-2
    assert result["measure_at_rho"]["1/2"] <= 1.2 < result["measure_above"]["1/2"]


def test_unknown_ethnicity_model_file(capsys):
    status, out, _ = run(
        [str(MODELS / "unknown_ethnicity.py"), "--max-risk", "1.5", "--prior", "1/864", "--json"],
        capsys,
    )
    assert status == 0
    assert round(json.loads(out)["rho"], 4) == 0.1017


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dare_county", "--max-risk", "0.9"], "threshold"),
        (["dare_county", "--max-correct-decision", "1.5"], "threshold"),
        (["dare_county", "--max-risk", "1.5", "--field", "rho2"], "field"),
        (["dare_county", "--max-risk", "1.5", "--prior", "1/3"], "priors"),
        (["dare_county", "--max-risk", "1.001", "--rho-min", "0.5"], "no rho in"),
        (["no_such_case", "--max-risk", "1.5"], "model"),
    ],
)
def test_bad_input_is_one_line_on_stderr(argv, message, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("adversary choose-rho: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_a_model_without_a_case_is_refused(capsys, tmp_path):
    path = tmp_path / "bare.py"
    path.write_text("import pymc as pm\n\ndef model():\n    return pm.Model()\n")
    status, _, err = run([str(path), "--max-risk", "1.5"], capsys)
    assert status == 2 and "model's model has no free (latent) variables" in err


def test_exactly_one_threshold_is_required():
    for argv in (
        ["dare_county"],
        ["dare_county", "--max-risk", "2", "--max-correct-decision", "0.5"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(["choose-rho", *argv])
        assert exit_info.value.code == 2


def test_help_runs_as_a_program():
    result = subprocess.run(
        [sys.executable, "-m", "adversary", "choose-rho", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0
    assert "usage: adversary choose-rho" in result.stdout
    assert "--max-risk R" in result.stdout and "--max-correct-decision Q" in result.stdout
