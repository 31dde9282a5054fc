"""Post-processed release (S6) under other noise: DG equivalence, brute force, bounded noise."""

import dataclasses

import numpy as np
import pytest

from adversary.inference import enumerate_posterior
from adversary.noise import CellKeyNoise, DiscreteGaussianNoise, DiscreteLaplaceNoise
from adversary.scenarios import post_processing as pp

RHO = 2.56 * 165 / 4099 * 3945 / 4097
PRIORS = np.array([0.5, 0.1, 1 / 864])
MECHANISMS = {
    "laplace": DiscreteLaplaceNoise.from_variance(2.0),
    "cell key": CellKeyNoise(1.5, 2),
}
SCENARIO = {"d": 3, "x2": 2, "known_count": 0}
REACH = 40


def brute_likelihood(mech, d, x2, x2_tilde, known_count=0):
    """P[X̃1 = j | X1 = k] for k = m, m+1 by summing f over (x1*, y1*) on explicit grids."""
    z = np.arange(-REACH, REACH + 1)
    pz = mech.pmf(z)
    pw = pz
    for _ in range(d - 1):
        pw = np.convolve(pw, pz)
    w = np.arange(-REACH * d, REACH * d + 1)
    rows = []
    for k in (known_count, known_count + 1):
        released = pp.post_process(k + z[:, None], x2 - k + w[None, :], x2_tilde, d)
        weights = pz[:, None] * pw[None, :]
        rows.append(np.bincount(released.ravel(), weights=weights.ravel(), minlength=x2_tilde + 1))
    return np.array(rows), (z, pz, w, pw)


def brute_measures(mech, prior, x2_tilde, has_c=True, **scenario):
    rows, _ = brute_likelihood(mech, x2_tilde=x2_tilde, **scenario)
    with_c, without = prior * rows[1], (1 - prior) * rows[0]
    total = with_c + without
    posterior_c = np.divide(with_c, total, out=np.full_like(total, 0.5), where=total > 0)
    truth = rows[1] if has_c else rows[0]
    of_truth = posterior_c if has_c else 1 - posterior_c
    decided_c = with_c >= without
    right = decided_c if has_c else ~decided_c
    return float(truth @ of_truth), float(truth @ right)


def brute_unprocessed(mech, prior, d, x2, known_count=0):
    known = known_count
    _, (z, pz, w, pw) = brute_likelihood(mech, d, x2, 1, known)
    x1r = known + 1 + z[:, None]
    y1r = x2 - known - 1 + w[None, :]

    def pw_at(values):
        index = values + REACH * d
        inside = (index >= 0) & (index < pw.size)
        return np.where(inside, pw[np.clip(index, 0, pw.size - 1)], 0.0)

    with_c = prior * mech.pmf(x1r - known - 1) * pw_at(y1r - (x2 - known - 1))
    without = (1 - prior) * mech.pmf(x1r - known) * pw_at(y1r - (x2 - known))
    weights = pz[:, None] * pw[None, :]
    total = with_c + without
    post = np.divide(with_c, total, out=np.zeros_like(total), where=total > 0)
    return float(np.sum(weights * post))


@pytest.mark.parametrize("convention", ["paper", "das"])
@pytest.mark.parametrize("exact_sum", [None, False, True])
def test_equivalent_discrete_gaussian_gives_identical_numbers(convention, exact_sum):
    mech = DiscreteGaussianNoise.from_rho(RHO, convention)
    common = {"d": 27, "x2": 1, "x2_tilde": 10, "exact_sum": exact_sum}
    left = pp.marginals(PRIORS, mechanism=mech, **common)
    right = pp.marginals(PRIORS, RHO, convention=convention, **common)
    for f in dataclasses.fields(right):
        np.testing.assert_array_equal(getattr(left, f.name), getattr(right, f.name))
    for function in (pp.posterior, pp.decision):
        np.testing.assert_array_equal(
            function(np.arange(11), 0.3, mechanism=mech, **common),
            function(np.arange(11), 0.3, RHO, convention=convention, **common),
        )
    np.testing.assert_array_equal(
        pp.unprocessed_marginal_posterior(PRIORS, d=27, x2=1, exact_sum=exact_sum, mechanism=mech),
        pp.unprocessed_marginal_posterior(
            PRIORS, RHO, d=27, x2=1, exact_sum=exact_sum, convention=convention
        ),
    )
    curve = pp.marginal_by_x2_tilde([1, 10], prior=PRIORS, exact_sum=exact_sum, mechanism=mech)
    reference = pp.marginal_by_x2_tilde(
        [1, 10], prior=PRIORS, rho=RHO, exact_sum=exact_sum, convention=convention
    )
    for name in reference.data_vars:
        np.testing.assert_array_equal(curve[name].values, reference[name].values)
    case = pp.PostProcessingCase(
        "dg", RHO, {"a": 0.5}, 27, 1, 10, 3, convention=convention, exact_sum=exact_sum
    )
    as_mechanism = dataclasses.replace(case, rho=None, mechanism=mech)
    assert as_mechanism.exact_sum == case.exact_sum == bool(exact_sum)
    assert as_mechanism.marginal_measures() == case.marginal_measures()
    assert as_mechanism.posterior() == case.posterior()


