"""Liu's Metropolised Gibbs update: its transition law, and a Bernoulli beside NUTS.

PyMC's test model ``simple_2model`` (a Normal beside an independent
Bernoulli(0.4)) has the exact answer ``P[y = 1] = 0.4``, ``E[x] = -2.1``. The
Metropolised draw makes the Bernoulli's chain anti-correlated: it leaves 0
with probability ``0.4/0.6`` and 1 always, so its lag-1 autocorrelation is
``λ = 1 - 2/3 - 1 = -2/3`` and its ESS per draw ``(1 - λ)/(1 + λ) = 5``
against the plain Gibbs draw's 1.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytest
from scipy import stats

from adversary.inference import MetropolisedGibbs, assign_steps, sample
from adversary.inference.metropolised import metropolised_index

LOGP = np.log(np.array([0.5, 0.3, 0.15, 0.05]))


def liu_row(pi: np.ndarray, i: int) -> np.ndarray:
    """Liu (1996): P(i → j) = π_j min(1/(1 − π_i), 1/(1 − π_j)) for j ≠ i; the rest stays."""
    row = np.array([pi[j] * min(1 / (1 - pi[i]), 1 / (1 - pi[j])) for j in range(len(pi))])
    row[i] = 0.0
    row[i] = 1.0 - row.sum()
    return row


@pytest.mark.parametrize("current", [0, 1, 3])
def test_moves_follow_liu_s_transition_law(current):
    rng = np.random.default_rng(current)
    n = 20_000
    moves = np.bincount([metropolised_index(LOGP, current, rng) for _ in range(n)], minlength=4)
    expected = n * liu_row(np.exp(LOGP), current)
    keep = expected > 0
    assert np.all(moves[~keep] == 0)
    assert stats.chisquare(moves[keep], expected[keep]).pvalue > 1e-3


def test_long_supports_take_the_numpy_path_with_the_same_law():
    logp = np.log(np.linspace(1.0, 3.0, 20))  # more candidates than the plain-Python path takes
    rng = np.random.default_rng(11)
    n = 30_000
    moves = np.bincount([metropolised_index(logp, 19, rng) for _ in range(n)], minlength=20)
    pi = np.exp(logp) / np.exp(logp).sum()
    assert stats.chisquare(moves, n * liu_row(pi, 19)).pvalue > 1e-3


def test_the_conditional_is_invariant_and_the_law_dominates_gibbs_off_the_diagonal():
    pi = np.exp(LOGP)
    kernel = np.array([liu_row(pi, i) for i in range(len(pi))])
    np.testing.assert_allclose(pi @ kernel, pi, atol=1e-15)
    off = ~np.eye(len(pi), dtype=bool)
    assert np.all(kernel[off] >= np.broadcast_to(pi, kernel.shape)[off] - 1e-15)


def test_a_value_outside_the_support_or_holding_all_mass():
    rng = np.random.default_rng(0)
    draws = [metropolised_index(LOGP, 7, rng) for _ in range(4000)]  # weight 0: a plain draw
    assert stats.chisquare(np.bincount(draws, minlength=4), 4000 * np.exp(LOGP)).pvalue > 1e-3
    certain = np.array([0.0, -np.inf, -np.inf])
    assert {metropolised_index(certain, 0, rng) for _ in range(50)} == {0}
    with pytest.raises(FloatingPointError, match="NaN"):
        metropolised_index(np.array([0.0, np.nan]), 0, rng)


def simple_2model():
    """PyMC's test-suite model: x ~ Normal(-2.1, tau=1.3) beside y ~ Bernoulli(0.4)."""
    with pm.Model() as model:
        pm.Normal("x", -2.1, tau=1.3, initval=0.1)
        pm.Bernoulli("y", 0.4)
    return model


def test_bernoulli_beside_nuts_agrees_with_the_exact_answer_and_is_anticorrelated():
    model = simple_2model()
    assert [type(s) for s in assign_steps(model)] == [MetropolisedGibbs]
    tree = sample(model, draws=2000, tune=300, chains=2, cores=1, random_seed=5, progressbar=False)
    y = tree["posterior"]["y"].astype(float)
    ess_y = float(az.ess(y, method="mean"))
    assert abs(float(y.mean()) - 0.4) <= 4 * np.sqrt(0.4 * 0.6 / ess_y)
    x = tree["posterior"]["x"]
    assert abs(float(x.mean()) + 2.1) <= 4 * np.sqrt((1 / 1.3) / float(az.ess(x, method="mean")))
    # Plain Gibbs draws are independent (ESS per draw about 1); Liu's are anti-correlated.
    assert ess_y / y.size > 2.0
    lag1 = float(np.corrcoef(y.values[0, :-1], y.values[0, 1:])[0, 1])
    assert lag1 == pytest.approx(-2 / 3, abs=0.06)
    assert int(tree["sample_stats"]["y_moved"].sum()) > 0.5 * y.size
