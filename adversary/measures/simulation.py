"""Release sets drawn from an attack model with its latents at the truth.

The data holder's measures average over the releases the mechanism could
produce from the truth (Kazan & Reiter (3.3)). This draws them from the
model's own generative process — the release mechanism exactly as the model
declares it, e.g. with the exact discrete Gaussian sampler.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.model import modelcontext
from pytensor.graph.replace import vectorize_graph

from ..inference._conditional import one_shot
from .attack_model import (
    check_releases_drawable,
    generator,
    observed_data,
    positive_int,
    validated_truth,
)
from .structure import memoized, values_key

__all__ = ["ReleaseSimulator", "release_simulator", "simulate_releases"]


def simulate_releases(model, truth: Mapping, releases: int, random_seed=None) -> dict:
    """``releases`` independent release sets drawn from ``model`` with its latents at ``truth``.

    Uses the model's own generative process: the observed variables' random
    graph with every latent replaced by its true value, vectorised over the
    release sets (one draw of the mechanism each, as ``pymc.draw`` of
    ``pymc.do(model, truth)`` would give one at a time). Returns
    ``{observed name: array of shape (releases, *shape)}`` with the observed
    data's dtype. Same ``random_seed``, same draws.
    """
    model = modelcontext(model)
    releases = positive_int(releases, "releases")
    check_releases_drawable(model)
    truth = validated_truth(model, truth)
    return ReleaseSimulator(model, truth, generator(random_seed))(releases)


def release_simulator(model, truth, rng: np.random.Generator) -> ReleaseSimulator:
    """:class:`ReleaseSimulator` of ``model`` at ``truth``, seeded from ``rng``; compiled once
    per structure (:func:`~adversary.measures.structure.memoized`)."""
    simulator = memoized(
        model, ("simulator", values_key(truth)), lambda: ReleaseSimulator(model, truth)
    )
    simulator.reseed(rng)
    return simulator


class ReleaseSimulator:
    """Release sets drawn from the truth, compiled once.

    The observed variables' graph is vectorised over a batch of copies of
    the truth (``pytensor.graph.replace.vectorize_graph``), so one call draws
    every release set, each with its own noise. Observed variables that do
    not depend on any latent cannot be batched that way; then each release
    set is one call of ``pymc.do(model, truth)``'s observed variables.
    """

    def __init__(self, model, truth, rng=None):
        if not model.observed_RVs:
            raise ValueError("model: has no observed variables (no releases to simulate)")
        observed = list(model.observed_RVs)
        self.names = [rv.name for rv in observed]
        self.dtypes = [model.rvs_to_values[rv].dtype for rv in observed]
        self.shapes = [np.shape(observed_data(model, rv)) for rv in observed]
        count = pt.scalar("releases", dtype="int64")
        replace = {
            rv: pt.alloc(pt.constant(truth[rv.name]), count, *np.shape(truth[rv.name]))
            for rv in model.free_RVs
        }
        outputs = vectorize_graph(observed, replace=replace)
        self.batched = all(o.ndim == rv.ndim + 1 for o, rv in zip(outputs, observed, strict=True))
        if not self.batched:
            intervened = pm.do(model, truth, make_interventions_shared=False)
            count, outputs = None, [intervened[name] for name in self.names]
        # Draws run in Python (the exact discrete Gaussian sampler): no numba compilation.
        self.fn, updates = pm.pytensorf.compile(
            inputs=[] if count is None else [count],
            outputs=outputs,
            random_seed=False,
            **one_shot(None),
            return_updates=True,
        )
        self.rngs = list(updates)
        if rng is not None:
            self.reseed(rng)

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw from here on with a seed taken from ``rng`` (as when compiled with it)."""
        pm.pytensorf.reseed_rngs(self.rngs, int(rng.integers(2**31)))

    def __call__(self, releases: int) -> dict[str, np.ndarray]:
        try:
            if self.batched:
                draws = [np.asarray(d) for d in self.fn(np.int64(releases))]
            else:
                calls = (self.fn() for _ in range(releases))
                draws = [np.stack(v) for v in zip(*calls, strict=True)]
        except NotImplementedError as error:
            raise ValueError(
                f"model: cannot draw its observed variables {self.names} ({error}); the Monte "
                "Carlo measures need a release mechanism that can be sampled"
            ) from error
        out = {}
        for name, dtype, shape, draw in zip(
            self.names, self.dtypes, self.shapes, draws, strict=True
        ):
            if draw.shape[1:] != shape or len(draw) != releases:
                raise ValueError(
                    f"model: draws of {name!r} have shape {draw.shape[1:]}, its observed data "
                    f"{shape}"
                )
            cast = draw.astype(dtype)
            if not np.array_equal(cast, draw):
                raise ValueError(f"model: draws of {name!r} do not fit its observed dtype {dtype}")
            out[name] = cast
        return out
