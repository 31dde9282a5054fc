"""Small attack models shared by the inference tests, and their brute-force posteriors."""

from types import SimpleNamespace

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary.distributions import (
    BernoulliCount,
    BoundedUniform,
    DiscreteGaussian,
    FinitePmf,
    ImproperUniform,
)
from adversary.inference import event_indicator
from adversary.noise import discrete_gaussian as dg

# 2020 block GVHR and block-group budgets (paper Table 2), paper convention.
RHO1, RHO2 = 0.0992, 0.2465
SIGMA1, SIGMA2 = 1 / (2 * RHO1), 1 / (2 * RHO2)


def single_block_model(p, x1_star, known=0):
    """Sec. 3.1: X1 in {known, known+1}, P[X1 = known+1] = p, x1* = X1 + DG."""
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=known, p=p)
        DiscreteGaussian("x1_star", mu=x1, rho=RHO1, observed=x1_star)
    return model


def single_block_posterior(p, x1_star, known=0):
    """(3.1): p e^{-ρ(x*-x1)²} / (p e^{-ρ(x*-x1)²} + (1-p) e^{-ρ(x*-x_{1,-t})²})."""
    a = p * np.exp(-RHO1 * (x1_star - known - 1) ** 2)
    b = (1 - p) * np.exp(-RHO1 * (x1_star - known) ** 2)
    return a / (a + b)


def block_group_model(obs, d, prior="improper", p=0.5):
    """Sec. 3.2 / (S3.4): X1 in {0, 1}, X2 >= X1; x1*, x2*, y1* (DG with d σ1², (3.7))."""
    x1_star, x2_star, y1_star = obs
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=p)
        if prior == "improper":
            x2 = ImproperUniform("X2", lower=x1)
        elif prior == "bounded":
            x2 = BoundedUniform("X2", lower=x1, upper=10)
        else:  # a two-point pmf with the support constraint as a Potential
            x2 = FinitePmf("X2", {1: 0.5, 4: 0.5})
            pm.Potential("X2_ge_X1", pt.switch(pt.ge(x2, x1), np.float64(0.0), -np.inf))
        DiscreteGaussian("x1_star", mu=x1, sigma2=SIGMA1, observed=x1_star)
        DiscreteGaussian("x2_star", mu=x2, sigma2=SIGMA2, observed=x2_star)
        DiscreteGaussian("y1_star", mu=x2 - x1, sigma2=d * SIGMA1, observed=y1_star)
    return model


def block_group_posterior(obs, d, prior="improper", p=0.5, reach=400):
    """Brute force over the generative model in numpy (layer 1 log-pmfs), (S3.4)."""
    x1_star, x2_star, y1_star = obs
    k1 = np.arange(2)[:, None]
    k2 = np.arange(0, reach)[None, :]
    log = (
        np.log(np.where(k1 == 1, p, 1 - p))
        + dg.logpmf(x1_star - k1, SIGMA1)
        + dg.logpmf(x2_star - k2, SIGMA2)
        + dg.logpmf(y1_star - (k2 - k1), d * SIGMA1)
    )
    if prior == "bounded":
        size = (10 - k1 + 1).astype(float)
        log = np.where(k2 <= 10, log - np.log(size), -np.inf)
    elif prior == "pmf":
        log = np.where(np.isin(k2, [1, 4]), log + np.log(0.5), -np.inf)
    log = np.where(k2 >= k1, log, -np.inf)
    prob = np.exp(log - np.logaddexp.reduce(log, axis=None))
    return prob  # axis 0: X1 in {0, 1}; axis 1: X2 in 0..reach-1


USER_K_STAR = 7


def user_model():
    """A user-written model with PyMC's own discrete distributions and a DG release."""
    with pm.Model() as model:
        n = pm.Geometric("n", 0.3)
        c = pm.Categorical("c", p=[0.2, 0.3, 0.5])
        DiscreteGaussian("k_star", mu=n + c, sigma2=2.0, observed=USER_K_STAR)
    return model


def assert_within_mcse(tree, event, exact, n_se=4.0):
    """The sampled P[event] is within n_se Monte Carlo standard errors (from az.ess) of exact."""
    indicator = event_indicator(tree, event)
    estimate = float(indicator.mean())
    if exact in (0.0, 1.0):
        assert estimate == exact
        return
    ess = float(az.ess(indicator))
    mcse = np.sqrt(exact * (1 - exact) / ess)
    assert abs(estimate - exact) <= n_se * mcse, (estimate, exact, mcse, ess)


@pytest.fixture(scope="session")
def kr():
    """The helpers above, for tests (conftest modules are not importable by name)."""
    return SimpleNamespace(
        RHO1=RHO1,
        RHO2=RHO2,
        SIGMA1=SIGMA1,
        SIGMA2=SIGMA2,
        single_block_model=single_block_model,
        single_block_posterior=single_block_posterior,
        block_group_model=block_group_model,
        block_group_posterior=block_group_posterior,
        assert_within_mcse=assert_within_mcse,
        user_model=user_model,
        USER_K_STAR=USER_K_STAR,
    )
