"""Sums over the ℓ levels' noises: the log likelihood ratio's law, its grid, its exact tail.

With the truth T = 1 the posterior of the truth is ``expit(c + L)``, ``L`` the
log likelihood ratio, a sum of independent per-level increments; the
marginal posterior (3.3) averages ``expit`` over a mean-preserving grid of
``L`` and the correct-decision probability (3.6) is the exact upper tail of
``L`` by meet in the middle (see
:func:`~adversary.scenarios.multi_level.marginals` for both and their bounds).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from scipy import special

from ...measures.decision import tie_tolerance
from ...measures.marginal import BoundedMarginals
from ...measures.noise import log_ratio, noise_table, support_points
from ...memory import grid_points, rows_per_block
from ...noise import discrete_gaussian
from ...noise.mechanisms import NoiseMechanism

__all__ = [
    "DEFAULT_GRID_WIDTH",
    "EXPIT_SECOND_DERIVATIVE_BOUND",
    "MultiLevelMarginals",
    "marginals_of_levels",
    "marginals_of_row",
    "mechanism_level",
]

#: ``max |expit''| = 1/(6√3)``, attained where ``expit = 1/2 ± 1/(2√3)``.
EXPIT_SECOND_DERIVATIVE_BOUND = 1.0 / (6.0 * np.sqrt(3.0))

#: Spacing ``h`` of the grid on which the log likelihood ratio is convolved.
DEFAULT_GRID_WIDTH = 1e-4

# Largest grid for the log likelihood ratio (8 M float64 = 64 MB); wider
# supports get a coarser grid and a correspondingly larger error bound.
_MAX_GRID_POINTS = 1 << 23
# Largest support of one half of the levels for the exact decision probability.
_MAX_EXACT_SUPPORT = 1 << 22


@dataclass(frozen=True)
class MultiLevelMarginals(BoundedMarginals):
    """Marginal measures of the ℓ-level attack for a truth, with their error bounds.

    The measures (3.3), (3.4) and (3.6) with the posterior (S1.1) and their
    bounds (:class:`~adversary.measures.marginal.BoundedMarginals`: truncation
    of the noise, plus the grid of the log likelihood ratio for the posterior
    and risk; the omitted releases have noise beyond ``cutoffs`` at some
    level), as arrays of the broadcast shape of the cases (``prior``,
    ``true_count`` and the leading axes of ``rhos``), or for
    :func:`marginal_by_levels` with a leading axis over ℓ = 1, 2, …; and:

    Attributes
    ----------
    cutoffs
        The noise cut-off ``K_i`` per level (levels on the last axis).
    grid_width
        The spacing ``h`` actually used for the log likelihood ratio, per case.
    decision_exact
        True where the decision probability was summed exactly (meet in the
        middle); False where the support was too large and the grid bracket
        was used instead.
    """

    cutoffs: np.ndarray
    grid_width: np.ndarray
    decision_exact: np.ndarray


@dataclass(frozen=True)
class _Level:
    """One level's log-likelihood-ratio increment ``a(2z + 1)`` on ``z ∈ [-K, K]``."""

    values: np.ndarray  # a (2z + 1), increasing
    masses: np.ndarray  # P[Z = z]
    cutoff: int
    omitted: float  # bound on P[|Z| > K]


def mechanism_level(mechanism: NoiseMechanism, has_c: bool, tail_mass: float):
    """A level's increments under the truth, from a mechanism: ``(_Level, certain mass)``.

    The truth's noise z (its table: the whole support if bounded) adds
    ``logpmf(z) - logpmf(z + 1)`` (truth T = 1) or ``logpmf(z) - logpmf(z - 1)``
    (T = 0) to the log odds of the truth. Equal increments are merged (the
    discrete Laplace has two); ``+inf`` increments (only the truth can produce
    the release) are returned apart, as the certain mass.
    """
    table = noise_table(mechanism, tail_mass)
    z, masses = support_points(table)
    increments = log_ratio(mechanism.logpmf(z), mechanism.logpmf(z + 1 if has_c else z - 1))
    certain = math.fsum(masses[increments == np.inf])
    finite = np.isfinite(increments)
    values, inverse = np.unique(increments[finite], return_inverse=True)
    weights = np.bincount(inverse, weights=masses[finite], minlength=values.size)
    if values.size == 0:
        values, weights = np.zeros(1), np.zeros(1)
    reach = int(max(-table.start, table.start + table.probabilities.size - 1))
    return _Level(values, weights, reach, float(table.omitted_mass)), certain


