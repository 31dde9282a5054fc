"""Unknown-attribute attack under other noise: DG equivalence, brute force, bounded noise."""

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
from adversary.scenarios import unknown_attribute as ua

RHO = 2.56 * 165 / 4099 * 3945 / 4097
PRIOR = np.array([0.5, 0.3, 0.2])
KNOWN = np.array([2, 0, 5])
LAPLACE = DiscreteLaplaceNoise.from_variance(3.0)
CELL_KEY = CellKeyNoise(2.0, 3)
ROWS = {
    "laplace": LAPLACE,
    "cell key": CELL_KEY,
    "mixed": (LAPLACE, CELL_KEY, FinitePmfNoise(-1, [0.3, 0.0, 0.5, 0.2])),
    "truncated geometric": TruncatedGeometricNoise(1.0, 2),
}


def _noise_values(mech, reach=50):
    """(z, pmf) on the support, or |z| <= reach (a tail below 1e-15 for these mechanisms)."""
    lower, upper = mech.support
    z = np.arange(-reach if lower is None else lower, (reach if upper is None else upper) + 1)
    pmf = mech.pmf(z)
    return z[pmf > 0], pmf[pmf > 0]


def _per_cell(mechanism, n=3):
    return (mechanism,) * n if not isinstance(mechanism, tuple) else mechanism


def brute_posterior(releases, prior, mechanisms, known, released):
    """P[C = k | x*] from the pmfs by Bayes' rule (every category, plain probabilities).

    ``releases`` holds one array per released cell (broadcast together); the
    categories are on the last axis of the result.
    """
    joint = []
    for k in range(prior.size):
        likelihood = prior[k]
        for j, cell in enumerate(released):
            truth = known[cell] + (cell == k)
            likelihood = likelihood * mechanisms[cell].pmf(np.asarray(releases[j]) - truth)
        joint.append(likelihood)
    joint = np.stack(np.broadcast_arrays(*joint), axis=-1)
    return joint / joint.sum(axis=-1, keepdims=True)


def brute_marginals(prior, mechanisms, c, released=(0, 1, 2), tie_rule="split"):
    """(3.3) and (3.6) by Bayes' rule on the whole joint grid of releases from the truth.

    A release whose largest posterior is shared by k categories (to 1e-9
    relative) counts 1/k for the truth among them ("split"), or 1 if the truth
    is the last ("largest") or first ("smallest") of them.
    """
    tables = [_noise_values(mechanisms[k]) for k in released]
    z = np.ix_(*(zk for zk, _ in tables))
    mass = np.ones(())
    for axis, (_, pmf) in enumerate(tables):
        mass = mass * pmf.reshape([-1 if i == axis else 1 for i in range(len(tables))])
    releases = [KNOWN[k] + (k == c) + zk for k, zk in zip(released, z, strict=True)]
    values = brute_posterior(releases, prior, mechanisms, KNOWN, released)
    tied = values >= values.max(axis=-1, keepdims=True) * (1 - 1e-9)
    first = np.argmax(tied, axis=-1)
    last = tied.shape[-1] - 1 - np.argmax(tied[..., ::-1], axis=-1)
    credit = {
        "split": tied[..., c] / tied.sum(axis=-1),
        "largest": (last == c).astype(float),
        "smallest": (first == c).astype(float),
    }[tie_rule]
    return float(np.sum(mass * values[..., c])), float(np.sum(mass * credit))


@pytest.mark.parametrize("convention", ["paper", "das"])
@pytest.mark.parametrize("rho", [RHO, (RHO, 0.3, 0.05)], ids=["one rho", "rho per cell"])
def test_equivalent_discrete_gaussians_give_identical_numbers(convention, rho):
    rhos = np.broadcast_to(rho, (3,))
    mechanisms = [DiscreteGaussianNoise.from_rho(r, convention) for r in rhos]
    releases = np.array([[3, 0, 5], [2, 2, 6], [4, -1, 5]])
    for function in (ua.posterior, ua.risk, ua.decision):
        np.testing.assert_array_equal(
            function(releases, PRIOR, None, KNOWN, mechanism=mechanisms),
            function(releases, PRIOR, rho, KNOWN, convention),
        )
    np.testing.assert_array_equal(
        ua.release_pmf(releases, None, KNOWN, 1, mechanism=mechanisms),
        ua.release_pmf(releases, rho, KNOWN, 1, convention),
    )
    for c in range(3):
        for released in (None, (0, 2)):
            left = ua.marginals(PRIOR, None, c, released=released, mechanism=mechanisms)
            right = ua.marginals(PRIOR, rho, c, convention, released)
            assert left == right
    case = ua.UnknownAttributeCase(
        "dg", ("a", "b", "c"), tuple(KNOWN), {"p": PRIOR}, "b", rho, convention, None, (3, 0, 5)
    )
    as_mechanisms = dataclasses.replace(case, rho=None, mechanism=mechanisms)
    assert as_mechanisms.marginal_measures() == case.marginal_measures()
    assert as_mechanisms.decision() == case.decision()
    np.testing.assert_array_equal(as_mechanisms.posterior(), case.posterior())


