"""``--time-budget``: grids projected to take longer are refused in one line, before the bulk.

``adversary risk granville_county --sweep rho1=1e-6`` ran for more than five
minutes (killed, no output, no progress): its release grid has 11,543 x 23 x
59,969 releases (each cut-off grows as 1/√ρ, the grid as 1/ρ).
"""

from __future__ import annotations

import math
import re

import pytest

from adversary.cli import main
from adversary.time_budget import ENVIRONMENT_VARIABLE, timed_blocks


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
        r"([\d,]+) x 23 x ([\d,]+) releases \(([\d,]+) cells at [\d.e+]+ (ns|µs) each, measured\) "
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


def test_the_default_budget_refuses_a_grid_far_beyond_it_quickly(warmed, capsys, monkeypatch):
    """ρ1 = 1e-7: about 2.7 h projected at 61 ns a cell (16x the default 10 min), refused
    after the two timed blocks of the grid's 36,497 rows. The issue's ρ1 = 1e-6 (15.9 G cells,
    about 16 min at that rate) is too near the budget to test: a clean-clone run measured
    cells 1.6x faster, was let through and computed for 530 s."""
    from adversary.scenarios.block_group import releases

    done = []

    def counted(total, rows, *arguments, **options):
        for block in timed_blocks(total, rows, *arguments, **options):
            yield block
            done.append(block.stop - block.start)

    monkeypatch.setattr(releases, "timed_blocks", counted)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    err = _error(["risk", "granville_county", "--sweep", "rho1=1e-7"], capsys)
    assert "release grid of 36,497 x 23 x 189,637 releases (159,187,176,547 cells at" in err
    assert "more than the time budget of 10 min" in err
    assert len(done) == 2 and sum(done) < 36_497 / 100, done  # the bulk was never computed


@pytest.mark.parametrize("budget", ["0", "-1s", "soon", "nan"])
def test_a_bad_budget_is_one_line_naming_the_option(budget, capsys):
    err = _error(["risk", "dare_county", f"--time-budget={budget}"], capsys)
    assert err.startswith("adversary risk: error: --time-budget must be")


def test_sampling_projected_over_the_budget_is_stopped_in_one_line(capsys):
    """``run --method mcmc --draws 10000000`` sampled for hours (2 chains of 1 ms draws)."""
    argv = ["run", "dare_county", "--method", "mcmc", "--draws", "10000000", "--json"]
    err = _error([*argv, "--time-budget", "30s"], capsys)
    assert re.match(
        r"adversary run: error: sampling 20,000,400 draws \(tuning included, [\d.e+]+ ms each, "
        r"measured\) would take about [\d.]+ (min|h), more than the time budget of 30 s ",
        err,
    ), err


def test_a_trace_over_the_memory_budget_is_refused_before_sampling(capsys):
    argv = ["run", "dare_county", "--method", "mcmc", "--draws", "99999999999999999999"]
    err = _error(argv, capsys)
    assert err.startswith(
        "adversary run: error: the trace of 2 chains x 100,000,000,000,000,000,199 draws of 1 "
        "values would need "
    )


def test_a_rho_scan_projected_over_the_budget_is_refused(capsys):
    """``--points-per-decade 10**20`` scanned every one of 13,800 lattice points."""
    argv = ["choose-rho", "dare_county", "--max-risk", "1.5", "--time-budget", "5s"]
    err = _error([*argv, "--points-per-decade", "99999999999999999999"], capsys)
    # every point of the lattice 1e-4 (1 + 1e-3)^j up to 100, one decade of it again (the
    # refined scan, as fine), one bisection step, and the ends
    step = math.log1p(1e-3)
    lattice = math.floor(math.log(1e2 / 1e-4) / step) + 2
    scans = lattice + math.ceil(math.log(10.0) / step) + 1 + 1
    assert err.startswith(
        f"adversary choose-rho: error: the scan of up to {scans:,} values of rho (from "
        "points_per_decade, refine and tolerance) would take about "
    )


CONTINUOUS_FILE = """
import pymc as pm
from adversary.distributions import BernoulliCount, DiscreteGaussian

TRUTH = {"X1": 3, "mu": 0.0}

def model(prior=0.5):
    with pm.Model() as m:
        BernoulliCount("X1", known=2, p=prior)
        mu = pm.Normal("mu", 0.0, 1.0)
        DiscreteGaussian("x1_release", mu=m["X1"], rho=0.1, observed=3)
        pm.Normal("obs", mu=mu, sigma=1.0, observed=0.3)
    return m
"""


def test_monte_carlo_by_mcmc_projected_over_the_budget_is_refused(tmp_path, capsys):
    """A continuous latent has no release grid: ``risk`` samples a posterior per simulated
    release set, 2,000 of them at about 0.35 s each, and ran for 12 minutes past the default
    budget of 10 with no progress shown."""
    path = tmp_path / "continuous.py"
    path.write_text(CONTINUOUS_FILE)
    # 30 s: far below the whole (about 700 s), far above one release set's sampling (about
    # 0.7 s; at 1 s a loaded machine refused that sampling instead, at 1.4 s)
    err = _error(["risk", str(path), "--time-budget", "30s"], capsys)
    assert re.match(
        r"adversary risk: error: Monte Carlo by MCMC over releases=2000 release sets drawn from "
        r"the truth \(2,000 release sets at [\d.]+ (ms|s) each, measured\) would take about "
        r"[\d.]+ (s|min|h), more than the time budget of 30 s ",
        err,
    ), err
