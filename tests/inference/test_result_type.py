"""Exact and sampled results are one type: ArviZ's functions take both and agree.

The model: X ~ Binomial(n, p), V | X ~ Binomial(X, 1/2), Y | X ~ Binomial(X, q)
observed y. Thinning gives the posterior in closed form: X - y ~ Binomial(n - y,
p(1 - q)/(1 - pq)), and V | X ~ Binomial(X, 1/2), so E[V] = E[X]/2 and
Var V = E[X]/4 + Var X/4.
"""

import math

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy import stats
from xarray import DataTree

import adversary
from adversary.analyses.compare import compare_priors, to_table
from adversary.inference import (
    Enumeration,
    enumerate_posterior,
    marginal_pmf,
    posterior_probability,
)
from adversary.memory import MemoryBudgetError, memory_budget

N, P, Q, Y = 20, 0.3, 0.6, 5
TRUTH = {"X": 7, "V": 3}
# MCMC agrees with exact within this many MCSEs.
Z = 4.0
# PyMC's binomial log-pmf (through betaln) is accurate to about 1e-10, relative.
REL = 1e-9


def thinned(prior=P, n=N, q=Q, y=Y):
    with pm.Model() as model:
        x = pm.Binomial("X", n, prior)
        pm.Binomial("V", x, 0.5)
        pm.Binomial("Y", x, q, observed=y)
    return model


def closed_form(prior=P):
    """The posterior of X (a scipy distribution of X - y) and the means and sds of X and V."""
    thinned_p = prior * (1 - Q) / (1 - prior * Q)
    rest = stats.binom(N - Y, thinned_p)
    mean_x, var_x = Y + rest.mean(), rest.var()
    return rest, {
        "X": (mean_x, math.sqrt(var_x)),
        "V": (mean_x / 2, math.sqrt(mean_x / 4 + var_x / 4)),
    }


def quantisation_bounds(cdf, values, mean, sd, n):
    """Bounds on |mean|, |sd (ddof=1)| of the n quantiles (j + ½)/n of a cdf, from that cdf.

    Their cdf G is F rounded to a multiple of 1/n, so e(x) = |F(x) - G(x)| <=
    min(1/(2n), F, 1 - F); by summation by parts |E_G g - E_F g| <= Σ e(x)|g(x+1) - g(x)|.
    """
    e = np.minimum(np.minimum(0.5 / n, cdf), 1 - cdf)[:-1]
    mean_bound = e.sum()
    var_bound = (e * np.abs(2 * (values[:-1] - mean) + 1)).sum() + mean_bound**2
    sd_bound = var_bound / sd + (sd + var_bound / sd) / (n - 1)
    return mean_bound, sd_bound


@pytest.fixture(scope="module")
def exact():
    return enumerate_posterior(thinned())


@pytest.fixture(scope="module")
def comparison():
    case = adversary.attack(thinned, priors={"0.3": P}, truth=TRUTH)
    exact = compare_priors(case, target={"X": 7})
    sampled = compare_priors(
        case, method="mcmc", target={"X": 7}, draws=1000, chains=2, cores=1, random_seed=11
    )
    return exact, sampled


@pytest.fixture(scope="module")
def sampled(comparison):
    return comparison[1].trees["0.3"]


def test_an_exact_result_is_an_arviz_datatree(exact):
    assert isinstance(exact, DataTree)
    assert set(exact.children) == {"posterior", "posterior_pmf", "joint"}
    posterior = exact["posterior"]
    assert posterior["X"].dims == ("chain", "draw") and posterior["X"].dtype == np.int64
    assert exact.attrs["method"] == "exact"
    # The exact answers beside the draws.
    rest, _ = closed_form()
    values = np.arange(N + 1)
    np.testing.assert_allclose(
        exact["posterior_pmf"]["X"].sel(value=values), rest.pmf(values - Y), atol=1e-14
    )
    assert float(exact["joint"]["probability"].sum()) == pytest.approx(1.0, abs=1e-14)


