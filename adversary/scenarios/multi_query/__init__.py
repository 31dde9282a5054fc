"""Attacks that see the target's record through every query that holds it.

The 2020 release measures a person's cell in ten PL 94-171 queries at each of
six levels, each with its own ρ (:mod:`adversary.budget`). Kazan & Reiter's
attacks use one of them, the detailed count. An adversary who knows everyone
else subtracts the others from every count that holds the target and gets one
noisy look per query and level; :class:`MultiQueryCase` combines them all in
the exact likelihood (a sum of the mechanisms' log-pmfs,
:mod:`.likelihood`) and gives the data holder's measures (:mod:`.measures`).

- :mod:`.looks` — which counts are looks at the target (:func:`target_looks`);
- :mod:`.likelihood` — the likelihood of the target's cell and the posterior
  of the answer;
- :mod:`.measures` — (3.3), (3.4), (3.6) exact over the release grid or by
  Monte Carlo with standard errors;
- :mod:`.case` — :class:`MultiQueryCase`, the attack protocol's case.
"""

from __future__ import annotations

from .case import CELL, MultiQueryCase, cell_prior
from .looks import QUERY_SETS, TargetLooks, query_names, target_looks
from .measures import look_measures

__all__ = [
    "CELL",
    "QUERY_SETS",
    "MultiQueryCase",
    "TargetLooks",
    "cell_prior",
    "look_measures",
    "query_names",
    "target_looks",
]
