"""Exact posteriors of discrete models by enumeration over the latent support.

For a model whose free variables are all discrete, the posterior is
``p(latents | observed) ∝ exp(logp(model))`` on the product of the latents'
supports — the joint log-p of the model (priors, observed likelihoods,
Potentials) evaluated on every cell of the grid in vectorised batches and
normalised in log space. Kazan & Reiter's posteriors (3.1), (S1.1) and (S3.4)
are all of this form; this is the ground truth the samplers are tested
against.

The grid is :class:`~adversary.inference.grid.LatentGrid`'s: supports from
the distributions' bounds, an unbounded side cut at a range the caller states
or grown automatically until the estimated posterior mass beyond it is below
``tail_mass`` (see that module for the estimate);
:attr:`Enumeration.omitted_mass` reports the total.

The result converts to xarray like a sampled posterior:
:meth:`Enumeration.to_datatree` gives a DataTree whose ``posterior_pmf``
group holds every latent's marginal pmf under the model's variable names,
as :func:`~adversary.inference.summaries.posterior_pmf` gives for a sampled
DataTree, so tables and plots treat both alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import xarray as xr
from pymc.model import modelcontext
from xarray import DataTree

from .._validation import as_integers, as_probability
from ..distributions.support import support_bounds
from .grid import LatentGrid, variable_dims
from .start import repair_start

__all__ = ["Enumeration", "enumerate_posterior"]


@dataclass(frozen=True)
class Enumeration:
    """The exact (or stated-truncation) posterior of a discrete model.

    Attributes
    ----------
    joint : xarray.DataArray
        Posterior probabilities, one dimension per latent scalar (named by the
        variable, ``"X1"``, or by element, ``"cells[2]"``), integer coordinates
        = the values enumerated; sums to 1.
    log_normaliser : float
        ``log Σ exp(logp)`` over the table: the log marginal likelihood of the
        observations when every prior is proper.
    omitted_mass : float
        Estimated posterior mass outside the table (0 when every latent has a
        finite support); see :mod:`adversary.inference.grid`.
    ranges : dict
        ``label -> (lowest, highest)`` value enumerated for each latent scalar.
    truncated : tuple
        Labels of the latents whose range was cut (by the caller or automatically).
    variables : dict
        ``variable name -> (element labels, dims)`` for every latent
        (scalars map to ``((name,), ())``).
    """

    joint: xr.DataArray
    log_normaliser: float
    omitted_mass: float
    ranges: dict
    truncated: tuple = ()
    variables: dict = field(default_factory=dict)

    def marginal(self, label: str) -> xr.DataArray:
        """Marginal posterior pmf of one latent scalar (a DataArray over its values)."""
        if label not in self.joint.dims:
            raise KeyError(
                f"var: {label!r} is not a latent in this table; have {list(self.joint.dims)}"
            )
        other = [d for d in self.joint.dims if d != label]
        return self.joint.sum(other).rename("probability")

    @property
    def marginals(self) -> dict[str, xr.DataArray]:
        """Every latent scalar's marginal pmf."""
        return {label: self.marginal(label) for label in self.joint.dims}

    def posterior_pmf(self) -> xr.Dataset:
        """Each latent's marginal pmf, one data variable per latent named as in the model.

        Dimension ``value`` (the union of the values enumerated; 0 where a
        latent does not reach a value); a vector latent keeps its own
        dimensions (``cells_dim_0`` or the model's dims). Only latents whose
        every element is kept in the table appear.
        """
        arrays = {}
        for name, (labels, dims) in self.variables.items():
            if not all(label in self.joint.dims for label in labels):
                continue
            pmfs = [self.marginal(label).rename({label: "value"}) for label in labels]
            pmfs = xr.align(*pmfs, join="outer", fill_value=0.0)
            values = pmfs[0]["value"].values
            stacked = np.stack([pmf.values for pmf in pmfs])
            arrays[name] = xr.DataArray(
                stacked.reshape(*_element_shape(labels, dims), values.size),
                dims=(*dims, "value"),
                coords={"value": values},
            )
        return xr.Dataset(arrays).fillna(0.0)

    def to_datatree(self) -> DataTree:
        """The result as an ``xarray.DataTree``, shaped like a sampled one where it can be.

        Groups: ``posterior_pmf`` (:meth:`posterior_pmf`: the marginal pmfs
        under the model's variable names, as
        :func:`~adversary.inference.summaries.posterior_pmf` gives for a
        sampled DataTree) and ``joint`` (the table, variable ``probability``).
        Attributes: ``method`` (``"exact"``), ``omitted_mass``,
        ``log_normaliser``, ``truncated``.
        """
        attrs = {
            "method": "exact",
            "omitted_mass": self.omitted_mass,
            "log_normaliser": self.log_normaliser,
            "truncated": list(self.truncated),
        }
        joint = self.joint.rename("probability").to_dataset()
        tree = DataTree.from_dict({"posterior_pmf": self.posterior_pmf(), "joint": joint})
        tree.attrs = attrs
        return tree


