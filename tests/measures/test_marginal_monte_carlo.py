"""Monte Carlo checks of the exact marginal measures: simulate the mechanism, infer, average.

For each scenario the data holder's marginal posterior (3.3) and correct-decision
probability (3.6) are computed exactly; here releases are drawn from the truth
with the package's exact discrete Gaussian sampler (Canonne, Kamath & Steinke),
the adversary's exact posterior and Bayes decision are computed for each
simulated release, and the averages must agree with the exact values within
four Monte Carlo standard errors (plus the exact values' own error bounds).
Seeds are fixed, so the draws, and the outcome, are reproducible.

The standard error of an average posterior is the sample standard deviation
over √N; that of a decision frequency is ``√(q(1-q)/N)`` with ``q`` the exact
probability. With four standard errors a correct implementation fails with
probability about 6e-5 per comparison for a fresh seed; a fixed seed makes it
deterministic.
"""

import math

import numpy as np
import pytest

from adversary.analyses import sequential as sq
from adversary.noise import discrete_gaussian, noise_variance
from adversary.scenarios import multi_level as ml
from adversary.scenarios import post_processing as pp
from adversary.scenarios import single_block as sb

BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097
SE_MULTIPLE = 4.0


def _draw(sigma2: float, size, rng) -> np.ndarray:
    """Exact ``DG(0, σ²)`` noise (the package's sampler)."""
    return discrete_gaussian.sample(float(sigma2), size, rng)


def _assert_average(values, exact: float, bound: float, max_se: float) -> None:
    """``mean(values)`` within 4 standard errors (+ the exact value's bound) of ``exact``."""
    values = np.asarray(values, dtype=np.float64)
    se = values.std(ddof=1) / math.sqrt(values.size)
    assert se < max_se  # the check has power
    assert abs(values.mean() - exact) <= SE_MULTIPLE * se + bound, (values.mean(), exact, se)


def _assert_frequency(hits, exact: float, bound: float, max_se: float) -> None:
    """A frequency of correct decisions within 4 binomial standard errors of ``exact``."""
    hits = np.asarray(hits, dtype=bool)
    se = math.sqrt(max(exact * (1.0 - exact), 0.0) / hits.size)
    assert se < max_se
    assert abs(hits.mean() - exact) <= SE_MULTIPLE * se + bound + 1e-12, (hits.mean(), exact, se)


# --- single block (3.1), (3.3), (3.6) ----------------------------------------------------


@pytest.mark.parametrize(
    ("rho", "known", "truth", "convention", "seed"),
    [
        (BLOCK_RHO, 0, 1, "paper", 101),
        (0.5, 3, 3, "das", 102),
        (0.02, 0, 1, "paper", 103),
    ],
)
def test_single_block_marginals_by_simulation(rho, known, truth, convention, seed):
    n = 100_000
    rng = np.random.default_rng(seed)
    releases = truth + _draw(noise_variance(rho, convention), n, rng)
    for p in (1 / 2, 1 / 10, 1 / 50):
        args = (p, rho, known, truth, convention)
        posteriors = sb.posterior(releases, *args)
        _assert_average(posteriors, float(sb.marginal_posterior(*args)), 1e-15, 0.002)
        right = sb.decision(releases, p, rho, known, convention, rng=rng) == truth
        _assert_frequency(right, float(sb.correct_decision_probability(*args)), 1e-15, 0.002)


# --- uniqueness at ℓ levels (S1.1) -------------------------------------------------------


