"""``adversary demo``: the printed tables, the JSON keys and the figures."""

import json
import subprocess
import sys

import pytest

from adversary.cli import main


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    completed = subprocess.run(
        [sys.executable, "-m", "adversary", "demo", "--json", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout), out


def test_json_holds_table4_and_table5(demo_json):
    result, _ = demo_json
    assert result["rho"] == pytest.approx(0.0992, abs=5e-5)
    assert list(result["priors"]) == ["1/2", "1/5", "1/10", "1/50", "1/864"]
    assert [row["release"] for row in result["table4"]] == [1, 2, 3, 4, 5]
    row3 = result["table4"][2]
    assert round(row3["posterior"]["1/5"], 3) == 0.291
    assert round(row3["risk"]["1/864"], 2) == 1.64
    by_prior = {row["prior"]: row for row in result["table5"]}
    assert round(by_prior["1/10"]["marginal_posterior"], 3) == 0.117
    assert round(by_prior["1/864"]["marginal_risk"], 2) == 1.22
    assert 0 < by_prior["1/2"]["correct_decision_probability"] < 1


def test_figures_are_written_as_png(demo_json):
    result, out = demo_json
    assert len(result["figures"]) == 3
    for path in result["figures"]:
        with open(path, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
        assert str(out) in path


def test_text_output_prints_both_tables(capsys):
    # no --out: the figures are the JSON run's (test_figures_are_written_as_png), not drawn twice
    assert main(["demo"]) == 0
    text = capsys.readouterr().out
    assert "Table 4" in text and "Table 5" in text
    # The x1* = 5 row: posterior under p = 1/2 and risk under p = 1/864.
    row5 = next(line for line in text.splitlines() if line.strip().startswith("5 "))
    assert "0.710" in row5 and "2.44" in row5


def test_unknown_model_is_one_line_error_and_non_zero_exit(tmp_path, capsys):
    assert main(["demo", "--model", "atlantis", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "model must be a .py file or one of" in err
