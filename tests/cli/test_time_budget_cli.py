"""``--time-budget``: grids projected to take longer are refused in one line, before the bulk.

``adversary risk granville_county --sweep rho1=1e-6`` ran for more than five
minutes (killed, no output, no progress): its release grid has 11,543 x 23 x
59,969 releases (each cut-off grows as 1/√ρ, the grid as 1/ρ).
"""

from __future__ import annotations

import re
import time

import pytest

from adversary.cli import main
from adversary.time_budget import ENVIRONMENT_VARIABLE


def _error(argv, capsys) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    return captured.err


@pytest.fixture(scope="module")
def warmed():
    """The block-group case run once, so that timings count the refusal, not imports."""
    assert main(["risk", "granville_county", "--prior", "1/2"]) == 0


def test_a_lowered_budget_refuses_a_grid_in_one_line(warmed, capsys, tmp_path):
    argv = ["risk", "granville_county", "--sweep", "rho1=1e-3", "--time-budget", "0.05s"]
    err = _error([*argv, "--out", str(tmp_path)], capsys)
    found = re.match(
        r"adversary risk: error: --sweep rho1=0\.001: the block group's release grid of "
        r"([\d,]+) x 23 x ([\d,]+) releases \(([\d,]+) cells at [\d.e+]+ ns each, measured\) "
        r"would take about [\d.e+]+ (s|min),",
        err,
    )
    assert found, err
    n1, ny, cells = (int(found.group(i).replace(",", "")) for i in (1, 2, 3))
    assert cells == n1 * 23 * ny
    assert err.endswith(
        "more than the time budget of 0.05 s (raise it with --time-budget or "
        f"{ENVIRONMENT_VARIABLE})\n"
    )
    assert not list(tmp_path.iterdir())


def test_the_environment_sets_the_budget(warmed, capsys, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "0.05s")
    err = _error(["risk", "granville_county", "--sweep", "rho1=1e-3"], capsys)
    assert "more than the time budget of 0.05 s" in err
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1h")
    assert main(["risk", "granville_county", "--prior", "1/2", "--sweep", "rho1=0.05"]) == 0


def test_the_default_budget_refuses_the_issue_case_quickly(warmed, capsys, monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    started = time.perf_counter()
    err = _error(["risk", "granville_county", "--sweep", "rho1=1e-6"], capsys)
    elapsed = time.perf_counter() - started
    assert "release grid of 11,543 x 23 x 59,969 releases (15,921,109,841 cells at" in err
    assert "more than the time budget of 10 min" in err
    assert elapsed < 5  # about half a second alone; generous for a shared machine


@pytest.mark.parametrize("budget", ["0", "-1s", "soon", "nan"])
def test_a_bad_budget_is_one_line_naming_the_option(budget, capsys):
    err = _error(["risk", "dare_county", f"--time-budget={budget}"], capsys)
    assert err.startswith("adversary risk: error: --time-budget must be")
