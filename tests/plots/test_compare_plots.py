"""Figures of sweeps, prior comparisons and decision maps (adversary.plots.compare)."""

import numpy as np
import pytest
import xarray as xr
from matplotlib.figure import Figure

from adversary.analyses.compare import compare_priors, sweep
from adversary.model_files import load_case
from adversary.plots.compare import (
    decision_map_figure,
    prior_dist,
    prior_forest,
    prior_sensitivity_figure,
    risk_curves_figure,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def dare():
    return load_case("dare_county")


@pytest.fixture(scope="module")
def sampled(dare):
    priors = {"1/2": 0.5, "1/10": 0.1}
    return compare_priors(
        dare, priors, method="mcmc", draws=400, chains=2, cores=1, random_seed=5
    ), compare_priors(dare, priors)


def saved_png(figure, path) -> bytes:
    figure.savefig(path)
    return path.read_bytes()[:8]


def test_risk_curves_of_a_rho_sweep(dare, tmp_path):
    data = sweep(dare, {"rho": np.geomspace(1e-3, 1e2, 30)}, progress=False)
    figure = risk_curves_figure(data)
    assert isinstance(figure, Figure)
    posterior, risk, decision = figure.axes
    assert [a.get_xscale() for a in figure.axes] == ["log"] * 3
    assert risk.get_yscale() == "log" and posterior.get_yscale() == "linear"
    # one line per prior, plus the marked case rho (and the risk = 1 line)
    assert len(posterior.get_lines()) == len(dare.priors) + 1
    line = posterior.get_lines()[1]
    np.testing.assert_allclose(line.get_ydata(), data["marginal_posterior"].sel(prior="1/5"))
    assert posterior.get_lines()[-1].get_xdata()[0] == pytest.approx(dare.rho)
    assert decision.get_ylabel() == "P[correct decision]"
    assert saved_png(figure, tmp_path / "curves.png") == PNG_MAGIC


def test_risk_curves_rows_for_a_second_parameter(dare, tmp_path):
    data = sweep(dare, {"rho": [0.01, 0.1, 1.0], "true_count": [0, 1]}, priors=["1/2", "1/50"])
    figure = risk_curves_figure(data, measures=["marginal_posterior", "marginal_risk"])
    assert len(figure.axes) == 4
    assert figure.axes[0].get_title() == "true_count = 0"
    assert figure.axes[2].get_title() == "true_count = 1"
    assert saved_png(figure, tmp_path / "rows.png") == PNG_MAGIC
    by_truth = risk_curves_figure(data, x="true_count")
    assert by_truth.axes[0].get_xscale() == "linear"
    with pytest.raises(ValueError, match="x: 'd' is not a swept dimension"):
        risk_curves_figure(data, x="d")
    many = sweep(dare, {"rho": [0.1, 1.0], "observed_release": list(range(8))}, progress=False)
    with pytest.raises(ValueError, match="select at most 6"):
        risk_curves_figure(many)
    with pytest.raises(ValueError, match="nothing was swept"):
        risk_curves_figure(sweep(dare, progress=False))


def test_risk_curves_of_non_numeric_values(dare, tmp_path):
    data = sweep(dare, {"releases": [(1,), (1, 2)]}, progress=False)
    figure = risk_curves_figure(data)
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == ["(1,)", "(1, 2)"]
    assert saved_png(figure, tmp_path / "labels.png") == PNG_MAGIC


def test_prior_sensitivity_exact(dare, tmp_path):
    exact = compare_priors(dare)
    figure = prior_sensitivity_figure(exact)
    left, right = figure.axes
    assert [t.get_text() for t in left.get_xticklabels()] == list(dare.priors)
    assert right.get_ylabel() == "risk (posterior / prior)"
    np.testing.assert_allclose(left.get_lines()[0].get_ydata(), exact["posterior_of_truth"])
    assert left.get_yscale() == "log"  # 1/864 to 1/2
    assert left.get_ylabel() == "P[X1 = 1]"
    assert saved_png(figure, tmp_path / "exact.png") == PNG_MAGIC
    # the measures of a sweep without swept parameters work too
    table5 = prior_sensitivity_figure(sweep(dare, progress=False))
    np.testing.assert_allclose(
        table5.axes[1].get_lines()[0].get_ydata(),
        sweep(dare, progress=False)["marginal_risk"],
        rtol=1e-12,
    )


def test_prior_sensitivity_of_vector_priors(tmp_path):
    case = load_case("unknown_ethnicity")
    result = compare_priors(case, {"a": (0.3, 0.7)}, target={"C": 1})
    figure = prior_sensitivity_figure(result)
    assert not figure.axes[1].get_visible()  # no single prior probability to divide by
    assert saved_png(figure, tmp_path / "vector.png") == PNG_MAGIC


def test_prior_sensitivity_sampled_has_mcse_bars(sampled, tmp_path):
    comparison, exact = sampled
    figure = prior_sensitivity_figure(comparison, exact=exact)
    left = figure.axes[0]
    assert left.containers, "error bars expected"
    bars = left.containers[0]
    segments = bars.lines[2][0].get_segments()
    mcse = comparison.dataset["posterior_of_truth_mcse"].values
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segments], 4 * mcse, rtol=1e-9)
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert "posterior (exact)" in labels and "posterior (MCMC, ±2 MCSE)" in labels
    assert saved_png(figure, tmp_path / "sampled.png") == PNG_MAGIC


