"""``adversary budget``: the printed table, the JSON keys and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from adversary.cli import main


def run(argv, capsys):
    status = main(["budget", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_numbers(capsys):
    status, out, _ = run(["--json"], capsys)
    assert status == 0
    result = json.loads(out)
    assert result["preset"] == "pl94-2020-persons"
    assert (result["rho_total"], result["rho_total_exact"]) == (2.56, "64/25")
    assert (result["convention"], result["delta"]) == ("paper", 1e-10)
    assert set(result["conversions"]) == {"epsilon_cks", "epsilon_bun_steinke"}
    rows = {(r["level"], r["query"]): r for r in result["rows"]}
    assert len(result["rows"]) == 66 + 6 + 1
    block = rows["block", "detailed"]
    assert block["share_exact"] == str(165 * 3945) + "/" + str(4099 * 4097)
    assert round(block["rho"], 4) == 0.0992  # Kazan & Reiter Table 2
    assert block["sigma2"] == pytest.approx(1 / (2 * block["rho"]), rel=1e-15)
    assert block["epsilon_cks"] < block["epsilon_bun_steinke"]
    assert round(rows["block_group", "detailed"]["rho"], 4) == 0.2465
    assert rows["us", "total"]["sigma2"] is None and rows["us", "total"]["rho"] == 0.0
    assert rows["block", "all"]["sigma2"] is None
    grand = result["rows"][-1]
    assert (grand["level"], grand["query"], grand["share_exact"]) == ("all", "all", "1")
    assert round(grand["epsilon_cks"], 2) == 17.16
    assert round(grand["epsilon_bun_steinke"], 2) == 17.92
    expected_keys = {
        "level",
        "level_label",
        "query",
        "query_label",
        "share",
        "share_exact",
        "rho",
        "sigma2",
        "epsilon_cks",
        "epsilon_bun_steinke",
    }
    assert all(set(r) == expected_keys for r in result["rows"])


def test_production_preset_reports_17_14(capsys):
    status, out, _ = run(["--preset", "pl94-2020-persons-production", "--json"], capsys)
    assert status == 0
    grand = json.loads(out)["rows"][-1]
    assert round(grand["epsilon_cks"], 2) == 17.14


def test_das_convention_and_delta(capsys):
    status, out, _ = run(["--json", "--convention", "das", "--delta", "1e-6"], capsys)
    assert status == 0
    result = json.loads(out)
    assert (result["convention"], result["delta"]) == ("das", 1e-6)
    block = next(r for r in result["rows"] if (r["level"], r["query"]) == ("block", "detailed"))
    assert block["sigma2"] == pytest.approx(1 / block["rho"], rel=1e-15)


def test_text_table(capsys):
    status, out, _ = run([], capsys)
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("pl94-2020-persons:")
    assert "delta = 1e-10" in out and "Canonne, Kamath & Steinke" in out and "Bun & Steinke" in out
    row = next(line for line in lines if line.startswith("Block ") and "Detailed" in line)
    # share %, rho, sigma^2 = 1/(2 rho), eps CKS, eps BS
    assert row.split()[-5:] == ["3.876", "0.0992264", "5.03898", "2.8700", "3.1223"]
    grand = next(line for line in lines if line.startswith("All levels"))
    assert grand.split()[-5:] == ["100.000", "2.56", "-", "17.1583", "17.9153"]
    # Columns line up: every table row is as wide as the header.
    header = next(line for line in lines if line.startswith("level "))
    table = [line for line in lines if line.startswith(("United States", "Block ", "All levels"))]
    assert {len(line) for line in table} == {len(header)}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--preset", "pl94-2010"], "preset must be one of 'pl94-2020-persons'"),
        (["--convention", "laplace"], "convention must be one of 'paper', 'das'"),
        (["--delta", "0"], "delta must lie strictly between 0 and 1"),
        (["--delta", "abc"], "delta must be a number, got 'abc'"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(argv, message, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("adversary budget: error: ")
    assert message in err


def test_entry_point_json():
    executable = Path(sys.executable).with_name("adversary")
    completed = subprocess.run(
        [str(executable), "budget", "--json"], capture_output=True, text=True, check=True
    )
    result = json.loads(completed.stdout)
    assert result["preset"] == "pl94-2020-persons"
    assert round(result["rows"][-1]["epsilon_cks"], 2) == 17.16


def test_help_documents_the_json_keys(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["budget", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for key in ("rho_total_exact", "share_exact", "epsilon_cks", "epsilon_bun_steinke"):
        assert key in text
