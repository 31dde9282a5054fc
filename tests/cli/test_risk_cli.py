"""``adversary risk``: marginal measures of a model file's truth, and sweeps."""

import json

import numpy as np
import pandas as pd
import pytest

from adversary.cli import main
from adversary.cli.risk import parse_values
from adversary.model_files import load_case
from adversary.scenarios import single_block as sb

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def dare():
    return load_case("dare_county")


def run_json(argv, capsys):
    assert main(["risk", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def one_line_error(argv, capsys) -> str:
    assert main(["risk", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("adversary risk: error: ")
    return lines[0]


def expected(p, rho, true_count=1):
    args = (p, rho, 0, true_count, "paper")
    return {
        "marginal_posterior": float(sb.marginal_posterior(*args)),
        "marginal_risk": float(sb.marginal_risk(*args)),
        "correct_decision_probability": float(sb.correct_decision_probability(*args)),
    }


def test_json_without_sweep_is_table_5(dare, capsys, tmp_path):
    result = run_json(["dare_county", "--out", str(tmp_path)], capsys)
    assert result["case"] == dare.name
    assert result["truth"] == {"X1": 1} and result["target"] == "X1"
    assert result["method"] == "exact"
    assert result["priors"] == pytest.approx(dare.priors)
    assert result["swept"] == {} and result["table"] is None and result["figure"] is None
    assert [row["prior"] for row in result["rows"]] == list(dare.priors)
    for row in result["rows"]:
        for key, value in expected(row["p"], dare.rho).items():
            assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-300)
        assert row["error_bound"] <= 1e-15
        assert row["prior_of_truth"] == pytest.approx(row["p"])
    assert not any(tmp_path.iterdir())  # nothing written without --sweep


def test_text_output_lists_every_prior(dare, capsys):
    assert main(["risk", "dare_county"]) == 0
    out = capsys.readouterr().out
    assert dare.name in out and "truth: X1 = 1 (target X1)" in out
    for label in dare.priors:
        assert f"\n{label} " in out
    assert f"{expected(0.5, dare.rho)['marginal_posterior']:.6g}" in out
    assert "written" not in out
    assert "\nmethod: exact (sums over the release grid)\n" in out


THREE_CELLS_FILE = """
import numpy as np
import pymc as pm
import pytensor.tensor as pt
from adversary.distributions import DiscreteGaussian, FinitePmf

PRIORS = {"even": (1 / 3, 1 / 3, 1 / 3)}
TRUTH = {"C": 0}

def model(prior=(1 / 3, 1 / 3, 1 / 3), rho=0.0992):
    with pm.Model() as m:
        cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.as_tensor(np.array([5, 2, 0])) + pt.cast(pt.eq(pt.arange(3), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, convention="das", observed=(6, 2, 1))
    return m
"""


def test_text_output_says_which_rows_are_monte_carlo(capsys, tmp_path):
    """At rho = 0.01 the release grid of a three-cell factory model is over max_releases and
    the measures are estimated: the text said so nowhere (only --json's method did)."""
    path = tmp_path / "three_cells.py"
    path.write_text(THREE_CELLS_FILE)
    assert main(["risk", str(path), "--sweep", "rho=0.01,1"]) == 0
    out = capsys.readouterr().out
    assert "\nmethod: exact, monte-carlo (some rows by Monte Carlo over release sets" in out
    assert run_json([str(path), "--sweep", "rho=0.01"], capsys)["method"] == "monte-carlo"


def test_a_shipped_case_estimated_by_monte_carlo_says_so(capsys):
    """The differencing case's measures are Monte Carlo (method "auto" chooses it): the text
    said "auto (sums over the release grid)", its setting, which overwrote the method used."""
    assert main(["risk", "differencing", "--prior", "1/2"]) == 0
    assert "\nmethod: monte-carlo (Monte Carlo over release sets" in capsys.readouterr().out
    assert run_json(["differencing", "--prior", "1/2"], capsys)["method"] == "monte-carlo"


def test_sweeping_the_prior_says_how_priors_are_given(capsys, tmp_path):
    path = tmp_path / "three_cells.py"
    path.write_text(THREE_CELLS_FILE)
    err = one_line_error([str(path), "--sweep", "prior=(1,0,0)"], capsys)
    assert "--sweep: 'prior' is the prior: give the priors in the model file's PRIORS" in err


def test_prior_option_selects_one(capsys):
    result = run_json(["dare_county", "--prior", "1/50"], capsys)
    assert [row["prior"] for row in result["rows"]] == ["1/50"]
    assert "1/50" in result["priors"] and len(result["priors"]) == 1


def test_sweep_writes_table_and_plot(dare, capsys, tmp_path):
    argv = ["dare_county", "--sweep", "rho=0.01,0.1,1", "--out", str(tmp_path / "out")]
    result = run_json(argv, capsys)
    assert result["swept"] == {"rho": [0.01, 0.1, 1]}
    assert len(result["rows"]) == 3 * len(dare.priors)
    for row in result["rows"]:
        for key, value in expected(row["p"], row["rho"]).items():
            assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-300)
    table = pd.read_csv(result["table"], index_col=["prior", "rho"])
    assert table.loc[("1/10", 0.1), "marginal_risk"] == pytest.approx(
        expected(0.1, 0.1)["marginal_risk"], rel=1e-12
    )
    with open(result["figure"], "rb") as figure:
        assert figure.read(8) == PNG_MAGIC
    assert result["table"].endswith("sweep_rho.csv") and result["figure"].endswith("sweep_rho.png")


def test_sweep_text_prints_the_table(capsys, tmp_path):
    argv = ["dare_county", "--prior", "1/2", "--sweep", "rho=geomspace:1e-3:1e2:6"]
    assert main(["risk", *argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "swept: rho (6 values)" in out
    for rho in np.geomspace(1e-3, 1e2, 6):
        assert f"{expected(0.5, rho)['marginal_risk']:.6g}" in out
    assert str(tmp_path / "sweep_rho.csv") in out and str(tmp_path / "sweep_rho.png") in out


def test_two_sweeps(capsys, tmp_path):
    argv = ["dare_county", "--prior", "1/2", "--sweep", "rho=linspace:0.1:1:4"]
    argv += ["--sweep", "true_count=range:0:2", "--out", str(tmp_path)]
    result = run_json(argv, capsys)
    assert result["swept"]["true_count"] == [0, 1]
    assert len(result["rows"]) == 8
    for row in result["rows"]:
        for key, value in expected(0.5, row["rho"], row["true_count"]).items():
            assert row[key] == pytest.approx(value, rel=1e-12)
    assert (tmp_path / "sweep_rho_true_count.png").exists()


def test_too_many_combinations_to_draw_still_writes_the_table(capsys, tmp_path):
    argv = ["dare_county", "--prior", "1/2", "--sweep", "rho=0.1,1"]
    argv += ["--sweep", "observed_release=range:0:8", "--out", str(tmp_path), "--json"]
    assert main(["risk", *argv]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["figure"] is None and (tmp_path / "sweep_rho_observed_release.csv").exists()
    assert "no plot" in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--sweep", "rhoo=1"],
            "--sweep: 'rhoo' is not a parameter of Dare County ED 28-21 (1940); have rho,",
        ),
        (["--sweep", "priors=1"], "--sweep: 'priors' is not a parameter"),
        (["--sweep", "rho"], "--sweep: expected NAME=VALUES, got 'rho'"),
        (["--sweep", "rho=1,-1"], "--sweep rho=-1: rho must be finite and > 0"),
        (["--sweep", "rho=a"], "--sweep rho='a': rho must be numeric"),
        (["--sweep", "rho=1,,2"], "has an empty value"),
        (["--sweep", "rho=geomspace:0:1:3"], "geomspace needs START and STOP > 0"),
        (["--sweep", "rho=geomspace:1:2"], "expected geomspace:START:STOP:N"),
        (["--sweep", "rho=linspace:1:2:x"], "'x' in 'linspace:1:2:x' is not a number"),
        (["--sweep", "true_count=range:3:1"], "is an empty range"),
        (["--sweep", "rho=1", "--sweep", "rho=2"], "'rho' is given twice"),
        (["--prior", "1/3"], "priors: '1/3' is not a prior label"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys, tmp_path):
    line = one_line_error(["dare_county", *argv, "--out", str(tmp_path)], capsys)
    assert message in line


def test_bad_model_file_is_one_line(capsys, tmp_path):
    assert "does not exist" in one_line_error([str(tmp_path / "missing.py")], capsys)
    assert "model must be a .py file" in one_line_error(["nowhere"], capsys)


def test_parse_values():
    assert parse_values("0.01,0.1,1") == [0.01, 0.1, 1]
    np.testing.assert_allclose(parse_values("geomspace:1e-3:1e2:6"), np.geomspace(1e-3, 1e2, 6))
    assert parse_values("linspace:0:1:3") == [0.0, 0.5, 1.0]
    assert parse_values("range:1:10:4") == [1, 5, 9]
    assert parse_values("paper,das") == ["paper", "das"]
    assert parse_values("(1,1,0);(1,2,1)") == [(1, 1, 0), (1, 2, 1)]
    assert parse_values("(1,1,0)") == [(1, 1, 0)]  # one tuple alone is one value


def test_help_documents_the_json_keys(capsys):
    with pytest.raises(SystemExit):
        main(["risk", "--help"])
    out = capsys.readouterr().out
    for key in ("\ncase\n", "\npriors\n", "\nswept\n", "\nrows\n", "\ntable, figure\n"):
        assert key in out
    assert "geomspace:START:STOP:N" in out


def test_the_risk_has_its_own_error_bound_and_stays_within_it_of_one(capsys, tmp_path):
    """(3.4) divides (3.3) by the prior, and so its bound; by Cauchy–Schwarz the exact
    marginal risk is >= 1 (E[P(truth | r)] = P(truth) Σ_r P(r | truth)² / P(r))."""
    argv = ["dare_county", "--sweep", "rho=geomspace:1e-10:1e-6:5", "--out", str(tmp_path)]
    rows = run_json(argv, capsys)["rows"]
    assert len(rows) == 25
    for row in rows:
        bound = row["risk_error_bound"]
        assert bound == pytest.approx(row["error_bound"] / row["prior_of_truth"], rel=1e-15)
        assert row["marginal_risk"] >= 1.0 - bound


def test_vector_priors_are_shown_to_six_digits(capsys):
    result = run_json(["unknown_ethnicity"], capsys)
    assert result["priors"]["1/864"] == "[0.00115741, 0.998843]"
    assert result["rows"][0]["p"] == "[0.5, 0.5]"


def test_queries_and_post_processing_options(capsys):
    """--queries detailed on the every-query case is the single-block attack (dare_county);
    --post-processing none is the measurements' adversary; a case without the field refuses."""
    detailed = run_json(["every_query", "--queries", "detailed", "--prior", "1/2"], capsys)
    dare = run_json(["dare_county", "--prior", "1/2"], capsys)
    for key in ("marginal_posterior", "correct_decision_probability"):
        assert detailed["rows"][0][key] == pytest.approx(dare["rows"][0][key], abs=1e-12)
    tables = run_json(["published_tables", "--prior", "1/2"], capsys)["rows"][0]
    noisy = run_json(["published_tables", "--post-processing", "none", "--prior", "1/2"], capsys)
    assert noisy["rows"][0]["correct_decision_probability"] > tables["correct_decision_probability"]
    assert "--queries: the attack" in one_line_error(["dare_county", "--queries", "all"], capsys)
    assert "--queries must be" in one_line_error(["every_query", "--queries", "race,x"], capsys)
