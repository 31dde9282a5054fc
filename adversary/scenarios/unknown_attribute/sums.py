"""Sums over the categories' noises shared by every noise: enumeration and the log-sum-exp grid.

For a true category c the adversary's posterior of c is
``expit(score_c - L)`` with ``L = log Σ_{k≠c} π_k e^{s_k}``. Each released
cell contributes a distribution of scores (values and masses); the marginal
posterior (3.3) is either summed over the joint grid of every cell's values
(:func:`enumerated_posterior`, exact) or over the distribution of L built
one cell at a time on a grid ``hℤ`` (:func:`logsumexp_distribution`, with a
rigorous bound; see :func:`~adversary.scenarios.unknown_attribute.marginals`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from ...measures.marginal import BoundedMarginals
from ...memory import grid_points, rows_per_block

__all__ = [
    "DEFAULT_GRID_WIDTH",
    "GRID_CURVATURE_BOUND",
    "MARGINAL_METHODS",
    "UnknownAttributeMarginals",
    "enumerated_posterior",
    "expit_average",
    "logsumexp_distribution",
    "posterior_by_method",
    "split_logaddexp",
]

#: Spacing ``h`` of the grid on which ``log Σ_{k≠c} π_k e^{s_k}`` is accumulated.
DEFAULT_GRID_WIDTH = 1e-4

#: ``1/(6√3) + 1/16``: bound on ``|g''|`` for every function the grid method splits a
#: point mass under (:func:`marginals`): ``max|expit''| + max|expit'| · max|σ'|``.
GRID_CURVATURE_BOUND = 1.0 / (6.0 * math.sqrt(3.0)) + 1.0 / 16.0

#: Methods of :func:`marginals` for the marginal posterior.
MARGINAL_METHODS = ("auto", "enumeration", "grid")

# Largest joint noise grid summed by the enumeration method (and chosen by "auto").
MAX_ENUMERATION = 1 << 21
# Largest grid for log S; wider supports get a coarser grid (and a larger bound).
MAX_GRID_POINTS = 1 << 23
# Largest number of (truth score, L) pairs averaged as they are; more are split onto grids.
MAX_PAIRS = 1 << 26
# Points of each of those grids.
PAIR_GRID_POINTS = 1 << 12


@dataclass(frozen=True)
class UnknownAttributeMarginals(BoundedMarginals):
    """Marginal measures of the unknown-attribute attack for a true category, with bounds.

    The measures and bounds of :class:`~adversary.measures.marginal.BoundedMarginals`
    (numbers; ties of (3.6) counted by ``tie_rule``; the posterior's and
    risk's bounds include the grid's term when ``method`` is ``"grid"``), and:

    Attributes
    ----------
    cutoffs
        Noise cut-off ``K_k`` per released cell.
    method
        ``"enumeration"`` (joint noise grid) or ``"grid"`` (log-sum-exp grid).
    grid_width
        ``h`` of the grid method (``None`` for enumeration).
    tie_rule
        How a tied decision counts in (3.6) (:mod:`adversary.measures.decision`).
    """

    cutoffs: tuple[int, ...]
    method: str
    grid_width: float | None
    tie_rule: str

    @classmethod
    def from_sums(
        cls, prior_of_truth, sums, omitted, correct, decision_bound, cutoffs, tie_rule
    ) -> UnknownAttributeMarginals:
        """The measures from the truth's prior, ``sums`` and the decision's (3.6) and bound.

        ``sums`` is ``(posterior, spread, h, method)`` of :func:`posterior_by_method`;
        the posterior's bound is the grid's curvature term ``(M/2)·spread`` plus
        the ``omitted`` release mass.
        """
        posterior, spread, h, method = sums
        return cls.of_truth(
            float(prior_of_truth),
            float(posterior),
            float(0.5 * GRID_CURVATURE_BOUND * spread + omitted),
            correct_decision_probability=float(correct),
            decision_error_bound=float(decision_bound),
            omitted_mass=float(omitted),
            cutoffs=tuple(cutoffs),
            method=method,
            grid_width=h,
            tie_rule=tie_rule,
        )


def enumerated_posterior(terms, c) -> float:
    """``Σ P[z] · softmax_c`` over the joint grid of every released cell's noise (exact)."""
    n = len(terms)
    log_den = None
    weights = None
    for k, (values, masses) in enumerate(terms):
        shape = [1] * n
        shape[k] = values.size
        v, m = values.reshape(shape), masses.reshape(shape)
        log_den = v if log_den is None else np.logaddexp(log_den, v)
        weights = m if weights is None else weights * m
    numerator = terms[c][0].reshape([terms[c][0].size if k == c else 1 for k in range(n)])
    return float(np.sum(np.exp(numerator - log_den) * weights))


