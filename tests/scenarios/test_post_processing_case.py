"""Post-processed release (Kazan & Reiter supplement S6): the PyMC model and the case class.

The model enumerates and samples to the exact posterior (S6.7); the case's
measures are the module's functions. The functions themselves are checked
against brute force in test_post_processing.py.
"""

import math

import pytest

from adversary.noise import noise_variance
from adversary.scenarios import post_processing as pp

# Block GVHR ρ of the 2020 persons file (paper Table 2), the ρ1 ≈ 0.099 of Figure 6.
BLOCK_RHO = 2.56 * 165 / 4099 * 3945 / 4097
# The S6 setting of test_post_processing.py: p = 1/2, m = 0, truth x1 = x2 = 1, d = 27.
S6 = {"d": 27, "x2": 1}


# --- the PyMC model -----------------------------------------------------------------------

MODEL_CASES = [  # (x̃1, p, ρ, d, x2, x̃2, m, convention)
    (3, 0.5, BLOCK_RHO, 27, 1, 10, 0, "paper"),
    (0, 0.5, BLOCK_RHO, 27, 1, 1, 0, "paper"),
    (10, 0.5, BLOCK_RHO, 27, 1, 10, 0, "paper"),
    (4, 0.2, 0.3, 3, 5, 6, 2, "das"),
]


def _truncation(rho, d, x2, known, convention):
    """Stated enumeration ranges: 12 standard deviations beyond both hypotheses' centres."""
    sigma = math.sqrt(float(noise_variance(rho, convention)))
    a, b = int(12 * sigma) + 2, int(12 * sigma * math.sqrt(d)) + 2
    return {
        "x1_star": (known - a, known + 1 + a),
        "y1_star": (x2 - known - 1 - b, x2 - known + b),
    }


@pytest.mark.parametrize(
    ("x1_tilde", "p", "rho", "d", "x2", "x2_tilde", "known", "convention"), MODEL_CASES
)
def test_enumerating_the_model_gives_the_exact_posterior(
    x1_tilde, p, rho, d, x2, x2_tilde, known, convention
):
    """The model's X1 marginal is (S6.7); the stated ranges leave out < e^{-70} of each noise."""
    from adversary.inference import enumerate_posterior

    attack = pp.model(
        x1_tilde, p, rho, d=d, x2=x2, x2_tilde=x2_tilde, known_count=known, convention=convention
    )
    assert attack.point_logps()["x1_tilde"] == 0.0  # the start satisfies the indicator
    table = enumerate_posterior(
        attack, vars=["X1"], truncation=_truncation(rho, d, x2, known, convention)
    )
    got = table.marginal("X1").sel(X1=known + 1).item()
    expected = pp.posterior(
        x1_tilde, p, rho, d=d, x2=x2, x2_tilde=x2_tilde, known_count=known, convention=convention
    )
    assert got == pytest.approx(float(expected), rel=1e-10)


@pytest.mark.parametrize(("x1_tilde", "x2_tilde"), [(3, 10), (1, 1)])
def test_mcmc_agrees_with_the_exact_posterior_within_four_standard_errors(x1_tilde, x2_tilde):
    import arviz as az

    from adversary.inference import event_indicator, sample

    attack = pp.model(x1_tilde, 0.5, BLOCK_RHO, x2_tilde=x2_tilde, **S6)
    tree = sample(
        attack, draws=800, tune=200, chains=2, cores=1, random_seed=20230, progressbar=False
    )
    indicator = event_indicator(tree, {"X1": 1})
    estimate = float(indicator.mean())
    ess = float(az.ess(indicator))
    mcse = float(indicator.std()) / math.sqrt(ess)
    exact = float(pp.posterior(x1_tilde, 0.5, BLOCK_RHO, x2_tilde=x2_tilde, **S6))
    assert ess > 500
    assert abs(estimate - exact) < 4 * mcse


# --- the case class -----------------------------------------------------------------------

CASE = pp.PostProcessingCase(
    name="S6",
    rho=BLOCK_RHO,
    priors={"1/2": 0.5, "1/10": 0.1},
    d=27,
    x2=1,
    x2_tilde=10,
    observed_x1_tilde=3,
)


