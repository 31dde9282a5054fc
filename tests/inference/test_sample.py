"""``sample`` agrees with exact enumeration within Monte Carlo error; starts are repaired."""

import gc
import json
import runpy
import subprocess
import sys
import warnings
import weakref

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from pymc.exceptions import SamplingError

from adversary.distributions import BernoulliCount, DiscreteGaussian, FinitePmf, PointMass
from adversary.inference import (
    BoundedGibbs,
    MetropolisedGibbs,
    WindowGibbs,
    assign_steps,
    enumerate_posterior,
    marginal_pmf,
    posterior_probability,
    repair_start,
    sample,
)
from adversary.inference.start import StartRepairer
from adversary.inference.workers import FORKSERVER_PRELOAD, worker_context

FAST = {"draws": 1500, "tune": 100, "chains": 2, "cores": 1, "progressbar": False}

# A block-group realisation with d = 5 whose kernels are those of Granville's: kernels are
# keyed by the model's structure, not its data, but a release equal to X1's known count 0
# (x1* = 0) is merged with it in PyMC's log-p, a structure of its own. Its X1 kernel spent
# 4.7-5 s on the Python VM and compiled numba for 1.1 s in this file (cold); with x1* = 1 it
# is Granville's, compiled by the first test.
D5 = ((1, 6, 9), 5)


def test_single_block_sample_matches_exact(kr):
    model = kr.single_block_model(p=0.3, x1_star=2)
    tree = sample(model, random_seed=1, **FAST)
    kr.assert_within_mcse(tree, {"X1": 1}, kr.single_block_posterior(0.3, 2))


@pytest.mark.parametrize(
    ("obs", "d", "prior"),
    [
        ((2, 1, -1), 27, "improper"),  # Granville ED 39-14 realisation (Table 7)
        (*D5, "improper"),
        ((1, 3, 2), 8, "bounded"),  # Uniform{X1..10} (S4)
    ],
)
def test_block_group_sample_matches_enumeration(kr, obs, d, prior):
    model = kr.block_group_model(obs, d, prior)
    table = enumerate_posterior(model)
    tree = sample(model, random_seed=2, **FAST)
    kr.assert_within_mcse(tree, {"X1": 1}, posterior_probability(table, {"X1": 1}))
    x2 = table.marginal("X2")
    for value in x2["X2"].values[x2.values > 0.05]:
        event = {"X2": int(value)}
        kr.assert_within_mcse(tree, event, posterior_probability(table, event))
    above = lambda v: v["X2"] - v["X1"] >= 3  # noqa: E731
    kr.assert_within_mcse(tree, above, posterior_probability(table, above))