def test_az_summary_gives_the_exact_means_and_sds(exact):
    rest, moments = closed_form()
    summary = az.summary(exact, kind="stats", round_to="none")
    n = exact["posterior"].sizes["chain"] * exact["posterior"].sizes["draw"]
    values = np.arange(N + 1)
    mean, sd = moments["X"]
    mean_bound, sd_bound = quantisation_bounds(rest.cdf(values - Y), values, mean, sd, n)
    assert abs(summary.loc["X", "mean"] - mean) <= mean_bound
    assert abs(summary.loc["X", "sd"] - sd) <= sd_bound
    # Below the MCSE of n independent draws that ArviZ prints beside them.
    assert mean_bound < sd / math.sqrt(n) / 10 and sd_bound < sd / math.sqrt(n) / 5
    # Every latent within the distances the tree states, and those are small.
    for name, (mean, sd) in moments.items():
        stated_mean, stated_sd = exact.attrs["draws_mean_error"], exact.attrs["draws_sd_error"]
        assert abs(summary.loc[name, "mean"] - mean) <= stated_mean + REL * mean
        assert abs(summary.loc[name, "sd"] - sd) <= stated_sd + REL * sd
    assert exact.attrs["draws_mean_error"] < moments["V"][1] / math.sqrt(n) / 10
    assert exact.attrs["draws_sd_error"] < moments["V"][1] / math.sqrt(n) / 10


def test_probabilities_on_a_grid_of_1_over_n_are_reproduced_to_rounding():
    # X1 in {0, 1}, X2 in {0, 1, 2}; every probability a multiple of 1/10.
    joint = np.array([[0.1, 0.2, 0.1], [0.0, 0.4, 0.2]])
    table = xr.DataArray(joint, dims=("X1", "X2"), coords={"X1": [0, 1], "X2": [0, 1, 2]})
    tree = Enumeration.from_table(
        table, log_normaliser=0.0, omitted_mass=0.0, ranges={}, draws=10, chains=3
    )
    summary = az.summary(tree, kind="stats", round_to="none")
    n = 30
    for name, pmf, values in (("X1", joint.sum(1), [0, 1]), ("X2", joint.sum(0), [0, 1, 2])):
        mean = pmf @ values
        sd = math.sqrt(pmf @ (np.array(values) - mean) ** 2)
        assert summary.loc[name, "mean"] == pytest.approx(mean, abs=1e-12)
        # ArviZ's sd has ddof=1.
        assert summary.loc[name, "sd"] == pytest.approx(sd * math.sqrt(n / (n - 1)), abs=1e-12)
    cells = tree["posterior"].to_dataset().stack(sample=("chain", "draw"))
    counts = np.zeros_like(joint)
    np.add.at(counts, (cells["X1"].values, cells["X2"].values), 1)
    np.testing.assert_array_equal(counts, joint * n)


def test_az_ess_of_an_exact_result_is_about_its_number_of_draws(exact, sampled):
    n = exact["posterior"].sizes["chain"] * exact["posterior"].sizes["draw"]
    for name in ("X", "V"):
        for method in ("bulk", "tail", "mean"):
            ess = float(az.ess(exact, method=method)[name])
            assert 0.8 * n < ess < 1.2 * n
        assert float(az.rhat(exact)[name]) == pytest.approx(1.0, abs=0.01)
        # A sampled result of the same model goes through the same call.
        assert 0 < float(az.ess(sampled)[name]) <= 4 * 2000


