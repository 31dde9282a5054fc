"""``--mechanism SPEC`` on the commands that run a case: the case's numbers under that noise."""

import json
import math

import pytest

from adversary.analyses.choose_rho import choose_rho
from adversary.cli import main
from adversary.model_files import load_case, load_module
from adversary.noise.mechanisms import DiscreteGaussianNoise, DiscreteLaplaceNoise
from adversary.scenarios.reconstruction import reconstruct

DARE = load_case("dare_county")
MEASURES = ("marginal_posterior", "marginal_risk", "correct_decision_probability", "error_bound")


def _json(argv, capsys):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _refused(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def _measures_of(case) -> dict:
    """``{prior: (3.3), (3.4), (3.6), error bound}`` of the case in Python."""
    measured = {label: case.marginal_measures(label) for label in case.priors}
    return {label: tuple(getattr(m, key) for key in MEASURES) for label, m in measured.items()}


def _rows(result) -> dict:
    return {row["prior"]: tuple(row[key] for key in MEASURES) for row in result["rows"]}


@pytest.mark.parametrize(
    ("spec", "mechanism"),
    [
        ("discrete_gaussian:rho=0.5", DiscreteGaussianNoise.from_rho(0.5)),
        ("discrete_laplace:scale=2", DiscreteLaplaceNoise(2.0)),
    ],
)
def test_risk_gives_the_python_cases_numbers_under_the_mechanism(spec, mechanism, capsys):
    result = _json(["risk", "dare_county", "--mechanism", spec], capsys)
    assert result["mechanism"] == spec.replace("=2", "=2.0")
    assert _rows(result) == _measures_of(DARE.replace(rho=None, mechanism=mechanism))


def test_a_discrete_gaussian_at_the_cases_rho_reproduces_the_default(capsys):
    default = _json(["risk", "dare_county"], capsys)
    spec = f"discrete_gaussian:rho={DARE.rho!r}"
    same = _json(["risk", "dare_county", "--mechanism", spec], capsys)
    assert default.pop("mechanism") is None
    assert same.pop("mechanism") == spec
    assert same == default


def test_run_posterior_under_laplace_noise_is_the_closed_form(capsys):
    """(3.1) at x1* = 1, m = 0, prior 1/2: P[X1 = 1] = 1 / (1 + P[Z = 1]/P[Z = 0]) =
    1 / (1 + exp(-1/b)) for the discrete Laplace of scale b; the same for the geometric
    truncated at E ≥ 1 (its normaliser cancels)."""
    for spec in ("discrete_laplace:scale=2", "truncated_geometric:scale=2,bound=3"):
        result = _json(["run", "dare_county", "--mechanism", spec, "--prior", "1/2"], capsys)
        assert result["mechanism"] == spec.replace("=2", "=2.0")
        assert result["marginals"]["X1"]["1"] == pytest.approx(1 / (1 + math.exp(-0.5)), 1e-14)
    assert _json(["run", "dare_county"], capsys)["mechanism"] is None


def test_run_and_risk_text_name_the_noise(capsys):
    assert main(["run", "dare_county", "--mechanism", "cell_key:variance=2,bound=5"]) == 0
    assert "noise: cell_key:variance=2.0,bound=5\n" in capsys.readouterr().out
    assert main(["risk", "unique_many_levels", "--mechanism", "discrete_laplace:scale=2"]) == 0
    assert "noise: discrete Laplace (scale=2)\n" in capsys.readouterr().out


def test_demo_tables_of_a_single_block_under_the_mechanism(capsys):
    """Table 4's posterior at x1* = 1 under prior 1/2 is the closed form of the run test."""
    result = _json(["demo", "--mechanism", "discrete_laplace:scale=2"], capsys)
    assert result["rho"] is None
    assert result["mechanism"] == "discrete_laplace:scale=2.0"
    first = result["table4"][0]
    assert first["release"] == 1
    assert first["posterior"]["1/2"] == pytest.approx(1 / (1 + math.exp(-0.5)), rel=1e-14)


def test_choose_rho_searches_the_laplace_family_whatever_its_scale(capsys):
    """choose_rho varies a zCDP ρ: the discrete Laplace of ρ = ε²/2, so the given scale only
    names the family; the answer is the Python search's on the case with that noise."""
    argv = ["choose-rho", "dare_county", "--max-risk", "1.5", "--prior", "1/2"]
    first = _json([*argv, "--mechanism", "discrete_laplace:scale=2"], capsys)
    other = _json([*argv, "--mechanism", "discrete_laplace:epsilon=0.01"], capsys)
    case = DARE.replace(rho=None, mechanism=DiscreteLaplaceNoise(2.0))
    expected = choose_rho(case, 1.5, "marginal_risk", priors=["1/2"]).rho
    assert first["rho"] == other["rho"] == expected


CELL_KEY = ["--mechanism", "cell_key:variance=2,bound=5"]
NOT_WITH_BUDGET = "error: --mechanism: not with --budget (--budget sets the rho of the case's"


@pytest.mark.parametrize(
    ("argv", "part"),
    [
        (
            ["choose-rho", "dare_county", "--max-risk", "2", *CELL_KEY],
            "error: field: 'rho' is the noise cell key (V=2, E=5), which is not zCDP",
        ),
        (["risk", "dare_county", *CELL_KEY, "--budget", "pl94-2020-persons"], NOT_WITH_BUDGET),
        (["run", "dare_county", *CELL_KEY, "--budget", "pl94-2020-persons"], NOT_WITH_BUDGET),
    ],
)
def test_refusals_are_one_line(argv, part, capsys):
    assert part in _refused(argv, capsys)


def test_demo_draws_no_figures_against_a_rho_the_case_lacks(tmp_path, capsys):
    err = _refused(["demo", *CELL_KEY, "--out", str(tmp_path / "out")], capsys)
    assert "error: --out: Figures 1-3 of a single-block case are drawn against rho" in err
    assert not (tmp_path / "out").exists()


def test_a_bad_spec_is_one_line_naming_the_option(capsys):
    err = _refused(["risk", "dare_county", "--mechanism", "laplace:scale=2"], capsys)
    assert "error: --mechanism 'laplace:scale=2': unknown mechanism 'laplace'; known: " in err


def test_a_case_without_a_mechanism_field_is_refused(tmp_path, capsys):
    path = tmp_path / "factory.py"
    path.write_text(
        "import pymc as pm\n"
        "NAME = 'factory'\n"
        "def model(prior=0.5):\n"
        "    with pm.Model() as m:\n"
        "        pm.Bernoulli('X1', p=prior)\n"
        "    return m\n"
    )
    err = _refused(["run", str(path), "--mechanism", "discrete_laplace:scale=2"], capsys)
    assert "error: --mechanism: case 'factory' (" in err
    assert "has no mechanism parameter; its noise is fixed" in err


def test_reconstruct_takes_the_mechanism_for_every_count(capsys):
    """The Python reconstruction of the case with that noise on every count, the stated
    releases kept (the same seed and draws)."""
    spec = "discrete_laplace:scale=4"
    argv = ["reconstruct", "reconstruction_block", "--draws", "200", "--chains", "1"]
    result = _json([*argv, "--no-progress", "--mechanism", spec], capsys)
    case = load_module("reconstruction_block").CASE
    laplace = case.replace(mechanism=DiscreteLaplaceNoise(4.0))
    expected = reconstruct(
        laplace, "auto", draws=200, chains=1, random_seed=2020, progressbar=False
    )
    assert result == json.loads(json.dumps({"case": case.name, **expected}))
    unchanged = _json([*argv, "--no-progress"], capsys)
    assert unchanged["expected_overlap"] != result["expected_overlap"]


def test_reconstruct_refuses_noise_that_cannot_reach_the_stated_releases(capsys):
    err = _refused(
        [
            "reconstruct",
            "reconstruction_block",
            "--mechanism",
            "finite_pmf:start=0,probabilities=1",
        ],
        capsys,
    )
    assert "error: --mechanism: case 'A block of 12 persons" in err


def test_run_refuses_releases_the_noise_makes_impossible(capsys):
    """A discrete Laplace of scale 1e-300 is 0 with probability 1: Granville's releases differ
    from every count the prior allows, so no latent value is possible (was a traceback)."""
    argv = ["run", "granville_county", "--mechanism", "discrete_laplace:scale=1e-300"]
    err = _refused(argv, capsys)
    assert "error: --method exact: start point: no feasible start point found" in err


# --- swapping cases: the spec sets the case's swap law ----------------------------------------


def test_risk_of_a_swapping_case_under_another_rate_is_the_python_cases(capsys):
    from adversary.scenarios.swapping import HouseholdSwapLaw

    case = load_case("swapping_block")
    result = _json(["risk", "swapping_block", "--mechanism", "swapping:rate=0.1"], capsys)
    assert result["mechanism"] == "household swapping at rate 0.1"
    assert _rows(result) == _measures_of(case.replace(law=HouseholdSwapLaw(0.1)))
    assert _rows(result) != _measures_of(case)


def test_targeted_swapping_keeps_the_cases_donor_rate(capsys):
    from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw
    from adversary.swapping import TargetedRecordSwapping

    case = load_case("trs_block")
    result = _json(["risk", "trs_block", "--mechanism", "trs:rate=0.2,k_anonymity=5"], capsys)
    law = TargetedSwapLaw(TargetedRecordSwapping(0.2, 5), case.law.donor_rate)
    assert result["mechanism"] == "trs:rate=0.2,k_anonymity=5"
    assert _rows(result) == _measures_of(case.replace(law=law))


@pytest.mark.parametrize(
    ("argv", "part"),
    [
        (["run", "swapping_block", "--mechanism", "cell_key:variance=2,bound=5"], "takes swapping"),
        (["run", "dare_county", "--mechanism", "swapping:rate=0.1"], "takes discrete_gaussian"),
        (["risk", "trs_block", "--mechanism", "trs:k_anonymity=0"], "k_anonymity must be"),
    ],
)
def test_a_mechanism_of_the_wrong_kind_for_a_swapping_case_is_one_line(argv, part, capsys):
    assert part in _refused(argv, capsys)


def test_risk_text_of_a_swapping_case_names_its_law(capsys):
    assert main(["risk", "trs_block"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[2] == (
        "swapping: targeted record swapping (10%, k=3, risk voting_age×hispanic×race, "
        "across county>tract>block); donor rate 0.25"
    )
    assert main(["risk", "swapping_block", "--mechanism", "swapping:rate=0.2"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "swapping: household swapping at rate 0.2"
