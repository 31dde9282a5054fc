"""Differencing and averaging: repeated counts and differenced totals in the exact likelihood."""

import numpy as np
import pytest

from adversary.noise.mechanisms import CellKeyNoise, DiscreteGaussianNoise
from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.differencing import DifferencingCase
from adversary.scenarios.multi_level import marginals
from adversary.scenarios.single_block import SingleBlockCase

CELL_KEY = CellKeyNoise(target_variance=3.0, bound=5)


@pytest.mark.parametrize("mechanism", [None, CELL_KEY])
@pytest.mark.parametrize("convention", ["paper", "das"])
def test_one_look_is_the_single_block_attack(mechanism, convention):
    rho = None if mechanism else RHO_BLOCK
    case = DifferencingCase("d", PRIORS, rho=rho, convention=convention, mechanism=mechanism)
    single = SingleBlockCase("s", rho, PRIORS, convention=convention, mechanism=mechanism)
    for label in PRIORS:
        got, expected = case.marginal_measures(label), single.marginal_measures(label)
        assert got.marginal_posterior == pytest.approx(expected.marginal_posterior, abs=1e-13)
        assert got.correct_decision_probability == pytest.approx(
            expected.correct_decision_probability, rel=1e-9, abs=1e-13
        )


@pytest.mark.parametrize("repeats", [2, 5, 12])
@pytest.mark.parametrize("truth", [None, 0])
def test_discrete_gaussian_repeats_are_many_levels_of_equal_rho(repeats, truth):
    """t releases of the count at one ρ are S1.3 with t levels of that ρ; the sum of the
    repeats is sufficient, so the measures are exact (a one-dimensional sum)."""
    case = DifferencingCase("d", {"p": 0.2}, repeats=repeats, true_count=truth)
    got = case.marginal_measures()
    assert got.method == "exact" and len(case.looks()) == 1
    expected = marginals(0.2, [RHO_BLOCK] * repeats, true_count=truth)
    assert got.marginal_posterior == pytest.approx(float(expected.marginal_posterior), abs=1e-9)
    assert got.correct_decision_probability == pytest.approx(
        float(expected.correct_decision_probability), abs=1e-9
    )


def test_a_difference_looks_through_the_sum_of_its_noises():
    case = DifferencingCase("d", PRIORS, repeats=0, differences=(1, 3))
    single = DiscreteGaussianNoise.from_rho(RHO_BLOCK).table(1e-16)
    convolved = single.probabilities
    for copies, look in zip((2, 4), case.looks(), strict=True):
        while len(convolved) < len(single.probabilities) * copies - copies + 1:
            convolved = np.convolve(convolved, single.probabilities)
        support = np.arange(copies * single.start, copies * single.start + len(convolved))
        np.testing.assert_allclose(look.mechanism.pmf(support), convolved, atol=1e-13)
    # a total of two cells, differenced, is a look with twice the noise variance
    assert case.looks()[0].mechanism.variance == pytest.approx(
        2 * DiscreteGaussianNoise.from_rho(RHO_BLOCK).variance, rel=1e-9
    )


@pytest.mark.parametrize("mechanism", [None, CELL_KEY])
def test_more_looks_never_lower_the_bayes_accuracy(mechanism):
    """Averaged over the prior, P[correct] grows with every added representation."""
    rho = None if mechanism else RHO_BLOCK
    accuracy = []
    for repeats, differences in ((1, ()), (2, ()), (2, (1,)), (3, (1, 2))):
        case = DifferencingCase(
            "d",
            {"p": 0.3},
            repeats=repeats,
            differences=differences,
            rho=rho,
            mechanism=mechanism,
            method="exact",
        )
        m = case.marginal_measures().correct_decision_probability
        z = case.replace(true_count=0).marginal_measures().correct_decision_probability
        accuracy.append(0.3 * m + 0.7 * z)
    assert np.all(np.diff(accuracy) >= -1e-12)
    assert accuracy[-1] > accuracy[0] + 0.02


def test_cell_key_repeats_monte_carlo_agrees_with_the_grid():
    case = DifferencingCase("d", {"p": 0.5}, repeats=3, rho=None, mechanism=CELL_KEY)
    exact = case.replace(method="exact").marginal_measures()
    drawn = case.replace(method="monte-carlo", replications=40_000).marginal_measures()
    errors = drawn.details["standard_errors"]
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert abs(getattr(drawn, name) - getattr(exact, name)) < 4 * errors[name]


def test_averaging_success_of_discrete_gaussian_repeats_by_its_sum():
    """Bach's α for t repeats: P[-t/2 <= S < t/2], S the sum of the t noises."""
    repeats = 6
    case = DifferencingCase("d", {"p": 0.5}, repeats=repeats, replications=40_000, seed=2)
    alpha, error = case.averaging_success()
    table = DiscreteGaussianNoise.from_rho(RHO_BLOCK).sum_table(repeats, 1e-15)
    support = table.support
    # the rounded mean is right when -1/2 <= mean noise < 1/2 (halves round up)
    expected = table.probabilities[(support >= -repeats / 2) & (support < repeats / 2)].sum()
    assert abs(alpha - expected) < 4 * error


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"priors": {"p": 0.0}}, "strictly between 0 and 1"),
        ({"repeats": -1}, "repeats must be"),
        ({"repeats": 0}, "at least one look"),
        ({"differences": (0,)}, "differences must be"),
        ({"true_count": 5}, "true_count must be 0 or 1"),
        ({"rho": None}, "rho"),
        ({"method": "fast"}, "method must be"),
    ],
)
def test_bad_input_names_the_argument(changes, message):
    with pytest.raises(ValueError, match=message):
        DifferencingCase(**{"name": "d", "priors": {"p": 0.5}, **changes})


@pytest.mark.parametrize("mechanism", [None, CELL_KEY])
def test_posterior_and_its_pymc_model(mechanism):
    from adversary.inference import enumerate_posterior

    rho = None if mechanism else RHO_BLOCK
    case = DifferencingCase(
        "d",
        PRIORS,
        repeats=3,
        differences=(2,),
        rho=rho,
        mechanism=mechanism,
        observed_releases=(3, 2, 1, 1) if mechanism else (3, 1),
    )
    for label, p in PRIORS.items():
        # Bayes' theorem by hand over the looks' pmfs
        odds = p / (1 - p)
        for look, value in zip(case.looks(), case.observed_releases, strict=True):
            odds *= look.mechanism.pmf(value - look.shift) / look.mechanism.pmf(value)
        assert case.posterior(label) == pytest.approx(odds / (1 + odds), rel=1e-12)
        table = enumerate_posterior(case.model(label))
        assert float(table.marginal("X1").sel(X1=1)) == pytest.approx(odds / (1 + odds), rel=1e-9)
