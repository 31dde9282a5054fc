"""``--budget FILE|PRESET`` on every command: the allocation's ρ reaches the attack."""

import json
import math
from fractions import Fraction

import pytest

from adversary.budget import detailed_rho, get_preset
from adversary.budget_files import write_budget
from adversary.cli import main
from adversary.model_files import load_case, load_module
from adversary.scenarios.reconstruction import reconstruct

PL94 = get_preset("pl94-2020-persons")
RHO_BLOCK = detailed_rho("block")


def _output(argv, capsys, status=0):
    assert main(argv) == status
    return capsys.readouterr()


@pytest.fixture
def half(tmp_path):
    """2020's allocation with the block-level detailed share halved (the half to the total)."""
    shares = dict(zip(PL94.queries, PL94.query_shares[-1], strict=True))
    shares["total"] += shares["detailed"] / 2
    shares["detailed"] /= 2
    return write_budget(PL94.with_query_shares("block", shares, name="half"), tmp_path / "h.toml")


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('rho_total = 1\n[level_shares]\nblock = "1/2"\n')
    return path


def test_budget_prints_a_file_as_its_preset(tmp_path, capsys):
    same = write_budget(PL94, tmp_path / "same.json")
    for options in (["--json"], [], ["--json", "--convention", "das"]):
        preset = _output(["budget", *options], capsys).out
        assert _output(["budget", "--budget", str(same), *options], capsys).out == preset
        by_name = ["budget", "--budget", "pl94-2020-persons", *options]
        assert _output(by_name, capsys).out == preset


def test_budget_prints_the_halved_block_share(half, capsys):
    result = json.loads(_output(["budget", "--budget", str(half), "--json"], capsys).out)
    rows = {(r["level"], r["query"]): r for r in result["rows"]}
    assert result["preset"] == "half"
    assert rows["block", "detailed"]["rho"] == RHO_BLOCK / 2
    assert rows["block", "detailed"]["share_exact"] == str(PL94.share("block", "detailed") / 2)
    assert rows["block", "all"]["share_exact"] == "165/4099"


def test_budget_and_preset_are_exclusive(half, capsys):
    with pytest.raises(SystemExit) as error:
        main(["budget", "--budget", str(half), "--preset", "pl94-2020-persons"])
    assert error.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_demo_single_block_rho_is_the_files_block_detailed(half, capsys):
    result = json.loads(_output(["demo", "--budget", str(half), "--json"], capsys).out)
    assert result["rho"] == RHO_BLOCK / 2


def test_run_posterior_is_the_closed_form_at_the_files_rho(half, capsys):
    """(3.1) at x1* = 1, m = 0, prior 1/2, paper convention: 1 / (1 + exp(-ρ))."""
    result = json.loads(
        _output(["run", "dare_county", "--budget", str(half), "--json"], capsys).out
    )
    assert result["marginals"]["X1"]["1"] == pytest.approx(
        1 / (1 + math.exp(-RHO_BLOCK / 2)), rel=1e-12
    )


def test_risk_of_the_block_group_attack_at_the_files_rho(half, capsys):
    with_file = json.loads(
        _output(["risk", "dare_county", "--budget", str(half), "--json"], capsys).out
    )
    halved = load_case("dare_county").replace(rho=RHO_BLOCK / 2)
    for row in with_file["rows"]:
        expected = halved.marginal_measures(row["prior"])
        assert row["marginal_risk"] == pytest.approx(expected.marginal_risk, rel=1e-12)
    preset = json.loads(
        _output(["risk", "dare_county", "--budget", "pl94-2020-persons", "--json"], capsys).out
    )
    assert preset == json.loads(_output(["risk", "dare_county", "--json"], capsys).out)


