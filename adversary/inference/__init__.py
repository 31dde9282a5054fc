"""Inference (layer 3): exact Gibbs sampling, exact enumeration, shared summaries.

- :func:`sample` — PyMC's sampler with :class:`MetropolisedGibbs` (bounded supports:
  the exact conditional, Liu's Metropolised draw) / :class:`WindowGibbs` (exact draws
  from each unbounded variable's full conditional) and
  :class:`TransferGibbs` (count vectors with a known total) assigned to every
  discrete variable, a checked and repaired start, ArviZ's DataTree out;
  :class:`BlockGibbs` updates a small group jointly when asked for.
- :func:`enumerate_posterior` — the exact posterior of an all-discrete model: an
  :class:`Enumeration`, an ArviZ DataTree like :func:`sample`'s (its ``posterior``
  group: the exact joint's quantiles as draws, for ``az.summary``, ``az.ess`` and
  ``az.plot_dist``) with the exact pmfs and the labelled probability table beside it.
- :func:`posterior_probability`, :func:`marginal_pmf`, :func:`posterior_pmf`,
  :func:`event_indicator` — the same summaries from either result (exact from the table).
"""

from .enumeration import Enumeration, enumerate_posterior
from .metropolised import MetropolisedGibbs
from .moves import BlockGibbs, TransferGibbs
from .sampling import assign_steps, sample
from .start import is_feasible, repair_start
from .steps import BoundedGibbs, WindowGibbs
from .summaries import event_indicator, marginal_pmf, posterior_pmf, posterior_probability

__all__ = [
    "BlockGibbs",
    "BoundedGibbs",
    "Enumeration",
    "MetropolisedGibbs",
    "TransferGibbs",
    "WindowGibbs",
    "assign_steps",
    "enumerate_posterior",
    "event_indicator",
    "is_feasible",
    "marginal_pmf",
    "posterior_pmf",
    "posterior_probability",
    "repair_start",
    "sample",
]
