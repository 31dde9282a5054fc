"""Equal-variance mechanisms, the variance sweep and their figures."""

import dataclasses

import numpy as np
import pytest
from matplotlib.figure import Figure

from adversary.model_files import load_case
from adversary.noise import DiscreteGaussianNoise
from adversary.plots import mechanisms as mp
from adversary.scenarios import single_block as sb

DARE = load_case("dare_county")
ETHNICITY = load_case("unknown_ethnicity")


def test_equal_variance_mechanisms():
    gaussian = DiscreteGaussianNoise.from_rho(DARE.rho)
    family = mp.equal_variance_mechanisms(gaussian)
    assert list(family) == list(mp.MECHANISM_NAMES)
    assert family["discrete Gaussian"] is gaussian
    for mechanism in family.values():
        assert mechanism.variance == pytest.approx(gaussian.variance, rel=1e-12)
    assert family["cell key"].bound == family["truncated geometric"].bound == 5
    assert mp.default_bound(0.1) == 2
    other = mp.equal_variance_mechanisms(3.0, bound=4)
    assert other["discrete Gaussian"].variance == pytest.approx(3.0, rel=1e-12)
    assert other["cell key"].bound == 4


def test_variance_sweep_is_the_cases_measures():
    sweep = mp.variance_sweep(DARE, [1.0, 5.0], priors=["1/2", "1/864"])
    assert sweep.shape[0] == 2 * 4 * 2
    row = sweep.loc[(5.0, "discrete Laplace", "1/864")]
    mechanism = mp.equal_variance_mechanisms(5.0)["discrete Laplace"]
    assert row["marginal_risk"] == pytest.approx(
        float(sb.marginal_risk(1 / 864, mechanism=mechanism)), rel=1e-14
    )
    assert np.isnan(row["bound"])
    assert sweep.loc[(5.0, "cell key", "1/2"), "bound"] == 5


def test_figures(tmp_path):
    family = mp.equal_variance_mechanisms(DiscreteGaussianNoise.from_rho(DARE.rho))
    sweep = mp.variance_sweep(DARE, [1.0, 5.0], priors=["1/2", "1/50"])
    figures = {
        "pmf": (mp.pmf_figure(family), 1, 4),
        "posterior": (mp.posterior_by_release_figure(DARE, family, ["1/2", "1/50"]), 2, 4),
        "sweep": (mp.measures_by_variance_figure(sweep, reference=5.04), 2, 8),
    }
    for name, (figure, n_axes, n_lines) in figures.items():
        assert isinstance(figure, Figure)
        assert len(figure.axes) == n_axes
        assert len(figure.axes[-1].lines) >= n_lines
        figure.savefig(tmp_path / f"{name}.png", dpi=40)
    # The posterior of a bounded mechanism reaches exactly 1 at x1* = 1 + E.
    lines = figures["posterior"][0].axes[1].lines
    cell_key = next(line for line in lines if line.get_label() == "cell key")
    assert cell_key.get_xdata()[-1] == 6 and cell_key.get_ydata()[-1] == 1.0
    figure = mp.category_posterior_figure(ETHNICITY, family, "1/2", reach=4)
    assert len(figure.axes) == 5  # four panels and a colour bar
    figure.savefig(tmp_path / "categories.png", dpi=40)
    one_cell = dataclasses.replace(ETHNICITY, released=("not Hispanic",), observed_releases=(1,))
    with pytest.raises(ValueError, match="two categories"):
        mp.category_posterior_figure(one_cell, family)
