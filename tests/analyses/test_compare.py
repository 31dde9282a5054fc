"""Sweeps and prior comparisons of a case (adversary.analyses.compare)."""

import dataclasses
import time

import numpy as np
import pytest
import xarray as xr

from adversary.analyses import compare
from adversary.analyses.compare import SampledComparison, compare_priors, sweep, to_table
from adversary.measures.marginal import MarginalMeasures
from adversary.measures.protocol import Attack, CaseFields, true_target_value
from adversary.model_files import load_case
from adversary.scenarios import single_block as sb
from adversary.scenarios.block_group.prior import point_mass


@pytest.fixture(scope="module")
def dare():
    return load_case("dare_county")


def closed_forms(case, p, rho, true_count=None):
    args = (p, rho, case.known_count, true_count, case.convention)
    return {
        "marginal_posterior": sb.marginal_posterior(*args),
        "marginal_risk": sb.marginal_risk(*args),
        "correct_decision_probability": sb.correct_decision_probability(*args),
    }


# ---------------------------------------------------------------- sweep


def test_sweep_over_rho_equals_the_single_block_closed_forms(dare):
    rhos = np.geomspace(1e-3, 1e2, 25)
    result = sweep(dare, {"rho": rhos}, progress=False)
    assert result["marginal_posterior"].dims == ("prior", "rho")
    assert list(result["prior"].values) == list(dare.priors)
    np.testing.assert_allclose(result["p"], dare.prior_values)
    np.testing.assert_allclose(result["rho"], rhos)
    expected = closed_forms(dare, dare.prior_values[:, None], rhos[None, :])
    for name, values in expected.items():
        np.testing.assert_allclose(result[name], values, rtol=1e-12, atol=1e-15)
    assert (result["error_bound"] <= 1e-15).all()
    np.testing.assert_allclose(result["prior_of_truth"].isel(rho=0), dare.prior_values)
    assert result.attrs["case"] == dare.name
    assert result.attrs["swept"] == ["rho"]
    assert result.attrs["case_rho"] == pytest.approx(dare.rho)
    assert result.attrs["known_count"] == 0 and result.attrs["true_count"] == 1
    assert "rho" not in result.attrs and "description" not in result.attrs


def test_the_method_attribute_is_the_method_used_not_the_cases_setting():
    """A case whose ``method`` field is "auto" and whose measures are Monte Carlo: the field
    overwrote the method used in the attributes (and the CLI said "sums over the grid")."""
    from adversary.model_files import load_case

    case = load_case("differencing").replace(replications=400)
    assert case.method == "auto" and case.marginal_measures("1/2").method == "monte-carlo"
    result = sweep(case, priors=["1/2"], progress=False)
    assert result.attrs["method"] == "monte-carlo" and result.attrs["case_method"] == "auto"
    assert result.attrs["tie_rule"] == "split" == result.attrs["case_tie_rule"]


def test_sweep_without_over_is_table_5(dare):
    result = sweep(dare, progress=False)
    assert result["marginal_posterior"].dims == ("prior",)
    expected = closed_forms(dare, dare.prior_values, dare.rho)
    for name, values in expected.items():
        np.testing.assert_allclose(result[name], values, rtol=1e-12)


def test_sweep_over_two_fields_and_chosen_priors(dare):
    rhos = [0.01, 0.1, 1.0]
    result = sweep(dare, {"rho": rhos, "true_count": [0, 1]}, priors=["1/2", "1/50"])
    assert result["marginal_risk"].dims == ("prior", "rho", "true_count")
    assert result["marginal_risk"].shape == (2, 3, 2)
    for truth in (0, 1):
        expected = closed_forms(dare, np.array([[0.5], [0.02]]), np.array(rhos)[None], truth)
        for name, values in expected.items():
            np.testing.assert_allclose(result[name].sel(true_count=truth), values, rtol=1e-12)
    # the truth x1 = m has prior 1 - p
    np.testing.assert_allclose(
        result["prior_of_truth"].sel(true_count=0, rho=0.1), [0.5, 0.98], rtol=1e-12
    )


