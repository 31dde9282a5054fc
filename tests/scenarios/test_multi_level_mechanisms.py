"""ℓ-level attack (S1.3) under other noise: DG equivalence, brute force, bounded noise."""

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
from adversary.scenarios import multi_level as ml

PRIORS = np.array([1 / 2, 1 / 10, 1 / 864])
RHOS = ml.rhos_2020(3)
LAPLACE = DiscreteLaplaceNoise.from_variance(3.0)
CELL_KEY = CellKeyNoise(3.0, 4)
ROWS = {
    "laplace x2": (LAPLACE, DiscreteLaplaceNoise(0.7)),
    "cell key x3": (CELL_KEY, CellKeyNoise(1.0, 2), CELL_KEY),
    "mixed": (LAPLACE, CELL_KEY, FinitePmfNoise(-1, [0.3, 0.0, 0.5, 0.2])),
    "truncated geometric + DG": (TruncatedGeometricNoise(1.5, 3), DiscreteGaussianNoise(2.0)),
    "laplace, equal twice (ties)": (LAPLACE, LAPLACE),
}


def _noise_values(mech, reach=60):
    """(z, pmf) of a mechanism on its support, or |z| <= reach (tails below 1e-20 here)."""
    lower, upper = mech.support
    z = np.arange(-reach if lower is None else lower, (reach if upper is None else upper) + 1)
    pmf = mech.pmf(z)
    return z[pmf > 0], pmf[pmf > 0]


def brute_force(prior, mechanisms, has_c=True, known=0, tie_rule="split"):
    """(3.3) and (3.6) by summing Bayes' rule over every joint release from the truth.

    Every combination of the mechanisms' noise values is one joint release (an axis per
    mechanism); its mass and both hypotheses' likelihoods come from each mechanism's own
    pmf. A release whose posterior of m + 1 is 1/2 (within 1e-12) is a tie: it counts
    1/2 under "split", for m + 1 under "largest", for m under "smallest".
    """
    truth = known + 1 if has_c else known
    mass, with_c, without = np.float64(1.0), np.float64(prior), np.float64(1 - prior)
    for axis, mech in enumerate(mechanisms):
        z, pmf = _noise_values(mech)
        shape = [1] * len(mechanisms)
        shape[axis] = z.size
        release = (truth + z).reshape(shape)
        mass = mass * pmf.reshape(shape)
        with_c = with_c * mech.pmf(release - known - 1)
        without = without * mech.pmf(release - known)
    of_c = with_c / (with_c + without)
    posterior_sum = float((mass * (of_c if has_c else 1 - of_c)).sum())
    tie = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
    up = np.where(np.abs(of_c - 0.5) < 1e-12, tie, (of_c > 0.5).astype(np.float64))
    correct = float((mass * (up if has_c else 1.0 - up)).sum())
    return posterior_sum, correct


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_equivalent_discrete_gaussians_give_identical_numbers(convention):
    mechanisms = [DiscreteGaussianNoise.from_rho(r, convention) for r in RHOS]
    releases = np.array([[1, 0, 2], [3, -1, 1], [0, 0, 0]])
    for function in (ml.posterior, ml.risk):
        for truth in (None, 0):
            np.testing.assert_array_equal(
                function(releases, PRIORS[:, None], None, None, truth, mechanism=mechanisms),
                function(releases, PRIORS[:, None], RHOS, None, truth, convention),
            )
    np.testing.assert_array_equal(
        ml.decision(releases, PRIORS[:, None], mechanism=mechanisms, rng=0),
        ml.decision(releases, PRIORS[:, None], RHOS, None, convention, rng=0),
    )
    np.testing.assert_array_equal(
        ml.log_likelihood_ratio(releases, known_counts=[0, 1, 1], mechanism=mechanisms),
        ml.log_likelihood_ratio(releases, RHOS, [0, 1, 1], convention),
    )
    for truth in (None, 0):
        by_mechanism = ml.marginals(PRIORS, true_count=truth, mechanism=mechanisms)
        by_rho = ml.marginals(PRIORS, RHOS, None, truth, convention)
        for f in dataclasses.fields(by_rho):
            np.testing.assert_array_equal(getattr(by_mechanism, f.name), getattr(by_rho, f.name))
    curve = ml.marginal_by_levels(PRIORS, mechanism=mechanisms)
    reference = ml.marginal_by_levels(PRIORS, RHOS, convention=convention)
    for name in reference.data_vars:
        np.testing.assert_array_equal(curve[name].values, reference[name].values)
    case = ml.MultiLevelCase(
        "dg", tuple(RHOS), {"a": 0.5, "b": 0.02}, (1, 0, 2), convention=convention
    )
    as_mechanisms = dataclasses.replace(case, rhos=None, mechanism=mechanisms)
    for levels in (1, 3):
        for label in case.priors:
            left = dataclasses.replace(as_mechanisms, levels=levels)
            right = dataclasses.replace(case, levels=levels)
            assert left.marginal_measures(label) == right.marginal_measures(label)
            assert left.posterior(label) == right.posterior(label)


