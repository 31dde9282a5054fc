"""Smoke test of benchmarks/startup.py: one process of a command, its imports read (no timing)."""

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("startup")


def test_help_is_timed_and_its_imports_are_counted(bench):
    result = bench.run(1, ("help",))
    [row] = result["results"]
    assert row["command"] == "help"
    # the imports are read from -X importtime (the package itself at least), within the run
    assert 0 < row["imports_s"] < row["wall_s"]
    assert row["start_s"] == pytest.approx(result["bare_s"] + row["imports_s"])
    assert "help" in bench.table(result)


def test_the_measured_processes_import_cached_bytecode(bench, monkeypatch, tmp_path):
    # even where the environment forbids writing it, as make's environment allows it
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    result = bench.run(1, ("help",), pycache=tmp_path / "pycache")
    cached = list(Path(result["pycache"]).rglob("adversary/cli/__init__*.pyc"))
    assert cached, f"no bytecode of adversary.cli under {result['pycache']}"


def test_a_failing_command_says_which(bench, monkeypatch):
    monkeypatch.setitem(bench.COMMANDS, "help", ["no-such-command"])
    with pytest.raises(RuntimeError, match="no-such-command failed"):
        bench.run(1, ("help",))