@pytest.mark.parametrize(
    ("rhos", "known", "truth", "convention", "seed"),
    [
        (ml.rhos_2020(), None, None, "paper", 201),
        ([0.3, 0.1, 0.2], [2, 3, 3], 2, "das", 202),
    ],
)
def test_multi_level_marginals_by_simulation(rhos, known, truth, convention, seed):
    n = 30_000
    rng = np.random.default_rng(seed)
    rhos = np.asarray(rhos)
    known_counts = np.zeros(rhos.size, dtype=int) if known is None else np.asarray(known)
    x1 = known_counts[0] + 1 if truth is None else truth
    counts = known_counts + (x1 - known_counts[0])  # the target adds to every level or none
    sigma2 = noise_variance(rhos, convention)
    noise = np.stack([_draw(s, n, rng) for s in sigma2], axis=-1)
    releases = counts + noise
    for p in (1 / 2, 1 / 10, 1 / 864):
        exact = ml.marginals(p, rhos, known, truth, convention)
        posteriors = ml.posterior(releases, p, rhos, known, truth, convention)
        _assert_average(
            posteriors, float(exact.marginal_posterior), float(exact.posterior_error_bound), 0.003
        )
        right = ml.decision(releases, p, rhos, known, convention, rng=rng) == x1
        _assert_frequency(
            right,
            float(exact.correct_decision_probability),
            float(exact.decision_error_bound),
            0.003,
        )


# --- post-processing (S6.7), (S6.8) ------------------------------------------------------


@pytest.mark.parametrize(
    ("truth", "exact_sum", "n", "seed"),
    [(1, False, 60_000, 301), (0, False, 60_000, 302), (1, True, 10_000, 303)],
)
def test_post_processing_marginals_by_simulation(truth, exact_sum, n, seed):
    """Simulate x1* = x1 + Z1 and y1* = (x2 - x1) + W, post-process, infer from x̃1.

    ``W`` is drawn as the model says: one ``DG(dσ²)`` under the approximation
    (3.7), or the sum of d independent ``DG(σ²)`` block noises for ``exact_sum``.
    """
    d, x2, rho = 27, 1, BLOCK_RHO
    rng = np.random.default_rng(seed)
    sigma2 = float(noise_variance(rho))
    x1_star = truth + _draw(sigma2, n, rng)
    if exact_sum:
        w = _draw(sigma2, (n, d), rng).sum(axis=1)
    else:
        w = _draw(d * sigma2, n, rng)
    y1_star = (x2 - truth) + w
    for x2_tilde in (1, 10, 100):
        x1_tilde = pp.post_process(x1_star, y1_star, x2_tilde, d)
        common = dict(d=d, x2=x2, x2_tilde=x2_tilde, exact_sum=exact_sum)
        for p in (1 / 2, 1 / 10):
            exact = pp.marginals(p, rho, true_count=truth, **common)
            posteriors = pp.posterior(x1_tilde, p, rho, true_count=truth, **common)
            _assert_average(
                posteriors,
                float(exact.marginal_posterior),
                float(exact.posterior_error_bound),
                0.005,
            )
            right = pp.decision(x1_tilde, p, rho, **common) == truth
            _assert_frequency(
                right,
                float(exact.correct_decision_probability),
                float(exact.decision_error_bound),
                0.005,
            )


# --- sequential releases (S5) ------------------------------------------------------------


def test_sequential_marginals_by_simulation():
    """Four releases of one count, equal ρ with p = 1/2 (exact ties) and mixed conventions."""
    n = 50_000
    rng = np.random.default_rng(401)
    for rhos, conventions in (
        ([0.3] * 4, ["paper"] * 4),
        ([BLOCK_RHO, 0.2, 0.05, 0.4], ["paper", "das", "paper", "das"]),
    ):
        sigma2 = [float(noise_variance(r, c)) for r, c in zip(rhos, conventions, strict=True)]
        releases = 1 + np.stack([_draw(s, n, rng) for s in sigma2], axis=-1)
        for p in (1 / 2, 1 / 10):
            exact = sq.marginals(p, rhos, convention=conventions)
            total = sq.sequential_risk(releases, p, rhos, convention=conventions).total_risk
            _assert_average(
                total, float(exact.marginal_risk), float(exact.risk_error_bound), 0.003 / p
            )
            decides = ml.decision(releases, p, sq.paper_rhos(rhos, conventions), rng=rng)
            _assert_frequency(
                decides == 1,
                float(exact.correct_decision_probability),
                float(exact.decision_error_bound),
                0.003,
            )