def test_exact_and_sampled_summaries_agree_within_mcse(exact, sampled):
    _, moments = closed_form()
    columns = ["mean", "sd", "mcse_mean", "mcse_sd"]
    got = az.summary(sampled, var_names=["X", "V"], round_to="none")[columns]
    both = az.summary(exact, round_to="none")[columns]
    for name, (mean, sd) in moments.items():
        assert abs(got.loc[name, "mean"] - mean) <= Z * got.loc[name, "mcse_mean"]
        assert abs(got.loc[name, "sd"] - sd) <= Z * got.loc[name, "mcse_sd"]
        # The MCSE ArviZ gives an exact result bounds its distance from the exact mean.
        assert abs(both.loc[name, "mean"] - mean) <= both.loc[name, "mcse_mean"]


def test_az_plot_dist_draws_the_exact_pmf(exact, sampled):
    n = exact["posterior"].sizes["chain"] * exact["posterior"].sizes["draw"]
    rest, _ = closed_form()
    plot = az.plot_dist(exact, var_names=["X"])
    line = plot.viz["dist"]["X"].item()
    x, height = line.get_xdata(), line.get_ydata()
    # Unit bins from the lowest value drawn; numpy's last bin also holds the highest value.
    assert np.all(np.diff(x) == 1)
    inner = x[:-2].astype(int)
    assert len(inner) >= 5
    # Each value's count among the n quantile draws is within 1 of n times its probability.
    np.testing.assert_allclose(height[:-2], rest.pmf(inner - Y), rtol=0, atol=1 / n)
    az.plot_dist(sampled, var_names=["X"])
    plt.close("all")


def test_compare_priors_and_to_table_agree_exact_and_sampled(comparison):
    exact, sampled = comparison
    rest, moments = closed_form()
    exact_table, sampled_table = to_table(exact), to_table(sampled)
    assert list(exact_table.index) == list(sampled_table.index) == ["0.3"]
    row, sampled_row = exact_table.loc["0.3"], sampled_table.loc["0.3"]
    assert row["posterior_of_truth"] == pytest.approx(rest.pmf(7 - Y), rel=REL)
    z = abs(sampled_row["posterior_of_truth"] - row["posterior_of_truth"])
    assert z <= Z * sampled_row["posterior_of_truth_mcse"]
    # X takes more than 8 values: its posterior mean and sd.
    assert row["E[X]"] == pytest.approx(moments["X"][0], rel=REL)
    assert row["sd[X]"] == pytest.approx(moments["X"][1], rel=REL)
    # Value by value, the sampled pmf within its MCSE of the exact one.
    wide, sampled_wide = to_table(exact, max_values=N + 1), to_table(sampled, max_values=N + 1)
    drawn = [c for c in sampled_wide.columns if c.startswith("P[")]
    assert {"P[X=6]", "P[X=7]", "P[V=3]"} <= set(drawn)
    for column in drawn:
        error = abs(sampled_wide.loc["0.3", column] - wide.loc["0.3", column])
        assert error <= Z * sampled_wide.loc["0.3", f"mcse {column}"] + 1e-12, column


def test_an_exact_tree_read_back_from_a_file_stays_exact(exact, tmp_path):
    path = tmp_path / "exact.nc"
    exact.to_netcdf(path, engine="h5netcdf")
    back = xr.open_datatree(path, engine="h5netcdf")
    rest, _ = closed_form()
    assert posterior_probability(back, {"X": 7}) == pytest.approx(rest.pmf(7 - Y), rel=REL)
    xr.testing.assert_allclose(marginal_pmf(back, "V"), exact.marginal("V"))
    assert posterior_probability(back, {"X": 7}) == posterior_probability(exact, {"X": 7})
    assert az.summary(back, kind="stats").shape == (2, 4)


def test_bad_draws_and_chains_are_refused_in_one_line():
    with pytest.raises(ValueError, match="draws must be an integer >= 2"):
        enumerate_posterior(thinned(), draws=1)
    with pytest.raises(ValueError, match="chains must be an integer >= 1"):
        enumerate_posterior(thinned(), chains=True)
    with memory_budget("1MB"), pytest.raises(MemoryBudgetError, match="draws: 4 chains"):
        enumerate_posterior(thinned(), draws=100_000)
