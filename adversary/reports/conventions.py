"""The paper's headline risks under its noise convention and under the 2020 DAS's, side by side.

Kazan & Reiter (2023) turn a zCDP parameter ρ into discrete Gaussian noise
with ``σ² = 1/(2ρ)``: neighbours add or remove one record, a count moves by
1, sensitivity 1. The 2020 Disclosure Avoidance System in production uses
neighbours that *replace* one record: the record leaves one cell and enters
another, so the histogram moves by 1 in two cells, L2 sensitivity √2, and
the DAS sets ``σ² = Δ²/(2ρ) = 1/ρ`` for the ρ a query is given
(:mod:`adversary.noise.conventions`). The ρ of each query is the same under
both readings (the preset's, e.g. ≈ 0.0992 for the block-level detailed query);
what differs is the noise it buys: twice the variance in production, the
paper's noise for ``ρ/2``.

:func:`convention_table` evaluates every headline risk of the paper under both
conventions, at the same ρ (scenario key: where the paper has it; quantities):

- ``single_block``: Sec. 4.2, Table 5 (Dare County ED 28-21); the marginal
  posterior (3.3), marginal risk (3.4) and probability of a correct decision
  (3.6) for the five priors p.
- ``block_group``: Sec. 4.3 and S4 (Granville County ED 39-14, p = 1/2); the
  probability of a correct decision under ``X2 | X1 ~ Uniform{k1, k1+1, …}``
  and under ``Uniform{k1, …, 10}``.
- ``multi_level``: S1.3, a target unique at ℓ = 6 levels; the marginal risk.
- ``post_processing``: S6, the post-processed block count at x̃2 = 10; the
  marginal risk.
- ``sequential``: S5, two releases of the Dare County count; the marginal
  total risk (the expectation of (S5.8)).
- ``unknown_attribute``: S1.2's third attack (``models/unknown_ethnicity.py``,
  illustrative); the marginal risk and the probability of a correct decision.

Each row is the shipped case (:func:`adversary.model_files.load_case`) with
its ρ taken from the budget ``preset`` (default: ρ = 2.56 as published, which
the shipped cases use) and ``convention`` set to ``"paper"`` or ``"das"``
(:func:`headline_cases`); S5 is two releases of the Dare County count at the
block ρ each (:func:`adversary.analyses.sequential.marginals`). Every value is
computed exactly, within the error bound its scenario states (at most
``tail_mass``, plus the grid term of the S1.3 and unknown-attribute sums,
about 5e-10 at the default ``grid_width``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..analyses import sequential
from ..budget import DEFAULT_PRESET, BudgetAllocation, as_allocation
from ..measures.releases import DEFAULT_TAIL_MASS
from ..model_files import load_case
from ..scenarios.block_group.prior import bounded_uniform, improper_uniform
from ..scenarios.multi_level import DEFAULT_GRID_WIDTH, rhos_2020

__all__ = ["CONVENTIONS", "SCENARIOS", "Headline", "convention_table", "headline_cases"]

#: The two conventions compared, in column order.
CONVENTIONS = ("paper", "das")

#: Scenario keys of :func:`convention_table`, in the paper's order.
SCENARIOS = (
    "single_block",
    "block_group",
    "multi_level",
    "post_processing",
    "sequential",
    "unknown_attribute",
)

_COLUMNS = (
    "scenario",
    "location",
    "quantity",
    "prior",
    "paper_convention",
    "das_convention",
    "ratio",
)


@dataclass(frozen=True)
class Headline:
    """One scenario's headline numbers: where the paper has them and how to compute them.

    ``compute(convention)`` returns ``{(quantity, prior label): value}`` under
    that convention.
    """

    scenario: str
    location: str
    compute: Callable[[str], dict[tuple[str, str], float]]


def headline_cases(preset: str | BudgetAllocation = DEFAULT_PRESET) -> dict:
    """The shipped cases behind the headline numbers, with every ρ from ``preset``.

    Keys: ``"single_block"`` (``dare_county``), ``"block_group"``
    (``granville_county``), ``"multi_level"`` (``unique_many_levels``: ρ of
    the detailed query at the six levels), ``"post_processing"``
    (``post_processed``) and ``"unknown_attribute"`` (``unknown_ethnicity``).
    The block counts get the preset's block-level detailed (GVHR) ρ, the block
    group its optimized-block-group ρ — as in the model files, which read
    them from ``pl94-2020-persons``. The convention is each file's own
    (``"paper"``); set it with :func:`dataclasses.replace`.
    """
    allocation = as_allocation(preset, "preset")
    block = float(allocation.rho("block", "detailed"))
    group = float(allocation.rho("block_group", "detailed"))
    levels = load_case("unique_many_levels")
    return {
        "single_block": replace(load_case("dare_county"), rho=block),
        "block_group": replace(load_case("granville_county"), rho1=block, rho2=group),
        "multi_level": replace(
            levels,
            rhos=tuple(float(r) for r in rhos_2020(len(levels.rhos), preset=preset)),
        ),
        "post_processing": replace(load_case("post_processed"), rho=block),
        "unknown_attribute": replace(load_case("unknown_ethnicity"), rho=block),
    }


def _measures(case, quantities, **options) -> dict[tuple[str, str], float]:
    """``{(quantity, prior label): value}`` from ``case.marginal_measures`` for every prior."""
    measures = {label: case.marginal_measures(label, **options) for label in case.priors}
    return {
        (quantity, label): float(getattr(measures[label], quantity))
        for quantity in quantities
        for label in case.priors
    }


def _headlines(
    preset: str | BudgetAllocation, tail_mass: float, grid_width: float
) -> tuple[Headline, ...]:
    cases = headline_cases(preset)
    single = cases["single_block"]
    group = cases["block_group"]
    x2_priors = {
        "X2 | X1 ~ Uniform{k1, k1+1, …}": improper_uniform(),
        "X2 | X1 ~ Uniform{k1, …, 10}": bounded_uniform(10),
    }
    gridded = {"tail_mass": tail_mass, "grid_width": grid_width}

    def single_block(convention):
        return _measures(
            replace(single, convention=convention),
            ("marginal_posterior", "marginal_risk", "correct_decision_probability"),
            tail_mass=tail_mass,
        )

    def block_group(convention):
        values = {}
        for name, x2_prior in x2_priors.items():
            case = replace(group, convention=convention, x2_prior=x2_prior)
            for label in case.priors:
                measures = case.marginal_measures(label, tail_mass=tail_mass)
                key = ("correct_decision_probability", f"{label}, {name}")
                values[key] = float(measures.correct_decision_probability)
        return values

    def multi_level(convention):
        case = replace(cases["multi_level"], convention=convention)
        return _measures(case, ("marginal_risk",), **gridded)

    def post_processing(convention):
        case = replace(cases["post_processing"], convention=convention)
        return _measures(case, ("marginal_risk",), tail_mass=tail_mass)

    def two_releases(convention):
        result = sequential.marginals(
            single.prior_values,
            [single.rho, single.rho],
            single.known_count,
            single.true_count,
            convention,
            **gridded,
        )
        risk = np.broadcast_to(result.marginal_risk, single.prior_values.shape)
        return {
            ("marginal_risk", label): float(value)
            for label, value in zip(single.priors, risk, strict=True)
        }

    def unknown_attribute(convention):
        case = replace(cases["unknown_attribute"], convention=convention)
        return _measures(case, ("marginal_risk", "correct_decision_probability"), **gridded)

    x2_tilde = cases["post_processing"].x2_tilde
    levels = cases["multi_level"].n_levels
    return (
        Headline("single_block", "Sec. 4.2, Table 5 (Dare County ED 28-21)", single_block),
        Headline("block_group", "Sec. 4.3 and S4 (Granville County ED 39-14)", block_group),
        Headline("multi_level", f"S1.3, unique at ℓ = {levels} levels", multi_level),
        Headline("post_processing", f"S6, post-processed, x̃2 = {x2_tilde}", post_processing),
        Headline("sequential", "S5, two releases of the block count", two_releases),
        Headline("unknown_attribute", "S1.2, unknown ethnicity (illustrative)", unknown_attribute),
    )


def convention_table(
    preset: str | BudgetAllocation = DEFAULT_PRESET,
    *,
    scenarios=None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    grid_width: float = DEFAULT_GRID_WIDTH,
) -> pd.DataFrame:
    """Every headline risk of the paper under the paper's and the 2020 DAS convention.

    One row per (scenario, quantity, prior), in the paper's order, with columns
    ``scenario`` (a key of :data:`SCENARIOS`), ``location`` (where the paper
    has it), ``quantity`` (``marginal_posterior`` (3.3), ``marginal_risk``
    (3.4), or ``correct_decision_probability`` (3.6)), ``prior`` (the prior's
    label; for the block group also the prior of ``X2 | X1``),
    ``paper_convention`` (``σ² = 1/(2ρ)``), ``das_convention`` (``σ² = 1/ρ``)
    and ``ratio`` (DAS over paper; NaN where the paper's value is 0). Both
    columns use the same ρ, from ``preset``
    (:func:`headline_cases`), so the ratio is the effect of the convention
    alone.

    ``scenarios`` selects some of :data:`SCENARIOS` (default all);
    ``tail_mass`` and ``grid_width`` are passed to the scenarios' marginal
    measures (a coarser grid, e.g. 1e-3, makes S1.3, S5 and the unknown
    attribute about ten times faster with error bounds about ten times larger).
    """
    headlines = _headlines(preset, tail_mass, grid_width)
    if scenarios is None:
        chosen = headlines
    else:
        wanted = [scenarios] if isinstance(scenarios, str) else list(scenarios)
        unknown = [s for s in wanted if s not in SCENARIOS]
        if unknown or not wanted:
            raise ValueError(
                f"scenarios must name some of {', '.join(SCENARIOS)}; got {scenarios!r}"
            )
        chosen = [h for h in headlines if h.scenario in wanted]
    records = []
    for headline in chosen:
        values = {convention: headline.compute(convention) for convention in CONVENTIONS}
        for (quantity, prior), paper in values["paper"].items():
            das = values["das"][(quantity, prior)]
            records.append(
                {
                    "scenario": headline.scenario,
                    "location": headline.location,
                    "quantity": quantity,
                    "prior": prior,
                    "paper_convention": paper,
                    "das_convention": das,
                    "ratio": das / paper if paper > 0 else np.nan,
                }
            )
    return pd.DataFrame.from_records(records, columns=list(_COLUMNS))
