"""--draws, --chains, --seed (whatever the method) and --budget out of range are refused in one
line naming the option: an exact reconstruction used to ignore the first three."""

import pytest

from adversary.cli import main

CASE = """
from adversary.scenarios.reconstruction import ReconstructionCase
CASE = ReconstructionCase(
    name="one person", n=1, cells=("a", "b"), prior=(0.5, 0.5), queries=[(0, 1)],
    rhos=0.5, releases=(1,), truth=(1, 0),
)
"""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--draws", "0"], "--draws must be >= 1, got 0"),
        (["--chains", "-1"], "--chains must be >= 1, got -1"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--seed", str(2**70)], f"--seed must be below 2^63, got {2**70}"),
    ],
)
@pytest.mark.parametrize("method", ["exact", "mcmc"])
def test_reconstruct_refuses_a_bad_sampling_option(tmp_path, capsys, options, message, method):
    model = tmp_path / "case.py"
    model.write_text(CASE)
    assert main(["reconstruct", str(model), "--method", method, *options]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"adversary reconstruct: error: {message}"


def test_a_good_exact_run_still_prints_one_person_among_two_cells(tmp_path, capsys):
    model = tmp_path / "case.py"
    model.write_text(CASE)
    assert main(["reconstruct", str(model), "--method", "exact", "--json"]) == 0
    assert '"map_exact": 0.5' in capsys.readouterr().out


def test_population_names_the_budget_option_for_an_unknown_preset(capsys, tmp_path):
    # was "error: preset must be one of ...", naming no option
    argv = ["population", "--synthetic", "100", "--model", "population_gvhr", "--budget", "x"]
    status = main([*argv, "--out", str(tmp_path / "out")])
    assert status == 2
    assert not (tmp_path / "out").exists()
    err = capsys.readouterr().err.strip()
    assert err.startswith("adversary population: error: --budget must be a preset (")
    assert err.endswith("got 'x'") and len(err.splitlines()) == 1
