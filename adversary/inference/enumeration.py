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

The result is one type with a sampled one: an :class:`Enumeration` *is* an
``xarray.DataTree`` that ArviZ's functions take as they take
:func:`~adversary.inference.sample`'s. Its ``posterior`` group holds the
exact joint's quantiles as draws (:mod:`adversary.inference.exact_draws`:
what ``az.summary``, ``az.ess`` and ``az.plot_dist`` see, exact to a
quantisation the tree states), and beside it the exact answers: the
``posterior_pmf`` group (every latent's marginal pmf under the model's
variable names, as :func:`~adversary.inference.summaries.posterior_pmf`
gives for a sampled tree) and the ``joint`` group (the table). The
package's summaries (:func:`~adversary.inference.posterior_probability`,
:func:`~adversary.inference.marginal_pmf`) read the exact table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import xarray as xr
from pymc.model import modelcontext
from xarray import DataTree

from .._validation import as_integers, as_probability
from ..distributions.support import support_bounds
from .exact_draws import check_shape, element_shape, representative_draws
from .grid import LatentGrid, variable_dims
from .start import repair_start

__all__ = ["Enumeration", "as_exact", "enumerate_posterior"]

#: Draws per chain and chains of an exact result's ``posterior`` group (10 000 quantiles).
DRAWS, CHAINS = 2500, 4


class Enumeration(DataTree):
    """The exact (or stated-truncation) posterior of a discrete model, as an ArviZ DataTree.

    Its groups:

    - ``posterior``: ``chains × draws`` draws placed at the quantiles of the
      exact joint (:mod:`adversary.inference.exact_draws`), one variable per
      latent named and shaped as in a sampled posterior (int64, dims
      ``chain``, ``draw`` and the latent's own). ``az.summary``'s ``mean``
      and ``sd`` of them are the exact posterior's to within the attributes
      ``draws_mean_error`` and ``draws_sd_error`` (of order
      ``1/(chains × draws)``; 0 up to rounding when every probability is a
      multiple of ``1/(chains × draws)``, but for the factor ``√(N/(N-1))``
      of ArviZ's ``ddof=1`` in ``sd``). ``az.ess`` reports about
      ``chains × draws`` (the draws are a fixed sample in a pseudo-random
      order, not a Markov chain), so the MCSE ArviZ prints beside a mean
      bounds the quantisation from above.
    - ``posterior_pmf``: the exact marginal pmfs (:meth:`posterior_pmf`).
    - ``joint``: the exact table, variable ``probability``, one dimension per
      latent scalar (named by the variable, ``"X1"``, or by element,
      ``"cells[2]"``), integer coordinates = the values enumerated; sums to 1.

    The root's ``attrs``, read through the properties below: ``method``
    (``"exact"``), ``omitted_mass``, ``log_normaliser``, ``truncated``,
    ``ranges`` and ``latents`` (JSON text, so the tree writes to netCDF),
    ``draws_mean_error`` and ``draws_sd_error``. Build one with
    :func:`enumerate_posterior` or :meth:`from_table`.
    """

    __slots__ = ()

    @classmethod
    def from_table(
        cls,
        joint: xr.DataArray,
        *,
        log_normaliser: float,
        omitted_mass: float,
        ranges: Mapping,
        truncated=(),
        latents: Mapping | None = None,
        draws: int = DRAWS,
        chains: int = CHAINS,
    ) -> Enumeration:
        """The tree of an exact table (``latents``: default one scalar latent per dimension)."""
        if latents is None:
            latents = {label: ((label,), ()) for label in joint.dims}
        latents = {name: (tuple(labels), tuple(dims)) for name, (labels, dims) in latents.items()}
        joint = joint.rename("probability")
        marginals = _marginals(joint)
        posterior, mean_error, sd_error = representative_draws(
            joint, marginals, latents, draws, chains
        )
        attrs = {
            "method": "exact",
            "omitted_mass": float(omitted_mass),
            "log_normaliser": float(log_normaliser),
            "truncated": list(truncated),
            "ranges": json.dumps({k: [int(lo), int(hi)] for k, (lo, hi) in ranges.items()}),
            "latents": json.dumps({k: [list(v[0]), list(v[1])] for k, v in latents.items()}),
            "draws_mean_error": mean_error,
            "draws_sd_error": sd_error,
        }
        children = {
            "posterior": DataTree(posterior),
            "posterior_pmf": DataTree(_posterior_pmf(marginals, latents)),
            "joint": DataTree(joint.to_dataset()),
        }
        return cls(dataset=xr.Dataset(attrs=attrs), children=children)

    @property
    def joint(self) -> xr.DataArray:
        """The exact table (the ``joint`` group's ``probability``)."""
        return self["joint"]["probability"]

    @property
    def log_normaliser(self) -> float:
        """``log Σ exp(logp)`` over the table (the log marginal likelihood if priors are proper)."""
        return float(self.attrs["log_normaliser"])

    @property
    def omitted_mass(self) -> float:
        """Estimated posterior mass outside the table (0 when every support is finite)."""
        return float(self.attrs["omitted_mass"])

    @property
    def truncated(self) -> tuple:
        """Labels of the latents whose range was cut (by the caller or automatically)."""
        return tuple(str(label) for label in np.atleast_1d(self.attrs["truncated"]))

    @property
    def ranges(self) -> dict:
        """``label -> (lowest, highest)`` value enumerated for each latent scalar."""
        return {k: tuple(v) for k, v in json.loads(self.attrs["ranges"]).items()}

    @property
    def latents(self) -> dict:
        """``variable name -> (element labels, dims)``; a scalar maps to ``((name,), ())``."""
        return {k: (tuple(v[0]), tuple(v[1])) for k, v in json.loads(self.attrs["latents"]).items()}

    def marginal(self, label: str) -> xr.DataArray:
        """Marginal posterior pmf of one latent scalar (a DataArray over its values)."""
        joint = self.joint
        if label not in joint.dims:
            raise KeyError(f"var: {label!r} is not a latent in this table; have {list(joint.dims)}")
        others = [d for d in joint.dims if d != label]
        return joint.sum(others, skipna=False).rename("probability")

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
        return self["posterior_pmf"].to_dataset()


