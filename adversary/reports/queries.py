"""The risks of the paper's attacks when the adversary uses every query, not only the detailed one.

Kazan & Reiter's attacks see the target through the detailed (GVHR) count.
The 2020 release measures the same record in every PL 94-171 query at every
level (:mod:`adversary.scenarios.multi_query`). :func:`query_table` compares,
at the 2020 budget (preset ``pl94-2020-persons``) and under both noise
conventions, the data holder's measures of

- ``single block``: Dare County's target (household, voting age, not
  Hispanic, Black; Sec. 4.2), unique in their block: the adversary's prior
  ``p`` that the target is in that cell, the rest spread evenly over the 55
  other cells of the reduced classification (:data:`REDUCED`);
- ``every level``: the same target unique at all six levels (S1.3);
- ``unknown ethnicity``: the target's Hispanic origin (truly Hispanic) when
  the adversary knows their other attributes, prior ``P[Hispanic] = 0.19``;

each with the detailed query only and with all ten queries. Detailed-only
values are exact (the release grid); the others are Monte Carlo over
``replications`` release sets with their standard errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..budget import get_preset
from ..paper_setting import PRIORS
from ..scenarios.multi_query import MultiQueryCase, cell_prior
from ..scenarios.reconstruction import REDUCED

__all__ = ["DARE_TARGET", "query_table"]

#: Dare County's target on the reduced classification: household, voting age, not Hispanic, Black.
DARE_TARGET = {"hhgq": 0, "voting_age": 1, "hispanic": 0, "race": 1}
#: Prior of Hispanic origin for the unknown-ethnicity attack (the 2020 US share, 18.7 %).
HISPANIC_SHARE = 0.19


def _attacks(priors: dict) -> list[tuple[str, MultiQueryCase]]:
    cell_priors = {label: cell_prior(DARE_TARGET, p) for label, p in priors.items()}
    # the attribute question conditions on the target's other attributes: only Hispanic's counts
    even = {name: np.full(size, 1.0 / size) for name, size in REDUCED.attributes}
    hispanic = {f"{HISPANIC_SHARE}": {**even, "hispanic": [1 - HISPANIC_SHARE, HISPANIC_SHARE]}}
    return [
        ("single block", MultiQueryCase("single block", cell_priors, truth=DARE_TARGET)),
        (
            "every level",
            MultiQueryCase(
                "every level", cell_priors, truth=DARE_TARGET, levels=get_preset().levels
            ),
        ),
        (
            "unknown ethnicity",
            MultiQueryCase(
                "unknown ethnicity",
                hispanic,
                truth={**DARE_TARGET, "hispanic": 1},
                question="hispanic",
            ),
        ),
    ]


def query_table(
    priors: dict | None = None,
    conventions=("paper", "das"),
    replications: int = 20_000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per attack, prior, convention and query set (``"detailed"``, ``"all"``).

    Columns: the three measures, the number of looks, the method and each
    measure's standard error (``se_posterior``, ``se_risk``, ``se_correct``;
    0 for exact rows, whose error is at most ``error_bound``). ``priors``:
    ``{label: p}`` for the two cell attacks (default the paper's five).
    """
    rows = []
    for attack, case in _attacks(PRIORS if priors is None else priors):
        for convention in conventions:
            for queries in ("detailed", "all"):
                variant = case.replace(
                    convention=convention,
                    queries=queries,
                    replications=replications,
                    seed=seed,
                )
                for label in variant.priors:
                    measures = variant.marginal_measures(label)
                    errors = measures.details.get("standard_errors", {})
                    rows.append(
                        {
                            "attack": attack,
                            "prior": label,
                            "convention": convention,
                            "queries": queries,
                            "looks": len(variant.looks().labels),
                            "marginal_posterior": measures.marginal_posterior,
                            "marginal_risk": measures.marginal_risk,
                            "correct_decision_probability": measures.correct_decision_probability,
                            "se_posterior": errors.get("marginal_posterior", 0.0),
                            "se_risk": errors.get("marginal_risk", 0.0),
                            "se_correct": errors.get("correct_decision_probability", 0.0),
                            "method": measures.method,
                            "error_bound": measures.error_bound,
                        }
                    )
    return pd.DataFrame(rows)
