"""Single-block attack under other noise mechanisms: DG equivalence, brute force, bounded noise."""

import dataclasses

import numpy as np
import pytest

from adversary.inference import enumerate_posterior
from adversary.noise import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
    TruncatedGeometricNoise,
)
from adversary.reports.single_block import marginal_table, release_table, rho_sweep
from adversary.scenarios import single_block as sb

BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097
PRIORS = np.array([1 / 2, 1 / 5, 1 / 10, 1 / 50, 1 / 864])
RELEASES = np.arange(-12, 15)
OTHERS = [
    DiscreteLaplaceNoise.from_variance(5.04),
    CellKeyNoise(5.04, 6),
    TruncatedGeometricNoise.from_variance(3.0, 4),
    FinitePmfNoise(-2, [0.1, 0.0, 0.4, 0.25, 0.25]),  # asymmetric, a hole inside
]
IDS = [m.label for m in OTHERS]


def brute_posterior(release, prior, mech, known=0, truth=None):
    """P[X1 = truth | x1*] from the pmf, by Bayes' rule with plain probabilities."""
    truth = known + 1 if truth is None else truth
    with_c = prior * mech.pmf(release - known - 1)
    without = (1 - prior) * mech.pmf(release - known)
    of_truth = with_c if truth == known + 1 else without
    return of_truth / (with_c + without)


def brute_marginals(prior, mech, known=0, truth=None, reach=200, tie_rule="split"):
    """(3.3) and (3.6) by a direct sum over releases x1* = truth + z, |z| <= reach.

    A release whose posterior of m + 1 is 1/2 (to rounding) is a tie: it counts
    1/2 under "split", for m + 1 under "largest", for m under "smallest".
    """
    truth = known + 1 if truth is None else truth
    posterior_sum = correct = 0.0
    for z in range(-reach, reach + 1):
        mass = float(mech.pmf(z))
        if mass == 0.0:
            continue
        value = float(brute_posterior(truth + z, prior, mech, known, truth))
        posterior_sum += mass * value
        of_c = value if truth == known + 1 else 1 - value
        if abs(of_c - 0.5) < 1e-12:
            up = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
        else:
            up = float(of_c > 0.5)
        correct += mass * (up if truth == known + 1 else 1.0 - up)
    return posterior_sum, correct


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_the_equivalent_discrete_gaussian_gives_identical_numbers(convention):
    mech = DiscreteGaussianNoise.from_rho(BLOCK_RHO, convention)
    rel, pri = RELEASES[:, None], PRIORS
    for function in (sb.posterior, sb.risk):
        for truth in (None, 0):
            np.testing.assert_array_equal(
                function(rel, pri, None, 0, truth, mechanism=mech),
                function(rel, pri, BLOCK_RHO, 0, truth, convention),
            )
    np.testing.assert_array_equal(
        sb.decision(rel, pri, mechanism=mech), sb.decision(rel, pri, BLOCK_RHO, 0, convention)
    )
    np.testing.assert_array_equal(
        sb.log_likelihood_ratio(RELEASES, mechanism=mech, known_count=2),
        sb.log_likelihood_ratio(RELEASES, BLOCK_RHO, 2, convention),
    )
    np.testing.assert_array_equal(
        sb.release_pmf(RELEASES, true_count=1, mechanism=mech),
        sb.release_pmf(RELEASES, BLOCK_RHO, 1, convention),
    )
    for truth in (None, 0):
        for function in (sb.marginal_posterior, sb.marginal_risk, sb.correct_decision_probability):
            np.testing.assert_array_equal(
                function(PRIORS, None, 0, truth, mechanism=mech),
                function(PRIORS, BLOCK_RHO, 0, truth, convention),
            )
    case = sb.SingleBlockCase("dg", BLOCK_RHO, {"1/2": 0.5, "1/50": 0.02}, convention=convention)
    as_mechanism = dataclasses.replace(case, rho=None, mechanism=mech)
    for label in case.priors:
        assert as_mechanism.marginal_measures(label) == case.marginal_measures(label)
    assert release_table(as_mechanism).equals(release_table(case))
    assert marginal_table(as_mechanism).equals(marginal_table(case))


@pytest.mark.parametrize("mech", OTHERS, ids=IDS)
@pytest.mark.parametrize("truth", [None, 3])
def test_posterior_risk_and_decision_against_bayes_rule(mech, truth):
    known = 3
    x1 = known + 1 if truth is None else truth
    releases = x1 + np.arange(-8, 9)
    possible = (mech.pmf(releases - known - 1) > 0) | (mech.pmf(releases - known) > 0)
    releases = releases[possible]
    rel = releases[:, None]
    post = sb.posterior(rel, PRIORS, known_count=known, true_count=truth, mechanism=mech)
    expected = brute_posterior(rel, PRIORS, mech, known, x1)
    np.testing.assert_allclose(post, expected, rtol=1e-12, atol=1e-300)
    prior_of_truth = PRIORS if x1 == known + 1 else 1 - PRIORS
    np.testing.assert_allclose(
        sb.risk(rel, PRIORS, known_count=known, true_count=truth, mechanism=mech),
        expected / prior_of_truth,
        rtol=1e-12,
    )
    of_c = brute_posterior(rel, PRIORS, mech, known, known + 1)
    np.testing.assert_array_equal(
        sb.decision(rel, PRIORS, known_count=known, mechanism=mech, tie_rule="largest"),
        known + (of_c >= 0.5 - 1e-12),
    )
    np.testing.assert_array_equal(
        sb.decision(rel, PRIORS, known_count=known, mechanism=mech, tie_rule="smallest"),
        known + (of_c > 0.5 + 1e-12),
    )