def test_sweep_with_new_priors(dare):
    result = sweep(dare, {"rho": [0.1]}, priors={"a": 0.3, "b": 0.7})
    assert list(result["prior"].values) == ["a", "b"]
    np.testing.assert_allclose(result["p"], [0.3, 0.7])
    expected = closed_forms(dare, np.array([0.3, 0.7]), 0.1)["marginal_posterior"]
    np.testing.assert_allclose(result["marginal_posterior"].sel(rho=0.1), expected, rtol=1e-12)


def test_sweep_names_a_bad_field(dare):
    with pytest.raises(ValueError, match=r"over: 'rhoo' cannot be swept.*rho"):
        sweep(dare, {"rhoo": [1.0]})
    with pytest.raises(ValueError, match=r"'priors' cannot be swept; use priors="):
        sweep(dare, {"priors": [{"a": 0.5}]})
    with pytest.raises(ValueError, match=r"over\['rho'\] is empty"):
        sweep(dare, {"rho": []})
    with pytest.raises(TypeError, match=r"over\['convention'\] must be a sequence"):
        sweep(dare, {"convention": "das"})
    with pytest.raises(ValueError, match=r"over\['rho'\] repeats"):
        sweep(dare, {"rho": [1.0, 1.0]})


def test_sweep_names_a_bad_value_and_prior(dare):
    with pytest.raises(ValueError, match=r"over: rho=-1\.0: .*rho"):
        sweep(dare, {"rho": [0.1, -1.0]})
    with pytest.raises(ValueError, match=r"priors: '1/3' is not a prior label"):
        sweep(dare, priors=["1/3"])
    with pytest.raises(ValueError, match=r"priors"):
        sweep(dare, priors={"a": 1.5})
    with pytest.raises(TypeError, match=r"case: object has no 'priors': not an attack"):
        sweep(object(), {"rho": [1.0]})


def test_sweep_of_non_scalar_values_labels_them(dare):
    result = sweep(dare, {"releases": [(1, 2), (3,)]}, progress=False)
    assert list(result["releases"].values) == ["(1, 2)", "(3,)"]


# ---------------------------------------------------------------- progress bar


@dataclasses.dataclass(frozen=True)
class SlowCase(CaseFields):
    """An attack whose measures take ``delay`` seconds each."""

    name: str
    priors: dict
    delay: float = 0.0
    rho: float = 1.0
    tie_rule: str = "split"

    target = "X1"
    true_latents = None

    def model(self, prior_label=None):  # pragma: no cover - not needed here
        raise NotImplementedError

    def marginal_measures(self, prior_label=None):
        time.sleep(self.delay)
        p = self.priors[prior_label or next(iter(self.priors))]
        return MarginalMeasures(p, 1.0, 0.5, p, 0.0, 0.0)


def test_slow_case_is_an_attack():
    assert isinstance(SlowCase("slow", {"a": 0.5}), Attack)


def test_progress_bar_appears_for_a_slow_sweep(capsys):
    case = SlowCase("slow", {"a": 0.5}, delay=0.45)
    result = sweep(case, {"rho": [1.0, 2.0, 3.0]})
    assert result["marginal_posterior"].shape == (1, 3)
    err = capsys.readouterr().err
    assert "sweep rho: slow" in err and "3/3" in err


def test_progress_bar_never_with_progress_false(capsys):
    case = SlowCase("slow", {"a": 0.5}, delay=0.45)
    sweep(case, {"rho": [1.0, 2.0, 3.0]}, progress=False)
    assert capsys.readouterr().err == ""


def test_no_progress_bar_for_a_fast_sweep(capsys, dare):
    sweep(dare, {"rho": np.geomspace(1e-3, 1e2, 10)})
    assert capsys.readouterr().err == ""


