"""Posterior summaries that accept a sampled DataTree or an exact :class:`Enumeration`.

An exact result is a DataTree too (its ``posterior`` group holds quantile
draws for ArviZ); these summaries read its exact ``joint`` table instead,
also when it was written to a file and read back as a plain DataTree.

Both paths give the same kind of answer, so a risk computed by MCMC can be
compared with (and tested against) the exact one:

- :func:`posterior_probability` — ``P[event | observations]`` as a float,
  e.g. the adversary's posterior that the target is in the cell (3.1);
- :func:`marginal_pmf` — one latent's posterior pmf as a DataArray over values;
- :func:`event_indicator` — for a sampled tree, the event's 0/1 series per
  draw, to feed ArviZ's ``ess``/``mcse``.

An *event* is either a mapping ``{name: value}`` (all must hold) or a callable
taking a mapping of latent values to a boolean xarray object: ``values[name]``
is a DataArray over the draws (sampled) or over the enumerated grid (exact),
so ``lambda v: v["X2"] - v["X1"] >= 1`` works for both. Element ``i`` of a
vector latent is ``values["name[i]"]``; the whole vector is ``values["name"]``
with its dimension as in the posterior (``name_dim_0`` or the model's dims).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np
import xarray as xr
from xarray import DataTree

from .enumeration import Enumeration, as_exact

__all__ = ["event_indicator", "marginal_pmf", "posterior_pmf", "posterior_probability"]

_SAMPLE_DIMS = ("chain", "draw")
_ELEMENT = re.compile(r"^(?P<name>.+)\[(?P<index>[0-9, ]+)\]$")


def _posterior(result) -> xr.Dataset:
    if isinstance(result, DataTree):
        if "posterior" not in result.children:
            raise ValueError("result: the DataTree has no 'posterior' group")
        return result["posterior"].to_dataset()
    if isinstance(result, xr.Dataset) and all(d in result.dims for d in _SAMPLE_DIMS):
        return result
    raise TypeError(
        "result must be a sampled DataTree (adversary.inference.sample) or an "
        f"Enumeration (adversary.inference.enumerate_posterior), got {type(result).__name__}"
    )


class _SampledValues(Mapping):
    def __init__(self, posterior: xr.Dataset):
        self.posterior = posterior

    def __getitem__(self, key):
        if key in self.posterior.data_vars:
            return self.posterior[key]
        match = _ELEMENT.match(key)
        if match and match["name"] in self.posterior.data_vars:
            array = self.posterior[match["name"]]
            index = [int(i) for i in match["index"].split(",")]
            extra = [d for d in array.dims if d not in _SAMPLE_DIMS]
            if len(index) != len(extra):
                raise KeyError(f"{key!r}: {match['name']} has dims {extra}")
            return array.isel(dict(zip(extra, index, strict=True))).drop_vars(
                extra, errors="ignore"
            )
        raise KeyError(
            f"{key!r} is not a variable of the posterior; have {list(self.posterior.data_vars)}"
        )

    def __iter__(self):
        return iter(self.posterior.data_vars)

    def __len__(self):
        return len(self.posterior.data_vars)


class _EnumeratedValues(Mapping):
    def __init__(self, table: Enumeration):
        self.table = table

    def __getitem__(self, key):
        joint = self.table.joint
        if key in joint.dims:
            return joint[key]
        latents = self.table.latents
        if key in latents:
            element_labels, dims = latents[key]
            missing = [label for label in element_labels if label not in joint.dims]
            if len(dims) != 1 or missing:
                raise KeyError(
                    f"{key!r}: use its element labels {list(element_labels)} (whole-variable "
                    "values are available for 1-d latents kept in the table)"
                )
            stacked = xr.concat(
                [joint[label].drop_vars(label) for label in element_labels], dim=dims[0]
            )
            return stacked.assign_coords({label: joint[label] for label in element_labels})
        raise KeyError(f"{key!r} is not a latent of this table; have {list(joint.dims)}")

    def __iter__(self):
        return iter(self.table.joint.dims)

    def __len__(self):
        return len(self.table.joint.dims)


def _mask(values: Mapping, event, outer_dims: tuple) -> xr.DataArray:
    """Boolean DataArray over ``outer_dims`` (draws or grid cells) where ``event`` holds."""
    if isinstance(event, Mapping):
        mask = None
        for key, wanted in event.items():
            name = key if isinstance(key, str) else getattr(key, "name", key)
            current = values[name]
            extra = [d for d in current.dims if d not in outer_dims]
            if extra:
                target = xr.DataArray(np.asarray(wanted), dims=extra[: np.ndim(wanted)])
                held = (current == target).all(extra)
            else:
                held = current == wanted
            mask = held if mask is None else mask & held
        if mask is None:
            raise ValueError("event: an empty mapping is not an event")
        return mask
    if callable(event):
        mask = event(values)
        if not isinstance(mask, xr.DataArray):
            mask = xr.DataArray(np.asarray(mask))
        return mask
    raise TypeError(f"event must be a mapping {{name: value}} or a callable, got {event!r}")


def event_indicator(result, event: Mapping | Callable) -> xr.DataArray:
    """The event's indicator (0.0/1.0) for every draw of a sampled posterior (dims chain, draw)."""
    posterior = _posterior(result)
    mask = _mask(_SampledValues(posterior), event, _SAMPLE_DIMS)
    extra = [d for d in mask.dims if d not in _SAMPLE_DIMS]
    if extra:
        raise ValueError(
            f"event must give one truth value per draw, but its result has dims {extra}"
        )
    template = xr.zeros_like(
        posterior[_SAMPLE_DIMS[0]] * posterior[_SAMPLE_DIMS[1]], dtype=np.float64
    )
    return (mask.astype(np.float64) + template).rename("indicator")


