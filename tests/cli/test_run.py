"""``adversary run``: exact and MCMC posteriors of a model file's latents."""

import json
import textwrap

import numpy as np
import pytest

from adversary.cli import main
from adversary.model_files import load_case


def run_json(argv, capsys):
    assert main(["run", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_exact_granville_matches_the_scenario_posterior(capsys):
    result = run_json(["granville_county"], capsys)
    exact = load_case("granville_county").posterior()
    assert result["method"] == "exact"
    x1 = result["marginals"]["X1"]
    assert x1["1"] == pytest.approx(float(exact.sel(X1=1).sum()), rel=1e-9)
    x2 = result["marginals"]["X2"]
    for value in range(6):
        assert x2[str(value)] == pytest.approx(float(exact.sel(X2=value).sum()), rel=1e-8)
    assert result["omitted_mass"] < 1e-12


def test_mcmc_granville_agrees_with_exact_within_four_mcse(capsys):
    argv = ["granville_county", "--method", "mcmc", "--draws", "2000", "--cores", "1"]
    result = run_json(argv, capsys)
    exact = load_case("granville_county").posterior()
    for value in (0, 1):
        estimate = result["marginals"]["X1"][str(value)]
        error = result["mcse"]["X1"][str(value)]
        assert abs(estimate - float(exact.sel(X1=value).sum())) < 4 * error
    assert result["ess"]["X1"] > 500


MIXED_FILE = """
import pymc as pm
from adversary.distributions import BernoulliCount, DiscreteGaussian

def model(prior=0.5, continuous=True):
    with pm.Model() as m:
        x = BernoulliCount("X1", known=2, p=prior)
        DiscreteGaussian("x1_release", mu=x, rho=0.1, observed=3)
        if continuous:
            mu = pm.Normal("mu", 0.0, 1.0, shape=2)
            pm.Normal("obs", mu=mu, sigma=1.0, observed=[0.3, -1.0])
    return m
"""


def test_mcmc_prints_continuous_latents_beside_the_counts(tmp_path, capsys):
    """A count beside a continuous latent: the count's pmf against exact enumeration of the
    model without the continuous part (independent of it), the Normal's mean and sd against
    the conjugate closed form (prior N(0, 1), one observation y at sd 1: N(y/2, 1/2))."""
    from adversary.inference import enumerate_posterior

    path = tmp_path / "mixed.py"
    path.write_text(MIXED_FILE)
    result = run_json([str(path), "--method", "mcmc", "--draws", "1000", "--cores", "1"], capsys)
    exact = enumerate_posterior(load_case(str(path)).factory(continuous=False)).marginal("X1")
    for value, probability in zip(exact["X1"].values, exact.values, strict=True):
        estimate = result["marginals"]["X1"][str(int(value))]
        assert abs(estimate - probability) < 4 * result["mcse"]["X1"][str(int(value))]
    for index, observed in enumerate((0.3, -1.0)):
        summary = result["continuous"][f"mu[{index}]"]
        assert abs(summary["mean"] - observed / 2) < 4 * summary["mcse_mean"]
        assert summary["sd"] == pytest.approx(0.5**0.5, rel=0.1)
        assert summary["ess"] > 200
    assert main(["run", str(path), "--method", "mcmc", "--draws", "200", "--cores", "1"]) == 0
    out = capsys.readouterr().out
    assert "continuous       mean         sd      MCSE      ESS" in out and "mu[1]" in out
    assert main(["run", str(path)]) == 2  # the default, exact: refused before any work
    assert "'mu' is continuous; exact enumeration needs discrete latents (use --method mcmc)" in (
        capsys.readouterr().err
    )


def test_dare_county_exact_under_each_prior(capsys):
    case = load_case("dare_county")
    first = next(iter(case.priors))
    assert run_json(["dare_county"], capsys)["prior"] == first  # without --prior: the first
    assert main(["run", "dare_county"]) == 0
    assert f"posterior by exact enumeration, prior {first}\n" in capsys.readouterr().out
    for label in case.priors:
        result = run_json(["dare_county", "--prior", label], capsys)
        assert result["prior"] == label
        # Table 4 row x1* = 1 (the case's observed release).
        posterior = result["marginals"]["X1"]["1"]
        expected = {"1/2": 0.525, "1/5": 0.216, "1/10": 0.109, "1/50": 0.022}.get(label)
        if expected is not None:
            assert round(posterior, 3) == expected


def test_a_user_model_file_with_a_model_function(tmp_path, capsys):
    path = tmp_path / "coin.py"
    path.write_text(
        textwrap.dedent(
            """
            import pymc as pm
            from adversary.distributions import BernoulliCount, DiscreteGaussian

            NAME = "two releases of one count"

            def model():
                with pm.Model() as m:
                    x = BernoulliCount("X", known=3, p=0.25)
                    DiscreteGaussian("first", mu=x, rho=0.5, observed=4)
                    DiscreteGaussian("second", mu=x, rho=0.5, observed=5)
                return m
            """
        )
    )
    result = run_json([str(path)], capsys)
    assert result["model"] == "two releases of one count"
    # Two releases 4 and 5: log odds = logit(1/4) + ρ Σ (2(x* - 3) - 1) = -log 3 + 0.5 (1 + 3).
    log_odds = -np.log(3.0) + 2.0
    assert result["marginals"]["X"]["4"] == pytest.approx(1 / (1 + np.exp(-log_odds)), rel=1e-12)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nowhere.py"], "does not exist"),
        (["granville_county", "--prior", "1/3"], "prior must be one of 1/2"),
        (["atlantis"], "model must be a .py file or one of"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["run", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


USER_FILES = {
    "wrong_case": "CASE = 42\n",
    "not_a_model": "def model(prior=0.5):\n    return 'not a model'\n",
    "disconnected": (
        "import pymc as pm\n"
        "def model(prior=0.5):\n"
        "    with pm.Model() as m:\n"
        "        x = pm.Bernoulli('X1', p=prior)\n"
        "        pm.Flat('Y')\n"
        "        pm.Normal('obs', mu=x, sigma=1.0, observed=1.0)\n"
        "    return m\n"
    ),
    "improper": (
        "import pymc as pm\n"
        "def model(prior=0.5):\n"
        "    with pm.Model() as m:\n"
        "        x = pm.Bernoulli('X1', p=prior)\n"
        "        y = pm.HalfFlat('Y')\n"
        "        pm.Normal('obs', mu=x, sigma=y, observed=1.0)\n"
        "    return m\n"
    ),
    "infinite_release": (
        "import pymc as pm\n"
        "from adversary.distributions import BernoulliCount, DiscreteGaussian\n"
        "def model(prior=0.5):\n"
        "    with pm.Model() as m:\n"
        "        x = BernoulliCount('X1', known=0, p=prior)\n"
        "        DiscreteGaussian('x1_release', mu=x, rho=0.1, observed=float('inf'))\n"
        "    return m\n"
    ),
}


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("wrong_case", [], "CASE is a int, not an attack"),
        ("not_a_model", [], "model() must return a pymc.Model, got str"),
        ("disconnected", ["--method", "mcmc"], "does not depend on one of its continuous latents"),
        # NUTS on the improper Y fails or returns infinite draws, as the seed has it
        # (100 tuning steps, not PyMC's 1000 at the deepest trees: minutes)
        (
            "improper",
            ["--method", "mcmc", "--tune", "100"],
            ("sampling failed (", "draws of 'Y' are not finite"),
        ),
        ("improper", ["--method", "exact"], "exact enumeration needs discrete latents"),
        # the posterior equalled the prior (exit 0)
        ("infinite_release", [], "observed (of 'x1_release') must be finite"),
    ],
)
def test_bad_user_model_files_are_one_line(name, options, message, tmp_path, capsys):
    path = tmp_path / f"{name}.py"
    path.write_text(USER_FILES[name])
    argv = ["run", str(path), *options, "--draws", "50", "--chains", "2", "--json"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("adversary run: error: ") and captured.err.count("\n") == 1
    messages = (message,) if isinstance(message, str) else message
    assert any(text in captured.err for text in messages)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--draws", "0"], "--draws must be >= 1, got 0"),
        (["--chains", "0"], "--chains must be >= 1, got 0"),
        (["--cores", "0"], "--cores must be >= 1, got 0"),
        (["--tune", "-1"], "--tune must be >= 0, got -1"),
        (["--memory-budget", "lots"], "--memory-budget must be a size such as 8GiB"),
    ],
)
@pytest.mark.parametrize("method", ["mcmc", "exact"])
def test_bad_sampling_options_are_one_line(options, message, method, tmp_path, capsys):
    # whatever the method, and before the model file is read (this one does not exist)
    absent = str(tmp_path / "absent.py")
    assert main(["run", absent, "--method", method, *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adversary run: error: ") and err.count("\n") == 1
    assert message in err


def test_exact_text_says_when_nothing_is_outside_the_table(capsys):
    assert main(["run", "dare_county"]) == 0
    assert "no mass outside the table;" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["demo", "budget", "run", "population", "choose-rho", "risk"])
def test_help_is_plain_text(command, capsys):
    """The help shows the module docstrings without their reStructuredText markup."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out and ":mod:" not in out


@pytest.mark.parametrize("cores", [None, 1, 3])
def test_cores_reach_the_sampler(cores, monkeypatch, capsys):
    import adversary.inference

    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs["cores"])
        raise RuntimeError("recorded")

    monkeypatch.setattr(adversary.inference, "sample", recording)
    option = [] if cores is None else ["--cores", str(cores)]
    assert main(["run", "dare_county", "--method", "mcmc", *option]) == 2
    assert seen == [cores]  # None: PyMC's default
    assert "sampling failed (RuntimeError: recorded)" in capsys.readouterr().err


def test_one_draw_says_ess_and_mcse_cannot_be_estimated_and_bars_go_to_stderr(capsys):
    """One draw per chain was printed as "nan" (and the JSON held NaN); the bar went to stdout."""
    argv = ["run", "dare_county", "--method", "mcmc", "--draws", "1", "--chains", "2"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "cannot be estimated from one draw per chain" in captured.out
    assert "nan" not in captured.out and "chain 0" not in captured.out
    assert "chain 0" in captured.err and "chain 1" in captured.err
    result = run_json(argv[1:], capsys)
    # One entry per value drawn (which values the two draws hit depends on the sampler).
    assert result["ess"] == {"X1": None}
    assert result["mcse"]["X1"] == dict.fromkeys(result["marginals"]["X1"])
