"""What the data holder states about a PyMC attack model: the truth, the target, the event.

The data holder's measures of any attack model (exact over a release grid,
:mod:`~adversary.measures.exact`, or by simulation,
:mod:`~adversary.measures.monte_carlo`) start from the same statements:

- ``truth`` names *every* free latent of the model with its true value (the
  data holder knows the whole truth; releases are drawn from it). Names and
  values are those of the random variables (``p``, not a transformed value
  variable such as ``p_simplex__``), and the truth must have finite prior
  log-p (including Potentials on latents).
- ``target``: the latent scalar the adversary decides on (3.5) — a variable
  name or an element label ``"name[i]"``; default: the model's first free
  variable (the target's cell ``X1`` in every scenario model).
- ``event``: what the posterior is the probability of (3.1); default
  ``{target: truth[target]}`` ("the target has its true value"). A mapping
  ``{name: value}`` (all must hold) or a callable of the latents' values, as
  in :func:`adversary.inference.posterior_probability`.

The releases are the model's observed variables. Random draws ignore
Potentials, so a model whose observed likelihood lives in a ``pm.Potential``
(or that has no observed variable) cannot have its releases drawn and is
refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pytensor.graph.replace import graph_replace
from pytensor.graph.traversal import ancestors

from .._validation import as_integers
from ..inference import event_indicator
from ..inference._conditional import is_discrete
from ..inference.grid import scalar_labels, variable_dims
from ..inference.safe import counted_as_integers, safe_mode
from .structure import memoized, values_key

__all__ = [
    "check_releases_drawable",
    "event_on_cells",
    "event_variables",
    "generator",
    "is_discrete",
    "label_value",
    "observed_data",
    "positive_int",
    "validated_event",
    "validated_target",
    "validated_truth",
]


#: Largest latent grid whose event mask is kept with a structure's model.
_KEPT_MASK_CELLS = 100_000


def positive_int(value, name: str) -> int:
    """``value`` as an int if it is a positive integer, else a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def generator(random_seed) -> np.random.Generator:
    """A ``numpy`` generator from a seed, ``None`` or a generator."""
    if isinstance(random_seed, np.random.Generator):
        return random_seed
    return np.random.default_rng(random_seed)


def observed_data(model, rv) -> np.ndarray:
    """The observed values of an observed variable."""
    data = model.rvs_to_values[rv]
    return np.asarray(data.get_value() if hasattr(data, "get_value") else data.data)


def check_releases_drawable(model) -> None:
    """Refuse models whose releases are not observed distributions that can be drawn.

    A Potential that involves an observed variable is refused (draws ignore
    it); so is a model with no observed variable at all, such as one whose
    release enters only as a Potential on latents (an indicator of a
    post-processed count).
    """
    if not model.observed_RVs:
        hint = (
            f"; its Potentials {[p.name for p in model.potentials]} cannot be simulated — "
            "declare the releases as observed distributions"
            if model.potentials
            else ""
        )
        raise ValueError(f"model: has no observed variables (no releases to simulate){hint}")
    observed = set(model.observed_RVs) | {model.rvs_to_values[rv] for rv in model.observed_RVs}
    for potential in model.potentials:
        involved = observed & set(ancestors([potential]))
        if involved:
            names = sorted(v.name for v in involved if v in model.observed_RVs) or sorted(
                model.values_to_rvs[v].name for v in involved if v in model.values_to_rvs
            )
            raise ValueError(
                f"model: the Potential {potential.name!r} involves the observed variable(s) "
                f"{names}; releases drawn from the model ignore Potentials, so its likelihood "
                "cannot be simulated. Declare the release as an observed distribution instead."
            )


def _latent_shapes(model) -> dict[str, tuple]:
    """The shape of every free random variable (not of its possibly transformed value)."""
    return memoized(model, ("latent_shapes",), lambda: _compute_latent_shapes(model))


def _compute_latent_shapes(model) -> dict[str, tuple]:
    graphs = model.replace_rvs_by_values([rv.shape for rv in model.free_RVs])
    fn = model.compile_fn(
        graphs,
        inputs=model.value_vars,
        point_fn=False,
        on_unused_input="ignore",
        mode=safe_mode("FAST_COMPILE"),
    )
    point = model.initial_point()
    values = fn(*[point[v.name] for v in model.value_vars])
    return {
        rv.name: tuple(int(n) for n in shape)
        for rv, shape in zip(model.free_RVs, values, strict=True)
    }


def validated_truth(model, truth) -> dict[str, np.ndarray]:
    """``{latent name: value}`` for every free latent, with the variable's dtype and shape."""
    if not isinstance(truth, Mapping):
        raise TypeError(f"truth must be a mapping {{latent name: value}}, got {truth!r}")
    latents = {rv.name: rv for rv in model.free_RVs}
    shapes = _latent_shapes(model)
    given = {}
    for key, value in truth.items():
        name = key if isinstance(key, str) else getattr(key, "name", None)
        if name not in latents:
            raise ValueError(
                f"truth: {key!r} is not a free (latent) variable of the model; "
                f"latents are {sorted(latents)}"
            )
        rv = latents[name]
        if is_discrete(rv):
            array = as_integers(value, f"truth[{name!r}]").astype(rv.dtype)
        else:
            array = np.asarray(value, dtype=rv.dtype)
            if not np.all(np.isfinite(array)):
                raise ValueError(f"truth[{name!r}] must be finite, got {value!r}")
        if array.shape != shapes[name]:
            raise ValueError(
                f"truth[{name!r}] must have shape {shapes[name]}, got shape {array.shape}"
            )
        given[name] = array
    missing = sorted(set(latents) - set(given))
    if missing:
        raise ValueError(
            f"truth: give a value for every free latent (releases are drawn from the whole "
            f"truth); missing {missing}"
        )
    truth = {rv.name: given[rv.name] for rv in model.free_RVs}
    _check_truth_in_support(model, truth)
    return truth