@pytest.mark.parametrize("row", list(ROWS), ids=list(ROWS))
def test_posterior_against_bayes_rule(row):
    mechanisms = _per_cell(ROWS[row])
    rng = np.random.default_rng(4)
    for c in range(3):
        for _ in range(10):
            releases = [KNOWN[k] + (k == c) + mechanisms[k].sample(rng=rng) for k in range(3)]
            expected = brute_posterior(releases, PRIOR, mechanisms, KNOWN, (0, 1, 2))
            got = ua.posterior(releases, PRIOR, None, KNOWN, mechanism=ROWS[row])
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
            np.testing.assert_allclose(
                ua.risk(releases, PRIOR, None, KNOWN, mechanism=ROWS[row]),
                expected / PRIOR,
                rtol=1e-12,
            )
            assert ua.decision(
                releases, PRIOR, None, KNOWN, mechanism=ROWS[row], tie_rule="smallest"
            ) == np.argmax(expected >= expected.max() * (1 - 1e-9))


@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize("row", list(ROWS), ids=list(ROWS))
@pytest.mark.parametrize("c", [0, 2])
def test_marginals_against_brute_force(row, c, tie_rule):
    mechanisms = _per_cell(ROWS[row])
    for released in ((0, 1, 2), (0, 2), (c,)):
        result = ua.marginals(
            PRIOR, None, c, released=released, mechanism=ROWS[row], tie_rule=tie_rule
        )
        post, correct = brute_marginals(PRIOR, mechanisms, c, released, tie_rule)
        assert result.marginal_posterior == pytest.approx(
            post, abs=result.posterior_error_bound + 1e-13
        )
        assert result.correct_decision_probability == pytest.approx(
            correct, abs=result.decision_error_bound + 1e-13
        )
        grid = ua.marginals(
            PRIOR, None, c, released=released, method="grid", grid_width=1e-3, mechanism=ROWS[row]
        )
        assert grid.marginal_posterior == pytest.approx(
            post, abs=grid.posterior_error_bound + 1e-13
        )
        bounded = all(mechanisms[k].bounded for k in released)
        assert (result.omitted_mass == 0.0) == bounded


def test_bounded_noise_settles_the_category():
    # Cell 1's cell-key noise is at most 3: x_1* = m_1 + 1 + 3 proves C = 1.
    releases = [KNOWN[0] + 2, KNOWN[1] + 4, KNOWN[2] - 3]
    np.testing.assert_array_equal(
        ua.posterior(releases, PRIOR, None, KNOWN, mechanism=CELL_KEY), [0.0, 1.0, 0.0]
    )
    assert ua.decision(releases, [0.98, 0.01, 0.01], None, KNOWN, mechanism=CELL_KEY) == 1
    np.testing.assert_array_equal(
        ua.risk(releases, PRIOR, None, KNOWN, mechanism=CELL_KEY), [0.0, 1 / 0.3, 0.0]
    )
    with pytest.raises(ValueError, match="impossible"):  # cells 0 and 1 both prove the target
        ua.posterior([KNOWN[0] + 4, KNOWN[1] + 4, KNOWN[2]], PRIOR, None, KNOWN, mechanism=CELL_KEY)
    with pytest.raises(ValueError, match="impossible"):  # every category ruled out
        ua.posterior(KNOWN - 3, PRIOR, None, KNOWN, mechanism=CELL_KEY)
    ratios = ua.log_likelihood_ratios(releases, None, KNOWN, mechanism=CELL_KEY)
    assert ratios[1] == np.inf and ratios[2] == -np.inf and np.isfinite(ratios[0])


def test_case_with_a_mechanism_and_its_model():
    case = ua.UnknownAttributeCase(
        "ck",
        ("a", "b", "c"),
        tuple(KNOWN),
        {"p": PRIOR},
        "a",
        None,
        observed_releases=(3, 1, 5),
        mechanism=ROWS["mixed"],
    )
    measures = case.marginal_measures()
    post, correct = brute_marginals(PRIOR, ROWS["mixed"], 0)
    assert measures.marginal_posterior == pytest.approx(post, abs=measures.error_bound + 1e-13)
    assert measures.correct_decision_probability == pytest.approx(correct, abs=1e-9)
    table = enumerate_posterior(case.model()).marginal("C")
    np.testing.assert_allclose(table.values, case.posterior().values, atol=1e-12)
    with pytest.raises(ValueError, match="not both"):
        dataclasses.replace(case, rho=RHO)
    with pytest.raises(ValueError, match="one mechanism per release"):
        dataclasses.replace(case, mechanism=(CELL_KEY, CELL_KEY))
