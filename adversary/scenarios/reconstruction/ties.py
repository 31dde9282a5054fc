"""The reconstruction measures' decisions, ties counted by the package's tie rule.

The adversary's exact-match guess is the most probable histogram and its
ranked records are the most confident ones (:mod:`.measures`): both are
Bayes decisions (3.5), and a tie among equally probable choices counts by
``tie_rule`` as every decision of the package does
(:mod:`adversary.measures.decision`). The candidates' order, which
``"smallest"`` (the first tied) and ``"largest"`` (the last) use, is the
cells' order: histograms as :func:`~.posterior.compositions` lists them
(decreasing lexicographic order: most persons in the first cell first) and
records "at least j persons in cell k" by cell, then j.

- :func:`map_decision` — over a posterior's listed histograms;
- :func:`prior_map_decision` — over every histogram of a prior, without
  listing them (there are ``C(n + K - 1, K - 1)``);
- :func:`match_rate` — the share of true records among the top r, r = 1…n.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...measures.decision import decision_weights, tie_tolerance

__all__ = ["map_decision", "match_rate", "prior_map_decision"]


def map_decision(histograms: np.ndarray, probabilities: np.ndarray, truth, tie_rule: str):
    """``(credit, mode, modes)`` of the most probable of ``histograms``.

    ``credit``: the decision's probability of being ``truth`` (1/k for the
    truth among k tied modes under ``"split"``); ``mode``: the decided
    histogram, ``None`` when ``"split"`` leaves several; ``modes``: how many tie.
    """
    order = np.lexsort(-histograms.T[::-1])  # decreasing lexicographic order
    histograms = histograms[order]
    with np.errstate(divide="ignore"):
        log_p = np.log(probabilities[order])
    tied = decision_weights(log_p, "split") > 0
    weights = decision_weights(log_p, tie_rule)
    credit = float(weights @ (histograms == np.asarray(truth)).all(axis=1))
    mode = histograms[int(np.argmax(weights))] if weights.max() == 1.0 else None
    return credit, mode, int(tied.sum())


def prior_map_decision(gains: np.ndarray, truth, tie_rule: str):
    """``(credit, mode, modes)`` as :func:`map_decision`, for a prior separable over cells.

    ``gains[k, h]`` is the log prior's increment when cell k goes from ``h``
    to ``h + 1`` persons, non-increasing in ``h`` (a concave log prior, as the
    multinomial's and, with every ``α_k ≥ 1``, the Dirichlet-multinomial's).
    A most probable histogram then takes the n largest increments: every one
    above the n-th largest (``forced``), and the rest from the ``tied`` ones
    equal to it, any way — ``modes`` is the number of ways, the coefficient
    of ``x^free`` in ``Π_k (1 + x + … + x^{tied_k})``. The truth is a mode
    when each cell holds its forced increments and at most its tied ones.
    """
    n = gains.shape[1]
    flat = gains.reshape(-1)
    threshold = np.partition(flat, flat.size - n)[flat.size - n]
    tolerance = float(tie_tolerance(threshold))
    forced = (gains > threshold + tolerance).sum(axis=1)
    tied = (np.abs(gains - threshold) <= tolerance).sum(axis=1)
    free = n - int(forced.sum())
    modes = _ways(tied, free)
    truth = np.asarray(truth)
    is_mode = bool(np.all((truth >= forced) & (truth <= forced + tied)))
    if tie_rule == "split":
        mode = _filled(forced, tied, free, range(tied.size)) if modes == 1 else None
        return (1 / modes if is_mode else 0.0), mode, modes
    # the first mode listed (most persons in the first cells): the tied increments to the
    # first cells; the last: to the last cells
    cells = range(tied.size) if tie_rule == "smallest" else range(tied.size - 1, -1, -1)
    mode = _filled(forced, tied, free, cells)
    return float(np.array_equal(mode, truth)), mode, modes


def _filled(forced: np.ndarray, tied: np.ndarray, free: int, cells) -> np.ndarray:
    """The forced increments, and ``free`` tied ones taken from ``cells`` in that order."""
    mode = forced.astype(np.int64)
    for k in cells:
        take = min(free, int(tied[k]))
        mode[k] += take
        free -= take
    return mode


def _ways(tied: np.ndarray, free: int) -> int:
    """Ways to take ``free`` increments, at most ``tied[k]`` from cell k (an exact integer)."""
    single = int(np.count_nonzero(tied == 1))
    ways = [1] + [0] * free  # coefficients of Π over cells with several tied increments
    for size in tied[tied > 1]:
        prefix = list(itertools.accumulate(ways))
        ways = [prefix[d] - (prefix[d - size - 1] if d > size else 0) for d in range(free + 1)]
    return sum(ways[d] * math.comb(single, free - d) for d in range(free + 1))


def match_rate(at_least: np.ndarray, truth, tie_rule: str) -> tuple[float, ...]:
    """Share of true records among the top r, r = 1…n (``at_least[j-1, k] = P(h_k ≥ j)``).

    The records are ranked by their probability; a group tied (log
    probabilities within :func:`~adversary.measures.decision.tie_tolerance`
    of the group's largest) that the top r cuts through contributes, under
    ``"split"``, its share of true records for each place it fills — the
    expected count when the tied records are taken in a uniformly random
    order; under ``"smallest"``/``"largest"`` its records in the cells'
    order or its reverse. Only the top n records and the group at the edge
    are sorted.
    """
    n = at_least.shape[0]
    truth = np.asarray(truth)
    # records in the cells' order, then j: record k·n + (j - 1)
    with np.errstate(divide="ignore"):
        scores = np.log(at_least.T.reshape(-1))
    threshold = np.partition(scores, scores.size - n)[scores.size - n]
    tolerance = float(tie_tolerance(threshold if np.isfinite(threshold) else 0.0))
    candidates = np.flatnonzero(scores >= threshold - tolerance)
    ranked = candidates[np.argsort(-scores[candidates], kind="stable")]
    sorted_scores = -scores[ranked]  # ascending
    true = (truth[ranked // n] > ranked % n).astype(np.float64)
    credit = np.empty(n)
    start = 0
    while start < n:
        end = int(np.searchsorted(sorted_scores, sorted_scores[start] + tolerance, "right"))
        group = true[start:end]
        if tie_rule == "split":
            group = np.full(group.size, group.mean())
        elif tie_rule == "largest":
            group = group[::-1]
        credit[start : min(end, n)] = group[: n - start]
        start = end
    return tuple(float(x) for x in np.cumsum(credit) / np.arange(1, n + 1))
