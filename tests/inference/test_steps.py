"""The exact Gibbs steps draw from the full conditionals (S3.9) and (S3.14)."""

import numpy as np
import pymc as pm
import pytest
from pymc.exceptions import SamplingError
from scipy import stats

from adversary.distributions import BernoulliCount, DiscreteGaussian, ImproperUniform
from adversary.inference import BoundedGibbs, WindowGibbs
from adversary.noise import discrete_gaussian as dg

OBS, D = (2, 6, 9), 5


def run(step, point, n, seed):
    step.setup_chain(np.random.default_rng(seed), 0, n)
    draws, stats_list = [], []
    for _ in range(n):
        new, stats_ = step.step(dict(point))
        draws.append(int(new[step.vars[0].name]))
        stats_list.append(stats_[0])
    return np.array(draws), stats_list


def test_bounded_gibbs_draws_the_two_valued_conditional_S3_9(kr):
    model = kr.block_group_model(OBS, D)
    step = BoundedGibbs([model["X1"]], model=model)
    x2 = 3
    draws, stats_list = run(step, {"X1": np.array(0), "X2": np.array(x2)}, 3000, seed=1)
    # (S3.9): P[X1 = k | X2] ∝ P[X1 = k] e^{-(x1*-k)²/(2σ1²)} e^{-(y1*-(X2-k))²/(2dσ1²)}.
    x1_star, _, y1_star = OBS
    k = np.array([0, 1])
    log = dg.logpmf(x1_star - k, kr.SIGMA1) + dg.logpmf(y1_star - (x2 - k), D * kr.SIGMA1)
    exact = np.exp(log - np.logaddexp.reduce(log))[1]
    assert stats.binomtest(int(draws.sum()), len(draws), exact).pvalue > 1e-3
    assert {s["X1_candidates"] for s in stats_list} == {2}


def test_window_gibbs_draws_the_truncated_discrete_gaussian_S3_14(kr):
    model = kr.block_group_model(OBS, D)
    step = WindowGibbs([model["X2"]], model=model, tail_mass=1e-12)
    x1 = 1
    draws, stats_list = run(step, {"X1": np.array(x1), "X2": np.array(1)}, 3000, seed=2)
    # (S3.14): X2 | X1 ∝ e^{-(x2*-k)²/(2σ2²)} e^{-(y1*-(k-X1))²/(2dσ1²)} on k >= X1.
    _, x2_star, y1_star = OBS
    k = np.arange(x1, 200)
    log = dg.logpmf(x2_star - k, kr.SIGMA2) + dg.logpmf(y1_star - (k - x1), D * kr.SIGMA1)
    pmf = np.exp(log - np.logaddexp.reduce(log))
    assert draws.min() >= x1
    # Chi-square over bins with >= 5 expected draws, tails lumped.
    expected = len(draws) * pmf
    keep = expected >= 5
    lo, hi = k[keep][0], k[keep][-1]
    observed = [np.sum(draws <= lo)] + [np.sum(draws == v) for v in range(lo + 1, hi)]
    observed += [np.sum(draws >= hi)]
    exp_bins = [pmf[k <= lo].sum()] + [pmf[k == v][0] for v in range(lo + 1, hi)]
    exp_bins = len(draws) * np.array([*exp_bins, pmf[k >= hi].sum()])
    assert stats.chisquare(observed, exp_bins).pvalue > 1e-3
    assert max(s["X2_tail_bound"] for s in stats_list) <= 1e-12
    assert min(s["X2_candidates"] for s in stats_list) >= 5


def test_steps_are_reproducible_from_their_generator(kr):
    model = kr.block_group_model(OBS, D)
    step = WindowGibbs([model["X2"]], model=model)
    point = {"X1": np.array(0), "X2": np.array(4)}
    a, _ = run(step, point, 50, seed=9)
    b, _ = run(step, point, 50, seed=9)
    c, _ = run(step, point, 50, seed=10)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_window_gibbs_refuses_an_improper_conditional():
    with pm.Model() as model:
        x = BernoulliCount("x", known=0, p=0.5)
        ImproperUniform("y", lower=x)  # no likelihood: the conditional of y is flat
    step = WindowGibbs([model["y"]], model=model, max_window=2000)
    step.setup_chain(np.random.default_rng(0), 0, 1)
    with pytest.raises(SamplingError, match="max_window=2000"):
        step.step({"x": np.array(0), "y": np.array(0)})


def test_vector_variables_are_updated_element_by_element():
    with pm.Model() as model:
        v = ImproperUniform("v", lower=0, shape=(3,))
        DiscreteGaussian("obs", mu=v, sigma2=0.5, observed=np.array([2, 40, 7]))
    step = WindowGibbs([v], model=model)
    step.setup_chain(np.random.default_rng(3), 0, 1)
    point = {"v": np.array([0, 0, 0])}
    for _ in range(5):
        point, _ = step.step(point)
    assert np.all(np.abs(point["v"] - [2, 40, 7]) <= 5)


def test_steps_reject_unsuitable_variables(kr):
    model = kr.block_group_model(OBS, D)
    with pytest.raises(ValueError, match="vars: 'X2' has no finite upper and lower"):
        BoundedGibbs([model["X2"]], model=model)
    with pm.Model() as continuous:
        mu = pm.Normal("mu")
    with pytest.raises(TypeError, match=r"vars: .* 'mu' has dtype float64"):
        WindowGibbs([mu], model=continuous)
    with pytest.raises(ValueError, match="tail_mass must lie strictly between 0 and 1"):
        WindowGibbs([model["X2"]], model=model, tail_mass=1.0)
    with pytest.raises(ValueError, match="max_candidates must be a positive integer"):
        BoundedGibbs([model["X1"]], model=model, max_candidates=0)


@pytest.mark.parametrize("size", [2, 16, 17, 300])
def test_draw_index_is_the_inverse_cdf_draw_on_both_paths(size):
    # Short lists are drawn in plain Python, long ones with numpy: the same inverse-CDF
    # draw, so the same uniform gives the same index.
    from adversary.inference._conditional import draw_index

    log_weights = np.random.default_rng(size).normal(size=size)
    log_weights[0] = -np.inf
    weights = np.exp(log_weights - log_weights.max())
    cdf = np.cumsum(weights) / weights.sum()
    for seed in range(50):
        u = np.random.default_rng(seed).random()
        expected = min(int(np.searchsorted(cdf, u, side="right")), size - 1)
        assert draw_index(log_weights, np.random.default_rng(seed)) == expected
    with pytest.raises(FloatingPointError, match="NaN"):
        draw_index(np.where(np.arange(size) == 1, np.nan, 0.0), np.random.default_rng(0))
    with pytest.raises(FloatingPointError, match="-inf"):
        draw_index(np.full(size, -np.inf), np.random.default_rng(0))