def as_exact(result) -> Enumeration | None:
    """``result`` as an :class:`Enumeration` if it is an exact tree (also one read from a file)."""
    if isinstance(result, Enumeration):
        return result
    if (
        isinstance(result, DataTree)
        and result.attrs.get("method") == "exact"
        and "joint" in result.children
    ):
        return Enumeration(dataset=result.to_dataset(inherit=False), children=result.children)
    return None


def _marginals(joint: xr.DataArray) -> dict[str, xr.DataArray]:
    """Every dimension's marginal of the table (numpy sums: the table holds no NaN)."""
    values = np.asarray(joint.values)
    axes = range(joint.ndim)
    return {
        label: xr.DataArray(
            values.sum(axis=tuple(i for i in axes if i != k)),
            dims=[label],
            coords={label: joint[label].values},
            name="probability",
        )
        for k, label in enumerate(joint.dims)
    }


def _posterior_pmf(marginals: Mapping, latents: Mapping) -> xr.Dataset:
    arrays = {}
    for name, (labels, dims) in latents.items():
        if not all(label in marginals for label in labels):
            continue
        pmfs = [marginals[label].rename({label: "value"}) for label in labels]
        pmfs = xr.align(*pmfs, join="outer", fill_value=0.0)
        values = pmfs[0]["value"].values
        stacked = np.stack([pmf.values for pmf in pmfs])
        arrays[name] = xr.DataArray(
            stacked.reshape(*element_shape(labels, dims), values.size),
            dims=(*dims, "value"),
            coords={"value": values},
        )
    return xr.Dataset(arrays).fillna(0.0)


def enumerate_posterior(
    model=None,
    *,
    vars=None,
    truncation: Mapping | None = None,
    tail_mass: float = 1e-12,
    max_cells: int = 20_000_000,
    draws: int = DRAWS,
    chains: int = CHAINS,
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
    draws, chains : int
        The shape of the ``posterior`` group ArviZ reads (default 4 × 2500):
        the exact joint's ``chains × draws`` quantiles; more draws, a finer
        quantisation of what ``az.summary`` and ``az.plot_dist`` show (the
        exact pmfs beside them do not change).

    Returns
    -------
    Enumeration
        An ArviZ DataTree (groups ``posterior``, ``posterior_pmf``, ``joint``)
        with ``joint`` (labelled DataArray), marginals, ``omitted_mass``,
        ``ranges`` as properties.
    """
    model = modelcontext(model)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    if isinstance(max_cells, bool) or not isinstance(max_cells, int | np.integer) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {max_cells!r}")
    if truncation is not None and not isinstance(truncation, Mapping):
        raise TypeError(
            f"truncation must be a mapping {{name: (lowest, highest)}}, got {truncation!r}"
        )
    check_shape(draws, chains)
    if not model.free_RVs:
        raise ValueError("model: has no free (latent) variables to enumerate")
    grid = LatentGrid(model, compile_kwargs=compile_kwargs)
    start = model.initial_point()
    if any(None in support_bounds(rv) for rv in model.free_RVs):
        # Automatic windows start around a feasible point.
        start, _ = repair_start(model, start, compile_kwargs=compile_kwargs)
    latents = {
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
    return Enumeration.from_table(
        joint,
        log_normaliser=float(result.log_normaliser[0]),
        omitted_mass=float(result.omitted[0]),
        ranges={label: result.ranges[label] for label in grid.all_labels},
        truncated=tuple(sorted({label for label, _ in result.tails})),
        latents=latents,
        draws=draws,
        chains=chains,
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
