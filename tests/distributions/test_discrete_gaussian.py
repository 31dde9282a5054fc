"""DiscreteGaussian: log-p against layer 1, exact draws against the pmf, arguments."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

from adversary.distributions import DiscreteGaussian, log_normaliser
from adversary.noise import discrete_gaussian as dg

SIGMA2S = np.array([1e-3, 0.1, 0.5, 1.0 / (2 * 0.0992), 1.0 / 0.2465, 10.0, 1e4, 1e8])


@pytest.fixture(scope="module")
def logp_fn():
    value = pt.lvector("value")
    mu = pt.lscalar("mu")
    sigma2 = pt.dscalar("sigma2")
    x = DiscreteGaussian.dist(mu=mu, sigma2=sigma2)
    return pytensor.function([value, mu, sigma2], pm.logp(x, value))


@pytest.mark.parametrize("sigma2", SIGMA2S)
def test_logp_matches_layer_one(logp_fn, sigma2):
    z = np.arange(-40, 41)
    for mu in (0, 7, -3):
        np.testing.assert_allclose(
            logp_fn(z + mu, mu, sigma2), dg.logpmf(z, sigma2), rtol=1e-13, atol=1e-13
        )


def test_log_normaliser_matches_layer_one_and_normalises():
    sigma2 = pt.dvector("sigma2")
    fn = pytensor.function([sigma2], log_normaliser(sigma2))
    np.testing.assert_allclose(fn(SIGMA2S), dg.log_normaliser(SIGMA2S), rtol=1e-14, atol=1e-15)
    # The pmf sums to 1 on a grid that holds all the mass.
    for s2 in (0.3, 2.0, 50.0):
        reach = int(40 * np.sqrt(s2)) + 5
        z = np.arange(-reach, reach + 1)
        total = np.exp(-(z**2) / (2 * s2) - fn(np.array([s2]))[0]).sum()
        assert total == pytest.approx(1.0, rel=1e-13)


def test_log_normaliser_gradient_is_finite_and_correct():
    # A model may put a prior on rho, so d log Z / d sigma2 must be right.
    sigma2 = pt.dscalar("sigma2")
    grad = pytensor.function([sigma2], pytensor.grad(log_normaliser(sigma2), sigma2))
    for s2 in (0.05, 0.2, 1.0, 30.0):
        h = 1e-6 * s2
        numeric = (dg.log_normaliser(s2 + h) - dg.log_normaliser(s2 - h)) / (2 * h)
        assert grad(s2) == pytest.approx(float(numeric), rel=1e-6)


def test_rho_conventions():
    # paper: sigma2 = 1/(2 rho); das: sigma2 = 1/rho (adversary.noise.conventions).
    value = np.arange(-5, 6)
    for convention, sigma2 in (("paper", 1 / (2 * 0.25)), ("das", 1 / 0.25)):
        by_rho = pm.logp(DiscreteGaussian.dist(mu=0, rho=0.25, convention=convention), value)
        np.testing.assert_allclose(by_rho.eval(), dg.logpmf(value, sigma2), rtol=1e-13)


def test_draws_match_pmf_chi_square():
    mu, sigma2 = 4, 3.0
    draws = pm.draw(DiscreteGaussian.dist(mu=mu, sigma2=sigma2), 4000, random_seed=20231)
    assert draws.dtype == np.int64
    z = draws - mu
    cut = 4  # lump |z| >= 4 into the tails so every bin expects >= 5 draws
    edges = np.arange(-cut, cut + 1)
    observed = [np.sum(z <= -cut)] + [np.sum(z == k) for k in edges[1:-1]] + [np.sum(z >= cut)]
    p_mid = dg.pmf(edges[1:-1], sigma2)
    p_tail = (1 - p_mid.sum()) / 2
    expected = 4000 * np.concatenate([[p_tail], p_mid, [p_tail]])
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_draws_are_reproducible_and_broadcast():
    x = DiscreteGaussian.dist(mu=np.array([0, 100]), sigma2=np.array([1.0, 4.0]))
    a = pm.draw(x, 50, random_seed=7)
    b = pm.draw(x, 50, random_seed=7)
    assert a.shape == (50, 2)
    np.testing.assert_array_equal(a, b)
    assert np.abs(a[:, 1] - 100).max() < 30


def test_support_point_is_rounded_mu_and_feasible():
    with pm.Model() as model:
        x = DiscreteGaussian("x", mu=np.array([3, -2]), sigma2=2.0)
    point = model.initial_point()
    np.testing.assert_array_equal(point["x"], [3, -2])
    assert np.isfinite(model.compile_logp()(point))
    assert x.dtype == "int64"


def test_prior_predictive_draws_exactly():
    with pm.Model():
        x = DiscreteGaussian("x", mu=10, sigma2=2.0)
        DiscreteGaussian("obs", mu=x, sigma2=1.0, observed=[9, 12])
        prior = pm.sample_prior_predictive(draws=200, random_seed=3)
    assert prior.prior["x"].dtype == np.int64
    assert prior.prior_predictive["obs"].shape == (1, 200, 2)
    assert abs(float(prior.prior["x"].mean()) - 10) < 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mu": 0, "sigma2": 0.0}, "sigma2 must be finite and > 0"),
        ({"mu": 0, "sigma2": -1.0}, "sigma2 must be finite and > 0"),
        ({"mu": 0, "rho": 0.0}, "rho must be finite and > 0"),
        ({"mu": 0.5, "sigma2": 1.0}, "mu must be integer-valued"),
        ({"mu": 0, "rho": 0.1, "convention": "gauss"}, "convention must be one of"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DiscreteGaussian.dist(**kwargs)


def test_exactly_one_scale():
    with pytest.raises(TypeError, match="exactly one of sigma2 or rho"):
        DiscreteGaussian.dist(mu=0, sigma2=1.0, rho=0.5)
    with pytest.raises(TypeError, match="exactly one of sigma2 or rho"):
        DiscreteGaussian.dist(mu=0)
