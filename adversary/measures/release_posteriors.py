"""The adversary's exact posterior for many release sets, from one compiled log-p.

The data holder's measures need the adversary's posterior (3.1) for every
release the mechanism could produce. :class:`ReleasePosteriors` compiles the
model's joint log-p once as a function of the latents *and the observed
values* (the observed constants are replaced by inputs) and evaluates it on
(release sets) × (latent grid) with :class:`~adversary.inference.grid.LatentGrid`:
every release set costs a slice of a matrix, not a compilation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pymc.model import modelcontext
from pymc.model.fgraph import ModelObservedRV, fgraph_from_model, model_from_fgraph
from pytensor.graph.replace import graph_replace

from .._validation import as_probability
from ..inference.grid import GridResult, LatentGrid
from .attack_model import event_on_cells, observed_data
from .structure import kwargs_key, memoized, memoized_like
from .tabulated_likelihood import TabulatedLogp, factorises

__all__ = [
    "ReleasePosteriors",
    "observed_inputs",
    "release_posteriors",
    "with_shared_observations",
]


def with_shared_observations(model):
    """A copy of ``model`` whose observed values are new shared variables, and those.

    Only the observed-data input of each ``ModelObservedRV`` node is changed:
    a constant elsewhere in the graph that happens to equal an observed value
    (``mu = 3 + X`` with an observation 3) stays a constant.
    """
    fgraph, _ = fgraph_from_model(model)
    for node in list(fgraph.apply_nodes):
        if isinstance(node.op, ModelObservedRV):
            data = node.inputs[1]
            name = node.outputs[0].name
            value = data.get_value() if hasattr(data, "get_value") else np.asarray(data.data)
            variable = pytensor.shared(value, name=f"{name}_release", shape=data.type.shape)
            fgraph.change_node_input(node, 1, variable, import_missing=True)
    copy = model_from_fgraph(fgraph, mutate_fgraph=True)
    return copy, {rv.name: copy.rvs_to_values[rv] for rv in copy.observed_RVs}


def observed_inputs(model):
    """A copy of ``model``, its joint log-p with each observed value a symbolic input, those
    inputs, and ``{shared observed value: input}``."""
    if not model.observed_RVs:
        raise ValueError("model: has no observed variables (no releases to condition on)")
    copy, shared = with_shared_observations(model)
    inputs = {
        name: pt.tensor(name=f"{name}_release", dtype=v.dtype, shape=v.type.shape)
        for name, v in shared.items()
    }
    replace = {shared[name]: inputs[name] for name in shared}
    logp = graph_replace(copy.logp(), replace, strict=False)
    return copy, logp, [inputs[rv.name] for rv in copy.observed_RVs], replace


class ReleasePosteriors:
    """The adversary's exact posterior for many release sets, from one compiled log-p.

    ``ReleasePosteriors(model)`` compiles the model's joint log-p (priors,
    releases, latent Potentials) as a function of the latents and of the
    observed values; calling it with ``{observed name: array (n, *shape)}``
    returns, for each of the ``n`` release sets, the posterior probability of
    ``event``, the posterior pmf of ``target`` and the estimated posterior mass
    outside the latent grid (unbounded latents get automatic windows, grown
    for all release sets together until every one's estimate is below
    ``tail_mass``, as :func:`adversary.inference.enumerate_posterior` does for one).
    """

    def __init__(self, model=None, *, compile_kwargs: dict | None = None):
        model = modelcontext(model)
        if not model.free_RVs:
            raise ValueError("model: has no free (latent) variables")
        self.model, logp, inputs, replace = observed_inputs(model)
        memoized_like(model, self.model)  # e.g. the event's mask on the latent grid
        self.observed = [rv.name for rv in self.model.observed_RVs]
        self._inputs = inputs
        self._shapes = [np.shape(observed_data(self.model, rv)) for rv in self.model.observed_RVs]
        self.grid = LatentGrid(self.model, logp, inputs, compile_kwargs)
        if factorises(self.model):  # the same log-p, from tables of each release's likelihood
            self.grid.logp = TabulatedLogp(
                self.model, self.grid.value_vars, replace, inputs, compile_kwargs
            )

    @classmethod
    def of(cls, model, compile_kwargs: dict | None = None) -> ReleasePosteriors:
        """``ReleasePosteriors(model)``, compiled once per structure
        (:func:`~adversary.measures.structure.memoized`)."""
        return memoized(
            model,
            ("posteriors", kwargs_key(compile_kwargs)),
            lambda: cls(model, compile_kwargs=compile_kwargs),
        )

    def __call__(self, releases: Mapping, event=None, target=None, **options) -> xr.Dataset:
        """Per release set: ``event`` posterior, ``target`` pmf, ``omitted_mass``.

        Also ``log_p_at_centre`` (the joint log-p at ``centre``, NaN when it is
        outside the grid) and ``log_evidence`` (log Σ over the grid of the
        joint: the log probability of the release set when every prior is
        proper). ``options``: ``centre`` (default: the model's initial point),
        where automatic windows start (the measures pass the truth),
        ``tail_mass`` and ``max_cells`` (:meth:`reduced`).
        """
        result = self.reduced(releases, event, target, **options)
        n = len(result.log_normaliser)
        data = {
            "omitted_mass": ("release", result.omitted),
            "log_p_at_centre": ("release", result.centre_logp),
            "log_evidence": ("release", result.log_normaliser),
        }
        if event is not None:
            data["event_posterior"] = ("release", result.event)
        coords = {"release": np.arange(n)}
        if target is not None:
            data["target_posterior"] = (("release", target), result.target)
            coords[target] = result.target_values
        return xr.Dataset(
            data,
            coords=coords,
            attrs={"ranges": {k: list(v) for k, v in result.ranges.items()}},
        )

    def reduced(
        self,
        releases: Mapping,
        event=None,
        target: str | None = None,
        *,
        centre: Mapping | None = None,
        tail_mass: float = 1e-12,
        max_cells: int = 20_000_000,
        start: Mapping | None = None,
    ) -> GridResult:
        """What :meth:`__call__` returns, as the latent grid's arrays (no Dataset built);
        ``start``: where automatic windows start (:meth:`LatentGrid.run`)."""
        tail_mass = float(as_probability(tail_mass, "tail_mass"))
        rows, n = self._rows(releases)
        centre = self.model.initial_point() if centre is None else centre
        if target is not None and target not in self.grid.all_labels:
            raise ValueError(
                f"target: {target!r} is not a latent scalar; have {self.grid.all_labels}"
            )
        return self.grid.run(
            rows,
            n,
            centre=centre,
            event=None if event is None else event_on_cells(self.model, event),
            target=target,
            tail_mass=tail_mass,
            max_cells=max_cells,
            start=None if start is None else dict(start),
            impossible="a release set is impossible under the model (a release drawn from the "
            "truth should not be: the model's random draws and its log-p disagree)",
        )

    def _rows(self, releases: Mapping) -> tuple[list[np.ndarray], int]:
        if not isinstance(releases, Mapping):
            raise TypeError(
                f"releases must be a mapping {{observed name: array}}, got {type(releases)}"
            )
        unknown = sorted(set(releases) - set(self.observed))
        missing = sorted(set(self.observed) - set(releases))
        if unknown or missing:
            raise ValueError(
                f"releases: need exactly the observed variables {self.observed}; "
                f"unknown {unknown}, missing {missing}"
            )
        rows, n = [], None
        for name, symbolic, shape in zip(self.observed, self._inputs, self._shapes, strict=True):
            array = np.asarray(releases[name])
            if array.shape[1:] != shape:
                raise ValueError(
                    f"releases[{name!r}] must have shape (n, *{shape}), got {array.shape}"
                )
            cast = array.astype(symbolic.dtype)
            if not np.array_equal(cast, array):
                raise ValueError(f"releases[{name!r}] does not fit the dtype {symbolic.dtype}")
            if n is not None and len(cast) != n:
                raise ValueError("releases: every observed variable needs the same number of sets")
            n = len(cast)
            rows.append(cast)
        if not n:
            raise ValueError("releases: no release sets given")
        return rows, n


def release_posteriors(model, releases: Mapping, event=None, target=None, **kwargs) -> xr.Dataset:
    """One-off :class:`ReleasePosteriors` call (compile, then evaluate every release set)."""
    compile_kwargs = kwargs.pop("compile_kwargs", None)
    return ReleasePosteriors(model, compile_kwargs=compile_kwargs)(
        releases, event, target, **kwargs
    )
