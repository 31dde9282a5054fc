"""Pair moves for counts with a known total, joint updates of small groups: against enumeration."""

import itertools

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from adversary.distributions import DiscreteGaussian
from adversary.inference import (
    BlockGibbs,
    TransferGibbs,
    assign_steps,
    enumerate_posterior,
    posterior_probability,
    sample,
)
from adversary.noise import discrete_gaussian as dg

TOTAL, PRIOR, RELEASES, SIGMA2 = 5, np.array([0.2, 0.3, 0.5]), np.array([4, -1, 2]), 2.0


def histogram_model(dirichlet=False):
    """A block's histogram of TOTAL persons over 3 cells, released as noisy cell counts."""
    with pm.Model() as model:
        if dirichlet:
            counts = pm.DirichletMultinomial("n", n=TOTAL, a=3 * PRIOR)
        else:
            counts = pm.Multinomial("n", n=TOTAL, p=PRIOR)
        DiscreteGaussian("releases", mu=counts, sigma2=SIGMA2, observed=RELEASES)
    return model


def cell(values, k):
    """The count of cell k in an event's values (draws or enumerated cells)."""
    return values["n"].isel(n_dim_0=k)


def histogram_posterior():
    """Brute force over every histogram: multinomial prior × discrete Gaussian likelihood."""
    table = {}
    for n in itertools.product(range(TOTAL + 1), repeat=3):
        if sum(n) == TOTAL:
            prior = stats.multinomial.pmf(n, TOTAL, PRIOR)
            table[n] = prior * np.exp(dg.logpmf(RELEASES - np.array(n), SIGMA2).sum())
    total = sum(table.values())
    return {n: w / total for n, w in table.items()}


def test_histograms_get_transfer_moves_and_match_the_brute_force(kr):
    model = histogram_model()
    steps = assign_steps(model)
    assert [type(s) for s in steps] == [TransferGibbs]
    tree = sample(model, draws=1000, tune=100, chains=2, cores=1, random_seed=5, progressbar=False)
    draws = tree.posterior["n"].values.reshape(-1, 3)
    assert (draws.sum(axis=1) == TOTAL).all()
    exact = histogram_posterior()
    for k in range(3):
        for value in range(TOTAL + 1):
            p = sum(w for n, w in exact.items() if n[k] == value)
            if 0.02 < p < 0.98:
                event = lambda v, k=k, value=value: cell(v, k) == value  # noqa: E731
                kr.assert_within_mcse(tree, event, p)
    assert int(tree.sample_stats["n_moved"].sum()) > 0


def test_one_element_at_a_time_would_never_move_a_histogram():
    # Why the pair move: every single-element conditional of a fixed-total vector has one value.
    from adversary.inference import WindowGibbs

    model = histogram_model()
    step = WindowGibbs([model["n"]], model=model)
    step.setup_chain(np.random.default_rng(0), 0, 10)
    point = model.initial_point()
    for _ in range(20):
        point, _ = step.step(point)
    np.testing.assert_array_equal(point["n"], model.initial_point()["n"])


def test_dirichlet_multinomial_histograms_match_enumeration(kr):
    model = histogram_model(dirichlet=True)
    table = enumerate_posterior(model, truncation={f"n[{k}]": (0, TOTAL) for k in range(3)})
    tree = sample(model, draws=3000, tune=100, chains=2, cores=1, random_seed=6, progressbar=False)
    events = (
        lambda v: cell(v, 0) == 3,
        lambda v: cell(v, 2) == 2,
        lambda v: cell(v, 0) > cell(v, 1),
    )
    for event in events:
        kr.assert_within_mcse(tree, event, posterior_probability(table, event))


def test_block_gibbs_draws_the_joint_of_x1_and_x2_ge_x1(kr):
    obs, d = (2, 1, -1), 27
    model = kr.block_group_model(obs, d, prior="bounded")
    exact = kr.block_group_posterior(obs, d, prior="bounded")
    step = BlockGibbs([model["X1"], model["X2"]], model=model)
    tree = sample(
        model, step=[step], draws=3000, tune=50, chains=2, cores=1, random_seed=7, progressbar=False
    )
    assert set(tree.sample_stats["block_candidates"].values.ravel()) == {2 * 11}
    kr.assert_within_mcse(tree, {"X1": 1}, float(exact[1].sum()))
    for k2 in (0, 1, 2, 4):
        kr.assert_within_mcse(tree, {"X2": k2}, float(exact[:, k2].sum()))
    x1, x2 = tree.posterior["X1"].values.ravel(), tree.posterior["X2"].values.ravel()
    assert (x2 >= x1).all()


def test_block_gibbs_refuses_unbounded_or_too_large_groups(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    with pytest.raises(ValueError, match="'X2' has no finite upper"):
        BlockGibbs([model["X1"], model["X2"]], model=model)
    bounded = kr.block_group_model((2, 1, -1), 27, prior="bounded")
    step = BlockGibbs([bounded["X1"], bounded["X2"]], model=bounded, max_candidates=5)
    step.setup_chain(np.random.default_rng(0), 0, 1)
    with pytest.raises(ValueError, match="max_candidates: the block"):
        step.step(bounded.initial_point())