def posterior_probability(result, event: Mapping | Callable) -> float:
    """``P[event | observations]``: a Monte Carlo mean (sampled DataTree) or exact (Enumeration).

    Examples: ``posterior_probability(r, {"X1": 1})`` — the target is in the
    cell (Kazan & Reiter (3.1)); ``posterior_probability(r, lambda v: v["X2"] > v["X1"])``.
    """
    exact = as_exact(result)
    if exact is not None:
        joint = exact.joint
        mask = _mask(_EnumeratedValues(exact), event, tuple(joint.dims))
        extra = [d for d in mask.dims if d not in joint.dims]
        if extra:
            raise ValueError(
                f"event must give one truth value per cell, but its result has dims {extra}"
            )
        return float((joint * mask.astype(np.float64)).sum())
    return float(event_indicator(result, event).mean())


def marginal_pmf(result, var, support=None) -> xr.DataArray:
    """Posterior pmf of one latent scalar: a DataArray named ``probability`` with dim ``var``.

    ``var`` is a variable name (or element label ``"name[i]"``). For a sampled
    tree the coordinates are the values drawn; for an Enumeration, every value
    enumerated. Pass ``support`` (a sequence of integers) to get both on the
    same coordinates, with 0 where a value has no mass.
    """
    name = var if isinstance(var, str) else getattr(var, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"var must be a variable name, got {var!r}")
    exact = as_exact(result)
    if exact is not None:
        pmf = exact.marginal(name)
    else:
        draws = _SampledValues(_posterior(result))[name]
        extra = [d for d in draws.dims if d not in _SAMPLE_DIMS]
        if extra:
            raise ValueError(
                f"var: {name!r} is not a scalar (dims {extra}); "
                f"ask for one element, e.g. '{name}[0]'"
            )
        values, counts = np.unique(draws.values.reshape(-1), return_counts=True)
        pmf = xr.DataArray(
            counts / counts.sum(),
            dims=[name],
            coords={name: values.astype(np.int64)},
            name="probability",
        )
    if support is not None:
        support = np.asarray(support, dtype=np.int64)
        pmf = pmf.reindex({name: support}, fill_value=0.0)
    return pmf.rename("probability")


def posterior_pmf(result) -> xr.Dataset:
    """Every discrete variable's marginal posterior pmf, exact or sampled, in one layout.

    One data variable per variable, named as in the model, over a shared
    dimension ``value`` (0 where a variable does not take a value); a vector
    variable keeps its own dimensions. For an :class:`Enumeration` this is
    :meth:`Enumeration.posterior_pmf` (the latents); for a sampled DataTree,
    the frequencies of the draws of every integer-valued variable of its
    ``posterior`` group (latents and integer Deterministics), so exact and
    sampled results compare value by value.
    """
    exact = as_exact(result)
    if exact is not None:
        return exact.posterior_pmf()
    posterior = _posterior(result)
    arrays = {}
    for name, draws in posterior.data_vars.items():
        if np.dtype(draws.dtype).kind not in "iub":
            continue
        extra = [d for d in draws.dims if d not in _SAMPLE_DIMS]
        flat = draws.transpose(*_SAMPLE_DIMS, *extra).values.reshape(-1, *draws.shape[2:])
        values = np.unique(flat).astype(np.int64)
        frequencies = (flat[..., None] == values).mean(axis=0)
        arrays[name] = xr.DataArray(frequencies, dims=(*extra, "value"), coords={"value": values})
    return xr.Dataset(arrays).fillna(0.0)
