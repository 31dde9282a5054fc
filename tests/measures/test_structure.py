"""A model's structure compiled once (measures.structure) and the tabulated likelihood.

A scan over ρ rebuilds a factory's model at every point; the models share one
structure whose float constants are shared variables, so each point must give
its own closed-form numbers from the functions compiled at the first. The
tabulated likelihood must equal the model's log-p graph cell by cell.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary.distributions import (
    BernoulliCount,
    DiscreteGaussian,
    FinitePmf,
    ImproperUniform,
)
from adversary.inference.grid import LatentGrid
from adversary.measures.exact import exact_measures
from adversary.measures.release_posteriors import observed_inputs
from adversary.measures.structure import model_structure
from adversary.measures.tabulated_likelihood import TabulatedLogp, factorises
from adversary.scenarios import single_block as sb


def one_block(prior=0.5, rho=0.0992, release=3):
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=prior)
        DiscreteGaussian("x1_release", mu=x1, rho=rho, observed=release)
    return model


def household(prior=(0.4, 0.3, 0.2, 0.1), rho1=0.0992, rho2=0.2465, releases=(5, 6)):
    """Two releases: the block's count and its group's, the group unbounded above."""
    with pm.Model() as model:
        members = FinitePmf("H", support=[0, 1, 2, 3], probs=prior)
        block = 2 + members
        group = ImproperUniform("X2", lower=block)
        DiscreteGaussian("x1_release", mu=block, rho=rho1, observed=releases[0])
        DiscreteGaussian("x2_release", mu=group, rho=rho2, observed=releases[1])
    return model


def test_models_differing_in_floats_share_a_structure_and_give_their_own_numbers():
    """Each (ρ, prior) of the scan equals the single block's closed forms (3.3), (3.6)."""
    first = model_structure(one_block(0.5, 0.01))
    for p, rho in [(0.5, 0.01), (0.1, 0.0992), (0.5, 1.0), (0.1, 4.0)]:
        model = one_block(p, rho)
        assert model_structure(model) is first
        measures = exact_measures(model, {"X1": 1}, tie_rule="largest")
        bound = measures.error_bound + 1e-15
        assert measures.marginal_posterior == pytest.approx(
            sb.marginal_posterior(p, rho), abs=bound
        )
        assert measures.correct_decision_probability == pytest.approx(
            sb.correct_decision_probability(p, rho, tie_rule="largest"), abs=bound
        )
        assert measures.prior_of_truth == pytest.approx(p, rel=1e-15)


def test_a_different_integer_constant_is_a_different_structure():
    assert model_structure(one_block(release=3)) is not model_structure(one_block(release=4))


def test_the_tabulated_likelihood_equals_the_log_p_graph():
    copy, logp, inputs, replace = observed_inputs(household())
    graph = LatentGrid(copy, logp, inputs)  # the compiled log-p graph on the grid
    tabulated = TabulatedLogp(copy, graph.value_vars, replace, inputs, None)
    candidates, _ = graph.cells({"H": (0, 3), "X2": (0, 12)})
    rows = [np.array([[5], [-3], [9]]), np.array([[6], [14], [0]])]
    expected = graph.logp(candidates, rows, 3)
    got = tabulated(candidates, rows, 3)
    finite = np.isfinite(expected)
    assert finite.sum() > 40  # X2 >= 2 + H cuts some cells out
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-13)


def test_only_models_whose_releases_are_scalar_by_scalar_factorise():
    assert factorises(household())
    with pm.Model() as multinomial:
        p = FinitePmf("K", support=[1, 2], probs=[0.5, 0.5])
        pm.Multinomial("counts", n=3, p=pt.stack([p / 4.0, 1 - p / 4.0]), observed=[1, 2])
    assert not factorises(multinomial)
    with pm.Model() as chained:
        x = BernoulliCount("X", known=0, p=0.5)
        first = DiscreteGaussian("first", mu=x, sigma2=1.0, observed=1)
        DiscreteGaussian("second", mu=first, sigma2=1.0, observed=2)
    assert not factorises(chained)


def test_a_factorising_release_grid_equals_the_one_summed_over_the_whole_grid(monkeypatch):
    """Grown from each scalar's pmf, or from the log-p of every release set: the same grid."""
    from adversary.measures import exact

    truth = {"H": 1, "X2": 6}
    by_scalar = exact.release_grid(household(), truth, random_seed=3)
    monkeypatch.setattr(exact, "factorises", lambda model: False)
    whole = exact.release_grid(household(), truth, random_seed=3)
    assert by_scalar.windows == whole.windows
    for name in whole.releases:
        np.testing.assert_array_equal(by_scalar.releases[name], whole.releases[name])
    np.testing.assert_allclose(by_scalar.probability, whole.probability, rtol=1e-12)
    assert by_scalar.omitted_mass == pytest.approx(whole.omitted_mass, abs=1e-15)
    assert 0 < whole.omitted_mass <= 1e-12