def test_arviz_forest_and_ecdf_of_sampled_priors(sampled, tmp_path):
    comparison, _ = sampled
    forest = prior_forest(comparison, var_names=["X1"])
    forest.savefig(tmp_path / "forest.png")
    assert (tmp_path / "forest.png").read_bytes()[:8] == PNG_MAGIC
    dist = prior_dist(comparison, var_names=["X1"])
    assert list(dist.viz["dist"]["model"].values) == ["1/2", "1/10"]
    dist.savefig(tmp_path / "ecdf.png")
    assert (tmp_path / "ecdf.png").read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(TypeError, match="SampledComparison"):
        prior_forest(compare_priors(load_case("dare_county"), {"a": 0.5}))


def synthetic_map(with_probability=True):
    """Decisions over (x1*, x2*, y1*): the single-block rule, changed where x1* = 1 and 0."""
    x1 = np.arange(-3, 6)
    x2 = np.arange(-4, 7)
    y1 = np.arange(-10, 11)
    a, b, c = np.meshgrid(x1, x2, y1, indexing="ij")
    without = a >= 1
    decision = np.where(a == 1, b - c >= 0, without)
    decision = np.where((a == 0) & (b > 4), True, decision)
    dims = ("x1_release", "x2_release", "y1_release")
    data = {"decision": (dims, decision), "decision_without_hierarchy": (dims, without)}
    if with_probability:
        weight = np.exp(-0.1 * (a - 1.0) ** 2 - 0.25 * (b - 1.0) ** 2 - 0.01 * c**2)
        data["release_probability"] = (dims, weight / weight.sum())
    coords = {"x1_release": x1, "x2_release": x2, "y1_release": y1}
    return xr.Dataset(data, coords=coords, attrs={"truth": [1, 1, 0]})


def test_decision_map_panels_and_categories(tmp_path):
    data = synthetic_map()
    figure = decision_map_figure(data, mass=None)
    panels = [a for a in figure.axes if a.get_visible()]
    assert len(panels) == 9
    assert panels[4].get_title().startswith("x1* = 1")
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels == [
        "decides 0 with or without hierarchy",
        "hierarchy changes 0 → 1, right",
        "hierarchy changes 1 → 0, wrong",
        "decides 1 with or without hierarchy",
    ]
    # the image of x1* = 1 has y1* up and x2* across
    image = panels[4].collections[0].get_array().reshape(21, 11)
    expected = np.where(data["decision"].sel(x1_release=1).T.values, 3, 2)
    np.testing.assert_array_equal(image, expected)
    p = data["release_probability"]
    changed = data["decision"] != data["decision_without_hierarchy"]
    right = float(p.where(changed & data["decision"], 0).sum())
    wrong = float(p.where(changed & ~data["decision"], 0).sum())
    assert right > 0 and wrong > 0
    assert f"to right on {right:.2%} and to wrong on {wrong:.2%}" in figure._suptitle.get_text()
    assert saved_png(figure, tmp_path / "map.png") == PNG_MAGIC


def test_decision_map_crops_to_the_mass_and_marks_right_changes(tmp_path):
    data = synthetic_map()
    data.attrs = {"true_x1": 0}
    figure = decision_map_figure(data, mass=0.9)
    panels = [a for a in figure.axes if a.get_visible()]
    assert 1 < len(panels) < 9
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "hierarchy changes 1 → 0, right" in labels


def test_decision_map_without_comparison_or_probability(tmp_path):
    data = synthetic_map(with_probability=False).drop_vars("decision_without_hierarchy")
    data.attrs = {}
    figure = decision_map_figure(data, ncols=3)
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels == ["decides 0", "decides 1"]
    assert len([a for a in figure.axes if a.get_visible()]) == 9
    assert saved_png(figure, tmp_path / "plain.png") == PNG_MAGIC
    with pytest.raises(ValueError, match="missing \\['y1_release'\\]"):
        decision_map_figure(data.isel(y1_release=0, drop=True))
    with pytest.raises(TypeError, match="decision"):
        decision_map_figure(data.drop_vars("decision"))
