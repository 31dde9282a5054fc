"""Exact enumeration against closed forms and brute-force sums over the generative model."""

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from adversary.distributions import BoundedUniform, DiscreteGaussian, ImproperUniform
from adversary.inference import enumerate_posterior, marginal_pmf, posterior_probability
from adversary.noise import discrete_gaussian as dg


@pytest.mark.parametrize(("p", "x1_star"), [(0.5, 2), (0.1, 1), (0.9, -3)])
def test_single_block_matches_closed_form(kr, p, x1_star):
    table = enumerate_posterior(kr.single_block_model(p, x1_star, known=4))
    exact = kr.single_block_posterior(p, x1_star + 0, known=4)
    assert table.joint.dims == ("X1",)
    np.testing.assert_array_equal(table.joint["X1"], [4, 5])
    assert posterior_probability(table, {"X1": 5}) == pytest.approx(exact, rel=1e-12)
    assert table.omitted_mass == 0.0
    assert table.joint.sum() == pytest.approx(1.0, rel=1e-14)


@pytest.mark.parametrize(
    ("obs", "d", "prior"),
    [
        ((2, 1, -1), 27, "improper"),  # Granville ED 39-14 realisation (Table 7)
        ((0, 6, 9), 5, "improper"),
        ((1, 3, 2), 8, "bounded"),  # X2 | X1 ~ Uniform{X1..10} (S4)
        ((1, 2, 1), 4, "pmf"),  # a pmf on {1, 4} with X2 >= X1 as a Potential
    ],
)
def test_block_group_matches_brute_force(kr, obs, d, prior):
    table = enumerate_posterior(kr.block_group_model(obs, d, prior))
    brute = kr.block_group_posterior(obs, d, prior)
    assert table.omitted_mass < 1e-12
    np.testing.assert_allclose(table.marginal("X1").values, brute.sum(axis=1), atol=1e-12)
    x2 = table.marginal("X2")
    np.testing.assert_allclose(x2.values, brute.sum(axis=0)[x2["X2"].values], atol=1e-12)
    lo, hi = table.ranges["X2"]
    assert brute.sum(axis=0)[lo : hi + 1].sum() == pytest.approx(1.0, abs=1e-12)
    if lo == 0:
        assert float(table.joint.sel(X1=1, X2=0)) == 0.0  # X2 >= X1 honoured


def test_bounded_support_depending_on_another_latent_is_enumerated_whole(kr):
    table = enumerate_posterior(kr.block_group_model((1, 3, 2), 8, "bounded"))
    assert table.ranges == {"X1": (0, 1), "X2": (0, 10)}
    assert table.truncated == ()


def test_stated_truncation_reports_omitted_mass(kr):
    model = kr.block_group_model((0, 6, 9), 5)
    wide = enumerate_posterior(model, truncation={"X2": (0, 80)})
    narrow = enumerate_posterior(model, truncation={"X2": (0, 7)})
    brute = kr.block_group_posterior((0, 6, 9), 5)
    assert wide.truncated == ("X2",)
    assert wide.omitted_mass < 1e-12
    missing = brute.sum(axis=0)[8:].sum()
    assert narrow.omitted_mass > 0.01 * missing
    assert narrow.marginal("X2").sum() == pytest.approx(1.0)


def test_kept_vars_sum_out_the_rest(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    full = enumerate_posterior(model)
    only = enumerate_posterior(model, vars=["X1"])
    assert only.joint.dims == ("X1",)
    np.testing.assert_allclose(only.joint.values, full.marginal("X1").values, atol=1e-15)


def test_vector_latents_get_one_dimension_per_element():
    with pm.Model(coords={"cell": ["a", "b"]}) as model:
        v = BoundedUniform("v", 0, 3, dims="cell")
        DiscreteGaussian("obs", mu=v, sigma2=1.0, observed=np.array([0, 2]), dims="cell")
    table = enumerate_posterior(model)
    assert table.joint.dims == ("v[0]", "v[1]")
    assert table.latents["v"] == (("v[0]", "v[1]"), ("cell",))
    # Independent cells: the joint is the product of the two marginals.
    outer = np.outer(table.marginal("v[0]").values, table.marginal("v[1]").values)
    np.testing.assert_allclose(table.joint.values, outer, atol=1e-15)
    assert posterior_probability(table, {"v": [0, 2]}) == pytest.approx(outer[0, 2])
    total = posterior_probability(table, lambda x: x["v"].sum("cell") == 2)
    assert total == pytest.approx(sum(outer[i, 2 - i] for i in range(3)))
    assert marginal_pmf(table, "v[1]").dims == ("v[1]",)


def test_pymc_discrete_distributions_are_enumerated(kr):
    model = kr.user_model()
    table = enumerate_posterior(model, tail_mass=1e-13)
    # Brute force: Geometric(0.3) prior on n >= 1, Categorical c, k* = n + c + DG(σ² = 2).
    n = np.arange(1, 300)[:, None]
    c = np.arange(3)[None, :]
    log = (
        stats.geom.logpmf(n, 0.3)
        + np.log(np.array([0.2, 0.3, 0.5]))[c]
        + dg.logpmf(kr.USER_K_STAR - n - c, 2.0)
    )
    brute = np.exp(log - np.logaddexp.reduce(log, axis=None))
    lo, hi = table.ranges["n"]
    assert lo == 1
    np.testing.assert_allclose(table.marginal("c").values, brute.sum(axis=0), atol=1e-12)
    np.testing.assert_allclose(table.marginal("n").values, brute.sum(axis=1)[:hi], atol=1e-12)
    assert table.omitted_mass < 1e-13
    assert brute.sum(axis=1)[hi:].sum() < 1e-12


def test_impossible_observations_raise(kr):
    with pm.Model() as model:
        x = BoundedUniform("x", 0, 3)
        pm.Potential("never", pm.math.switch(x > 5, 0.0, -np.inf))
    with pytest.raises(ValueError, match="every cell of the latent grid"):
        enumerate_posterior(model)


def test_bad_arguments_name_the_argument(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    with pytest.raises(ValueError, match="max_cells"):
        enumerate_posterior(model, max_cells=10)
    with pytest.raises(ValueError, match="tail_mass"):
        enumerate_posterior(model, tail_mass=0.0)
    with pytest.raises(ValueError, match="vars"):
        enumerate_posterior(model, vars=["X3"])
    with pytest.raises(ValueError, match="truncation"):
        enumerate_posterior(model, truncation={"X2": (5, 1)})
    with pytest.raises(TypeError, match="truncation must be a mapping"):
        enumerate_posterior(model, truncation=1e-9)
    with pm.Model() as continuous:
        pm.Normal("mu")
    with pytest.raises(TypeError, match="'mu' has dtype float64"):
        enumerate_posterior(continuous)


def test_improper_posterior_is_not_silently_truncated():
    with pm.Model() as model:
        ImproperUniform("x", lower=0)
    with pytest.raises(ValueError, match="max_cells"):
        enumerate_posterior(model, max_cells=100_000)