@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize("row", list(ROWS), ids=list(ROWS))
@pytest.mark.parametrize("has_c", [True, False])
def test_marginals_against_brute_force(row, has_c, tie_rule):
    mechanisms = ROWS[row]
    result = ml.marginals(
        PRIORS, true_count=None if has_c else 0, mechanism=mechanisms, tie_rule=tie_rule
    )
    for i, p in enumerate(PRIORS):
        expected_post, expected_correct = brute_force(p, mechanisms, has_c, tie_rule=tie_rule)
        tolerance = float(result.posterior_error_bound[i]) + 1e-13
        assert result.marginal_posterior[i] == pytest.approx(expected_post, abs=tolerance)
        decision_tolerance = float(result.decision_error_bound[i]) + 1e-13
        assert result.correct_decision_probability[i] == pytest.approx(
            expected_correct, abs=decision_tolerance
        )
        assert result.decision_exact[i]
    bounded = all(m.bounded for m in mechanisms)
    assert np.all(result.omitted_mass == 0.0) == bounded


def test_prefixes_match_one_level_at_a_time():
    mechanisms = ROWS["mixed"]
    curve = ml.marginal_by_levels(PRIORS, mechanism=mechanisms)
    assert list(curve["mechanism"].values) == [m.label for m in mechanisms]
    for j in range(1, len(mechanisms) + 1):
        single = ml.marginals(PRIORS, mechanism=mechanisms[:j])
        np.testing.assert_allclose(
            curve["marginal_posterior"].sel(levels=j), single.marginal_posterior, rtol=1e-14
        )
        np.testing.assert_allclose(
            curve["correct_decision_probability"].sel(levels=j),
            single.correct_decision_probability,
            rtol=1e-14,
        )


def test_posterior_against_bayes_rule_and_certainty_from_bounded_noise():
    mechanisms = ROWS["mixed"]
    known = np.array([2, 3, 3])
    for releases in ([2, 3, 3], [5, 1, 6], [-4, 7, 2]):
        levels = list(zip(mechanisms, releases, known, strict=True))
        with_c = 0.1 * np.prod([m.pmf(x - k - 1) for m, x, k in levels])
        without = 0.9 * np.prod([m.pmf(x - k) for m, x, k in levels])
        got = ml.posterior(releases, 0.1, known_counts=known, mechanism=mechanisms)
        assert got == pytest.approx(with_c / (with_c + without), rel=1e-12)
    # Level 2's cell-key noise is at most 4: x2* = m2 + 1 + 4 proves T = 1 whatever else.
    assert ml.posterior([-20, 8, 3], 1e-6, known_counts=known, mechanism=mechanisms) == 1.0
    assert ml.decision([-20, 8, 3], 1e-6, known_counts=known, mechanism=mechanisms) == 3
    with pytest.raises(ValueError, match="impossible"):  # level 2 proves T=1, level 3 T=0
        ml.posterior([2, 8, 2], 0.5, known_counts=known, mechanism=mechanisms)
    with pytest.raises(ValueError, match="impossible"):
        ml.posterior([2, 9, 3], 0.5, known_counts=known, mechanism=mechanisms)
    one = ml.posterior([[1, 2], [0, 5]], 0.5, mechanism=CELL_KEY)  # one for every level
    np.testing.assert_array_equal(
        one, ml.posterior([[1, 2], [0, 5]], 0.5, mechanism=[CELL_KEY] * 2)
    )
    with pytest.raises(ValueError, match="one mechanism per release"):
        ml.marginals(0.5, mechanism=CELL_KEY)
    with pytest.raises(ValueError, match="not both"):
        ml.posterior([1, 2], 0.5, RHOS[:2], mechanism=[CELL_KEY] * 2)


def test_case_with_mechanisms_and_its_model():
    mechanisms = ROWS["cell key x3"]
    case = ml.MultiLevelCase(
        "ck", None, {"1/2": 0.5, "1/10": 0.1}, observed_releases=(2, 1, 0), mechanism=mechanisms
    )
    assert case.n_levels == 3 and case.used_rhos is None
    two = dataclasses.replace(case, levels=2)
    assert two.used_mechanisms == mechanisms[:2]
    measures = two.marginal_measures("1/10")
    expected_post, expected_correct = brute_force(0.1, mechanisms[:2])
    assert measures.marginal_posterior == pytest.approx(expected_post, abs=1e-9)
    assert measures.correct_decision_probability == pytest.approx(expected_correct, abs=1e-13)
    assert measures.omitted_mass == 0.0
    table = enumerate_posterior(case.model("1/10")).marginal("X1")
    assert float(table.sel(X1=1)) == pytest.approx(case.posterior("1/10"), abs=1e-12)
    with pytest.raises(ValueError, match="not both"):
        ml.MultiLevelCase("x", (0.1,), {"a": 0.5}, mechanism=(CELL_KEY,))


def test_equal_laplace_levels_tie_and_the_rules_differ():
    values = [
        float(
            ml.marginals(
                0.5, mechanism=ROWS["laplace, equal twice (ties)"], tie_rule=rule
            ).correct_decision_probability
        )
        for rule in ("smallest", "split", "largest")
    ]
    assert values[0] < values[1] < values[2]
    assert values[1] == pytest.approx((values[0] + values[2]) / 2, abs=1e-15)
