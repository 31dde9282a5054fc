"""The supplement's figures (S1.3, S2, S5, S6): each is a Figure with its panels and lines.

Coarse inputs keep this quick; the numbers themselves are tested with the
functions that compute them.
"""

import numpy as np
import pytest
from matplotlib.figure import Figure

from adversary.analyses import sequential
from adversary.plots import supplement
from adversary.scenarios import multi_level, post_processing

PRIORS = [1 / 2, 1 / 10, 1 / 864]
RHO = 0.09922635422547502


def _saves(figure: Figure, tmp_path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    figure.savefig(path, dpi=40)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_prior_label():
    assert supplement.prior_label(1 / 864) == "1/864"
    assert supplement.prior_label(0.5) == "1/2"
    assert supplement.prior_label(0.37) == "0.37"


@pytest.mark.parametrize("with_decision", [False, True])
def test_many_levels_figure(tmp_path, with_decision):
    curve = multi_level.marginal_by_levels(PRIORS, grid_width=1e-3)
    figure = supplement.many_levels_figure(curve, with_decision=with_decision)
    assert isinstance(figure, Figure)
    assert len(figure.axes) == (3 if with_decision else 2)
    for axis in figure.axes:
        assert len(axis.lines) == len(PRIORS)
        np.testing.assert_array_equal(axis.lines[0].get_xdata(), np.arange(1, 7))
    np.testing.assert_allclose(
        figure.axes[1].lines[0].get_ydata(), curve["marginal_risk"].sel(prior=0.5)
    )
    _saves(figure, tmp_path, "s1_3")


def test_dg_variance_figure(tmp_path):
    figure = supplement.dg_variance_figure(np.geomspace(0.1, 10, 30))
    left, right = figure.axes[:2]
    assert len(left.lines) == 2  # σ², and the dashed line σ² = s
    assert left.get_xscale() == left.get_yscale() == "log"
    assert len(left.child_axes) == 1  # the upper ρ axis
    gap = right.lines[0].get_ydata()
    assert np.all(gap > 0) and np.all(gap < 0.1)
    _saves(figure, tmp_path, "s2_variance")


def test_dg_sum_comparison():
    # ρ = 1, n = 2: the pmf of the sum is the convolution written out.
    comparison = supplement.dg_sum_comparison(2, 1.0)
    z = comparison.support
    one = np.exp(-(np.arange(-30, 31) ** 2) / 1.0)
    one /= one.sum()
    direct = np.convolve(one, one)
    np.testing.assert_allclose(comparison.exact, direct[z + 60], rtol=1e-12, atol=1e-15)
    assert comparison.exact_variance == pytest.approx(2 * comparison.scale, rel=0.01)
    assert 0 < comparison.total_variation < 0.05
    # At the 2020 block ρ the sum is DG(0, n s) to rounding.
    assert supplement.dg_sum_comparison(27, 0.099).total_variation < 1e-14


def test_dg_sum_figure(tmp_path):
    figure = supplement.dg_sum_figure(rhos=(0.099, 1.0), ns=(5, 2))
    assert len(figure.axes) == 4
    for axis in figure.axes:
        assert len(axis.lines) == 1  # DG(0, n/(2ρ)); the exact sum is bars
        assert len(axis.patches) > 3
        assert axis.get_title().startswith("ρ = ")
    _saves(figure, tmp_path, "s2_sums")


def test_sequential_releases_figure(tmp_path):
    curve = sequential.marginal_by_releases(PRIORS, [RHO] * 3, grid_width=1e-3)
    releases = np.array([1, 3, 0])
    path = sequential.sequential_risk(releases, np.array(PRIORS), RHO)
    joint = np.stack(
        [multi_level.risk(releases[:j], np.array(PRIORS), [RHO] * j) for j in (1, 2, 3)], -1
    )
    figure = supplement.sequential_releases_figure(curve, path, joint)
    left, right = figure.axes
    assert len(left.lines) == len(PRIORS)
    # per prior: conditional, product, joint look; plus three legend entries
    assert len(right.lines) == 3 * len(PRIORS) + 3
    np.testing.assert_allclose(right.lines[1].get_ydata(), right.lines[2].get_ydata(), rtol=1e-12)
    _saves(figure, tmp_path, "s5")


def test_post_processing_figures(tmp_path):
    by_x2 = post_processing.marginal_by_x2_tilde([1, 10, 40])
    by_rho = post_processing.marginal_by_rho(np.geomspace(0.05, 2, 5))
    figure = supplement.post_processing_figure(by_x2, by_rho)
    left, right = figure.axes
    assert len(left.lines) == 3  # (S6.8), single block, (x1*, y1*)
    assert len(right.lines) == 3 + 2 + 1  # three x̃2, two comparisons, reference ρ
    assert left.lines[1].get_color() == supplement.UNPROCESSED_COLOUR
    _saves(figure, tmp_path, "s6")
    decision = supplement.post_processing_decision_figure(by_x2)
    assert len(decision.axes) == 1 and len(decision.axes[0].lines) == 2
    _saves(decision, tmp_path, "s6_decision")
