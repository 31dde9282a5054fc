"""Roles: latents sharing one compiled conditional still get their exact full conditionals."""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary.distributions import BoundedUniform, DiscreteGaussian
from adversary.inference import (
    WindowGibbs,
    enumerate_posterior,
    posterior_probability,
    sample,
    tiered,
)
from adversary.inference._conditional import logp_terms
from adversary.inference.roles import compile_roles, partition_roles, term_mentions

CELLS = 3
RELEASES = np.array([3, 0, 2])


def block_model(priors, releases=RELEASES, count_latent=False, rho=0.3):
    """Persons in cells (a Categorical each), released as noisy cell counts.

    ``count_latent`` adds a Geometric count released with the first cell's
    count: categorical and count latents in one model.
    """
    with pm.Model() as model:
        persons = [pm.Categorical(f"P{i}", p=p) for i, p in enumerate(priors)]
        counts = pt.stack([sum(pt.eq(c, k) for c in persons) for k in range(CELLS)])
        DiscreteGaussian("releases", mu=counts, rho=rho, observed=releases)
        if count_latent:
            extra = pm.Geometric("extra", 0.4)
            DiscreteGaussian("sum_release", mu=counts[0] + extra, rho=0.3, observed=5)
    return model


UNIFORM = [np.full(CELLS, 1 / CELLS)] * 4
MIXED = [[0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [1 / 3, 1 / 3, 1 / 3]]


def roles_of(model):
    terms = logp_terms(model)
    shapes = {v.name: () for v in model.value_vars}
    return [
        [v.name for v in role]
        for role in partition_roles(model.value_vars, shapes, term_mentions(model, terms))
    ]


def test_persons_of_a_block_form_one_role_and_a_chain_does_not():
    assert roles_of(block_model(UNIFORM)) == [["P0", "P1", "P2", "P3"]]
    with pm.Model() as chain:
        x1 = BoundedUniform("X1", lower=0, upper=5)
        x2 = BoundedUniform("X2", lower=x1, upper=5)
        BoundedUniform("X3", lower=x2, upper=5)
    assert roles_of(chain) == [["X1"], ["X2"], ["X3"]]


@pytest.mark.parametrize("priors, once", [(UNIFORM, True), (MIXED, False)])
def test_role_scores_are_the_model_log_p_up_to_a_constant(priors, once):
    model = block_model(priors, count_latent=True)
    step = WindowGibbs(model=model)  # every latent, bounded or not
    roles = {id(role): role for role, _ in step._roles.values()}
    assert len(roles) == 2  # the persons, and the count latent alone
    role, _ = step._roles["P0"]
    assert role.logp.private_once is once
    logp = model.compile_logp()
    point = {"P0": 2, "P1": 0, "P2": 0, "P3": 1, "extra": 3}
    point = {k: np.array(v) for k, v in point.items()}
    role.load(point)
    candidates = np.arange(CELLS)
    for slot, name in enumerate(role.names):
        scores = role.scores(slot, (0,), candidates[:, None], point)
        full = np.array([logp({**point, name: np.array(k)}) for k in candidates])
        np.testing.assert_allclose(scores - scores[0], full - full[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("priors", [UNIFORM, MIXED])
def test_sampled_roles_match_enumeration(kr, priors):
    model = block_model(priors, count_latent=True)
    table = enumerate_posterior(model, truncation={"extra": (0, 60)})
    tree = sample(model, draws=1500, tune=100, chains=2, cores=1, random_seed=4, progressbar=False)
    for event in (
        {"P0": 0},
        {"P2": 2},
        {"extra": 1},
        lambda v: (v["P1"] == v["P3"]) & (v["extra"] > 1),
    ):
        kr.assert_within_mcse(tree, event, posterior_probability(table, event))


def test_a_one_valued_conditional_in_a_role_stays_put():
    # P1's prior allows cell 1 only: its conditional has one value whatever the others do.
    priors = [UNIFORM[0], [0.0, 1.0, 0.0], UNIFORM[0], UNIFORM[0]]
    model = block_model(priors)
    tree = sample(model, draws=300, tune=20, chains=1, cores=1, random_seed=2, progressbar=False)
    assert set(np.unique(tree.posterior["P1"].values)) == {1}
    assert len(np.unique(tree.posterior["P0"].values)) == CELLS


def kernel_keys(model):
    """The keys of the persons' compiled conditional: PyTensor's numba cache key (None: not
    cacheable) and the structure key of the tiered kernels (when its numba code is not on disk)."""
    from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key

    placed = compile_roles(model, model.value_vars, {v.name: () for v in model.value_vars})
    role, _ = placed["P0"]
    kernel = role.logp.fn
    assert isinstance(kernel, tiered.TieredFunction)
    numba_key = numba_funcify_and_cache_key(kernel._recipe().maker.fgraph)[1]
    return numba_key, kernel.key


def test_role_kernel_depends_on_the_model_structure_not_its_data(monkeypatch):
    # Other releases and another rho: the same kernel, served from the disk cache.
    monkeypatch.setattr(tiered, "_on_disk", lambda key: False)
    key = kernel_keys(block_model(UNIFORM))
    assert None not in key
    assert kernel_keys(block_model(UNIFORM, releases=np.array([0, 4, 1]), rho=0.7)) == key
    other = kernel_keys(block_model(UNIFORM[:3]))
    assert other[0] != key[0] and other[1] != key[1]


def _counted(role):
    """Wrap the role's compiled function with a call counter; the counts list."""
    calls, fn = [], role.logp.fn

    def counted(*args):
        calls.append(1)
        return fn(*args)

    role.logp.fn = counted
    return calls


def test_a_role_closed_to_the_other_latents_scores_each_stack_once():
    """A Bernoulli beside a Normal: its scores never depend on the point, so one call per stack;
    they still equal the model's log-p differences."""
    with pm.Model() as model:
        pm.Normal("x", -2.1, 1.0)
        pm.Bernoulli("y", 0.4)
    placed = compile_roles(model, [model.rvs_to_values[model["y"]]], {"y": ()})
    role, slot = placed["y"]
    calls = _counted(role)
    logp = model.compile_logp()
    candidates = np.array([[0], [1]])
    for x in (-2.0, 0.5, 3.0):
        point = {"x": np.array(x), "y": np.array(1)}
        role.load(point)
        scores = role.scores(slot, (0,), candidates, point)
        full = np.array([logp({**point, "y": np.array(k)}) for k in (0, 1)])
        np.testing.assert_allclose(scores - scores[0], full - full[0], rtol=0, atol=1e-12)
    assert len(calls) == 1
    role.scores(slot, (0,), np.array([[1], [0]]), point)  # another stack: computed
    assert len(calls) == 2


def test_roles_mentioning_another_latent_are_scored_at_every_update():
    open_model = block_model(UNIFORM, count_latent=True)
    placed = compile_roles(
        open_model, open_model.value_vars, {v.name: () for v in open_model.value_vars}
    )
    assert placed["P0"][0].logp._fixed_scores is None  # the persons meet `extra` in sum_release
    assert placed["extra"][0].logp._fixed_scores is None
    closed = block_model(UNIFORM)
    placed = compile_roles(closed, closed.value_vars, {v.name: () for v in closed.value_vars})
    assert placed["P0"][0].logp._fixed_scores == {}


def test_sampled_closed_roles_match_enumeration(kr):
    model = block_model(MIXED)
    table = enumerate_posterior(model)
    tree = sample(model, draws=1500, tune=100, chains=2, cores=1, random_seed=5, progressbar=False)
    for event in ({"P0": 0}, {"P2": 2}, lambda v: v["P1"] == v["P3"]):
        kr.assert_within_mcse(tree, event, posterior_probability(table, event))
