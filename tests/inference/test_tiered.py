"""Tiered kernels: the Python VM answers at once on a cold cache, numba takes over once compiled."""

import time
import warnings
from pathlib import Path

import cloudpickle
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from pytensor.graph.replace import vectorize_graph

from adversary.distributions import DiscreteGaussian
from adversary.inference import WindowGibbs, sample, tiered
from adversary.inference.tiered import TieredFunction, compile_kernel


def unseen_kernel(compile_kwargs=None, tilt=None):
    """A log-p kernel of a structure numba's disk cache has never held, and its log-ps.

    The structure holds the constant ``tilt`` (default: drawn), so a new one is a new key.
    """
    tilt = 1.0 + float(np.random.default_rng().random()) if tilt is None else tilt
    with pm.Model() as model:
        x = pm.Categorical("x", p=np.array([0.2, 0.3, 0.5]))
        pm.Potential("tilt", pt.constant(tilt, dtype="float64") * x)
    (value,) = model.value_vars
    batched = pt.vector("x_batch", dtype=value.dtype)
    (logp,) = vectorize_graph([model.logp()], replace={value: batched})
    fn = compile_kernel(model, [logp], [batched], compile_kwargs)
    expected = np.log([0.2, 0.3, 0.5]) + tilt * np.arange(3)
    return fn, expected


def test_an_unseen_kernel_runs_on_the_python_vm_then_on_numba(monkeypatch):
    fn, expected = unseen_kernel()
    assert isinstance(fn, TieredFunction) and fn.tier == "python"
    candidates = np.arange(3, dtype="int64")
    (first,) = fn(candidates)
    np.testing.assert_allclose(first, expected, rtol=1e-12)
    assert fn.tier == "python"  # far below COMPILE_SECONDS: numba is not compiled
    assert not tiered._on_disk(fn.key)
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", tiered._seconds[fn.key])
    (second,) = fn(candidates)  # hot: this call compiles numba's version and uses it
    assert fn.tier == "numba"
    # Written to the disk cache for later processes, and marked compiled there.
    assert Path(fn._call.vm.jit_fn._cache._cache_file._index_path).exists()
    assert tiered._on_disk(fn.key)
    np.testing.assert_allclose(second, expected, rtol=1e-12)


def test_kernels_of_one_structure_share_their_compile_seconds_and_numba(monkeypatch):
    tilt = 1.0 + float(np.random.default_rng().random())
    first, expected = unseen_kernel(tilt=tilt)
    second, _ = unseen_kernel(tilt=tilt)
    assert first.key == second.key
    candidates = np.arange(3, dtype="int64")
    first(candidates)
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", tiered._seconds[first.key] + 1e-9)
    second(candidates)  # the two calls together pass the threshold
    assert first.tier == second.tier == "python"
    first(candidates)  # compiles
    (values,) = second(candidates)  # the structure is compiled: the second kernel uses it
    assert first.tier == second.tier == "numba"
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    # As in another process (a worker): no seconds, no state, but numba's code is on disk.
    monkeypatch.setattr(tiered, "_seconds", {})
    monkeypatch.setattr(tiered, "_state", {})
    third = TieredFunction(first._quick, first._recipe, first.key)
    third(candidates)
    assert third.tier == "numba"


def test_the_structure_key_follows_the_graph_not_the_objects():
    tilt = 1.0 + float(np.random.default_rng().random())
    first, _ = unseen_kernel(tilt=tilt)
    assert unseen_kernel(tilt=tilt)[0].key == first.key  # another model, the same graph
    assert unseen_kernel(tilt=tilt + 1.0)[0].key != first.key  # another constant


