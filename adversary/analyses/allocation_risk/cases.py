"""Each attack's case at the ρ values of a budget allocation.

Kazan & Reiter's (2023) attacks, as the package's shipped cases
(:mod:`adversary.models`), with every ρ read from one
:class:`~adversary.budget.BudgetAllocation` (``allocation.rho(level, query)``)
and the noise ``convention`` named, the adversary's prior of the target's
cell being ``p``:

``single_block``
    Sec. 3.1 (:mod:`adversary.models.dare_county`): the block's detailed ρ.
``block_group``
    Sec. 3.2 / 4.3 (:mod:`adversary.models.granville_county`): the block's
    and the block group's detailed ρ (ρ1, ρ2).
``many_levels``
    Supplement S1.3 (:mod:`adversary.models.unique_many_levels`): the detailed
    ρ at the six levels, block first.
``every_query``
    Sec. 4.2 seen through every PL 94-171 query at the block
    (:mod:`adversary.models.every_query`): each query's block ρ.
``unknown_attribute``
    (:mod:`adversary.models.unknown_ethnicity`): the block's detailed ρ, the
    prior ``p`` on the true category.
``published_tables``
    (:mod:`adversary.models.published_tables`): the block's and the block
    group's detailed ρ, TopDown's tables published.

The reconstruction attack has no prior ``p``; its cases (one block of each
size) are :func:`reconstruction_case`.

The templates (every field that does not depend on ρ: releases, truth,
counts, the classification's incidence) are built once per process and
copied with the ρ fields replaced (``replace``), so an allocation costs only
the measures.
"""

from __future__ import annotations

import functools

from ...budget import BudgetAllocation, as_allocation
from ...scenarios.budgeted import with_budget
from ...scenarios.multi_query import cell_prior
from ...scenarios.reconstruction import REDUCED, ReconstructionCase, pl94_block

__all__ = ["ATTACKS", "PRIOR_ATTACKS", "as_budget", "attack_case", "reconstruction_case"]

#: The attacks with a prior ``p`` of the target's cell (dimension ``attack``).
PRIOR_ATTACKS = (
    "single_block",
    "block_group",
    "many_levels",
    "every_query",
    "unknown_attribute",
    "published_tables",
)
#: Every attack :func:`~.evaluate.allocation_risk` evaluates.
ATTACKS = (*PRIOR_ATTACKS, "reconstruction")


def as_budget(allocation) -> BudgetAllocation:
    """``allocation`` as a :class:`BudgetAllocation`: itself, the preset or the budget file it
    names (:func:`adversary.budget.as_allocation`)."""
    return as_allocation(allocation, "allocation")


@functools.cache
def _template(attack: str):
    """The shipped case of ``attack`` (imported on first use: the models are cases, not code)."""
    module = {
        "single_block": "dare_county",
        "block_group": "granville_county",
        "many_levels": "unique_many_levels",
        "every_query": "every_query",
        "unknown_attribute": "unknown_ethnicity",
        "published_tables": "published_tables",
    }[attack]
    return __import__(f"adversary.models.{module}", fromlist=["CASE"]).CASE


def _priors(attack: str, priors: tuple[float, ...]) -> dict:
    labels = {f"{p!r}": p for p in priors}
    if attack == "every_query":
        truth = _template(attack).truth
        cells = REDUCED.levels()[truth]
        target = dict(zip(REDUCED.names, (int(v) for v in cells), strict=True))
        return {label: cell_prior(target, p) for label, p in labels.items()}
    if attack == "unknown_attribute":
        true, other = _template(attack).categories
        return {label: {true: p, other: 1.0 - p} for label, p in labels.items()}
    return labels


def attack_case(attack: str, allocation: BudgetAllocation, priors, convention: str = "das"):
    """The case of ``attack`` (one of :data:`PRIOR_ATTACKS`) at ``allocation``'s ρ.

    ``priors`` are the target's prior probabilities ``p``; the case's prior
    labels are their ``repr`` (``"0.5"``).
    """
    if attack not in PRIOR_ATTACKS:
        raise ValueError(f"attack must be one of {', '.join(PRIOR_ATTACKS)}, got {attack!r}")
    common = {"priors": _priors(attack, tuple(priors)), "convention": convention}
    # the ρ of each count from the allocation, as --budget sets a case's (scenarios.budgeted)
    return with_budget(_template(attack), as_budget(allocation), "allocation").replace(**common)


@functools.cache
def _block(n: int) -> ReconstructionCase:
    """A block of ``n`` persons of the shipped reconstruction case's prior, truth drawn once."""
    prior = __import__("adversary.models.reconstruction_block", fromlist=["PRIOR"]).PRIOR
    return pl94_block(f"A block of {n}", REDUCED, n=n, prior=prior, seed=2020)


def reconstruction_case(
    n: int, allocation: BudgetAllocation, convention: str = "das"
) -> ReconstructionCase:
    """A block of ``n`` persons (the 56-cell classification, the prior of
    :mod:`adversary.models.reconstruction_block`, truth drawn with seed 2020)
    released as the ten PL 94-171 tables at ``allocation``'s block ρ of each
    query (a query with ρ = 0 at the block is not released)."""
    allocation = as_budget(allocation)
    block = _block(n)
    kept = [
        (cells, allocation.rho("block", label.partition("[")[0]), label)
        for cells, label in zip(block.queries, block.query_labels, strict=True)
    ]
    kept = [row for row in kept if row[1] > 0]
    if not kept:
        raise ValueError(f"allocation: {allocation.name!r} releases no query at the block")
    queries, rhos, labels = zip(*kept, strict=True)
    return block.replace(
        queries=queries, rhos=rhos, query_labels=labels, convention=convention, releases=None
    )
