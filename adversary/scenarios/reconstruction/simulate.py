"""Blocks drawn from the adversary's own model: a true histogram, and its noisy tables."""

from __future__ import annotations

import numpy as np

from ...budget import BudgetAllocation
from .case import ReconstructionCase
from .classification import Classification, pl94_queries

__all__ = ["drawn_releases", "drawn_truth", "pl94_block", "simulated"]


def drawn_truth(case: ReconstructionCase, rng) -> tuple[int, ...]:
    """A histogram of ``n`` persons drawn from the prior (multinomial or Dirichlet-multinomial)."""
    rng = np.random.default_rng(rng)
    p = np.array(case.prior)
    if case.concentration is not None:
        p = rng.dirichlet(np.where(p > 0, case.concentration * p, 1e-300)) * (p > 0)
        p = p / p.sum()
    return tuple(int(x) for x in rng.multinomial(case.n, p))


def drawn_releases(case: ReconstructionCase, truth, rng) -> tuple[int, ...]:
    """The released counts of ``truth``: each query's sum plus a draw of its noise."""
    rng = np.random.default_rng(rng)
    counts = case.incidence() @ np.asarray(truth, dtype=np.int64)
    noise = [int(m.sample(rng=rng)) for m in case.noise()]
    return tuple(int(c + z) for c, z in zip(counts, noise, strict=True))


def simulated(case: ReconstructionCase, seed) -> ReconstructionCase:
    """``case`` with a truth drawn from its prior and releases drawn from that truth."""
    rng = np.random.default_rng(seed)
    truth = drawn_truth(case, rng)
    return case.replace(truth=truth, releases=drawn_releases(case, truth, rng))


def pl94_block(
    name: str,
    classification: Classification,
    n: int,
    prior,
    *,
    seed,
    description: str = "",
    budget: str | BudgetAllocation = "pl94-2020-persons",
    convention: str = "paper",
) -> ReconstructionCase:
    """A block of ``n`` persons on ``classification``, released as the ten PL 94-171 tables.

    Each table's counts get the block-level ρ of its query in ``budget``
    (:func:`~.classification.pl94_queries`) in ``convention``; the truth and
    the releases are drawn from the model with ``seed`` (:func:`simulated`).
    """
    queries, rhos, labels = pl94_queries(classification, budget=budget)
    case = ReconstructionCase(
        name=name,
        description=description,
        n=n,
        cells=classification.cell_labels(),
        prior=prior,
        queries=queries,
        rhos=rhos,
        query_labels=labels,
        convention=convention,
    )
    return simulated(case, seed)
