"""Smoke test of benchmarks/peers.py: its exact answers, and ours and pm.sample agree with them.

The script's functions run in a tiny mode on the three models it adds
(``simple_2model``, the coal-mining switchpoint with missing years, the
mixture assignment) with the samplers of the project's venv (``ours``,
``pymc``); each estimate must be within 4.5 Monte Carlo standard errors of
the exact answer. The peers (NumPyro, pymc-extras) are skipped with a note
when absent. The exact answers are checked against independent computations.
No timing is asserted.
"""

import json
import math
import os

import numpy as np
import pytest
from scipy import integrate, stats

# One chain: as many draws as two chains of 600, each sampler's model built and compiled once.
TINY = {"chains": 1, "tune": 200, "draws": 1200}
MODELS = ["simple_2model", "switchpoint", "mixture"]


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("peers")


@pytest.fixture(scope="module")
def models(load_benchmark):
    load_benchmark("peers")  # puts benchmarks/ on sys.path
    import _peer_models

    return _peer_models


@pytest.fixture(scope="module")
def result(bench):
    samplers = ("ours", "pymc", "numpyro_gibbs", "marginal")
    return bench.run_benchmark(TINY, seed=3, names=MODELS, samplers=samplers, warmup=False)


def test_switchpoint_exact_answer_by_quadrature_over_the_rates(models):
    """p(s | D) from a 2-d quadrature of the rates (no conjugacy), at three switchpoints."""
    p, _ = models.switchpoint_posterior()
    seen = ~models.MISSING
    years, counts = models.YEARS[seen], models.DISASTERS[seen]

    def log_joint(s):
        early = years <= s

        def log_dens(rate, n, total):  # Poisson likelihood times the Exponential(1) prior
            return total * math.log(rate) - (n + 1) * rate if rate > 0 else -math.inf

        total = 0.0
        for n, count in (
            (early.sum(), counts[early].sum()),
            ((~early).sum(), counts[~early].sum()),
        ):
            mode = count / (n + 1)
            top = log_dens(mode, n, count)
            value, _ = integrate.quad(
                lambda r, n=n, c=count, top=top: math.exp(log_dens(r, n, c) - top),
                0, 20, points=[mode], epsabs=0, epsrel=1e-10, limit=200,
            )  # fmt: skip
            total += top + math.log(value)
        return total

    chosen = [1885, 1890, 1895]
    logs = np.array([log_joint(s) for s in chosen])
    index = [int(np.flatnonzero(models.YEARS == s)[0]) for s in chosen]
    by_quadrature = np.exp(logs - logs.max())
    np.testing.assert_allclose(
        p[index] / p[index].sum(), by_quadrature / by_quadrature.sum(), rtol=1e-6
    )


def test_mixture_exact_answer_against_a_grid_over_the_means(models):
    """E[μ_1] and P[z_0 = 1] by a 2-d grid over (μ_0, μ_1), each z_i summed out per point."""
    grid = np.linspace(-6, 6, 801)
    m0, m1 = np.meshgrid(grid, grid, indexing="ij")
    log = stats.norm.logpdf(m0, *models.MIX_PRIOR[0]) + stats.norm.logpdf(m1, *models.MIX_PRIOR[1])
    for y in models.MIX_DATA:
        log += np.logaddexp(stats.norm.logpdf(y, m0), stats.norm.logpdf(y, m1)) + np.log(0.5)
    w = np.exp(log - log.max())
    w /= w.sum()
    y0 = models.MIX_DATA[0]
    z0 = 1 / (1 + np.exp(stats.norm.logpdf(y0, m0) - stats.norm.logpdf(y0, m1)))
    exact = models.mixture_exact()
    assert exact["mu1"][0] == pytest.approx(float((w * m1).sum()), abs=1e-6)
    assert exact["z0"][0] == pytest.approx(float((w * z0).sum()), abs=1e-6)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("sampler", ["ours", "pymc"])
def test_each_sampler_agrees_with_the_exact_answer(result, model, sampler):
    block = next(m for m in result["models"] if m["model"] == model)
    row = next(r for r in block["results"] if r["sampler"] == sampler)
    keys = [k[: -len("_ess")] for k in row if k.endswith("_ess")]
    assert keys
    for key in keys:
        assert row[f"{key}_ess"] > 0
        assert abs(row[f"{key}_estimate"] - row[f"{key}_exact"]) <= 4.5 * row[f"{key}_mcse"], key
        assert row[f"{key}_cold_ess_per_s"] <= row[f"{key}_ess_per_s"]
        assert 0 < row[f"{key}_best"] <= 1


def test_missing_peers_are_skipped_with_a_note_and_the_report_is_json(bench, result):
    for block in result["models"]:
        ran = {r["sampler"] for r in block["results"]}
        assert {"ours", "pymc"} <= ran
        for name in ("numpyro_gibbs", "marginal"):
            assert (name in ran) != (name in block["notes"])
    assert json.loads(json.dumps(result)) == result
    assert "best" in bench.format_table(result)


def test_models_the_peers_cannot_run_say_why(bench):
    chosen = bench.peer_models(0)
    runners, notes = bench.runners(chosen["gibbs_block_group"], ["numpyro_gibbs", "marginal"])
    assert not runners
    assert "unbounded" in notes["marginal"] and "X2" in notes["numpyro_gibbs"]


def test_a_cold_warmup_runs_in_a_fresh_process_with_an_empty_cache_of_its_own(bench):
    """``--cold``: a sampler's warm-up chain is timed in a child process whose compile cache is
    a new folder (removed when it ends), not the cache another sampler filled."""
    import pytensor

    child = bench.fresh_warmup("simple_2model", "pymc", seed=0)
    folder = child["base_compiledir"]
    assert child["warmup_s"] > 0
    assert folder != str(pytensor.config.base_compiledir)
    assert "pytensor-cold-" in folder
    assert not os.path.exists(folder)


def test_cold_rows_report_the_fresh_process_warmup(bench, monkeypatch):
    calls = []

    def fresh(model, sampler, seed=0):
        calls.append((model, sampler, seed))
        return {"warmup_s": 123.0, "base_compiledir": "elsewhere"}

    monkeypatch.setattr(bench, "fresh_warmup", fresh)
    peer = bench.peer_models(0)["simple_2model"]
    tiny = {"chains": 1, "tune": 20, "draws": 40}
    result = bench.run_model(peer, tiny, seed=4, samplers=("pymc",), cold=True)
    (row,) = result["results"]
    assert calls == [("simple_2model", "pymc", 4)]
    assert row["warmup_s"] == 123.0
    spent = 123.0 + row["setup_s"] + row["sampling_s"]
    assert row["y_cold_ess_per_s"] == pytest.approx(row["y_ess"] / spent)