def _level(sigma2: float, tail_mass: float, copies: int) -> _Level:
    table = discrete_gaussian.table(sigma2, tail_mass, copies)
    values = (2.0 * table.support + 1.0) / (2.0 * sigma2)
    return _Level(values, table.probabilities, -table.start, table.omitted_mass)


def _grid_prefixes(levels: list[_Level], grid_width: float):
    """Distribution of the grid version of ``L_j = Σ_{i≤j} a_i(2 z_i + 1)`` for every prefix j.

    Each level's increment is moved to the two neighbouring multiples of the
    width ``h`` with weights that keep its mean (a value at ``(k + f)h`` puts
    ``1 - f`` of its mass on ``kh`` and ``f`` on ``(k+1)h``); the grid
    distributions are then convolved exactly by shifted adds
    (:func:`_choose_shifted_adds`). Yields ``(first index, masses, spread)`` with
    ``spread = Σ_{i≤j} h² Σ_z P[z] f(1 - f)``, the summed variance the splitting adds.
    """
    kernels = [_grid_kernel(level, grid_width) for level in levels]
    size, work = 1, 0
    for _, shifts, _, span, _ in kernels:
        size, work = size + span, work + size * shifts.size
    shifted_adds = _choose_shifted_adds(work)
    dist, first, spread = np.ones(1), 0, 0.0
    for start, shifts, weights, span, variance in kernels:
        spread += variance
        dist = shifted_adds(dist, shifts, weights, dist.size + span)
        first += start
        yield first, dist, spread


def _grid_kernel(level: _Level, h: float):
    """A level's increment on the grid of width ``h``: ``(first index, shifts, weights, span,
    added variance)``, the shifts (from the first index, increasing) of its positive weights,
    ``span`` the last grid index less the first (of any weight)."""
    position = level.values / h
    base = np.floor(position)
    frac = position - base
    variance = h * h * float(np.sum(level.masses * frac * (1.0 - frac)))
    index = np.concatenate([base, base + 1.0]).astype(np.int64)
    weight = np.concatenate([level.masses * (1.0 - frac), level.masses * frac])
    offsets, inverse = np.unique(index, return_inverse=True)
    kernel = np.bincount(inverse, weights=weight)
    positive = kernel > 0.0
    shifts = offsets[positive] - offsets[0]
    return int(offsets[0]), shifts, kernel[positive], int(offsets[-1] - offsets[0]), variance


#: Shifted adds (points times shifts) from which one call of :func:`_grid_prefixes` loads the
#: compiled kernel: about 0.12 s of numpy's, what importing numba and loading the kernel from
#: its disk cache cost (it compiles in about 0.5 s the first time on a machine).
_COMPILE_WORK = 100_000_000
_KERNEL = f"{__package__}._shifted_adds"


def _choose_shifted_adds(work: int):
    """:func:`._shifted_adds.shifted_adds` (numba; the same sums, to the last bit, about 6×
    faster) for ``work`` shifted adds from :data:`_COMPILE_WORK` on, or once it is loaded;
    else :func:`_python_shifted_adds`."""
    if work >= _COMPILE_WORK or _KERNEL in sys.modules:
        from ._shifted_adds import shifted_adds  # numba: imported when first needed

        return shifted_adds
    return _python_shifted_adds


def _python_shifted_adds(dist, shifts, weights, size):
    """``new = zeros(size)``, then ``new[shifts[k] : shifts[k] + dist.size] += weights[k] * dist``
    for ``k = 0, 1, …``, one numpy pass over ``dist`` a shift."""
    new = np.zeros(size)
    for shift, weight in zip(shifts, weights, strict=True):
        new[shift : shift + dist.size] += weight * dist
    return new