def test_progress_bar_waits_for_the_threshold(capsys, monkeypatch):
    # 12 evaluations of 20 ms: 0.24 s in all, under a 1 s threshold
    sweep(SlowCase("quick", {"a": 0.5, "b": 0.2}, delay=0.02), {"rho": list(range(1, 7))})
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(compare, "PROGRESS_AFTER_SECONDS", 0.05)
    sweep(SlowCase("quick", {"a": 0.5, "b": 0.2}, delay=0.02), {"rho": list(range(1, 7))})
    assert "12/12" in capsys.readouterr().err


def test_progress_true_shows_even_a_fast_sweep(capsys, dare):
    sweep(dare, {"rho": [0.1, 1.0]}, progress=True)
    assert "sweep rho" in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress"):
        sweep(dare, {"rho": [0.1]}, progress="yes")


# ---------------------------------------------------------------- compare_priors


def test_compare_priors_exact_equals_the_single_block_posterior(dare):
    result = compare_priors(dare)
    assert isinstance(result, xr.Dataset)
    assert result["X1_posterior"].dims == ("prior", "X1")
    expected = sb.posterior(
        dare.observed_release, dare.prior_values, dare.rho, dare.known_count, dare.true_count
    )
    np.testing.assert_allclose(result["posterior_of_truth"], expected, rtol=1e-10)
    np.testing.assert_allclose(result["X1_posterior"].sel(X1=1), expected, rtol=1e-10)
    np.testing.assert_allclose(result["X1_posterior"].sum("X1"), 1.0, rtol=1e-12)
    np.testing.assert_allclose(result["p"], dare.prior_values)
    assert (result["omitted_mass"] == 0).all()
    assert result.attrs["target"] == "X1 = 1" and result.attrs["latent_dims"] == ["X1"]


def test_compare_priors_with_probabilities_and_alternative_cases(dare):
    other = dataclasses.replace(dare, observed_release=4, priors={"q": 0.25})
    result = compare_priors(dare, {"p=0.3": 0.3, "release 4": other, "again": (dare, "1/50")})
    assert list(result["prior"].values) == ["p=0.3", "release 4", "again"]
    np.testing.assert_allclose(result["p"], [0.3, 0.25, 0.02])
    expected = [
        sb.posterior(1, 0.3, dare.rho),
        sb.posterior(4, 0.25, dare.rho),
        sb.posterior(1, 0.02, dare.rho),
    ]
    np.testing.assert_allclose(result["posterior_of_truth"], expected, rtol=1e-10)
    with pytest.raises(ValueError, match=r"priors\['bad'\]"):
        compare_priors(dare, {"bad": 1.2})
    with pytest.raises(ValueError, match="method"):
        compare_priors(dare, method="vi")


def test_compare_priors_target_choices(dare):
    result = compare_priors(dare, {"a": 0.5}, target={"X1": 0})
    assert float(result["posterior_of_truth"][0]) == pytest.approx(
        1 - float(sb.posterior(1, 0.5, dare.rho)), rel=1e-10
    )
    with pytest.raises(ValueError, match="target"):
        compare_priors(dare, {"a": 0.5}, target="X2")
    assert true_target_value(dare) == 1
    assert true_target_value(load_case("granville_county")) == 1


def test_compare_priors_across_block_group_x2_priors():
    case = load_case("granville_county")
    alternative = dataclasses.replace(case, x2_prior=point_mass(1))
    result = compare_priors(case, {"improper uniform": case, "point mass at 1": alternative})
    assert set(result.attrs["latent_dims"]) == {"X1", "X2"}
    for label, which in (("improper uniform", case), ("point mass at 1", alternative)):
        exact = which.posterior().sum("X2")
        np.testing.assert_allclose(
            result["X1_posterior"].sel(prior=label, X1=[0, 1]), exact.sel(X1=[0, 1]), rtol=1e-8
        )
    # the point mass puts no posterior mass on X2 != 1; the aligned table holds zeros there
    x2 = result["X2_posterior"].sel(prior="point mass at 1")
    assert float(x2.sel(X2=1)) == pytest.approx(1.0)
    assert float(x2.drop_sel(X2=1).sum()) == 0.0
    table = to_table(result)
    assert list(table.index) == ["improper uniform", "point mass at 1"]
    assert "E[X2]" in table.columns and "P[X1=1]" in table.columns