@pytest.mark.parametrize("name", list(MECHANISMS))
@pytest.mark.parametrize("x2_tilde", [3, 6])
def test_release_table_and_marginals_against_brute_force(name, x2_tilde):
    mech = MECHANISMS[name]
    table = pp.release_table(mechanism=mech, x2_tilde=x2_tilde, **SCENARIO)
    rows, _ = brute_likelihood(mech, x2_tilde=x2_tilde, **SCENARIO)
    np.testing.assert_allclose(table.probabilities, rows, rtol=1e-10, atol=1e-15)
    if mech.bounded:
        assert table.omitted_mass < 1e-15
    for has_c in (True, False):
        result = pp.marginals(
            PRIORS, true_count=None if has_c else 0, mechanism=mech, x2_tilde=x2_tilde, **SCENARIO
        )
        for i, p in enumerate(PRIORS):
            post, correct = brute_measures(mech, p, x2_tilde, has_c, **SCENARIO)
            assert result.marginal_posterior[i] == pytest.approx(
                post, abs=result.posterior_error_bound[i] + 1e-12
            )
            assert result.correct_decision_probability[i] == pytest.approx(
                correct, abs=result.decision_error_bound[i] + 1e-12
            )


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_unprocessed_posterior_against_brute_force_and_bounds_the_processed_one(name):
    mech = MECHANISMS[name]
    for p in PRIORS:
        expected = brute_unprocessed(mech, p, **SCENARIO)
        got = pp.unprocessed_marginal_posterior(p, mechanism=mech, **SCENARIO)
        assert got == pytest.approx(expected, abs=1e-12)
        for x2_tilde in (1, 3, 6):
            processed = pp.marginal_posterior(p, mechanism=mech, x2_tilde=x2_tilde, **SCENARIO)
            assert processed <= got + 1e-12


def test_bounded_noise_posterior_can_be_certain_and_approximation_is_refused():
    mech = MECHANISMS["cell key"]  # noise in -2..2, so V = 3 Z1 - W lies in -12..12
    # With x2 = 2, x̃2 = 8: N = 4 X1 + 6 + V, and x̃1 = ⌊(2N + 4)/8⌋ reaches 5 from X1 = 0
    # and 6 from X1 = 1: x̃1 = 6 proves X1 = 1; 7 and 8 are impossible.
    common = {"d": 3, "x2": 2, "x2_tilde": 8}
    post = pp.posterior(np.arange(0, 7), 0.5, mechanism=mech, **common)
    assert post[-1] == 1.0 and np.all(post[:-1] < 1.0)
    rows, _ = brute_likelihood(mech, **common)
    np.testing.assert_array_equal(rows[:, 7:], 0.0)
    with pytest.raises(ValueError, match="impossible under both"):
        pp.posterior(7, 0.5, mechanism=mech, **common)
    with pytest.raises(ValueError, match="approximation"):
        pp.marginals(0.5, mechanism=mech, exact_sum=False, x2_tilde=3, **SCENARIO)
    with pytest.raises(ValueError, match="not both"):
        pp.marginals(0.5, RHO, mechanism=mech, x2_tilde=3, **SCENARIO)


def test_case_with_a_mechanism_and_its_model():
    mech = MECHANISMS["cell key"]
    case = pp.PostProcessingCase(
        "ck", None, {"1/2": 0.5, "1/10": 0.1}, 3, 2, 4, observed_x1_tilde=2, mechanism=mech
    )
    assert case.exact_sum is True
    measures = case.marginal_measures("1/10")
    post, correct = brute_measures(mech, 0.1, 4, **SCENARIO)
    assert measures.marginal_posterior == pytest.approx(post, abs=1e-12)
    assert measures.correct_decision_probability == pytest.approx(correct, abs=1e-12)
    ranges = case.enumeration_ranges()
    table = enumerate_posterior(case.model("1/10"), vars=["X1"], truncation=ranges).marginal("X1")
    assert float(table.sel(X1=1)) == pytest.approx(case.posterior("1/10"), abs=1e-12)
