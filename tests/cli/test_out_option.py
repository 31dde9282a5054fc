"""``--out`` of every command that writes: checked before any work, one line when unusable."""

import pytest

from adversary.cli import main

COMMANDS = {
    "risk": ["risk", "dare_county", "--sweep", "rho=0.1,0.2"],
    "demo": ["demo"],
    "population": ["population", "--synthetic", "200", "--model", "population_gvhr"],
}


def one_line_error(argv, capsys) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_as_out_is_refused_in_one_line(command, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("kept")
    line = one_line_error([*COMMANDS[command], "--out", str(afile)], capsys)
    assert line == f"adversary {command}: error: --out: {afile} exists and is not a folder"
    assert afile.read_text() == "kept"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_below_a_file_is_refused_in_one_line(command, tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    line = one_line_error([*COMMANDS[command], "--out", str(tmp_path / "afile" / "x")], capsys)
    assert line.startswith(f"adversary {command}: error: --out: ")
    assert "which is not a folder" in line


def test_a_failing_sweep_leaves_the_out_folder_as_it_was(tmp_path, capsys):
    """A swept value the case rejects: nothing is written, an earlier table stays."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep_rho.csv").write_text("earlier")
    line = one_line_error(
        ["risk", "dare_county", "--sweep", "rho=0.1,-1", "--out", str(out), "--json"], capsys
    )
    assert line.startswith("adversary risk: error: --sweep rho")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p.name for p in out.iterdir()] == ["sweep_rho.csv"]
    assert (out / "sweep_rho.csv").read_text() == "earlier"
