"""Model files: a CASE or a model() factory, loaded as registered modules; one-line errors."""

import json
import sys
import textwrap

import numpy as np
import pytest

from adversary.cli import main
from adversary.model_files import ModelFileError, load_case, load_module
from adversary.scenarios import single_block as sb

FACTORY = '''
"""The single-block attack written by hand, with priors and the truth."""

import pymc as pm

from adversary.distributions import BernoulliCount, DiscreteGaussian

NAME = "hand-written single block"
PRIORS = {"1/2": 0.5, "1/10": 0.1}
TRUTH = {"X1": 1}


def model(prior=0.5, rho=0.0992, release=3):
    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=0, p=prior)
        DiscreteGaussian("x1_release", mu=x1, rho=rho, observed=release)
    return attack
'''


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_factory_file_is_an_attack(tmp_path):
    case = load_case(write(tmp_path, "hand.py", FACTORY))
    assert case.name == "hand-written single block"
    assert list(case.priors) == ["1/2", "1/10"] and case.target == "X1"
    measures = case.marginal_measures("1/10")
    assert measures.marginal_risk == pytest.approx(float(sb.marginal_risk(0.1, 0.0992)), abs=1e-11)


def test_a_factory_whose_prior_has_another_name_says_so_with_prior_argument(tmp_path):
    """A model file could not name the prior's argument: the error pointed at prior_argument=,
    a keyword of adversary.attack that a file never calls."""
    renamed = FACTORY.replace("prior=0.5", "p=0.5").replace("p=prior", "p=p")
    with pytest.raises(ModelFileError, match=r"has no keyword argument 'prior' .*PRIOR_ARGUMENT"):
        load_case(write(tmp_path, "renamed.py", renamed))
    case = load_case(write(tmp_path, "named.py", renamed + 'PRIOR_ARGUMENT = "p"\n'))
    assert case.prior_argument == "p"
    measures = case.marginal_measures("1/10")
    assert measures.marginal_risk == pytest.approx(float(sb.marginal_risk(0.1, 0.0992)), abs=1e-11)


def test_files_are_registered_modules_with_their_folder_importable(tmp_path):
    write(tmp_path, "helper_counts.py", "KNOWN = 3\n")
    path = write(
        tmp_path,
        "with_dataclass.py",
        """
        from __future__ import annotations

        from dataclasses import dataclass

        from helper_counts import KNOWN


        @dataclass(frozen=True)
        class Setting:
            known: int = KNOWN
        """,
    )
    module = load_module(path)
    assert sys.modules["adversary_model_with_dataclass"] is module
    assert module.Setting().known == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1\ny = (\n", r"model file .*broken\.py, line 2: SyntaxError: "),
        ("import no_such_module_anywhere\n", r"broken\.py, line 1: ModuleNotFoundError: No module"),
        ("x = 1\n\nraise RuntimeError('bad\\nsecond line')\n", r"line 3: RuntimeError: bad$"),
        ("CASE = 42\n", r"CASE is a int, not an attack \(it has no priors, model"),
        ("def model():\n    return 3\n", r"model\(\) must return a pymc.Model, got int"),
        (
            "import pymc as pm\n\ndef model():\n    with pm.Model() as m:\n"
            "        1 / 0\n    return m\n",
            r"broken\.py, line 5: ZeroDivisionError: division by zero",
        ),
        ("X = 1\n", "declares neither CASE nor a model\\(\\) factory"),
        ("x = 1\nraise SystemExit(0)\n", r"broken\.py, line 2: SystemExit: 0$"),
        ("import sys\n\nsys.exit()\n", r"broken\.py, line 3: SystemExit$"),
        ("def model():\n    exit(3)\n", r"broken\.py, line 2: SystemExit: 3$"),
    ],
)
@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_broken_file_is_one_line_naming_file_and_line(
    tmp_path, monkeypatch, text, message, relative
):
    path = write(tmp_path, "broken.py", text)
    if relative:  # the line is found however the path is written
        monkeypatch.chdir(tmp_path)
        path = path.name
    with pytest.raises(ModelFileError, match=message) as error:
        load_case(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("command", ["run", "risk", "demo", "choose-rho"])
def test_a_file_that_exits_is_a_load_error_for_every_command(command, tmp_path, capsys):
    """``exit(0)`` in a model file is not a silent success of the command."""
    path = str(write(tmp_path, "quits.py", "import sys\nsys.exit(0)\n"))
    argv = {
        "run": ["run", path],
        "risk": ["risk", path],
        "demo": ["demo", "--model", path],
        "choose-rho": ["choose-rho", path, "--max-risk", "2"],
    }[command]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"adversary {command}: error: model file {path}, line 2: SystemExit: 0\n"
    )


def test_commands_take_a_factory_file(tmp_path, capsys):
    path = str(write(tmp_path, "hand.py", FACTORY))
    assert main(["run", path, "--prior", "1/10", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"X1"' in out and '"prior": "1/10"' in out
    assert main(["risk", path, "--sweep", "rho=0.01,1", "--out", str(tmp_path / "r")]) == 0
    table = (tmp_path / "r" / "sweep_rho.csv").read_text()
    assert table.count("\n") == 5  # header and 2 priors x 2 rho
    capsys.readouterr()
    search = ["--max-risk", "1.1", "--prior", "1/2", "--points-per-decade", "5", "--refine", "2"]
    chosen = json.loads(
        _run(capsys, ["choose-rho", path, *search, "--tolerance", "0.05", "--json"])
    )
    shipped = json.loads(
        _run(capsys, ["choose-rho", "dare_county", *search, "--tolerance", "0.05", "--json"])
    )
    assert chosen["rho"] == pytest.approx(shipped["rho"], rel=1e-12)
    assert np.isfinite(chosen["epsilon"])


def _run(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out