def _check_truth_in_support(model, truth: dict[str, np.ndarray]) -> None:
    """Every prior term (and latent-only Potential) must be finite at the truth."""
    terms = [*model.free_RVs, *model.potentials]
    fn = memoized(model, ("prior_terms", values_key(truth)), lambda: _prior_terms(model, truth))
    for term, logp in zip(terms, fn(), strict=True):
        if not np.isfinite(logp):
            shown = {k: v.tolist() for k, v in truth.items()}
            raise ValueError(
                f"truth: {shown} is outside the prior support ({term.name!r} has log-p {logp})"
            )


def _prior_terms(model, truth):
    """A compiled function of each prior term's (and latent Potential's) log-p at ``truth``."""
    constants = {rv: pt.constant(truth[rv.name]) for rv in model.free_RVs}
    graphs = [pt.sum(pm.logp(rv, constants[rv], warn_rvs=False)) for rv in model.free_RVs]
    graphs += [pt.sum(p) for p in model.potentials]
    graphs = counted_as_integers(graph_replace(graphs, constants, strict=False))
    return pytensor.function([], graphs, mode=safe_mode("FAST_COMPILE"), on_unused_input="ignore")


def _truth_labels(truth) -> list[str]:
    return [lb for name, value in truth.items() for lb in scalar_labels(name, np.shape(value))]


def validated_target(model, truth, target) -> str:
    """The decision's latent scalar: checked, discrete; default the first free variable."""
    if target is None:
        first = model.free_RVs[0]
        if np.shape(truth[first.name]) != ():
            raise ValueError(
                f"target: the first latent {first.name!r} is not a scalar; name one latent "
                "scalar (a variable or an element label such as 'name[0]') as target="
            )
        name = first.name
    else:
        name = target if isinstance(target, str) else getattr(target, "name", None)
        labels = _truth_labels(truth)
        if name not in labels:
            raise ValueError(f"target: {target!r} is not a latent scalar; have {labels}")
    rv = model[name.split("[", 1)[0]]
    if not is_discrete(rv):
        raise ValueError(
            f"target: {name!r} is continuous; the 0-1 decision (3.5) needs a discrete target "
            "(name one as target=)"
        )
    return name


def label_value(truth, label: str) -> int | float:
    """The true value of a latent scalar ``name`` or ``name[i,j]``."""
    if label in truth:
        return np.asarray(truth[label]).item()
    name, index = label[:-1].split("[", 1)
    return np.asarray(truth[name])[tuple(int(i) for i in index.split(","))].item()


def validated_event(model, truth, event, target) -> Mapping | Callable:
    """The event checked against the model's latents; default ``{target: its truth}``."""
    if event is None:
        return {target: label_value(truth, target)}
    if isinstance(event, Mapping):
        if not event:
            raise ValueError("event: an empty mapping is not an event")
        labels = set(_truth_labels(truth))
        for key in event:
            name = key if isinstance(key, str) else getattr(key, "name", key)
            if name not in truth and name not in labels:
                raise ValueError(
                    f"event: {key!r} is not a latent of the model; have {sorted(labels)}"
                )
        return {(k if isinstance(k, str) else k.name): v for k, v in event.items()}
    if callable(event):
        return event
    raise TypeError(f"event must be a mapping {{name: value}} or a callable, got {event!r}")


def event_variables(event) -> set[str] | None:
    """Latent names a mapping event mentions (``None``: unknown, i.e. a callable)."""
    if not isinstance(event, Mapping):
        return None
    names = set()
    for key in event:
        name = key if isinstance(key, str) else getattr(key, "name", key)
        names.add(str(name).split("[", 1)[0])
    return names


def event_on_cells(model, event) -> Callable[[dict], np.ndarray]:
    """The event as a function of a grid's cells (:meth:`LatentGrid.values_by_variable`).

    Evaluated as on a sampled posterior, with the cells as draws, so an event
    means the same for exact and sampled results. A mapping event's mask on a
    grid of at most :data:`_KEPT_MASK_CELLS` cells is kept with a structure's
    model (:func:`~adversary.measures.structure.memoized`): a scan meets the
    same grids again.
    """

    def computed(values: dict[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(values.values())))
        data = {
            name: (
                ("chain", "draw", *variable_dims(model, name, array.shape[1:])),
                array[None],
            )
            for name, array in values.items()
        }
        posterior = xr.Dataset(data, coords={"chain": [0], "draw": np.arange(n)})
        return event_indicator(posterior, event).values.reshape(-1) > 0.5

    def mask(values: dict[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(values.values())))
        if not isinstance(event, Mapping) or n > _KEPT_MASK_CELLS:
            return computed(values)
        key = ("event_mask", repr(sorted(event.items(), key=repr)), values_key(values))
        return memoized(model, key, lambda: computed(values))

    return mask
