"""Sequential releases (S5) under other noise: DG equivalence, brute force, accounting."""

import dataclasses
import itertools

import numpy as np
import pytest

from adversary.analyses import sequential as seq
from adversary.noise import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    TruncatedGeometricNoise,
)
from adversary.scenarios.single_block import SingleBlockCase

RHOS = np.array([0.0992, 0.3, 0.05])
PRIORS = np.array([1 / 2, 1 / 10, 1 / 864])
LAPLACE = DiscreteLaplaceNoise.from_variance(4.0)
CELL_KEY = CellKeyNoise(2.0, 3)


def brute_posterior(releases, prior, mechanisms, known):
    """P[X1 = m + 1 | releases 1..j] for each j, by Bayes' rule with plain probabilities."""
    with_c, without, out = prior, 1 - prior, []
    for x, m in zip(releases, mechanisms, strict=True):
        with_c *= float(m.pmf(x - known - 1))
        without *= float(m.pmf(x - known))
        out.append(with_c / (with_c + without))
    return np.array(out)


def brute_marginals(prior, mechanisms, known=4, has_c=True, reach=80):
    truth = known + 1 if has_c else known
    tables = []
    for m in mechanisms:
        z = np.arange(-reach, reach + 1)
        tables.append((z[m.pmf(z) > 0], m.pmf(z)[m.pmf(z) > 0]))
    post = correct = 0.0
    for combo in itertools.product(*(range(z.size) for z, _ in tables)):
        mass = np.prod([pmf[i] for (_, pmf), i in zip(tables, combo, strict=True)])
        releases = [truth + z[i] for (z, _), i in zip(tables, combo, strict=True)]
        of_c = brute_posterior(releases, prior, mechanisms, known)[-1]
        post += mass * (of_c if has_c else 1 - of_c)
        correct += mass * ((of_c >= 0.5) == has_c)
    return post, correct


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_equivalent_discrete_gaussians_give_identical_numbers(convention):
    mechanisms = [DiscreteGaussianNoise.from_rho(r, convention) for r in RHOS]
    releases = np.array([[1, 0, 2], [3, -1, 1]])
    for truth in (None, 0):
        left = seq.sequential_risk(releases, PRIORS[:, None], None, 0, truth, mechanism=mechanisms)
        right = seq.sequential_risk(releases, PRIORS[:, None], RHOS, 0, truth, convention)
        for f in dataclasses.fields(right):
            np.testing.assert_array_equal(getattr(left, f.name), getattr(right, f.name))
        left = seq.marginals(PRIORS, None, 0, truth, mechanism=mechanisms)
        right = seq.marginals(PRIORS, RHOS, 0, truth, convention)
        for f in dataclasses.fields(right):
            np.testing.assert_array_equal(getattr(left, f.name), getattr(right, f.name))
    curve = seq.marginal_by_releases(PRIORS, mechanism=mechanisms)
    reference = seq.marginal_by_releases(PRIORS, RHOS, convention=convention)
    for name in reference.data_vars:
        np.testing.assert_array_equal(curve[name].values, reference[name].values)
    np.testing.assert_array_equal(curve["paper_rho"].values, reference["paper_rho"].values)
    case = SingleBlockCase("dg", RHOS[0], {"a": 0.3}, convention=convention)
    as_mechanism = dataclasses.replace(case, rho=None, mechanism=mechanisms[0])
    assert seq.updated_case(as_mechanism, 3).priors == seq.updated_case(case, 3).priors


def test_sequential_risk_against_bayes_rule():
    mechanisms = (LAPLACE, CELL_KEY, TruncatedGeometricNoise(2.0, 4))
    known = 4
    for releases in ([5, 4, 3], [9, 7, 1], [0, 2, 8]):
        result = seq.sequential_risk(releases, 0.1, known_count=known, mechanism=mechanisms)
        expected = brute_posterior(releases, 0.1, mechanisms, known)
        np.testing.assert_allclose(result.posteriors, expected, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(result.total_risks, expected / 0.1, rtol=1e-12)
        before = np.concatenate([[0.1], expected[:-1]])
        np.testing.assert_allclose(result.updated_priors, before, rtol=1e-12)
    # x* = 4 + 1 + 3 = 8 with the cell key's E = 3 proves the target has c.
    settled = seq.sequential_risk([5, 8, 6], 0.1, known_count=known, mechanism=mechanisms)
    assert settled.posteriors[1] == 1.0 and settled.posteriors[2] == 1.0
    assert settled.conditional_risks[2] == 1.0
    ruled_out = seq.sequential_risk([5, 1, 6], 0.1, known_count=known, mechanism=mechanisms)
    assert ruled_out.posteriors[1] == 0.0 and ruled_out.total_risks[2] == 0.0
    assert ruled_out.conditional_risks[2] == 1.0  # settled at 0: no later change
    with pytest.raises(ValueError, match="impossible"):  # release 2 proves c, release 3 not c
        seq.sequential_risk([5, 8, 0], 0.1, known_count=known, mechanism=mechanisms)
    one = seq.sequential_risk([3, 2], 0.2, mechanism=CELL_KEY)
    assert one.posteriors == pytest.approx(brute_posterior([3, 2], 0.2, [CELL_KEY] * 2, 0))


@pytest.mark.parametrize("has_c", [True, False])
def test_marginals_against_brute_force(has_c):
    mechanisms = (LAPLACE, CELL_KEY)
    result = seq.marginals(
        PRIORS, known_count=4, true_count=None if has_c else 4, mechanism=mechanisms
    )
    for i, p in enumerate(PRIORS):
        post, correct = brute_marginals(p, mechanisms, has_c=has_c)
        assert result.marginal_posterior[i] == pytest.approx(
            post, abs=float(result.posterior_error_bound[i]) + 1e-13
        )
        assert result.correct_decision_probability[i] == pytest.approx(
            correct, abs=float(result.decision_error_bound[i]) + 1e-13
        )
    curve = seq.marginal_by_releases(PRIORS, mechanism=mechanisms, known_count=4)
    assert list(curve["mechanism"].values) == [m.label for m in mechanisms]
    np.testing.assert_array_equal(
        curve["marginal_posterior"].isel(releases=-1),
        seq.marginals(PRIORS, mechanism=mechanisms).marginal_posterior,
    )


def test_composed_rho_adds_zcdp_and_refuses_bounded_noise():
    mechanisms = [DiscreteGaussianNoise.from_rho(0.1), DiscreteLaplaceNoise.from_epsilon(0.5)]
    assert seq.composed_rho(mechanisms) == pytest.approx(0.1 + 0.125)
    with pytest.raises(ValueError, match="not zCDP"):
        seq.composed_rho([*mechanisms, CELL_KEY])