def test_case_is_a_risk_case_whose_measures_are_the_functions():
    from adversary.measures.protocol import Attack

    assert isinstance(CASE, Attack)
    assert CASE.truth == 1
    for label, p in CASE.priors.items():
        measures = CASE.marginal_measures(label)
        exact = pp.marginals(p, BLOCK_RHO, x2_tilde=10, **S6)
        assert measures.marginal_posterior == float(exact.marginal_posterior)
        assert measures.marginal_risk == float(pp.marginal_risk(p, BLOCK_RHO, x2_tilde=10, **S6))
        assert measures.correct_decision_probability == float(
            pp.correct_decision_probability(p, BLOCK_RHO, x2_tilde=10, **S6)
        )
        assert measures.prior_of_truth == p
        assert measures.omitted_mass == float(exact.omitted_mass) <= 1e-15
        assert measures.error_bound == max(
            float(exact.posterior_error_bound), float(exact.decision_error_bound)
        )
        assert measures.details["risk_error_bound"] == float(exact.risk_error_bound)
        assert CASE.posterior(label) == float(pp.posterior(3, p, BLOCK_RHO, x2_tilde=10, **S6))


def test_case_sweeps_and_the_other_truth():
    import dataclasses

    for x in (1, 100):  # x̃1 = 3 exceeds x̃2 = 1: fine for the measures, refused by model()
        case = dataclasses.replace(CASE, x2_tilde=x)
        assert case.marginal_measures().marginal_risk == float(
            pp.marginal_risk(0.5, BLOCK_RHO, x2_tilde=x, **S6)
        )
    with pytest.raises(ValueError, match=r"^observed_x1_tilde must lie in 0\.\.x2_tilde"):
        dataclasses.replace(CASE, x2_tilde=1).posterior()
    other = dataclasses.replace(CASE, true_count=0, exact_sum=True, convention="das")
    measures = other.marginal_measures("1/10")
    assert measures.prior_of_truth == pytest.approx(0.9)
    args = dict(x2_tilde=10, true_count=0, exact_sum=True, convention="das", **S6)
    assert measures.marginal_posterior == float(pp.marginal_posterior(0.1, BLOCK_RHO, **args))
    assert other.posterior("1/10") == float(pp.posterior(3, 0.1, BLOCK_RHO, **args))
    with pytest.raises(ValueError, match=r"^exact_sum"):
        other.model()


@pytest.mark.parametrize("label", ["1/2", "1/10"])
def test_case_model_enumerates_to_the_exact_posterior(label):
    from adversary.inference import enumerate_posterior

    table = enumerate_posterior(
        CASE.model(label), vars=["X1"], truncation=CASE.enumeration_ranges()
    )
    got = table.marginal("X1").sel(X1=1).item()
    assert got == pytest.approx(CASE.posterior(label), rel=1e-10)
    assert CASE.enumeration_ranges() == _truncation(BLOCK_RHO, 27, 1, 0, "paper")


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"d": 0}, "d"),
        ({"x2": 0}, "x2"),
        ({"x2_tilde": -1}, "x2_tilde"),
        ({"known_count": 0.5}, "known_count"),
        ({"true_count": 2}, "true_count"),
        ({"rho": 0.0}, "rho"),
        ({"rho": (0.1, 0.2)}, "rho"),
        ({"priors": {"bad": 0.0}}, "priors"),
        ({"priors": {}}, "priors"),
        ({"observed_x1_tilde": -1}, "observed_x1_tilde"),
        ({"observed_x1_tilde": 1.5}, "observed_x1_tilde"),
        ({"convention": "other"}, "convention"),
    ],
)
def test_bad_case_fields_name_the_field(change, name):
    import dataclasses

    with pytest.raises(ValueError, match=rf"^{name} "):
        dataclasses.replace(CASE, **change)


def test_case_without_a_release_has_measures_but_no_model():
    import dataclasses

    case = dataclasses.replace(CASE, observed_x1_tilde=None)
    assert case.marginal_measures().marginal_risk == CASE.marginal_measures().marginal_risk
    with pytest.raises(ValueError, match=r"^observed_x1_tilde"):
        case.model()
    with pytest.raises(ValueError, match=r"^prior must be one of"):
        CASE.marginal_measures("1/3")


def test_shipped_model_file_is_the_s6_setting():
    from adversary.model_files import load_case

    case = load_case("post_processed")
    assert isinstance(case, pp.PostProcessingCase)
    assert (case.rho, case.d, case.x2, case.x2_tilde, case.truth) == (BLOCK_RHO, 27, 1, 10, 1)
    assert case.marginal_measures("1/2").marginal_risk == pytest.approx(1.04189, abs=5e-6)
    assert case.posterior("1/2") == float(pp.posterior(2, 0.5, BLOCK_RHO, x2_tilde=10, **S6))


def test_the_model_refuses_the_exact_sum_it_does_not_model():
    """With rho the PyMC model has y1* by (3.7) only: exact_sum=True is refused, not ignored."""
    with pytest.raises(ValueError, match=r"^exact_sum: the model has y1\* by the approximation"):
        pp.model(2, 0.5, 0.1, d=27, x2=1, x2_tilde=10, exact_sum=True)
