"""The adversary's Bayes decision under 0-1 loss (3.5), and how ties count in (3.6).

One rule for every attack and every route (closed forms, exact sums over a
release grid, Monte Carlo). Under 0-1 loss the Bayes decision (3.5) is the
value of the target with the largest posterior. When several values share
the largest posterior, every choice among them is equally Bayes-optimal and
(3.5) does not say which one the adversary takes; the probability of a
correct decision (3.6) then depends on a **tie rule**:

``"split"`` (the default)
    The adversary picks uniformly among the tied values: a tie among ``k``
    values that include the truth counts ``1/k``. This is the expected
    accuracy of a Bayes-optimal adversary who has no reason to prefer one
    tied value, and the only rule that does not depend on how the values are
    ordered or labelled (a category listed first gains nothing).
``"largest"``
    The largest tied value is taken. For the target's count
    ``X1 ∈ {m, m + 1}`` this is the paper's rule: (3.6) counts the releases
    whose posterior of ``m + 1`` is at least 1/2, so a tie decides ``m + 1``.
``"smallest"``
    The smallest tied value (for categories, the one listed first).

Posteriors computed by different routes differ by rounding, so values are
tied when their log posteriors lie within :func:`tie_tolerance` of each other
(exact ties are common: equal or commensurate ρ, symmetric priors, point-mass
priors). The decision itself, for one release, is :func:`decide`; under
``"split"`` a tied decision is random and needs a seed.
"""

from __future__ import annotations

import numpy as np

from .tie_rules import DEFAULT_TIE_RULE, TIE_RULES, check_tie_rule

__all__ = [
    "DEFAULT_TIE_RULE",
    "TIE_RULES",
    "TIE_TOLERANCE",
    "binary_credit",
    "check_tie_rule",
    "competition_credit",
    "credit_against_others",
    "decide",
    "decision_weights",
    "tie_tolerance",
    "truth_credit",
]

#: Log posteriors within this of each other are tied (more for very large scores:
#: :func:`tie_tolerance`).
TIE_TOLERANCE = 1e-9

# Rounding allowance for scores of large magnitude, in units of the machine epsilon.
_ROUNDING_ULPS = 64.0


def tie_tolerance(magnitude=0.0) -> np.ndarray:
    """Distance within which two log posteriors are tied, for scores of size ``magnitude``.

    :data:`TIE_TOLERANCE`, or a few dozen ulps of ``magnitude`` when that is
    larger (scores of order ``10^8`` carry rounding errors above ``10^-9``).
    """
    magnitude = np.abs(np.asarray(magnitude, dtype=np.float64))
    return np.maximum(TIE_TOLERANCE, _ROUNDING_ULPS * np.finfo(np.float64).eps * magnitude)


def _tied(log_scores: np.ndarray, tolerance) -> np.ndarray:
    """Boolean mask of the values within ``tolerance`` of the largest score, per row."""
    best = np.max(log_scores, axis=-1, keepdims=True)
    if np.any(best == -np.inf):
        raise ValueError("log_scores: some row has no possible value (every log posterior is -inf)")
    if tolerance is None:
        finite = np.where(np.isfinite(log_scores), log_scores, 0.0)
        tolerance = tie_tolerance(np.max(np.abs(finite), axis=-1, keepdims=True))
    else:
        tolerance = np.asarray(tolerance, dtype=np.float64)
        tolerance = tolerance[..., None] if tolerance.ndim else tolerance
    with np.errstate(invalid="ignore"):  # +inf - +inf: both certain, tied
        return (log_scores >= best - tolerance) | (log_scores == best)


def decision_weights(log_scores, tie_rule: str = DEFAULT_TIE_RULE, tolerance=None) -> np.ndarray:
    """The decision (3.5) as a probability over the candidate values, per row.

    ``log_scores`` (``(..., K)``): log posteriors, or anything that differs
    from them by a constant per row (log prior + log likelihood), of ``K``
    candidate values in increasing order along the last axis. Returns an
    array of the same shape whose rows sum to 1: one-hot at the mode, or
    spread over the tied modes by ``tie_rule`` (module docstring).
    ``tolerance``: per row; default :func:`tie_tolerance` of the row's
    largest finite score.
    """
    check_tie_rule(tie_rule)
    log_scores = np.asarray(log_scores, dtype=np.float64)
    if np.any(np.isnan(log_scores)):
        raise ValueError("log_scores: contains NaN")
    tied = _tied(log_scores, tolerance)
    if tie_rule == "split":
        return tied / tied.sum(axis=-1, keepdims=True)
    size = tied.shape[-1]
    if tie_rule == "smallest":
        chosen = np.argmax(tied, axis=-1)
    else:
        chosen = size - 1 - np.argmax(tied[..., ::-1], axis=-1)
    return (np.arange(size) == chosen[..., None]).astype(np.float64)


def truth_credit(log_scores, truth_index, tie_rule: str = DEFAULT_TIE_RULE, tolerance=None):
    """What (3.6) counts for each row: the decision's probability of the true value.

    ``truth_index`` (broadcast against the rows): the position of the truth
    among the candidate values.
    """
    weights = decision_weights(log_scores, tie_rule, tolerance)
    index = np.broadcast_to(np.asarray(truth_index, dtype=np.int64), weights.shape[:-1])
    return np.take_along_axis(weights, index[..., None], axis=-1)[..., 0]


