"""Each attack's marginal risk and correct-decision probability for a parameter tuple.

A record's measures depend only on a few numbers from the data (its *parameter
tuple*), so a population run computes each distinct tuple once and joins the
result to every record that has it. The functions here call the scenario
modules with exactly the arguments a record would give them, one prior at a
time, so the numbers are those of the single-scenario functions:

``single_block`` — :func:`adversary.scenarios.single_block.marginal_risk` and
    :func:`~adversary.scenarios.single_block.correct_decision_probability`
    with ρ of the block. Key: none (budget and prior only): by S1.1 the
    measures do not depend on the known count ``m`` (the truth is ``m + 1``).
``block_group`` — :func:`adversary.scenarios.block_group.releases.release_measures`
    for the truth ``(x1, x2) = (m + 1, x2)``, ``known_count = m``, ``d`` other
    blocks, ρ of the block and of the block group. Key ``(x2, m, d)``. Under
    the improper uniform prior of ``X2`` the measures depend on ``x2 - m`` and
    ``d`` only, and every truth of one ``d`` comes from one decision map per
    prior (:func:`adversary.scenarios.block_group.maps.measures_by_truth`,
    equal to the per-truth sums to rounding): :func:`block_group_by_d`. When the
    block is alone in its block group (``d = 0``), the group's count is the
    block's (``X2 = X1``) and the adversary sees two releases of one count: the
    two-level attack of :mod:`adversary.scenarios.multi_level` with known
    counts ``(m, m)``.
``multi_level`` — :func:`adversary.scenarios.multi_level.marginals` over the
    first ℓ levels block, block group, tract, county, state, each with its own
    ρ. Key ``ℓ``: the measures do not depend on the known counts ``m_i``
    (S1.1; they enter only through the truth ``m_1 + 1``).

Every function runs with BLAS limited to one thread: a matrix product's
rounding depends on how many threads share it, so this makes each number the
same in any process, on any cluster (to the last bit).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..scenarios import multi_level, single_block
from ..scenarios.block_group.maps import measures_by_truth
from ..scenarios.block_group.releases import release_measures
from .model import LEVELS, PopulationModel

__all__ = [
    "BLOCK_GROUP_KEY",
    "MEASURES",
    "block_group_by_d",
    "block_group_measures",
    "multi_level_measures",
    "single_block_measures",
]

#: Measure columns: marginal risk (3.4) and probability of a correct decision (3.6).
MEASURES = ("marginal_risk", "correct_decision_probability")

#: Key columns of the block-group attack.
BLOCK_GROUP_KEY = ("cell_block_group", "known_count", "other_blocks")


def _one_blas_thread(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return function(*args, **kwargs)

    return wrapper


def _rows(model: PopulationModel, budget: str, keys: dict, compute) -> list[dict]:
    out = []
    for label, p in model.priors.items():
        risk, decision = compute(float(p))
        out.append(
            {
                "budget": budget,
                "prior": label,
                **keys,
                "marginal_risk": float(risk),
                "correct_decision_probability": float(decision),
            }
        )
    return out


@_one_blas_thread
def single_block_measures(model: PopulationModel, budget: str) -> pd.DataFrame:
    """One row per prior: the single-block attack's measures under ``budget``."""
    rho = model.rhos(budget)["block"]
    args = {"known_count": 0, "convention": model.convention}

    def compute(p):
        return (
            single_block.marginal_risk(p, rho, tail_mass=model.tail_mass, **args),
            single_block.correct_decision_probability(p, rho, tie_rule=model.tie_rule, **args),
        )

    return pd.DataFrame(_rows(model, budget, {}, compute))