def test_steps_are_assigned_to_every_discrete_variable(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    steps = assign_steps(model)
    assert [type(s) for s in steps] == [MetropolisedGibbs, WindowGibbs]
    assert [s.vars[0].name for s in steps] == ["X1", "X2"]
    assert repr(steps) == "[MetropolisedGibbs([X1]), WindowGibbs([X2])]"  # not <... at 0x...>


def test_sample_stats_and_user_written_model(kr):
    # A user model with PyMC's own discrete distributions (Geometric, Categorical).
    model = kr.user_model()
    tree = sample(model, random_seed=3, **FAST)
    table = enumerate_posterior(model)
    stats_ = tree["sample_stats"]
    for name in ("n_candidates", "n_tail_bound", "n_expansions", "c_candidates"):
        assert name in stats_.data_vars
    assert float(stats_["n_tail_bound"].max()) <= 1e-12
    np.testing.assert_array_equal(stats_["c_candidates"], 3)
    for event in ({"c": 2}, {"c": 0}, {"n": 3}, {"n": 5}, lambda v: v["n"] + v["c"] > 7):
        kr.assert_within_mcse(tree, event, posterior_probability(table, event))


def test_same_seed_same_draws(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    small = {**FAST, "draws": 200}
    a = sample(model, random_seed=11, **small)
    b = sample(model, random_seed=11, **small)
    c = sample(model, random_seed=12, **small)
    np.testing.assert_array_equal(a.posterior["X2"], b.posterior["X2"])
    np.testing.assert_array_equal(a.posterior["X1"], b.posterior["X1"])
    assert not np.array_equal(a.posterior["X2"], c.posterior["X2"])


def test_impossible_initvals_are_repaired(kr):
    model = kr.block_group_model(*D5)
    tree = sample(model, random_seed=4, initvals={"X1": 7, "X2": -3}, **FAST)
    assert tree["sample_stats"].attrs["start_repaired"] == [1, 1]
    table = enumerate_posterior(model)
    kr.assert_within_mcse(tree, {"X1": 1}, posterior_probability(table, {"X1": 1}))


def potential_model(point_mass_at):
    """X1 ∈ {1, 2} (mode 2), X2 a point mass, X2 >= X1 as a Potential."""
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=1, p=0.7)
        x2 = PointMass("X2", point_mass_at)
        FinitePmf("other", {0: 0.5, 1: 0.5})
        pm.Potential("order", pt.switch(pt.ge(x2, x1), np.float64(0.0), -np.inf))
        DiscreteGaussian("x1_star", mu=x1, sigma2=2.0, observed=2)
    return model


def test_infeasible_support_point_is_repaired():
    model = potential_model(1)
    assert model.initial_point()["X1"] == 2  # the prior mode violates X2 >= X1
    point, repaired = repair_start(model)
    assert repaired and point["X1"] == 1
    tree = sample(model, random_seed=5, **{**FAST, "draws": 100})
    assert tree["sample_stats"].attrs["start_repaired"] == [1, 1]
    np.testing.assert_array_equal(tree.posterior["X1"], 1)


def test_the_start_check_is_compiled_once_per_model_as_it_stands():
    model = potential_model(2)
    first = StartRepairer.of(model)
    assert StartRepairer.of(model) is first
    assert StartRepairer.of(model, {"mode": "FAST_RUN"}) is not first  # other options
    with model:  # a term added: the check must see it
        pm.Potential("never", pt.as_tensor(np.float64(-np.inf)))
    changed = StartRepairer.of(model)
    assert changed is not first
    assert not np.isfinite(changed.evaluate(model.initial_point())).all()


def test_a_model_whose_start_check_is_kept_can_still_be_freed():
    model = potential_model(2)
    StartRepairer.of(model).evaluate(model.initial_point())
    freed = weakref.ref(model)
    del model
    gc.collect()
    assert freed() is None


def test_a_shared_observation_changed_between_samples_is_checked_anew():
    # the same model sampled again after its observation changed, as a Monte Carlo run does
    with pm.Model() as model:
        x1 = FinitePmf("X1", {0: 0.5, 1: 0.5})
        seen = pm.Data("seen", np.int64(0))
        pm.Potential("fits", pt.switch(pt.eq(x1, seen), np.float64(0.0), -np.inf))
    for value in (0, 1):
        pm.set_data({"seen": np.int64(value)}, model=model)
        tree = sample(model, random_seed=5, **{**FAST, "draws": 20})
        np.testing.assert_array_equal(tree.posterior["X1"], value)


def test_unrepairable_start_raises_naming_the_terms():
    model = potential_model(0)
    with pytest.raises(SamplingError, match=r"no feasible start point found .*order"):
        sample(model, random_seed=6, **FAST)


def test_continuous_variables_keep_pymc_defaults():
    # p ~ Beta(2, 2): P[X1 = 1] marginally is E[p] = 1/2, as with a fixed p = 1/2 (3.1).
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        x1 = BernoulliCount("X1", known=0, p=p)
        DiscreteGaussian("x1_star", mu=x1, sigma2=1.0, observed=1)
    tree = sample(model, random_seed=7, draws=600, tune=300, chains=2, cores=1, progressbar=False)
    assert "step_size" in tree["sample_stats"].data_vars  # NUTS ran for p
    assert "X1_candidates" in tree["sample_stats"].data_vars
    exact = 1 / (1 + np.exp(-0.5))  # e^{-0}/(e^{-0} + e^{-1/2})
    estimate = posterior_probability(tree, {"X1": 1})
    assert abs(estimate - exact) < 0.06
    assert marginal_pmf(tree, "X1").dims == ("X1",)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"draws": 0}, ValueError, "draws must be a positive integer"),
        ({"tune": -1}, ValueError, "tune must be an integer >= 0"),
        ({"chains": 0}, ValueError, "chains must be a positive integer"),
        ({"tail_mass": 2.0}, ValueError, "tail_mass must lie strictly between 0 and 1"),
        ({"max_candidates": 1.5}, ValueError, "max_candidates must be a positive integer"),
        ({"initvals": 3}, TypeError, "initvals must be a dict"),
        ({"initvals": {"nope": 1}}, ValueError, "initvals: nope not free variables; have X1"),
        ({"initvals": [{"X1": 1}] * 3}, ValueError, r"one dict per chain \(2\), got 3"),
        ({"initvals": ["X1", "X1"]}, TypeError, "each chain's start must be a dict"),
    ],
)
def test_bad_arguments_name_the_argument(kr, kwargs, error, message):
    model = kr.single_block_model(p=0.5, x1_star=1)
    with pytest.raises(error, match=message):
        sample(model, **{**FAST, **kwargs})


