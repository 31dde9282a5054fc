"""The peers' chains for ``peers.py``: NumPyro's discrete samplers and pymc-extras' marginalize.

Each runner has the harness's signature ``(subject, tune, draws, seed) ->
(values, sampling_s, setup_s)`` (``benchmarks/_gibbs.py``). The optional
packages (``pip install -e .[peers]``, see ``benchmarks/README.md``) are
imported only when a runner is built; :func:`missing` says which are absent.

- ``numpyro_gibbs`` — ``DiscreteHMCGibbs(NUTS, modified=True)``: each step
  updates one discrete element (Liu's Metropolised Gibbs), then NUTS;
- ``numpyro_mixed`` — ``MixedHMC(HMC)`` (Zhou 2022), discrete and continuous
  moved together, one update per discrete element per step;
- ``numpyro_enum`` — NUTS on the model with its discrete sites enumerated
  (summed out by ``funsor``), the discrete estimands then drawn exactly from
  their conditionals given each draw (``recover``);
- ``marginal`` — pymc-extras: ``marginalize`` the finite discrete variables,
  ``pm.sample`` (NUTS), ``recover`` them; the recovery is counted as sampling.

A NumPyro chain is one jitted loop of its kernel, compiled once per model and
run length (``MCMC.run`` would trace and compile again for every chain).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

PACKAGES = {"numpyro": ("numpyro", "jax"), "marginal": ("pymc_extras",), "enum": ("funsor",)}


def missing(kind: str) -> list[str]:
    """The packages a kind of runner (``numpyro``, ``marginal``, ``enum``) needs and lacks."""
    need = PACKAGES[kind] + (PACKAGES["numpyro"] if kind == "enum" else ())
    return [name for name in need if importlib.util.find_spec(name) is None]


@dataclass
class NumpyroSpec:
    """A model written for NumPyro: ``model()``, and the estimands from its samples.

    ``values(samples, rng)`` maps NumPyro's samples (numpy arrays over draws)
    to the estimands' draws; ``rng`` draws what a run did not sample (the
    enumerated sites, or counts summed out of the model).
    """

    model: Callable
    values: Callable


_LOOPS: dict = {}  # (model label, kind, tune, draws) -> (kernel, compiled loop)


def _kernel(kind: str, model):
    from numpyro.infer import HMC, NUTS, DiscreteHMCGibbs, MixedHMC

    if kind == "numpyro_gibbs":
        return DiscreteHMCGibbs(NUTS(model), modified=True)
    if kind == "numpyro_mixed":
        return MixedHMC(HMC(model, trajectory_length=1.2))
    from numpyro.contrib.funsor import config_enumerate

    return NUTS(config_enumerate(model))  # numpyro_enum: the discrete sites summed out


def _compiled_loop(kernel, state, length: int):
    """``kernel``'s chain of ``length`` steps from ``state`` as one jitted scan (compiled once)."""
    import jax

    constrain = kernel.postprocess_fn((), {})

    def loop(state):
        def body(current, _):
            current = kernel.sample(current, (), {})
            return current, constrain(current.z)

        return jax.lax.scan(body, state, None, length=length)[1]

    return jax.jit(loop)


def numpyro_chain(kind: str, spec_of: Callable, label: str) -> Callable:
    """A runner of NumPyro's ``kind`` on ``spec_of(subject)`` (a :class:`NumpyroSpec`).

    The chain (tuning, then draws) is one jitted ``lax.scan`` of the kernel's
    ``sample``, compiled on the first chain of a length for the model named
    ``label`` (that chain's ``setup_s``); each chain's ``kernel.init`` is set-up too.
    """

    def chain(subject, tune, draws, seed):
        import jax

        key = (label, kind, tune, draws)
        start = time.perf_counter()
        if key not in _LOOPS:
            kernel = _kernel(kind, spec_of(subject).model)
            state = kernel.init(jax.random.PRNGKey(seed), tune, None, (), {})
            loop = _compiled_loop(kernel, state, tune + draws)
            jax.block_until_ready(loop(state))
            _LOOPS[key] = kernel, loop
        kernel, loop = _LOOPS[key]
        state = kernel.init(jax.random.PRNGKey(seed), tune, None, (), {})
        setup = time.perf_counter() - start
        start = time.perf_counter()
        samples = jax.block_until_ready(loop(state))
        sampling = time.perf_counter() - start
        samples = {k: np.asarray(v)[tune:] for k, v in samples.items()}
        return spec_of(subject).values(samples, np.random.default_rng(seed)), sampling, setup

    return chain


def marginal_chain(build: Callable, names: list[str], values_of: Callable) -> Callable:
    """pymc-extras: ``build()``'s ``names`` marginalized, NUTS, the marginals recovered."""

    def chain(subject, tune, draws, seed):
        import pymc as pm
        from _gibbs import ONE_CHAIN
        from pymc_extras.marginal import marginalize, recover

        start = time.perf_counter()
        model = marginalize(build(), names)
        with model:
            tree = pm.sample(draws=draws, tune=tune, random_seed=seed, **ONE_CHAIN)
        loop = float(tree["sample_stats"].attrs["sampling_time"])
        setup = time.perf_counter() - start - loop
        start = time.perf_counter()
        tree = recover(tree, model=model, random_seed=seed)
        recovery = time.perf_counter() - start
        posterior = tree["posterior"].to_dataset().isel(chain=0)
        return values_of(posterior), loop + recovery, setup

    return chain