def _upper_tail_sums(masses: np.ndarray) -> np.ndarray:
    """``out[k] = Σ_{j ≥ k} masses[j]`` for ``k = 0 … n`` (``out[n] = 0``), each accurate.

    A running sum of n terms can be off by ``n·ε`` of its size; each tail is
    taken from whichever running sum (from the top, or the total minus the
    one from the bottom) adds up the smaller part, so a tail near 1 keeps the
    accuracy of its small complement.
    """
    total = math.fsum(masses)
    from_top = np.concatenate([np.cumsum(masses[::-1])[::-1], [0.0]])
    below = np.concatenate([[0.0], np.cumsum(masses)])
    return np.where(below < from_top, total - below, from_top)


def _expit_expectation(offsets: np.ndarray, values: np.ndarray, masses: np.ndarray):
    """``Σ_k masses[k] · expit(offset + values[k])`` for every offset."""
    out = np.empty(offsets.shape)
    chunk = rows_per_block(values.size)
    for start in range(0, offsets.size, chunk):
        part = slice(start, start + chunk)
        out[part] = special.expit(offsets[part, None] + values[None, :]) @ masses
    return out


def _half_support(levels: list[_Level]):
    """Exact support of ``Σ`` over ``levels``: values (float) and masses, unsorted."""
    values, masses = np.zeros(1), np.ones(1)
    for level in levels:
        values = np.add.outer(values, level.values).ravel()
        masses = np.multiply.outer(masses, level.masses).ravel()
    return values, masses


def _split(levels: list[_Level]) -> tuple[list[_Level], list[_Level]]:
    """Two groups of levels with supports as equal as possible (largest first, greedy)."""
    order = sorted(range(len(levels)), key=lambda i: -levels[i].values.size)
    groups: tuple[list[int], list[int]] = ([], [])
    sizes = [1, 1]
    for i in order:
        g = 0 if sizes[0] <= sizes[1] else 1
        groups[g].append(i)
        sizes[g] *= levels[i].values.size
    return [levels[i] for i in groups[0]], [levels[i] for i in groups[1]]


def _exact_upper_tail(levels: list[_Level], thresholds: np.ndarray, share: np.ndarray):
    """``P[L > t] + share · P[L = t]`` over the truncated noise, exactly (a tie counts ``share``).

    Meet in the middle: ``L = A + B`` over two groups of levels; the support of
    B is sorted once with its suffix sums of mass, and for each support point
    of A the mass of ``B ≥ t - A`` is looked up. Returns None if a group's
    support exceeds ``_MAX_EXACT_SUPPORT`` points, or what fits the memory budget.
    """
    group_a, group_b = _split(levels)
    sizes = [math.prod(lv.values.size for lv in g) for g in (group_a, group_b)]  # no overflow
    if max(sizes) > grid_points(_MAX_EXACT_SUPPORT, "the exact tail's supports", 16):
        return None
    a_values, a_masses = _half_support(group_a)
    b_values, b_masses = _half_support(group_b)
    order = np.argsort(b_values, kind="stable")
    b_values = b_values[order]
    suffix = _upper_tail_sums(b_masses[order])  # mass of B at sorted positions ≥ k
    # Sums within rounding of the threshold are ties (commensurate ρ_i): counted ``share``.
    reach = sum(float(np.max(np.abs(lv.values))) for lv in levels)
    tolerance = tie_tolerance(reach + np.abs(thresholds))
    out = np.empty(thresholds.shape)
    chunk = rows_per_block(a_values.size)
    for start in range(0, thresholds.size, chunk):
        part = slice(start, start + chunk)
        target = thresholds[part, None] - a_values[None, :]
        slack = tolerance[part, None]
        left = np.searchsorted(b_values, target - slack, side="left")
        right = np.searchsorted(b_values, target + slack, side="right")
        above, tied = suffix[right], suffix[left] - suffix[right]
        out[part] = (above + share[part, None] * tied) @ a_masses
    return out


