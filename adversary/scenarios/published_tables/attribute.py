"""The unknown-attribute attack (S1.2) when every cell's tables are TopDown's.

The target's category ``C`` among K is unknown; the adversary knows every
other record, so each category's cell has its own hierarchy of counts
(block group and blocks) whose true values are ``known_c + 1[c = C] · path``.
TopDown post-processes each cell's hierarchy on its own (its constraints do
not mix cells here), with independent noise, so the law of the published
tables factorises over cells and the posterior of category ``k`` is

    log P[C = k | T] = log π_k + R_k(T_k) + const,   R_k = log P_k[T_k | 1] − log P_k[T_k | 0],

and likewise for the measurements, with ``R_k`` the cell's log likelihood
ratio of its noisy counts. Each cell's ``R_c`` has a finite law on the
hierarchy's noise grid (:func:`noisy_ratio_laws`, :func:`published_ratio_laws`);
the data holder's measures are sums over the product of the K laws
(:func:`attribute_measures`; exact when the product is small, otherwise Monte
Carlo over independent draws from each law, with standard errors).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ...measures.decision import truth_credit
from ...measures.product_grid import NoiseGrid, product_law
from ...measures.standard_errors import DEFAULT_SE_MULTIPLE, credit_standard_error
from .adversaries import PublishedLaw, noisy_log_ratio

__all__ = [
    "MAX_COMBINATIONS",
    "attribute_measures",
    "noisy_ratio_laws",
    "published_ratio_laws",
]

#: The largest product of the cells' laws summed exactly.
MAX_COMBINATIONS = 2_000_000


def _compressed(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, inverse = np.unique(values, return_inverse=True)
    return unique, np.bincount(inverse.reshape(-1), weights=weights, minlength=unique.size)


def noisy_ratio_laws(grid: NoiseGrid, path, mechanisms) -> dict:
    """``{x: (values of R, probabilities)}`` of a cell's measurements, for its truth ``x`` (the
    same for every cell: the known counts cancel)."""
    return {
        x: _compressed(noisy_log_ratio(grid.noise, path, mechanisms, x), grid.weight)
        for x in (0, 1)
    }


def published_ratio_laws(law: PublishedLaw, grid: NoiseGrid) -> dict:
    """``{x: (values of R, probabilities)}`` of a cell's TopDown table, from its table ``law``."""
    with np.errstate(divide="ignore"):
        table_ratio = np.log(law.likelihood[1]) - np.log(law.likelihood[0])
    return {x: _compressed(table_ratio[law.ids[x]], grid.weight) for x in (0, 1)}


def _draws(laws, replications: int, rng):
    ratios = np.stack(
        [rng.choice(values, size=replications, p=p / p.sum()) for values, p in laws], axis=1
    )
    return ratios, np.full(replications, 1.0 / replications)


def attribute_measures(
    prior: np.ndarray,
    true_category: int,
    laws: list[dict],
    adversary: str,
    *,
    tie_rule: str,
    replications: int = 20_000,
    seed=0,
) -> dict:
    """(3.3), (3.4), (3.6) of one adversary for the true category; exact or Monte Carlo.

    ``laws[c]`` is ``{"noisy": …, "published": …}`` of category ``c``'s cell
    (:func:`noisy_ratio_laws`, :func:`published_ratio_laws`).
    """
    cells = [law[adversary][int(c == true_category)] for c, law in enumerate(laws)]
    combinations = math.prod(len(values) for values, _ in cells)
    exact = combinations <= MAX_COMBINATIONS
    if exact:
        ratios, weight = product_law(cells, "the product of the cells' laws")
    else:
        ratios, weight = _draws(cells, replications, np.random.default_rng(seed))
    with np.errstate(divide="ignore", invalid="ignore"):
        joint = np.log(prior)[None, :] + ratios
        log_post = joint - logsumexp(joint, axis=1, keepdims=True)
    # a table only the target's presence can produce (R = +inf) decides its category
    revealed = np.isposinf(joint).any(axis=1)
    log_post[revealed] = np.where(np.isposinf(joint[revealed]), 0.0, -np.inf)
    posterior = np.exp(log_post[:, true_category])
    credit = truth_credit(log_post, true_category, tie_rule)
    result = {
        "marginal_posterior": float(weight @ posterior),
        "correct_decision_probability": float(weight @ credit),
        "method": "exact" if exact else "monte-carlo",
        "combinations": combinations,
    }
    if not exact:
        se = float(posterior.std(ddof=1) / math.sqrt(replications))
        result["standard_errors"] = {
            "marginal_posterior": se,
            "correct_decision_probability": credit_standard_error(credit),
        }
        result["error"] = DEFAULT_SE_MULTIPLE * max(se, credit_standard_error(credit))
    return result