@_one_blas_thread
def multi_level_measures(model: PopulationModel, budget: str, levels: int) -> pd.DataFrame:
    """One row per prior: the ℓ-level attack's measures for ``levels`` = ℓ under ``budget``."""
    rhos = model.rhos(budget)
    used = np.array([rhos[level] for level in LEVELS[:levels]])

    def compute(p):
        result = multi_level.marginals(
            p, used, None, None, model.convention, model.tail_mass, tie_rule=model.tie_rule
        )
        return result.marginal_risk, result.correct_decision_probability

    return pd.DataFrame(_rows(model, budget, {"levels": int(levels)}, compute))


@_one_blas_thread
def block_group_measures(
    model: PopulationModel, budget: str, x2: int, known: int, d: int
) -> pd.DataFrame:
    """One row per prior: the block-group attack's measures for one ``(x2, m, d)``."""
    rhos = model.rhos(budget)
    rho1, rho2 = rhos["block"], rhos["block_group"]
    keys = {
        "cell_block_group": int(x2),
        "known_count": int(known),
        "other_blocks": int(d),
    }
    if d == 0:
        if x2 != known + 1:
            raise ValueError(
                f"cell_block_group: a block alone in its block group has x2 = x1, got x2 = {x2}"
                f" with x1 = {known + 1}"
            )

        def compute(p):
            result = multi_level.marginals(
                p,
                np.array([rho1, rho2]),
                np.array([known, known]),
                None,
                model.convention,
                model.tail_mass,
                tie_rule=model.tie_rule,
            )
            return result.marginal_risk, result.correct_decision_probability

    else:

        def compute(p):
            attrs = release_measures(
                (known + 1, x2),
                prior=p,
                rho1=rho1,
                rho2=rho2,
                d=d,
                x2_prior=model.x2_prior,
                known_count=known,
                convention=model.convention,
                sum_noise=model.sum_noise,
                tail_mass=model.tail_mass,
                tie_rule=model.tie_rule,
            )
            return attrs["marginal_risk"], attrs["correct_decision_probability"]

    return pd.DataFrame(_rows(model, budget, keys, compute))


@_one_blas_thread
def block_group_batch(model: PopulationModel, budget: str, keys: np.ndarray) -> pd.DataFrame:
    """:func:`block_group_measures` for each row ``(x2, m, d)`` of ``keys``."""
    frames = [block_group_measures(model, budget, int(a), int(b), int(c)) for a, b, c in keys]
    return pd.concat(frames, ignore_index=True)


@_one_blas_thread
def block_group_by_d(model: PopulationModel, budget: str, d: int, keys: np.ndarray) -> pd.DataFrame:
    """:func:`block_group_measures` for the rows ``(x2, m)`` of ``keys``, all with ``d > 0``.

    Under the improper uniform prior of ``X2``: one decision map per prior for
    all of them (module docstring), the rows in the order of ``keys``, priors
    in the model's order within each. Otherwise one computation per row.
    """
    if model.x2_prior.kind != "improper_uniform":
        full = np.column_stack([keys, np.full(len(keys), d)])
        return block_group_batch(model, budget, full)
    rhos = model.rhos(budget)
    offsets, where = np.unique(keys[:, 0] - keys[:, 1], return_inverse=True)
    labels, ps = list(model.priors), list(model.priors.values())
    measured = measures_by_truth(
        offsets,
        priors=ps,
        rho1=rhos["block"],
        rho2=rhos["block_group"],
        d=int(d),
        x2_prior=model.x2_prior,
        convention=model.convention,
        sum_noise=model.sum_noise,
        tail_mass=model.tail_mass,
        tie_rule=model.tie_rule,
    )
    rows = []
    for (x2, known), column in zip(keys, where, strict=True):
        for i, label in enumerate(labels):
            rows.append(
                {
                    "budget": budget,
                    "prior": label,
                    "cell_block_group": int(x2),
                    "known_count": int(known),
                    "other_blocks": int(d),
                    "marginal_risk": float(measured["marginal_risk"][i, column]),
                    "correct_decision_probability": float(
                        measured["correct_decision_probability"][i, column]
                    ),
                }
            )
    return pd.DataFrame(rows)