def _grid_upper_tail_bracket(first, dist, h, n_levels, thresholds):
    """``[P[L_h > t + ℓh], P[L_h ≥ t - ℓh]]``: bounds on ``P[L ≥ t]`` and ``P[L > t]``.

    The grid version ``L_h`` is coupled with ``L`` so that ``|L_h - L| ≤ ℓh``.
    """
    values = (first + np.arange(dist.size)) * h
    suffix = _upper_tail_sums(dist)
    slack = n_levels * h
    lower = suffix[np.searchsorted(values, thresholds + slack, side="right")]
    upper = suffix[np.searchsorted(values, thresholds - slack, side="left")]
    return lower, upper


def marginals_of_row(sigma2_row, offsets, share, tail_mass, grid_width):
    """Marginal measures for one ρ row, for every prefix of its levels.

    ``offsets`` are the prior log odds of the truth, ``c = ±logit(p)``; the
    posterior of the truth is ``expit(c + L)`` with ``L`` the log likelihood
    ratio of the T = 1 law (also for the truth T = 0, by the symmetry
    ``Z ↦ -Z``), and the decision is right iff ``L > -c``; a tie ``L = -c``
    counts ``share`` (the tie rule's credit of the truth). Returns a dict of
    arrays with a leading prefix axis.
    """
    n_levels = sigma2_row.size
    levels = [_level(float(s2), tail_mass / n_levels, n_levels) for s2 in sigma2_row]
    return marginals_of_levels(levels, None, offsets, share, grid_width)


def marginals_of_levels(levels, certain, offsets, share, grid_width):
    """:func:`marginals_of_row` from the levels' increments (every prefix of them).

    ``certain`` is None or, per level, the mass of a ``+inf`` increment: a
    release that only the truth can produce, whose posterior of the truth is 1
    and whose decision is right. A prefix's certain mass is
    ``Π (finite + certain) - Π finite`` over its levels; it is added to the
    sums over the finite increments.
    """
    n_levels = len(levels)
    span = sum(float(lv.values[-1] - lv.values[0]) for lv in levels)
    points = grid_points(_MAX_GRID_POINTS, "the multi-level grid of L")
    h = max(grid_width, span / (points - 2 * n_levels - 1))
    keys = ("posterior", "posterior_bound", "decision", "decision_bound", "omitted", "exact")
    result = {key: [] for key in keys}
    omitted = 0.0
    finite_mass = total_mass = 1.0
    for j, (first, dist, spread) in enumerate(_grid_prefixes(levels, h), start=1):
        omitted += levels[j - 1].omitted
        sure = 0.0
        if certain is not None:
            finite = math.fsum(levels[j - 1].masses)
            finite_mass *= finite
            total_mass *= finite + certain[j - 1]
            sure = total_mass - finite_mass
        values = (first + np.arange(dist.size)) * h
        post = _expit_expectation(offsets, values, dist) + sure
        result["posterior"].append(post)
        result["posterior_bound"].append(
            np.full(offsets.shape, 0.5 * EXPIT_SECOND_DERIVATIVE_BOUND * spread + omitted)
        )
        exact = _exact_upper_tail(levels[:j], -offsets, share)
        if exact is not None:
            result["decision"].append(exact + sure)
            result["decision_bound"].append(np.full(offsets.shape, omitted))
        else:
            lower, upper = _grid_upper_tail_bracket(first, dist, h, j, -offsets)
            lower, upper = lower + sure, upper + sure + omitted
            result["decision"].append(0.5 * (lower + upper))
            result["decision_bound"].append(0.5 * (upper - lower))
        result["omitted"].append(np.full(offsets.shape, omitted))
        result["exact"].append(np.full(offsets.shape, exact is not None))
    result = {key: np.stack(value) for key, value in result.items()}
    result["cutoffs"] = np.array([lv.cutoff for lv in levels])
    result["grid_width"] = h
    return result
