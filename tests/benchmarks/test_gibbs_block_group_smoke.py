"""Smoke test of benchmarks/gibbs_block_group.py: every sampler in it samples the right posterior.

The benchmark's own functions run in a tiny mode; each sampler's estimates of
``P[X1 = 1]`` and ``E[X2]`` on the Granville block-group model must agree with
the exact posterior (S3.4) within 4 Monte Carlo standard errors from ArviZ's
ESS. No timing is asserted.
"""

import json

import numpy as np
import pytest

from adversary import inference
from adversary.model_files import load_case

TINY = {"chains": 2, "tune": 100, "draws": 1500}


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("gibbs_block_group")


@pytest.fixture(scope="module")
def case():
    return load_case("granville_county")


@pytest.fixture(scope="module")
def result(bench):
    return bench.run_benchmark(TINY, seed=7, warmup=False)


def test_exact_reference_matches_enumeration_of_the_model(bench, case):
    """The benchmark's reference (the scenario's posterior) equals enumerating its PyMC model."""
    exact = bench.exact_reference(case)
    table = inference.enumerate_posterior(case.model())
    assert exact.p_x1 == pytest.approx(inference.posterior_probability(table, {"X1": 1}), abs=1e-9)
    x2 = table.marginal("X2")
    assert exact.mean_x2 == pytest.approx(float((x2 * x2["X2"]).sum()), abs=1e-9)
    assert 0 < exact.p_x1 < 1 and exact.var_x2 > 0


@pytest.mark.parametrize("sampler", ["ours", "pymc", "numpy"])
@pytest.mark.parametrize("quantity", ["x1", "x2"])
def test_each_sampler_agrees_with_the_exact_posterior_within_4_mcse(result, sampler, quantity):
    row = next(r for r in result["results"] if r["sampler"] == sampler)
    assert row["chains"] == TINY["chains"] and row["draws"] == TINY["draws"]
    assert row[f"{quantity}_ess"] > 0
    assert (
        abs(row[f"{quantity}_estimate"] - row[f"{quantity}_exact"]) <= 4 * row[f"{quantity}_mcse"]
    )


def test_report_has_ratios_steps_and_is_json(bench, result):
    rows = {r["sampler"]: r for r in result["results"]}
    assert set(rows) == {"ours", "pymc", "numpy"}
    assert rows["ours"]["x1_ratio"] == pytest.approx(1.0)
    assert all(np.isfinite(r["x1_ratio"]) and np.isfinite(r["x2_ratio"]) for r in rows.values())
    assert rows["ours"]["steps"] == ["MetropolisedGibbs['X1']", "WindowGibbs['X2']"]
    assert rows["pymc"]["steps"]  # whatever PyMC assigns (Metropolis in PyMC 6.4)
    assert json.loads(json.dumps(result)) == result
    assert "ratio" in bench.format_table(result)


def test_numpy_loop_honours_the_support_constraint(bench, case):
    """X2 ≥ X1 in every sweep, from a start at the boundary and for a release that pulls X2 low."""
    params = bench._numpy_parameters(case)
    for releases in (case.releases, (3, -6, -8)):
        states = bench.numpy_gibbs_chain(
            params | {"releases": releases}, 3000, np.random.default_rng(1)
        )
        assert set(np.unique(states[:, 0])) <= {0, 1}
        assert np.all(states[:, 1] >= states[:, 0])