def test_user_steps_are_kept_and_posterior_predictive_draws_exactly(kr):
    model = kr.block_group_model((2, 1, -1), 27)
    mine = BoundedGibbs([model["X1"]], model=model)
    tree = sample(model, step=[mine], random_seed=8, **{**FAST, "draws": 200})
    assert {"X1_candidates", "X2_candidates"} <= set(tree["sample_stats"].data_vars)
    with model:
        predictive = pm.sample_posterior_predictive(tree, random_seed=8, progressbar=False)
    draws = predictive.posterior_predictive["x2_star"]
    assert draws.dtype == np.int64 and draws.shape == (2, 200)


def test_chains_on_several_cores_start_their_workers_without_fork(kr):
    # Python warns on every fork of a multi-threaded process (numpy's BLAS pool is a
    # thread): the workers must come from a fork server, with the serial run's draws.
    model = kr.single_block_model(p=0.3, x1_star=2)
    run = {**FAST, "draws": 100, "tune": 10}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel = sample(model, random_seed=8, **{**run, "cores": 2})
    assert [str(w.message) for w in caught if "fork()" in str(w.message)] == []
    serial = sample(model, random_seed=8, **run)
    np.testing.assert_array_equal(parallel.posterior["X1"], serial.posterior["X1"])


def test_workers_start_from_a_single_threaded_server_with_the_samplers_modules(tmp_path):
    # A worker forked from the server must not import PyMC, PyTensor and numba afresh
    # to unpickle its step: the server has them (worker_context's preload); and the
    # server must have one thread when it forks (else Python warns there). The worker
    # runs a stdlib function on a script, so it imports nothing else itself.
    context = worker_context({}, chains=2, cores=2)["mp_ctx"]
    assert context.get_start_method() == "forkserver"
    script, seen = tmp_path / "modules.py", tmp_path / "seen.json"
    script.write_text(
        "import json, os, sys\n"
        "status = open(f'/proc/{os.getppid()}/status').read().split('Threads:')[1].split()[0]\n"
        f"json.dump({{'modules': list(sys.modules), 'server_threads': int(status)}}, "
        f"open({str(seen)!r}, 'w'))\n"
    )
    worker = context.Process(target=runpy.run_path, args=(str(script),))
    worker.start()
    worker.join(timeout=600)
    assert worker.exitcode == 0
    found = json.loads(seen.read_text())
    assert set(FORKSERVER_PRELOAD) - {"__main__"} <= set(found["modules"])
    assert found["server_threads"] == 1


MAIN_SCRIPT = """
import json
import sys

# in a worker: forked from the server with them
PRELOADED = [name in sys.modules for name in ("xml.dom.minidom", "tabnanny")]
import xml.dom.minidom as minidom  # noqa: E402
from tabnanny import check  # noqa: E402

from adversary.inference.workers import worker_context  # noqa: E402


def report(path):
    json.dump({"preloaded": PRELOADED, "main": __name__}, open(path, "w"))


if __name__ == "__main__":
    context = worker_context({}, chains=2, cores=2)["mp_ctx"]
    worker = context.Process(target=report, args=(sys.argv[1],))
    worker.start()
    worker.join(timeout=600)
    sys.exit(worker.exitcode)
"""


def test_the_fork_server_preloads_what_the_main_script_imports(tmp_path):
    """Each worker runs the main script again (CPython 3.12's fork server never preloads
    ``__main__``): a script that imported ArviZ paid 2.5 s per two-core run importing it in
    each worker. Its imports are preloaded in the server, so the worker finds them there."""
    script, seen = tmp_path / "main_script.py", tmp_path / "seen.json"
    script.write_text(MAIN_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(seen)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(seen.read_text()) == {"preloaded": [True, True], "main": "__mp_main__"}