def test_python_vm_seconds_add_up_across_processes(monkeypatch):
    fn, expected = unseen_kernel()
    candidates = np.arange(3, dtype="int64")
    monkeypatch.setattr(tiered, "FLUSH_SECONDS", 0.0)  # each call's seconds go to the file
    for _ in range(3):
        fn(candidates)
    spent = tiered._seconds[fn.key]
    assert tiered._read_seconds(fn.key) == pytest.approx(spent, rel=1e-12)
    # A new process (no seconds, no state) reads them: past the threshold, it compiles.
    monkeypatch.setattr(tiered, "_seconds", {})
    monkeypatch.setattr(tiered, "_unsaved", {})
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", 0.9 * spent)
    later = TieredFunction(fn._quick, fn._recipe, fn.key)
    assert tiered._seconds[fn.key] == pytest.approx(spent, rel=1e-12)
    (values,) = later(candidates)
    assert later.tier == "numba"
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_a_run_projected_to_outlast_a_compile_compiles_numba(monkeypatch):
    fn, expected = unseen_kernel()
    candidates = np.arange(3, dtype="int64")
    fn.plan(0, 100)  # a run of 100 sweeps starts
    fn(candidates)
    seconds = tiered._seconds[fn.key]
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", 50 * seconds)
    monkeypatch.setattr(tiered, "PROJECTION_SECONDS", 0.0)
    fn.plan(1, 3)  # two sweeps left: about 2 x seconds more, less than a compile
    fn(candidates)
    assert fn.tier == "python"
    fn.plan(2, 100)  # 98 sweeps left: about 98 x seconds more
    (values,) = fn(candidates)
    assert fn.tier == "numba" and tiered._seconds[fn.key] < 50 * seconds
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_a_run_is_projected_only_after_its_projection_seconds(monkeypatch):
    """A run's first calls can cost far more than its later ones (the Python VM's set-up):
    one slow call, projected over a long run, would outlast any compile, so it is not."""
    fn, _ = unseen_kernel()
    quick = fn._quick
    calls = []

    def slow_once(*args):  # the run's first call slower than the rest
        if not calls:
            time.sleep(0.01)
        calls.append(args)
        return quick(*args)

    monkeypatch.setattr(fn, "_quick", slow_once)
    monkeypatch.setattr(fn, "_call", slow_once)
    monkeypatch.setattr(tiered, "PROJECTION_SECONDS", 0.5)
    candidates = np.arange(3, dtype="int64")
    fn.plan(0, 10_000)
    fn(candidates)
    fn.plan(1, 10_000)  # 0.01 s x 9,999 sweeps to come: 100 s, past COMPILE_SECONDS
    fn(candidates)
    assert fn.tier == "python" and 0.01 * 9_999 > tiered.COMPILE_SECONDS
    monkeypatch.setattr(tiered, "PROJECTION_SECONDS", 0.01)  # the same, projected
    fn.plan(2, 10_000)
    fn(candidates)
    assert fn.tier == "numba"


def test_a_kernel_told_its_calls_plans_itself(monkeypatch):
    fn, expected = unseen_kernel()
    candidates = np.arange(3, dtype="int64")
    monkeypatch.setattr(tiered, "PROJECTION_SECONDS", 0.0)
    fn.expect(3)  # a short run: three calls cost less than a compile
    for _ in range(3):
        fn(candidates)
    assert fn.tier == "python"
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", 100 * tiered._seconds[fn.key])
    fn.expect(10_000)  # about 3,000 calls' time to come after the first: compile
    fn(candidates)
    assert fn.tier == "python"
    (values,) = fn(candidates)
    assert fn.tier == "numba"
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_a_cached_or_chosen_mode_is_compiled_as_it_is(monkeypatch):
    fn, _ = unseen_kernel(compile_kwargs={"mode": "FAST_COMPILE"})
    assert not isinstance(fn, TieredFunction)
    monkeypatch.setattr(tiered, "_on_disk", lambda key: True)
    fn, _ = unseen_kernel()
    assert not isinstance(fn, TieredFunction)


def test_a_failed_numba_compile_keeps_the_python_vm_and_warns_once(monkeypatch):
    fn, expected = unseen_kernel()

    def broken():  # a recipe whose compile fails
        raise RuntimeError("no numba today")

    monkeypatch.setattr(tiered, "COMPILE_SECONDS", 0.0)
    failing = TieredFunction(fn._quick, broken, fn.key)
    candidates = np.arange(3, dtype="int64")
    with pytest.warns(RuntimeWarning, match="no numba today"):
        (values,) = failing(candidates)
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (values,) = failing(candidates)  # warned once
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert failing.tier == "python"