def _element_shape(labels, dims) -> tuple[int, ...]:
    """The shape of a latent from its element labels ``name[i,j]`` (``()`` for a scalar)."""
    if not dims:
        return ()
    indices = np.array([[int(i) for i in lb.split("[", 1)[1][:-1].split(",")] for lb in labels])
    return tuple(int(k) for k in indices.max(axis=0) + 1)


def enumerate_posterior(
    model=None,
    *,
    vars=None,
    truncation: Mapping | None = None,
    tail_mass: float = 1e-12,
    max_cells: int = 20_000_000,
    compile_kwargs: dict | None = None,
) -> Enumeration:
    """Exact posterior of a model whose free variables are all discrete.

    Parameters
    ----------
    model : pymc.Model, optional
        Default: the model on the context stack. Observed variables and
        Potentials enter through the model's joint log-p.
    vars : sequence of names or variables, optional
        Latents to keep in the table (the others are summed out); default all.
    truncation : mapping, optional
        ``{name or element label: (lowest, highest)}`` — a stated range for an
        unbounded latent (or to narrow a bounded one). The mass left outside is
        still estimated and reported.
    tail_mass : float in (0, 1)
        For unbounded latents without a stated range: grow the range until
        the estimated omitted posterior mass is at most this.
    max_cells : int
        Refuse grids with more cells than this.

    Returns
    -------
    Enumeration
        ``joint`` (labelled DataArray), marginals, ``omitted_mass``, ``ranges``;
        :meth:`Enumeration.to_datatree` for xarray.
    """
    model = modelcontext(model)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    if isinstance(max_cells, bool) or not isinstance(max_cells, int | np.integer) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {max_cells!r}")
    if truncation is not None and not isinstance(truncation, Mapping):
        raise TypeError(
            f"truncation must be a mapping {{name: (lowest, highest)}}, got {truncation!r}"
        )
    if not model.free_RVs:
        raise ValueError("model: has no free (latent) variables to enumerate")
    grid = LatentGrid(model, compile_kwargs=compile_kwargs)
    start = model.initial_point()
    if any(None in support_bounds(rv) for rv in model.free_RVs):
        # Automatic windows start around a feasible point.
        start, _ = repair_start(model, start, compile_kwargs=compile_kwargs)
    variables = {
        v.name: (tuple(grid.labels[v.name]), variable_dims(model, v.name, grid.shapes[v.name]))
        for v in grid.value_vars
    }
    keep = _kept_labels(vars, grid.value_vars, grid.labels)
    stated = _stated_ranges(truncation, grid.value_vars, grid.labels)
    result = grid.run(
        [],
        1,
        centre=start,
        tail_mass=tail_mass,
        max_cells=max_cells,
        stated=stated,
        keep_joint=True,
        impossible="the observations are impossible under the prior (or state a range that "
        "contains the posterior)",
    )
    coords = {
        label: np.arange(lo, hi + 1, dtype=np.int64) for label, (lo, hi) in result.ranges.items()
    }
    joint = xr.DataArray(result.joint, dims=grid.all_labels, coords=coords, name="probability")
    dropped = [label for label in grid.all_labels if label not in keep]
    if dropped:
        joint = joint.sum(dropped)
    return Enumeration(
        joint=joint,
        log_normaliser=float(result.log_normaliser[0]),
        omitted_mass=float(result.omitted[0]),
        ranges={label: result.ranges[label] for label in grid.all_labels},
        truncated=tuple(sorted({label for label, _ in result.tails})),
        variables=variables,
    )


def _kept_labels(vars, value_vars, labels) -> set[str]:
    all_labels = {label for v in value_vars for label in labels[v.name]}
    if vars is None:
        return all_labels
    if isinstance(vars, str) or not hasattr(vars, "__iter__"):
        vars = [vars]
    keep = set()
    for item in vars:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if name in labels:
            keep.update(labels[name])
        elif name in all_labels:
            keep.add(name)
        else:
            raise ValueError(
                f"vars: {item!r} is not a free variable of the model; have {sorted(labels)}"
            )
    return keep


def _stated_ranges(truncation, value_vars, labels) -> dict[str, tuple[int, int]]:
    stated = {}
    for key, value in (truncation or {}).items():
        name = key if isinstance(key, str) else getattr(key, "name", None)
        try:
            lo, hi = (int(x) for x in as_integers(value, f"truncation[{name!r}]").reshape(-1))
        except ValueError as error:
            if "integer" in str(error):
                raise
            raise ValueError(
                f"truncation[{name!r}] must be a pair (lowest, highest), got {value!r}"
            ) from None
        if hi < lo:
            raise ValueError(f"truncation[{name!r}] must have lowest <= highest, got {value!r}")
        if name in labels:
            for label in labels[name]:
                stated[label] = (lo, hi)
        elif any(name in labels[v.name] for v in value_vars):
            stated[name] = (lo, hi)
        else:
            raise ValueError(f"truncation: {key!r} is not a free variable of the model")
    return stated
