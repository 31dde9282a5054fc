"""The block-group figures (Kazan & Reiter Figures 4–6): what they draw is what was computed.

Coarse grids keep this quick (a loose tail mass for the release sums); the
numbers themselves are tested with the functions that compute them.
"""

import dataclasses

import numpy as np
import pytest
import xarray as xr
from matplotlib.figure import Figure

from adversary.model_files import load_case
from adversary.plots import block_group as plots
from adversary.scenarios.block_group.prior import bounded_uniform, improper_uniform, point_mass

TAIL = 1e-6


@pytest.fixture(scope="module")
def case():
    return load_case("granville_county")


def _saves(figure: Figure, tmp_path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    figure.savefig(path, dpi=40)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_hierarchy_sweep_over_x2_is_the_case_measures(case):
    data = plots.hierarchy_sweep(case, [1, 2, 5])
    assert data["correct_decision_probability"].dims == ("x2",)
    np.testing.assert_array_equal(data["x2"], [1, 2, 5])
    for x2 in (1, 5):
        varied = dataclasses.replace(case, truth=(1, x2, x2 - 1))
        measures = varied.marginal_measures()
        assert float(data["correct_decision_probability"].sel(x2=x2)) == pytest.approx(
            measures.correct_decision_probability, abs=1e-12
        )
        assert float(data["marginal_risk"].sel(x2=x2)) == pytest.approx(
            measures.marginal_risk, abs=1e-12
        )
    # Without the block group: the single block's (3.6) at the 2020 ρ1, p = 1/2 (58.89%).
    alone = float(data["correct_decision_probability_without_hierarchy"])
    assert alone == pytest.approx(0.58886, abs=1e-5)
    assert data.attrs["case_x2"] == 1
    assert data.attrs["case_rho2"] == pytest.approx(case.rho2)


def test_hierarchy_sweep_over_rho2(case):
    data = plots.hierarchy_sweep(case, [1, 3], rho2_values=[0.1, case.rho2, 10.0])
    assert data["correct_decision_probability"].dims == ("rho2", "x2")
    at_case = data["correct_decision_probability"].sel(rho2=case.rho2, x2=1)
    assert float(at_case) == pytest.approx(
        case.marginal_measures().correct_decision_probability, abs=1e-12
    )


def test_hierarchy_sweep_errors(case):
    with pytest.raises(ValueError, match="x2_values"):
        plots.hierarchy_sweep(case, [0, 1])  # x2 < x1 = 1
    with pytest.raises(ValueError, match="prior_label"):
        plots.hierarchy_sweep(case, [1], prior_label="1/3")
    with pytest.raises(TypeError, match="BlockGroupCase"):
        plots.hierarchy_sweep(load_case("dare_county"), [1])


def test_figure5_draws_the_sweep_and_the_single_block_line(case, tmp_path):
    data = plots.hierarchy_sweep(case, range(1, 6))
    figure = plots.correct_decision_by_x2_figure(data)
    (axis,) = figure.axes
    curve, without = axis.lines[0], axis.lines[1]
    np.testing.assert_array_equal(curve.get_xdata(), np.arange(1, 6))
    np.testing.assert_allclose(curve.get_ydata(), data["correct_decision_probability"])
    np.testing.assert_allclose(
        without.get_ydata(), float(data["correct_decision_probability_without_hierarchy"])
    )
    _saves(figure, tmp_path, "figure5")


def test_figure5_one_panel_per_dataset(case, tmp_path):
    data = plots.hierarchy_sweep(case, [1, 2])
    other = data.copy()
    other["correct_decision_probability"] = other["correct_decision_probability"] * 0 + 0.59
    figure = plots.correct_decision_by_x2_figure({"model": data, "other": other})
    assert [axis.get_title() for axis in figure.axes] == ["model", "other"]
    np.testing.assert_allclose(figure.axes[1].lines[0].get_ydata(), [0.59, 0.59])
    _saves(figure, tmp_path, "figure5_panels")


def test_figure6_one_line_per_x2_on_a_log_axis(case, tmp_path):
    rho2 = np.geomspace(0.05, 20, 4)
    data = plots.hierarchy_sweep(case, [1, 2, 25], rho2_values=rho2)
    figure = plots.correct_decision_by_rho2_figure(data)
    (axis,) = figure.axes
    assert axis.get_xscale() == "log"
    labelled = [line for line in axis.lines if line.get_label().startswith("x2 = ")]
    assert [line.get_label() for line in labelled] == ["x2 = 1", "x2 = 2", "x2 = 25"]
    np.testing.assert_allclose(labelled[2].get_xdata(), rho2)
    np.testing.assert_allclose(
        labelled[2].get_ydata(), data["correct_decision_probability"].sel(x2=25)
    )
    _saves(figure, tmp_path, "figure6")


def test_figures_refuse_the_wrong_dims(case):
    by_rho2 = plots.hierarchy_sweep(case, [1], rho2_values=[0.2, 2.0])
    with pytest.raises(ValueError, match="select one rho2"):
        plots.correct_decision_by_x2_figure(by_rho2)
    with pytest.raises(ValueError, match="needs"):
        plots.correct_decision_by_rho2_figure(by_rho2.isel(rho2=0))
    with pytest.raises(TypeError, match="hierarchy_sweep"):
        plots.correct_decision_by_x2_figure([by_rho2])
    with pytest.raises(TypeError, match="correct_decision_probability"):
        plots.correct_decision_by_x2_figure({"a": xr.Dataset()})


def test_figure4_panels_title_and_shares(case, tmp_path):
    decisions = case.decision_map(tail_mass=TAIL)
    figure = plots.decision_figure(decisions)
    title = figure.get_suptitle()
    attrs = decisions.attrs
    assert "Uniform{k1, k1+1, ...}" in title and "(1, 1)" in title
    assert f"{attrs['correct_decision_probability']:.2%}" in title
    assert f"{attrs['changed_to_correct']:.2%}" in title  # shares over the whole grid
    assert f"{attrs['changed_to_wrong']:.2%}" in title
    panels = [axis for axis in figure.axes if axis.get_visible()]
    shown = [int(axis.get_title().split("=")[1].split()[0]) for axis in panels]
    assert shown[0] < 1 < shown[-1] and shown == sorted(shown)
    # The box holds at least 99% of the release probability.
    box = decisions.sel(x1_release=shown)["release_probability"].sum()
    assert float(box) >= 0.99
    _saves(figure, tmp_path, "figure4")


def test_figure4_whole_grid_and_errors(case):
    decisions = case.decision_map(tail_mass=TAIL)
    whole = plots.decision_figure(decisions, mass=None, ncols=8, title="all")
    assert sum(axis.get_visible() for axis in whole.axes) == decisions.sizes["x1_release"]
    assert whole.get_suptitle().startswith("all")
    with pytest.raises(ValueError, match="mass"):
        plots.decision_figure(decisions, mass=1.5)
    with pytest.raises(TypeError, match="decision_map"):
        plots.decision_figure(decisions.drop_vars("release_probability"))


def test_hierarchy_sweep_over_priors_of_x2_one_line_each(case, tmp_path):
    priors = {"uniform": improper_uniform(), "up to 10": bounded_uniform(10), "at 1": point_mass(1)}
    data = plots.hierarchy_sweep(case, [1, 2, 3], x2_priors=priors)
    assert data["correct_decision_probability"].dims == ("x2_prior", "x2")
    assert list(data["x2_prior"].values) == list(priors)
    at_one = dataclasses.replace(case, x2_prior=point_mass(1)).marginal_measures()
    assert float(data["correct_decision_probability"].sel(x2_prior="at 1", x2=1)) == pytest.approx(
        at_one.correct_decision_probability, abs=1e-12
    )
    figure = plots.correct_decision_by_x2_figure(data)
    labels = [line.get_label() for line in figure.axes[0].lines]
    assert labels[:3] == list(priors)
    np.testing.assert_allclose(
        figure.axes[0].lines[1].get_ydata(),
        data["correct_decision_probability"].sel(x2_prior="up to 10"),
    )
    _saves(figure, tmp_path, "figure5_priors")
    with pytest.raises(TypeError, match="x2_priors"):
        plots.hierarchy_sweep(case, [1], x2_priors={})


def test_a_split_tie_has_its_own_colour_and_counts_half(case, tmp_path):
    """A point mass on X2 ties whole lines of releases; under "split" they decide 1/2."""
    tied_case = dataclasses.replace(case, x2_prior=point_mass(1))
    maps = tied_case.decision_map(tail_mass=TAIL)
    assert set(np.unique(maps["decision"].values)) == {0.0, 0.5, 1.0}
    assert np.array_equal(maps["decision"].values == 0.5, maps["tied"].values)
    figure = plots.decision_figure(maps)
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert "hierarchy changes 1 → 0 or 1 (tie), wrong" in labels
    assert "hierarchy changes 0 → 0 or 1 (tie), right" in labels
    # The title's gain and loss are the attrs: a change to a tie counts half.
    gain, loss = maps.attrs["changed_to_correct"], maps.attrs["changed_to_wrong"]
    assert f"to right on {gain:.2%} and to wrong on {loss:.2%}" in figure._suptitle.get_text()
    _saves(figure, tmp_path, "tied")
