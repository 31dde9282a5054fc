"""``adversary risk`` on the shipped published_tables and differencing cases: odd options.

Issue 23 review: ``--seed -1`` and ``--replications 0`` were silently ignored for these
attacks (they apply to reconstruction cases only), and an error of the case itself without
any ``--sweep`` was shown as ``--sweep : …``."""

import pytest

from adversary.cli import main


def _one_line_error(argv, capsys) -> str:
    assert main(["risk", *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1
    return lines[0].removeprefix("adversary risk: error: ")


@pytest.mark.parametrize("case", ["published_tables", "differencing"])
@pytest.mark.parametrize("option", [["--seed", "-1"], ["--replications", "0"], ["--seed", "7"]])
def test_reconstruction_options_refused_for_an_attack(case, option, capsys):
    error = _one_line_error([case, *option], capsys)
    assert error.startswith(f"--replications and --seed apply to reconstruction cases; {case!r}")


def test_case_error_without_sweep_not_blamed_on_sweep(capsys):
    # DG(0, σ² = 1/(2 · 0.0992…)) on [-14, 14]: 29 values, more than 1,000 bytes of tables
    error = _one_line_error(["published_tables", "--memory-budget", "1KB"], capsys)
    assert error.startswith("the table of the discrete Gaussian noise")
    assert "--sweep" not in error