def test_choose_rho_of_the_total_doubles_when_the_block_share_halves(half, capsys):
    """Every query seen through the block's detailed count only: the risk depends on
    ``rho_total`` · share(block, detailed), so halving the share doubles the largest total."""
    argv = ["choose-rho", "every_query", "--queries", "detailed", "--field", "rho_total"]
    argv += ["--max-risk", "1.5", "--prior", "1/2", "--json"]
    argv += ["--points-per-decade", "10", "--refine", "4"]  # sparser scan, the same lattice
    default = json.loads(_output(argv, capsys).out)["rho"]
    halved = json.loads(_output([*argv, "--budget", str(half)], capsys).out)["rho"]
    assert halved == pytest.approx(2 * default, rel=2e-3)  # twice the search's tolerance


@pytest.mark.parametrize(
    "argv",
    [
        ["risk", "differencing"],
        ["run", "differencing"],
        ["demo", "--model", "differencing"],
        ["choose-rho", "differencing", "--max-risk", "2"],
    ],
)
def test_a_case_taking_its_rho_directly_is_refused_in_one_line(argv, half, capsys):
    err = _output([*argv, "--budget", str(half)], capsys, status=2).err
    command = argv[0]
    assert err.startswith(f"adversary {command}: error: --budget: case 'Dare County ED 28-21, ")
    assert "(DifferencingCase) takes its rho directly;" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["budget"],
        ["risk", "dare_county"],
        ["run", "dare_county"],
        ["demo"],
        ["choose-rho", "dare_county", "--max-risk", "2"],
        ["reconstruct", "reconstruction_block"],
        ["risk", "reconstruction_block"],
        ["population", "--synthetic", "10", "--model", "population_gvhr"],
        ["population", "--synthetic", "10", "--model", "population_reconstruction"],
    ],
)
def test_a_bad_budget_file_is_one_line_on_every_command(argv, bad, tmp_path, capsys):
    out = ["--out", str(tmp_path / "out")] if argv[0] == "population" else []
    err = _output([*argv, *out, "--budget", str(bad)], capsys, status=2).err
    assert err == (
        f"adversary {argv[0]}: error: --budget: budget file '{bad}': level_shares: shares sum "
        "to 1/2 (0.5), not exactly 1\n"
    )
    assert not (tmp_path / "out").exists()


def test_population_rho_per_level_from_the_file(half, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(
        "from adversary.population.model import PopulationModel\n"
        'POPULATION = PopulationModel(name="t", characteristics=("hhgq", "voting_age", '
        '"hispanic", "race"), priors={"1/2": 0.5}, budgets={"x4": 4.0}, '
        'attacks=("single_block",))\n'
    )
    argv = ["population", "--synthetic", "300", "--model", str(model), "--workers", "1"]
    argv += ["--no-plots", "--no-progress", "--json", "--out", str(tmp_path / "out")]
    result = json.loads(_output([*argv, "--budget", str(half)], capsys).out)
    assert result["model"]["preset"]["name"] == "half"  # not a preset: the allocation itself
    rho = result["model"]["rho"]["x4"]
    assert rho["block"] == 4 * (RHO_BLOCK / 2)
    assert rho["block_group"] == 4 * detailed_rho("block_group")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["model"]["preset"] == result["model"]["preset"]


def test_reconstruct_counts_take_the_files_rho_per_query(tmp_path, capsys):
    """Half the total: every count's ρ halves exactly; the stated releases are kept."""
    path = write_budget(PL94.with_rho_total(Fraction(32, 25)), tmp_path / "half.json")
    argv = ["reconstruct", "reconstruction_block", "--draws", "200", "--chains", "1"]
    argv += ["--no-progress", "--json", "--budget", str(path)]
    result = json.loads(_output(argv, capsys).out)
    case = load_module("reconstruction_block").CASE
    halved = case.replace(rhos=tuple(rho / 2 for rho in case.rhos))
    expected = reconstruct(halved, "auto", draws=200, chains=1, random_seed=2020, progressbar=False)
    assert result == json.loads(json.dumps({"case": case.name, **expected}))
    unchanged = json.loads(_output(argv[:-2], capsys).out)
    assert unchanged["expected_overlap"] != result["expected_overlap"]
