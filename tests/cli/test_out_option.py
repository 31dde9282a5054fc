"""``--out`` of every command that writes: checked before any work, one line when unusable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adversary._output import locked
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


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_that_cannot_be_created_is_one_line_naming_the_option(command, capsys):
    """``--out /proc/x``: was "cannot write into /proc" (or "out: …" from the engine)."""
    line = one_line_error([*COMMANDS[command], "--out", "/proc/x"], capsys)
    assert line.startswith(
        f"adversary {command}: error: --out: cannot create output folder /proc/x: "
    )


@pytest.mark.parametrize("command", ["risk", "demo"])
def test_a_second_run_into_the_same_out_is_refused_while_the_first_runs(command, tmp_path, capsys):
    out = tmp_path / "out"
    with locked(out, "--out"):  # the first run, still writing
        line = one_line_error([*COMMANDS[command], "--out", str(out)], capsys)
    assert line == (
        f"adversary {command}: error: --out: {out} is being written by another run "
        f"(process {os.getpid()}); wait for it to finish or choose another folder"
    )
    assert not out.exists()
    assert main([*COMMANDS[command], "--out", str(out)]) == 0  # the first run has ended
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # its lock is gone


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path, capsys):
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    out = tmp_path / "out"
    (tmp_path / ".out.lock").write_text(gone.stdout.strip())
    assert main([*COMMANDS["demo"], "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "figure1_posterior_and_risk.png").is_file()


@pytest.mark.parametrize("command", ["risk", "demo"])
def test_without_out_nothing_is_written(command, tmp_path, monkeypatch, capsys):
    """``adversary demo`` wrote ``./build/demo`` into whatever folder it ran in."""
    monkeypatch.chdir(tmp_path)
    assert main(COMMANDS[command]) == 0
    assert "give --out FOLDER" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_a_second_population_run_into_the_same_out_is_refused_before_it_computes(tmp_path, capsys):
    """``adversary population`` held no lock: two runs into one folder both reported success."""
    out = tmp_path / "out"
    with locked(out, "--out"):  # the first run, still writing
        line = one_line_error([*COMMANDS["population"], "--out", str(out)], capsys)
    assert line == (
        f"adversary population: error: --out: {out} is being written by another run "
        f"(process {os.getpid()}); wait for it to finish or choose another folder"
    )
    assert not out.exists()


def test_population_without_out_is_refused_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """``adversary population`` wrote ``./build/population`` into whatever folder it ran in."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(COMMANDS["population"])
    assert exit_.value.code == 2
    assert "the following arguments are required: --out" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