def split_logaddexp(values, masses, v, m, h):
    """``logaddexp`` of two finite distributions, split onto ``hℤ`` keeping the mean.

    A combined value ``(k + f)h`` puts mass ``1 - f`` at ``kh`` and ``f`` at
    ``(k+1)h``. Returns ``(grid values, masses, spread)`` with
    ``spread = h² Σ P f(1 - f)``.
    """
    indices, weights, spread = [], [], 0.0
    chunk = rows_per_block(v.size)
    for start in range(0, values.size, chunk):
        part = slice(start, start + chunk)
        combined = np.logaddexp(values[part, None], v[None, :])
        weight = masses[part, None] * m[None, :]
        position = combined / h
        base = np.floor(position)
        frac = position - base
        spread += h * h * float(np.sum(weight * frac * (1.0 - frac)))
        index = base.astype(np.int64).ravel()
        indices += [index, index + 1]
        weights += [(weight * (1.0 - frac)).ravel(), (weight * frac).ravel()]
    index, inverse = np.unique(np.concatenate(indices), return_inverse=True)
    masses = np.bincount(inverse, weights=np.concatenate(weights))
    keep = masses > 0.0
    return index[keep] * h, masses[keep], spread


def grid_width_for(finite_values: list[np.ndarray], grid_width: float) -> float:
    """``h``: ``grid_width``, or coarser if the range of L would need too many grid points."""
    if not finite_values:
        return grid_width
    low = min(float(v.min()) for v in finite_values)
    high = float(np.logaddexp.reduce([float(v.max()) for v in finite_values]))
    points = grid_points(MAX_GRID_POINTS, "the log-sum-exp grid")
    return max(grid_width, (high - low) / (points - 4))


def logsumexp_distribution(others, grid_width):
    """Distribution of ``L = log Σ_{k≠c} π_k e^{s_k}`` on a grid, with the splitting spread.

    ``others`` are ``(values, masses)`` of the scores of the categories other
    than the truth; constants (cells not released) are combined exactly, the
    first random term is kept exactly, and every further term is combined by
    :func:`split_logaddexp`. Returns ``(values, masses, spread, h)``
    (``h`` ``None`` when nothing was split).
    """
    constants = [values[0] for values, masses in others if values.size == 1]
    random = [(values, masses) for values, masses in others if values.size > 1]
    constant = float(np.logaddexp.reduce(constants)) if constants else -np.inf
    if not random:
        return np.array([constant]), np.ones(1), 0.0, None
    values, masses = random[0]
    values = np.logaddexp(constant, values)
    if len(random) == 1:
        return values, masses, 0.0, None
    h = grid_width_for([values, *(v for v, _ in random[1:])], grid_width)
    spread = 0.0
    for v, m in random[1:]:
        values, masses, step = split_logaddexp(values, masses, v, m, h)
        spread += step
    return values, masses, spread, h


def expit_average(c_values, c_masses, l_values, l_masses) -> tuple[float, float]:
    """``Σ P[score_c] P[L] expit(score_c - L)``: the truth's posterior averaged, in blocks.

    Returns ``(average, spread)``. When the two supports have more than
    :data:`MAX_PAIRS` pairs (wide noise: many values in a narrow range), each is
    first split onto a grid of :data:`PAIR_GRID_POINTS` points over its range
    (:func:`split_logaddexp` with ``-inf``, keeping the mean); ``spread`` is the
    splitting's ``h² Σ P f(1 - f)``, which the caller's curvature bound turns
    into an error bound (0 when nothing was split).
    """
    total, spread = 0.0, 0.0
    if l_values.size == 0:
        return total, spread
    if c_values.size * l_values.size > MAX_PAIRS:
        c_values, c_masses, c_spread = _onto_grid(c_values, c_masses)
        l_values, l_masses, l_spread = _onto_grid(l_values, l_masses)
        spread = c_spread + l_spread
    chunk = rows_per_block(l_values.size)
    for start in range(0, c_values.size, chunk):
        part = slice(start, start + chunk)
        post = special.expit(c_values[part, None] - l_values[None, :])
        total += float(c_masses[part] @ (post @ l_masses))
    return total, spread


def _onto_grid(values, masses):
    """``values`` split onto a grid of about :data:`PAIR_GRID_POINTS` points over their range."""
    low, high = float(values.min()), float(values.max())
    width = max(high - low, np.spacing(max(abs(low), abs(high)))) / (PAIR_GRID_POINTS - 2)
    return split_logaddexp(values, masses, np.array([-np.inf]), np.ones(1), width)


def posterior_by_method(terms, c, method: str, grid_width: float, gridded: Callable):
    """The marginal posterior of c by enumeration or by ``gridded(terms, c, grid_width)``.

    ``"auto"`` enumerates when the joint grid has at most 2²¹ points. Returns
    ``(posterior, spread, h, method used)``.
    """
    joint_size = math.prod(max(1, values.size) for values, _ in terms)
    if method == "auto":
        method = "enumeration" if joint_size <= MAX_ENUMERATION else "grid"
    if method == "enumeration":
        if joint_size > 4 * MAX_ENUMERATION:
            raise ValueError(
                f"method: the joint noise grid has {joint_size} points, too many to enumerate; "
                "use method='grid'"
            )
        return enumerated_posterior(terms, c), 0.0, None, method
    return (*gridded(terms, c, grid_width), method)