@pytest.mark.parametrize("mech", OTHERS, ids=IDS)
@pytest.mark.parametrize("truth", [None, 0])
@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
def test_marginal_measures_against_a_direct_sum(mech, truth, tie_rule):
    post = sb.marginal_posterior(PRIORS, true_count=truth, mechanism=mech)
    risk = sb.marginal_risk(PRIORS, true_count=truth, mechanism=mech)
    correct = sb.correct_decision_probability(
        PRIORS, true_count=truth, mechanism=mech, tie_rule=tie_rule
    )
    for i, p in enumerate(PRIORS):
        expected_post, expected_correct = brute_marginals(p, mech, truth=truth, tie_rule=tie_rule)
        prior_of_truth = p if truth is None else 1 - p
        assert post[i] == pytest.approx(expected_post, abs=1e-13)
        assert risk[i] == pytest.approx(expected_post / prior_of_truth, rel=1e-12)
        assert correct[i] == pytest.approx(expected_correct, abs=1e-13)


def test_ties_of_the_asymmetric_table_carry_mass_and_the_rules_differ():
    """The finite pmf's equal masses 0.25, 0.25 at z = 1, 2 tie the decision at p = 1/2."""
    mech = OTHERS[-1]
    values = [
        float(sb.correct_decision_probability(0.5, mechanism=mech, tie_rule=rule))
        for rule in ("smallest", "split", "largest")
    ]
    assert values[0] < values[1] < values[2]
    assert values[1] == pytest.approx((values[0] + values[2]) / 2, abs=1e-15)


def test_bounded_noise_reveals_the_truth_at_the_edge_of_its_support():
    mech = CellKeyNoise(2.0, 3)  # noise in -3..3
    # x1* = m + 1 + 3 = 4 is impossible from X1 = m = 0: the posterior is exactly 1.
    assert sb.posterior(4, 1 / 864, mechanism=mech) == 1.0
    assert sb.posterior(-3, 1 / 2, mechanism=mech) == 0.0  # only X1 = 0 gives -3
    assert sb.log_likelihood_ratio(4, mechanism=mech) == np.inf
    assert sb.log_likelihood_ratio(-3, mechanism=mech) == -np.inf
    assert sb.decision(4, 1e-9, mechanism=mech) == 1
    # The truth's releases at the far edge (noise +3) carry P[Z = 3]: the marginal
    # posterior is at least that, for every prior.
    for p in (1e-6, 1 / 864):
        assert sb.marginal_posterior(p, mechanism=mech) >= float(mech.pmf(3))
    with pytest.raises(ValueError, match="impossible"):
        sb.posterior(5, 0.5, mechanism=mech)
    with pytest.raises(ValueError, match="impossible"):
        sb.log_likelihood_ratio(np.array([0, -4]), mechanism=mech)


def test_case_with_a_mechanism_reports_its_table_and_exact_bounds():
    mech = CellKeyNoise(5.04, 6)
    case = sb.SingleBlockCase("ck", None, {"1/2": 0.5, "1/864": 1 / 864}, mechanism=mech)
    measures = case.marginal_measures("1/864")
    assert measures.omitted_mass == 0.0 and measures.error_bound == 0.0
    assert measures.details["cutoff"] == 6
    expected_post, expected_correct = brute_marginals(1 / 864, mech)
    assert measures.marginal_posterior == pytest.approx(expected_post, abs=1e-14)
    assert measures.correct_decision_probability == pytest.approx(expected_correct, abs=1e-14)
    laplace = dataclasses.replace(case, mechanism=DiscreteLaplaceNoise(1.5))
    m = laplace.marginal_measures("1/2")
    assert 0 < m.omitted_mass <= 1e-15 and m.details["cutoff"] > 40
    table = release_table(case)
    np.testing.assert_allclose(table[("release_probability", "")], mech.pmf(np.arange(5)))
    with pytest.raises(ValueError, match="discrete Gaussian"):
        rho_sweep(case, [0.1, 1.0])


def test_case_and_functions_refuse_both_or_neither_noise():
    mech = DiscreteLaplaceNoise(2.0)
    with pytest.raises(ValueError, match="not both"):
        sb.posterior(1, 0.5, BLOCK_RHO, mechanism=mech)
    with pytest.raises(ValueError, match="give rho"):
        sb.posterior(1, 0.5)
    with pytest.raises(ValueError, match="not both"):
        sb.SingleBlockCase("x", BLOCK_RHO, {"a": 0.5}, mechanism=mech)
    with pytest.raises(TypeError, match="NoiseMechanism"):
        sb.posterior(1, 0.5, mechanism=2.0)


@pytest.mark.parametrize("mech", [CellKeyNoise(2.0, 3), DiscreteLaplaceNoise(1.0)], ids=str)
def test_model_enumerates_to_the_exact_posterior(mech):
    for release in (-1, 1, 4):
        model = sb.model(release, 0.2, mechanism=mech)
        table = enumerate_posterior(model).marginal("X1")
        exact = float(sb.posterior(release, 0.2, mechanism=mech))
        assert float(table.sel(X1=1)) == pytest.approx(exact, abs=1e-12)


def test_posterior_figure_of_a_case_with_a_mechanism():
    from adversary.plots.single_block import posterior_figure

    case = sb.SingleBlockCase("ck", None, {"a": 0.5}, mechanism=CellKeyNoise(2.0, 3))
    figure = posterior_figure(case, releases=np.arange(-2, 5))
    np.testing.assert_allclose(
        figure.axes[0].lines[0].get_ydata(),
        sb.posterior(np.arange(-2, 5), 0.5, mechanism=case.mechanism),
    )
    assert "cell key" in figure._suptitle.get_text()
