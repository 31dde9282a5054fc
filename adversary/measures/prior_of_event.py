"""The prior probability of the event, the denominator of the marginal risk (3.4).

Computed from the prior of the event's variables, their ancestors and any
Potential that ties them to others (a mapping event names its variables; a
callable event is taken to involve every latent). Variables declared after
them do not enter: their conditional priors sum to one, and an improper one
such as ``Uniform{k1, k1+1, …}`` (S4.1) counts as the same constant for every
``k1`` — so the block-group prior of ``X1 = m + 1`` is ``p``, as in the paper.

When those variables are all discrete their prior is enumerated exactly on a
:class:`~adversary.inference.grid.LatentGrid`. When some are continuous (a
Dirichlet hyperprior over a category's probabilities, say) the probability is
estimated from draws of the prior, with its standard error reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pymc as pm
from pytensor.graph.traversal import ancestors

from ..inference.grid import LatentGrid
from .attack_model import event_on_cells, event_variables, is_discrete
from .structure import kwargs_key, memoized, values_key

__all__ = ["PRIOR_DRAWS", "prior_of_event"]

#: Draws of the prior when the event's prior cannot be enumerated.
PRIOR_DRAWS = 200_000


def _closure(model, names: set[str] | None) -> list:
    """Free RVs whose prior determines the event's: ancestors and Potential-coupled latents."""
    free = list(model.free_RVs)
    if names is None:
        return free
    chosen = {rv for rv in free if rv.name in names}
    while True:
        grown = set(chosen)
        for rv in chosen:
            grown |= {a for a in ancestors([rv]) if a in free}
        for potential in model.potentials:
            involved = {a for a in ancestors([potential]) if a in free}
            if involved & grown:
                grown |= involved
        if grown == chosen:
            return [rv for rv in free if rv in chosen]
        chosen = grown


def prior_of_event(
    model, truth, event, *, tail_mass, max_cells, compile_kwargs=None, random_seed=None
) -> dict:
    """``P[event]`` under the prior: ``{"prior_of_truth", "standard_error", "variables", …}``.

    Exact (``standard_error`` 0, ``omitted_mass`` the enumeration's) when the
    event's variables are discrete; else the frequency of the event in
    :data:`PRIOR_DRAWS` draws of the prior (``method`` says which). A
    Potential on latents makes the prior unnormalised for draws, so a model
    with one and continuous event variables is refused.
    """
    rvs = _closure(model, event_variables(event))
    names = [rv.name for rv in rvs]
    if all(is_discrete(rv) for rv in rvs):
        return _enumerated(model, rvs, truth, event, tail_mass, max_cells, compile_kwargs) | {
            "variables": names
        }
    if model.potentials:
        raise ValueError(
            f"prior_of_truth: the event's prior involves continuous variables {names} and the "
            "model has Potentials, which draws of the prior ignore; give prior_of_truth= instead"
        )
    draws = pm.draw(rvs, draws=PRIOR_DRAWS, random_seed=random_seed)
    values = {rv.name: np.asarray(d) for rv, d in zip(rvs, draws, strict=True)}
    held = event_on_cells(model, event)(values)
    share = float(held.mean())
    return {
        "prior_of_truth": share,
        "standard_error": math.sqrt(max(share * (1.0 - share), 0.25 / PRIOR_DRAWS) / PRIOR_DRAWS),
        "variables": names,
        "omitted_mass": 0.0,
        "method": "draws",
        "draws": PRIOR_DRAWS,
    }


def _prior_grid(model, rvs, compile_kwargs) -> LatentGrid:
    """The latent grid of the prior of ``rvs`` (and the Potentials among them only)."""
    potentials = [
        p
        for p in model.potentials
        if {a for a in ancestors([p]) if a in model.free_RVs} <= set(rvs)
    ]
    logp = model.logp(vars=[*rvs, *potentials])
    return LatentGrid(model, logp, (), compile_kwargs, latents=rvs)


def _enumerated(model, rvs, truth, event, tail_mass, max_cells, compile_kwargs) -> dict:
    """The exact prior of the event; kept with a structure's model for a mapping event, by the
    values the prior grid reads (a scan over ρ meets the same prior again)."""
    try:
        grid = memoized(
            model,
            ("prior_grid", tuple(rv.name for rv in rvs), kwargs_key(compile_kwargs)),
            lambda: _prior_grid(model, rvs, compile_kwargs),
        )
        if not isinstance(event, Mapping):
            return _summed(model, grid, truth, event, tail_mass, max_cells)
        key = (
            "prior_of_event",
            tuple(rv.name for rv in rvs),
            values_key(truth),
            repr(sorted(event.items())),
            tail_mass,
            max_cells,
            grid.state(),
        )
        return dict(
            memoized(model, key, lambda: _summed(model, grid, truth, event, tail_mass, max_cells))
        )
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"prior_of_truth: cannot enumerate the prior of the event over "
            f"{[rv.name for rv in rvs]} ({error}); give prior_of_truth= instead"
        ) from error


def _summed(model, grid, truth, event, tail_mass, max_cells) -> dict:
    result = grid.run(
        [],
        1,
        centre=truth,
        event=event_on_cells(model, event),
        tail_mass=tail_mass,
        max_cells=max_cells,
        impossible="the truth has prior probability 0",
    )
    return {
        "prior_of_truth": float(result.event[0]),
        "standard_error": 0.0,
        "omitted_mass": float(result.omitted[0]),
        "method": "exact",
    }