def binary_credit(log_odds, truth_is_upper, tie_rule: str = DEFAULT_TIE_RULE, tolerance=None):
    """(3.6)'s count for a two-valued target, from the log odds of the upper value.

    ``log_odds = log P[upper | release] - log P[lower | release]`` (e.g. of
    ``X1 = m + 1`` against ``m``); ``truth_is_upper`` says which value is
    the truth. 1 when the decision is the truth, 0 when not, and for a tie
    (``|log_odds| ≤ tolerance``) 1/2, or 1/0 by ``"largest"``/``"smallest"``.
    """
    check_tie_rule(tie_rule)
    log_odds = np.asarray(log_odds, dtype=np.float64)
    if np.any(np.isnan(log_odds)):
        raise ValueError("log_odds: contains NaN")
    tolerance = TIE_TOLERANCE if tolerance is None else tolerance
    upper_wins = log_odds > tolerance
    tie = np.abs(log_odds) <= tolerance
    upper_share = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
    upper = np.where(tie, upper_share, upper_wins.astype(np.float64))
    if np.ndim(truth_is_upper) == 0:  # one truth for every row
        return upper if truth_is_upper else 1.0 - upper
    return np.where(truth_is_upper, upper, 1.0 - upper)


def competition_credit(below, tied, before, tie_rule: str = DEFAULT_TIE_RULE) -> np.ndarray:
    """(3.6)'s count for the truth against competitors whose scores are independent.

    For use where the truth's score ``v`` is fixed and each other candidate
    ``k`` scores independently (e.g. categories whose releases carry
    independent noise): ``below[..., k]`` is ``P[score_k < v - tol]``,
    ``tied[..., k]`` is ``P[|score_k - v| ≤ tol]`` and ``before[k]`` whether
    ``k`` comes before the truth in the candidates' order. The truth is
    decided if no competitor scores above it, and then

    - ``"split"``: with probability ``E[1/(1 + T)]`` for ``T`` tied
      competitors, ``= ∫₀¹ Π_k (below_k + tied_k u) du``;
    - ``"smallest"``: if no competitor before it is tied;
    - ``"largest"``: if no competitor after it is tied.
    """
    check_tie_rule(tie_rule)
    below = np.asarray(below, dtype=np.float64)
    tied = np.asarray(tied, dtype=np.float64)
    before = np.broadcast_to(np.asarray(before, dtype=bool), below.shape)
    if tie_rule == "smallest":
        return np.prod(np.where(before, below, below + tied), axis=-1)
    if tie_rule == "largest":
        return np.prod(np.where(before, below + tied, below), axis=-1)
    # Coefficients of Π_k (below_k + tied_k u) in powers of u, then Σ_j c_j / (j + 1).
    coefficients = np.ones((*below.shape[:-1], 1))
    for k in range(below.shape[-1]):
        b, t = below[..., k, None], tied[..., k, None]
        zero = np.zeros((*coefficients.shape[:-1], 1))
        coefficients = (
            np.concatenate([coefficients, zero], axis=-1) * b
            + np.concatenate([zero, coefficients], axis=-1) * t
        )
    return coefficients @ (1.0 / np.arange(1, coefficients.shape[-1] + 1))


def credit_against_others(c_values, c_masses, c, n_candidates, below_and_tied, tie_rule):
    """(3.6) for candidate ``c`` whose score takes ``c_values`` with ``c_masses``.

    ``below_and_tied(k, c_values)`` gives, for each of the truth's scores
    ``v``, ``P[score_k < v - tol]`` and ``P[|score_k - v| ≤ tol]`` for another
    candidate ``k`` scoring independently; :func:`competition_credit` counts
    the ties by ``tie_rule`` and the result is its expectation over ``v``.
    """
    others = [k for k in range(n_candidates) if k != c]
    below = np.empty((c_values.size, len(others)))
    tied = np.empty_like(below)
    for column, k in enumerate(others):
        below[:, column], tied[:, column] = below_and_tied(k, c_values)
    before = np.array([k < c for k in others])
    return float(competition_credit(below, tied, before, tie_rule) @ c_masses)


def decide(values, log_scores, tie_rule: str = DEFAULT_TIE_RULE, *, rng=None, tolerance=None):
    """The Bayes decision (3.5): the value of largest posterior, per row of ``log_scores``.

    ``values`` (length ``K``, increasing) are the candidates, ``log_scores``
    ``(..., K)`` their log posteriors. A tie goes to the largest or smallest
    tied value by ``tie_rule``; under ``"split"`` it is drawn uniformly
    among the tied values with ``rng`` (a seed or ``numpy.random.Generator``),
    which a tie then requires.
    """
    values = np.asarray(values)
    weights = decision_weights(log_scores, tie_rule, tolerance)
    random = weights.max(axis=-1) < 1.0
    if not np.any(random):
        return values[np.argmax(weights, axis=-1)]
    if rng is None:
        rows = weights.reshape(-1, weights.shape[-1])
        tied = values[rows[np.argmax(random.reshape(-1))] > 0]
        raise ValueError(
            f"rng: the decision is tied between {tied.tolist()}; under tie_rule='split' a tied "
            "decision is random: pass rng= (a seed or Generator), or tie_rule='largest' or "
            "'smallest'"
        )
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    cumulative = np.cumsum(weights, axis=-1)
    draw = generator.random(weights.shape[:-1])[..., None]
    return values[np.minimum((cumulative <= draw).sum(axis=-1), values.size - 1)]