def test_a_tiered_kernel_pickles_to_its_python_tier():
    fn, expected = unseen_kernel()
    copy = cloudpickle.loads(cloudpickle.dumps(fn))  # as PyMC sends steps to workers
    assert isinstance(copy, TieredFunction) and copy.tier == "python"
    (values,) = copy(np.arange(3, dtype="int64"))
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def persons_in_cells(priors, releases=(3, 0, 2)):
    """Persons with their own priors over three cells, the cells' counts released."""
    with pm.Model() as model:
        cells = [pm.Categorical(f"P{i}", p=np.asarray(p)) for i, p in enumerate(priors)]
        counts = pt.stack([pt.stack([pt.eq(c, k) for c in cells]).sum() for k in range(3)])
        DiscreteGaussian("releases", mu=counts, rho=0.3, observed=np.array(releases))
    return model


def draws_with(monkeypatch, *, cached: bool, compile_seconds: float):
    """Draws of the block's persons, its kernels tiered (``cached=False``) or numba's."""
    monkeypatch.setattr(tiered, "_on_disk", lambda index: cached)
    monkeypatch.setattr(tiered, "COMPILE_SECONDS", compile_seconds)
    monkeypatch.setattr(tiered, "_seconds", {})  # this run's Python-VM seconds only
    monkeypatch.setattr(tiered, "_state", {})
    model = persons_in_cells([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [1 / 3, 1 / 3, 1 / 3]])
    step = WindowGibbs(model=model)
    tree = sample(
        model, step=step, draws=200, tune=0, chains=1, cores=1, random_seed=7, progressbar=False
    )
    kernel = step._roles["P0"][0].logp.fn
    return np.stack([tree.posterior[f"P{i}"].values for i in range(3)]), kernel


def test_the_tiers_draw_the_same_chain(monkeypatch):
    numba_draws, kernel = draws_with(monkeypatch, cached=True, compile_seconds=0.0)
    assert not isinstance(kernel, TieredFunction)
    python_draws, kernel = draws_with(monkeypatch, cached=False, compile_seconds=float("inf"))
    assert kernel.tier == "python"
    np.testing.assert_array_equal(python_draws, numba_draws)
    # The Python VM for the first draws, then numba: the same chain.
    switched_draws, kernel = draws_with(monkeypatch, cached=False, compile_seconds=0.01)
    assert kernel.tier == "numba" and tiered._seconds[kernel.key] > 0
    np.testing.assert_array_equal(switched_draws, numba_draws)


def test_a_short_run_reads_its_draws_on_the_python_vm(monkeypatch):
    from adversary.inference import sampling

    monkeypatch.setattr(tiered, "_on_disk", lambda key: False)
    traces = []
    point_trace = sampling._point_trace
    monkeypatch.setattr(
        sampling, "_point_trace", lambda *args: traces.append(point_trace(*args)) or traces[-1]
    )
    model = persons_in_cells([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [1 / 3, 1 / 3, 1 / 3]])
    tree = sample(model, draws=30, tune=0, chains=2, cores=1, random_seed=3, progressbar=False)
    (trace,) = traces
    assert isinstance(trace.fn, TieredFunction) and trace.fn.tier == "python"
    # Each chain keeps its own draws (the trace PyMC copies per chain starts empty).
    draws = tree.posterior["P0"].values
    assert draws.shape == (2, 30) and not np.array_equal(draws[0], draws[1])


def test_a_frozen_model_samples_with_tiered_kernels(monkeypatch):
    from pymc.model.transform.optimization import freeze_model

    monkeypatch.setattr(tiered, "_on_disk", lambda key: False)
    model = freeze_model(persons_in_cells([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    # A kernel compiles in a model context of its own, not a sub-model of the caller's (which
    # a frozen model refuses: "Cannot create a sub-model of a FrozenModel").
    with model:
        tree = sample(draws=20, tune=0, chains=1, random_seed=7, progressbar=False)
    assert set(np.unique(tree.posterior["P0"])) <= {0, 1, 2}