def test_compare_priors_mcmc_within_four_mcse_of_exact(dare):
    priors = {"1/2": 0.5, "1/5": 0.2, "1/10": 0.1}
    exact = compare_priors(dare, priors)
    sampled = compare_priors(
        dare, priors, method="mcmc", draws=2000, chains=2, cores=1, random_seed=11
    )
    assert isinstance(sampled, SampledComparison)
    assert set(sampled.trees) == set(priors)
    assert "posterior" in sampled.trees["1/2"].children
    data = sampled.dataset
    difference = abs(data["posterior_of_truth"] - exact["posterior_of_truth"])
    assert (data["posterior_of_truth_mcse"] > 0).all()
    assert (difference < 4 * data["posterior_of_truth_mcse"]).all()
    assert (data["posterior_of_truth_ess"] > 1000).all()
    pmf_difference = abs(data["X1_posterior"] - exact["X1_posterior"])
    assert (pmf_difference < 4 * data["X1_mcse"]).all()
    # same seed, same numbers
    again = compare_priors(
        dare, {"1/2": 0.5}, method="mcmc", draws=2000, chains=2, cores=1, random_seed=11
    )
    assert float(again.dataset["posterior_of_truth"][0]) == float(data["posterior_of_truth"][0])
    table = to_table(sampled)
    assert {"posterior_of_truth_mcse", "mcse P[X1=1]", "P[X1=0]"} <= set(table.columns)


def test_compare_priors_of_a_case_with_another_latent_and_vector_priors():
    case = load_case("unknown_ethnicity")  # latent C (the category), a prior per category
    result = compare_priors(case, {"a": (0.3, 0.7), "b": (0.5, 0.5)})
    assert result.attrs["latent_dims"] == ["C"]
    # the default event is the case's target at its truth: C = 0 ("not Hispanic")
    assert result.attrs["target"] == "C = 0"
    np.testing.assert_allclose(
        result["posterior_of_truth"], result["C_posterior"].sel(C=0), rtol=1e-12
    )
    assert list(result["p"].values) == ["[0.3, 0.7]", "[0.5, 0.5]"]
    np.testing.assert_allclose(result["C_posterior"].sum("C"), 1.0, rtol=1e-12)
    targeted = compare_priors(case, {"a": (0.3, 0.7)}, target={"C": 1})
    assert float(targeted["posterior_of_truth"][0]) == pytest.approx(
        float(result["C_posterior"].sel(prior="a", C=1)), rel=1e-12
    )
    measures = sweep(case, priors={"a": (0.3, 0.7)}, progress=False)
    assert measures["p"].values.tolist() == ["[0.3, 0.7]"]
    assert float(measures["marginal_posterior"][0]) == pytest.approx(
        dataclasses.replace(case, priors={"a": (0.3, 0.7)}).marginal_measures().marginal_posterior
    )


# ---------------------------------------------------------------- to_table


def test_to_table_of_a_sweep(dare):
    result = sweep(dare, {"rho": [0.1, 1.0]}, progress=False)
    table = to_table(result)
    assert table.index.names == ["prior", "rho"]
    assert list(table.columns[:4]) == [
        "p",
        "marginal_posterior",
        "marginal_risk",
        "correct_decision_probability",
    ]
    assert len(table) == 2 * len(dare.priors)
    value = table.loc[("1/50", 1.0), "marginal_risk"]
    assert value == pytest.approx(float(sb.marginal_risk(0.02, 1.0)), rel=1e-12)
    with pytest.raises(TypeError, match="result must be"):
        to_table(table)
