"""The data holder's measures of the unknown-attribute attack under any noise mechanism.

Each released cell's noise is its table (the whole support for bounded noise);
cell k's score is ``log π_k + logpmf_k(z) - logpmf_k(z + 1)`` for the truth
(k = c) and ``log π_k + logpmf_k(z - 1) - logpmf_k(z)`` for the others, equal
values merged. A ``+inf`` truth score (only c produces the release) gives
posterior 1 and a right decision; ``-inf`` scores of other categories (ruled
out) drop out of L. See :func:`~adversary.scenarios.unknown_attribute.marginals`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...measures.decision import credit_against_others, tie_tolerance
from ...measures.noise import log_ratio, noise_table, support_points
from .sums import (
    UnknownAttributeMarginals,
    expit_average,
    grid_width_for,
    posterior_by_method,
    split_logaddexp,
)

__all__ = ["mechanism_marginals"]


@dataclass(frozen=True)
class _CellScores:
    """One cell's scores under the truth: finite values and masses, and the infinite mass.

    ``infinite`` is the mass of ``+inf`` (the truth's cell) or ``-inf`` (another
    cell); ``total`` the mass of the table (``finite + infinite``).
    """

    values: np.ndarray
    masses: np.ndarray
    infinite: float
    cutoff: int
    omitted: float

    @property
    def total(self) -> float:
        return math.fsum(self.masses) + self.infinite


def _cell_scores(mechanism, log_prior: float, is_truth: bool, tail_mass: float) -> _CellScores:
    table = noise_table(mechanism, tail_mass)
    z, masses = support_points(table)
    if is_truth:
        ratio = log_ratio(mechanism.logpmf(z), mechanism.logpmf(z + 1))
    else:
        ratio = log_ratio(mechanism.logpmf(z - 1), mechanism.logpmf(z))
    finite = np.isfinite(ratio)
    values, inverse = np.unique(log_prior + ratio[finite], return_inverse=True)
    weights = np.bincount(inverse, weights=masses[finite], minlength=values.size)
    reach = int(max(-table.start, table.start + table.probabilities.size - 1))
    return _CellScores(
        values, weights, math.fsum(masses[~finite]), reach, float(table.omitted_mass)
    )


def _gridded_posterior_with_atoms(terms, c, grid_width):
    """The grid method for any noise: ``L`` may be ``-inf``.

    ``L = log Σ_{k≠c} π_k e^{s_k}`` is accumulated cell by cell as finite
    values with masses plus an atom at ``-inf`` (every other category ruled
    out so far, where the posterior of c is 1). Combining two finite values is
    :func:`~.sums.split_logaddexp` unless one side is a single value (then the
    map is one-to-one and kept exact); a value meeting ``-inf`` passes through
    unchanged. Returns ``(posterior, spread, h)``.
    """
    others = [term for k, term in enumerate(terms) if k != c]
    parts = []
    for values, masses in others:
        neg = np.isneginf(values)
        parts.append((values[~neg], masses[~neg], math.fsum(masses[neg])))
    h = grid_width_for([v for v, _, _ in parts if v.size], grid_width)
    values, masses, atom = parts[0]
    spread, split = 0.0, False
    for v, m, a in parts[1:]:
        pieces_v, pieces_m = [values, v], [masses * a, m * atom]
        if values.size and v.size:
            if values.size == 1 or v.size == 1:
                pieces_v.append(np.logaddexp(values[:, None], v[None, :]).ravel())
                pieces_m.append((masses[:, None] * m[None, :]).ravel())
            else:
                grid_v, grid_m, step = split_logaddexp(values, masses, v, m, h)
                pieces_v.append(grid_v)
                pieces_m.append(grid_m)
                spread += step
                split = True
        values, inverse = np.unique(np.concatenate(pieces_v), return_inverse=True)
        masses = np.bincount(inverse, weights=np.concatenate(pieces_m), minlength=values.size)
        keep = masses > 0
        values, masses, atom = values[keep], masses[keep], atom * a
    c_values, c_masses = terms[c]
    average, pair_spread = expit_average(c_values, c_masses, values, masses)
    return average + atom * math.fsum(c_masses), spread + pair_spread, h if split else None


def _decision_probability(terms, c, tolerance, tie_rule):
    """(3.6) over the truth's finite scores: each other category below or tied, from its table.

    Given the truth's score v, category k scores below ``v - tol`` or within
    ``tol`` of v with the masses of its table's values (``-inf`` included)
    in those ranges; :func:`~adversary.measures.decision.credit_against_others`
    counts the ties by ``tie_rule``.
    """
    c_values, c_masses = terms[c]
    if c_values.size == 0:
        return 0.0

    def below_and_tied(k, v):
        values, masses = terms[k]
        order = np.argsort(values, kind="stable")
        cumulative = np.concatenate([[0.0], np.cumsum(masses[order])])
        ordered = values[order]
        below = cumulative[np.searchsorted(ordered, v - tolerance, side="left")]
        return below, cumulative[np.searchsorted(ordered, v + tolerance, side="right")] - below

    return credit_against_others(c_values, c_masses, c, len(terms), below_and_tied, tie_rule)


def mechanism_marginals(
    prior, c, mask, mechanisms, tail_mass, grid_width, method, tie_rule
) -> UnknownAttributeMarginals:
    """:func:`~adversary.scenarios.unknown_attribute.marginals` for any noise mechanisms."""
    n_categories = prior.size
    n_released = int(mask.sum())
    log_prior = np.log(prior)
    cells = [
        _cell_scores(mechanisms[k], float(log_prior[k]), k == c, tail_mass / n_released)
        if mask[k]
        else None
        for k in range(n_categories)
    ]
    omitted = sum(cell.omitted for cell in cells if cell is not None)
    # Terms (values, masses) for the enumeration and grid: a cell not released is the
    # constant log π_k; another category's -inf scores are kept as a value (logaddexp
    # takes them); the truth's +inf scores are taken out (posterior 1, decision right).
    terms = []
    for k, cell in enumerate(cells):
        if cell is None:
            terms.append((np.array([log_prior[k]]), np.ones(1)))
        elif k == c or cell.infinite == 0.0:
            terms.append((cell.values, cell.masses))
        else:
            terms.append((np.append(cell.values, -np.inf), np.append(cell.masses, cell.infinite)))
    others_total = math.prod(
        1.0 if cell is None else cell.total for k, cell in enumerate(cells) if k != c
    )
    certain = 0.0 if cells[c] is None else cells[c].infinite * others_total
    finite_scores = [
        np.abs(values[np.isfinite(values)]) for values, _ in terms if np.any(np.isfinite(values))
    ]
    reach = max((float(np.max(v)) for v in finite_scores if v.size), default=0.0)
    if terms[c][0].size == 0:  # the truth's release always proves it
        post, spread, h, method = 0.0, 0.0, None, "enumeration" if method == "auto" else method
    else:
        post, spread, h, method = posterior_by_method(
            terms, c, method, grid_width, _gridded_posterior_with_atoms
        )
    tolerance = float(tie_tolerance(2.0 * reach))
    correct = _decision_probability(terms, c, tolerance, tie_rule) + certain
    cutoffs = [cell.cutoff for cell in cells if cell is not None]
    return UnknownAttributeMarginals.from_sums(
        prior[c], (post + certain, spread, h, method), omitted, correct, omitted, cutoffs, tie_rule
    )
