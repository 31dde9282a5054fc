"""Every attack command on every shipped case, with and without ``--json``.

An attack case answers every command (exit 0; ``--json`` prints one JSON
object); the population model refuses each in one line naming the command
that takes it, and the reconstruction case every one but ``risk``.
"""

from __future__ import annotations

import json

import pytest

from adversary.cli import main
from adversary.model_files import shipped_cases

ATTACKS = ["dare_county", "granville_county", "post_processed", "unique_many_levels"]
ATTACKS += ["unknown_ethnicity", "every_query", "published_tables", "differencing"]
FIELDS = {"granville_county": "rho1", "unique_many_levels": "rhos[0]"}
FIELDS |= {"every_query": "rho_total", "published_tables": "rho_block"}
MAX_RISK = {"published_tables": "2.5"}
# Six releases of one count: the slowest case; one prior.
PRIOR = {name: ["--prior", "1/2"] for name in ("unique_many_levels", "every_query", "differencing")}
QUICK_SEARCH = ["--rho-max", "10", "--points-per-decade", "2", "--refine", "2"]
QUICK_SEARCH += ["--tolerance", "0.05"]
# Its measures are Monte Carlo (20 000 exactly sampled release sets of nine looks per ρ) and its
# risk at the prior 1/2 stays below 1.5 up to ρ = 10: the search starts a decade below.
RHO_MIN = {"every_query": "1"}


def _argv(command: str, case: str, out) -> list[str]:
    if command == "demo":  # figures (a sweep over rho) with the text only: they are the same
        figures = [] if out is None else ["--out", str(out)]
        return ["demo", "--model", case, *figures]
    if command == "choose-rho":
        field = ["--field", FIELDS[case]] if case in FIELDS else []
        prior = PRIOR.get(case, [])
        most = MAX_RISK.get(case, "1.5")
        search = ["--rho-min", RHO_MIN.get(case, "0.01"), *QUICK_SEARCH]
        return ["choose-rho", case, "--max-risk", most, *field, *prior, *search]
    if command == "risk":
        return ["risk", case, "--out", str(out)]
    return [command, case]


def test_the_shipped_cases_are_these():
    reconstruction = ["reconstruction_block", "reconstruction_detailed"]
    population = ["population_gvhr", "population_reconstruction", "population_swapping"]
    swapping = ["swapping_block", "trs_block"]  # no rho: run and risk (tests/scenarios/swapping)
    assert sorted(shipped_cases()) == sorted([*ATTACKS, *population, *reconstruction, *swapping])


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("command", ["run", "risk", "choose-rho", "demo"])
@pytest.mark.parametrize("case", ATTACKS)
def test_every_command_answers_every_attack_case(
    case, command, as_json, tmp_path, capsys, monkeypatch
):
    # demo's curve over rho at 3 points instead of 9: the same sweep and figure, a third of
    # the work (every_query's points are Monte Carlo)
    monkeypatch.setattr("adversary.reports.attack.CURVE_POINTS", 3)
    folder = None if as_json and command == "demo" else tmp_path / "out"
    argv = _argv(command, case, folder) + (["--json"] if as_json else [])
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if as_json:
        assert isinstance(json.loads(out), dict)
    else:
        assert out.strip() and not out.lstrip().startswith("{")


@pytest.mark.parametrize(
    "model", ["population_gvhr", "population_reconstruction", "population_swapping"]
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("command", ["run", "risk", "choose-rho", "demo"])
def test_the_population_models_are_refused_by_the_attack_commands(
    model, command, as_json, tmp_path, capsys
):
    argv = _argv(command, model, tmp_path / "out")
    argv = [a for a in argv if a not in ("--field",)] + (["--json"] if as_json else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"adversary {command}: error: model '{model}' is a population model: "
        f"use `adversary population --model {model}`\n"
    )


@pytest.mark.parametrize("command", ["run", "choose-rho", "demo"])
def test_the_reconstruction_case_is_refused_by_the_attack_commands(command, tmp_path, capsys):
    # (`adversary risk` gives a reconstruction case's data holder's measures instead.)
    argv = [a for a in _argv(command, "reconstruction_block", tmp_path / "out") if a != "--field"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"adversary {command}: error: model 'reconstruction_block' is a reconstruction case: "
        "use `adversary reconstruct reconstruction_block`\n"
    )


def test_the_reconstruction_case_is_reconstructed(capsys):
    argv = ["reconstruct", "reconstruction_block", "--draws", "200", "--chains", "1", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert result["method"] == "mcmc" and result["n"] == 12 and result["cells"] == 56
    assert 0 < result["baseline"]["overlap_share"] < 1
