"""Uniqueness at ℓ levels of the hierarchy: Kazan & Reiter (2023), supplement S1.3, exact.

The adversary knows that the target t is unique in their characteristics
``c_{-e}`` at ℓ nested levels of the geography (block ⊂ block group ⊂ tract ⊂
county ⊂ state ⊂ US) and that ``m_i`` other people at level i have the full
characteristics c (``m_i = 0`` for the unique target of S1.3; any
``0 ≤ m_1 ≤ m_2 ≤ …`` by S1.1). With ``T ∈ {0, 1}`` the indicator that t has c,
prior ``P[T = 1] = p``, the count at level i is ``X_i = m_i + T`` and its
release ``x_i* = X_i + Z_i``, ``Z_i ~ DG(0, σ_i²)`` independent, with
``σ_i² = 1/(2ρ_i)`` (paper) or ``1/ρ_i`` (DAS) for level i's own ρ_i. The
levels share the single unknown T, so the log likelihood ratio adds up:

    log P[x* | T = 1] - log P[x* | T = 0] = Σ_i (2 (x_i* - m_i) - 1) / (2σ_i²),

and the posterior (S1.1) is the logistic function of ``logit(p)`` plus this
sum. For ``m_i = 0`` and the paper's convention this is exactly (S1.1),
``p Π e^{-ρ_i(x_i*-1)²} / (p Π e^{-ρ_i(x_i*-1)²} + (1-p) Π e^{-ρ_i x_i*²})``.
With ℓ = 1 everything reduces to :mod:`.single_block`.

Arrays of releases, known counts and ρ have the levels on their **last axis**
(level 1 = the lowest level, the block); priors and other per-case arguments
broadcast against the remaining axes. "The truth" is the true count ``x1`` at
level 1: ``m_1 + 1`` (the target has c, the default) or ``m_1``; posterior and
risk functions give the probability of the truth, as in :mod:`.single_block`.

The data holder's marginal measures (S1.3's Figure 1) average over all ℓ
releases; see :func:`marginals` for the method and its error bounds.

**Other noise.** Every function takes ``mechanism=`` instead of ``rhos`` and
``convention``: a sequence of :class:`~adversary.noise.mechanisms.NoiseMechanism`,
one per level (one mechanism for every level where the releases fix ℓ). When
every one is a :class:`~adversary.noise.mechanisms.DiscreteGaussianNoise` the
closed forms above are used (the numbers equal those of the same σ² given by
ρ); otherwise level i adds ``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)``
to the log odds, ``±inf`` where bounded noise lets only one value of T produce
the release (the posterior is then exactly 1 or 0). Releases that no value
of T can produce (at some level, or levels certain of opposite values) raise
``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import special

from .._validation import as_counts, as_integers, as_positive, as_probability
from ..budget import DEFAULT_PRESET, get_preset
from ..measures.marginal import MarginalMeasures
from ..measures.noise import (
    impossible_release_error,
    log_ratio,
    mechanism_tuple,
    noise_table,
    resolve_many,
    support_points,
)
from ..measures.protocol import CaseFields
from ..measures.protocol import prior_label as prior_label_of
from ..measures.releases import DEFAULT_TAIL_MASS
from ..noise import discrete_gaussian, noise_variance
from ..noise.mechanisms import NoiseMechanism

__all__ = [
    "DEFAULT_GRID_WIDTH",
    "EXPIT_SECOND_DERIVATIVE_BOUND",
    "LEVELS_2020",
    "MultiLevelCase",
    "MultiLevelMarginals",
    "correct_decision_probability",
    "decision",
    "log_likelihood_ratio",
    "marginal_by_levels",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "posterior",
    "rhos_2020",
    "risk",
]

#: The levels of S1.3 in their order ℓ = 1..6 (budget-preset level keys).
LEVELS_2020 = ("block", "block_group", "tract", "county", "state", "us")

#: ``max |expit''| = 1/(6√3)``, attained where ``expit = 1/2 ± 1/(2√3)``.
EXPIT_SECOND_DERIVATIVE_BOUND = 1.0 / (6.0 * np.sqrt(3.0))

#: Spacing ``h`` of the grid on which the log likelihood ratio is convolved.
DEFAULT_GRID_WIDTH = 1e-4

# Largest grid for the log likelihood ratio (8 M float64 = 64 MB); wider
# supports get a coarser grid and a correspondingly larger error bound.
_MAX_GRID_POINTS = 1 << 23
# Largest support of one half of the levels for the exact decision probability.
_MAX_EXACT_SUPPORT = 1 << 22
# Largest number of (case, support point) pairs evaluated at once.
_BLOCK_ELEMENTS = 2_000_000


# --- inputs ------------------------------------------------------------------------------


def rhos_2020(levels: int = 6, *, preset: str = DEFAULT_PRESET, query: str = "detailed"):
    """ρ of ``query`` at the first ``levels`` levels of block → block group → tract → county
    → state → US (:data:`LEVELS_2020`, the order of S1.3), from a budget preset.

    The default is the 2020 persons file's detailed (GVHR) query, paper
    Table 2: ≈ 0.0992, 0.2465, 0.0504, 0.0514, 0.0505, 0.0509. The noise
    convention is chosen where ρ is used, not here.
    """
    if (
        isinstance(levels, bool)
        or not isinstance(levels, int | np.integer)
        or not 1 <= levels <= len(LEVELS_2020)
    ):
        raise ValueError(f"levels must be an integer from 1 to {len(LEVELS_2020)}, got {levels!r}")
    allocation = get_preset(preset)
    return np.array([allocation.rho(level, query) for level in LEVELS_2020[:levels]])


def _rhos(rhos) -> np.ndarray:
    """ρ per level as float64 with the levels on the last axis (≥ 1 level, every ρ > 0)."""
    rhos = as_positive(rhos, "rhos")
    if rhos.ndim == 0 or rhos.shape[-1] == 0:
        raise ValueError(
            f"rhos must hold one ρ per level on its last axis (at least one), got {rhos!r}"
        )
    return rhos


def _noise(rhos, convention, mechanism, n_levels: int | None = None):
    """``(σ² with the levels on the last axis | None, mechanisms | None, ℓ)``.

    ``rhos`` (with ``convention``) or ``mechanism`` (one per level, or one for
    the ``n_levels`` levels the releases fix); all-discrete-Gaussian mechanisms
    give their σ² (the closed-form path).
    """
    if mechanism is None:
        if rhos is None:
            raise ValueError("rhos: give rhos (with convention) or mechanism")
        rhos = _rhos(rhos)
        return noise_variance(rhos, convention), None, rhos.shape[-1]
    sigma2, mechanisms = resolve_many(rhos, convention, mechanism, n_levels, "rhos")
    n = len(mechanisms) if sigma2 is None else sigma2.shape[-1]
    return sigma2, mechanisms, n


def _level_count(releases) -> int | None:
    """ℓ from the releases' last axis (for one mechanism given for every level)."""
    releases = np.asarray(releases)
    return int(releases.shape[-1]) if releases.ndim else None


def _per_level_ratios(releases, known, mechanisms) -> np.ndarray:
    """``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)`` per level (levels last).

    Raises where a release is impossible under both values of T, at one level
    or across levels (one certain of T = 1, another of T = 0).
    """
    noise = releases - known
    shape = np.broadcast_shapes(releases.shape, known.shape)
    noise = np.broadcast_to(noise, shape)
    columns = [
        log_ratio(m.logpmf(noise[..., i] - 1), m.logpmf(noise[..., i]))
        for i, m in enumerate(mechanisms)
    ]
    per_level = np.stack(columns, axis=-1)
    both_certain = np.any(per_level == np.inf, axis=-1) & np.any(per_level == -np.inf, axis=-1)
    impossible = np.any(np.isnan(per_level), axis=-1) | both_certain
    if np.any(impossible):
        bad = np.broadcast_to(releases, shape)[impossible]
        raise impossible_release_error("releases", bad.tolist(), mechanisms)
    return per_level


def _known_counts(known_counts, n_levels: int) -> np.ndarray:
    """``m_i`` with the levels on the last axis; a number means the same m at every level."""
    if known_counts is None:
        return np.zeros(n_levels, dtype=np.int64)
    known = as_counts(known_counts, "known_counts")
    if known.ndim == 0:
        return np.full(n_levels, known, dtype=np.int64)
    if known.shape[-1] != n_levels:
        raise ValueError(
            f"known_counts must have one count per level on its last axis ({n_levels} levels "
            f"from rhos), got shape {known.shape}"
        )
    if np.any(np.diff(known, axis=-1) < 0):
        raise ValueError(
            "known_counts must not decrease from one level to the next (the levels are nested, "
            f"so a higher level holds everyone of a lower one), got {known_counts!r}"
        )
    return known


def _releases(releases, n_levels: int, name: str = "releases") -> np.ndarray:
    releases = as_integers(releases, name)
    if releases.ndim == 0 or releases.shape[-1] != n_levels:
        raise ValueError(
            f"{name} must have one noisy count per level on their last axis ({n_levels} "
            f"levels from rhos), got shape {releases.shape}"
        )
    return releases


def _truth_has_c(known_first: np.ndarray, true_count) -> np.ndarray:
    """True where the truth is ``x1 = m_1 + 1``; ``true_count`` must be ``m_1`` or ``m_1 + 1``."""
    if true_count is None:
        return np.ones(known_first.shape, dtype=bool)
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known_first) & (truth != known_first + 1)):
        raise ValueError(
            "true_count must equal the level-1 known count m_1 or m_1 + 1, got "
            f"true_count={true_count!r} with m_1={known_first!r}"
        )
    return truth == known_first + 1


# --- the adversary's posterior (S1.1) ----------------------------------------------------


def _level_ratios(releases, rhos, known_counts, convention, mechanism):
    """Per-level log likelihood ratios (levels last) and the validated known counts."""
    sigma2, mechanisms, n_levels = _noise(rhos, convention, mechanism, _level_count(releases))
    releases = _releases(releases, n_levels)
    known = _known_counts(known_counts, n_levels)
    if mechanisms is None:
        per_level = (2.0 * (releases - known).astype(np.float64) - 1.0) / (2.0 * sigma2)
    else:
        per_level = _per_level_ratios(releases, known, mechanisms)
    return per_level, known


def log_likelihood_ratio(
    releases, rhos=None, known_counts=None, convention="paper", *, mechanism=None
) -> np.ndarray:
    """``Σ_i (2(x_i* - m_i) - 1)/(2σ_i²)``: log P[releases | T=1] - log P[releases | T=0].

    The sum over the last (levels) axis of the single-block ratio of each
    level; for the paper's convention ``1/(2σ_i²) = ρ_i``. With ``mechanism``:
    the sum of ``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)``.
    """
    per_level, _ = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    return per_level.sum(axis=-1)


def _log_odds_of_truth(releases, prior, rhos, known_counts, true_count, convention, mechanism):
    prior = as_probability(prior, "prior")
    per_level, known = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    has_c = _truth_has_c(known[..., 0], true_count)
    log_odds_c = special.logit(prior) + per_level.sum(axis=-1)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    return np.where(has_c, log_odds_c, -log_odds_c), prior_of_truth


def posterior(
    releases,
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    *,
    mechanism=None,
) -> np.ndarray:
    """Posterior probability of the truth given the ℓ releases, equation (S1.1).

    ``p Π_i e^{-ρ_i(x_i*-m_i-1)²} / (p Π_i e^{-ρ_i(x_i*-m_i-1)²} + (1-p) Π_i e^{-ρ_i(x_i*-m_i)²})``
    for the default truth (paper convention), computed as the logistic
    function of the posterior log odds. ``releases``, ``rhos`` and
    ``known_counts`` have the levels on their last axis; the result has the
    broadcast shape of the other axes and ``prior``.
    """
    log_odds, _ = _log_odds_of_truth(
        releases, prior, rhos, known_counts, true_count, convention, mechanism
    )
    return special.expit(log_odds)


def risk(
    releases,
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    *,
    mechanism=None,
) -> np.ndarray:
    """Disclosure risk: the posterior (S1.1) of the truth over its prior, as (3.2)."""
    log_odds, prior_of_truth = _log_odds_of_truth(
        releases, prior, rhos, known_counts, true_count, convention, mechanism
    )
    return special.expit(log_odds) / prior_of_truth


def decision(
    releases, prior, rhos=None, known_counts=None, convention="paper", *, mechanism=None
) -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss, as (3.5), from all ℓ releases.

    ``m_1 + 1`` where its posterior (S1.1) is at least 1/2 (log odds ≥ 0; a
    tie goes to ``m_1 + 1`` as in :func:`.single_block.decision`), else ``m_1``.
    """
    prior = as_probability(prior, "prior")
    per_level, known = _level_ratios(releases, rhos, known_counts, convention, mechanism)
    n_levels = per_level.shape[-1]
    logit = special.logit(prior)
    log_odds = logit + per_level.sum(axis=-1)
    # A tie (possible when the ρ_i are commensurate, e.g. equal) may not sum to exactly 0.
    finite = np.where(np.isfinite(per_level), np.abs(per_level), 0.0)
    tolerance = _tie_tolerance(np.abs(logit) + finite.sum(axis=-1), n_levels)
    return known[..., 0] + (log_odds >= -tolerance).astype(np.int64)


def _tie_tolerance(magnitude, n_terms: int):
    """Rounding allowance of a float sum of ``n_terms`` terms of total size ``magnitude``.

    Log odds within this of 0 are taken as a tie (decided for ``m_1 + 1``).
    Exact ties occur whenever the ρ_i are commensurate (repeated releases with
    one ρ, say); the float sum of their terms need not be exactly 0.
    """
    return 8.0 * (n_terms + 2) * np.finfo(np.float64).eps * magnitude


# --- the data holder's view: marginal over releases -------------------------------------


@dataclass(frozen=True)
class MultiLevelMarginals:
    """Marginal measures of the ℓ-level attack for a truth, with their error bounds.

    Arrays have the broadcast shape of the cases (``prior``, ``true_count`` and
    the leading axes of ``rhos``), or for :func:`marginal_by_levels` a leading
    axis over ℓ = 1, 2, ….

    Attributes
    ----------
    marginal_posterior, marginal_risk, correct_decision_probability
        The measures (3.3), (3.4) and (3.6) with the posterior (S1.1).
    posterior_error_bound, risk_error_bound, decision_error_bound
        Rigorous bounds on the absolute error of each (before floating-point
        rounding): truncation of the noise plus, for the posterior and risk,
        the grid of the log likelihood ratio (:func:`marginals`).
    omitted_mass
        Upper bound on the probability of the releases left out (noise beyond
        ``cutoffs`` at some level).
    cutoffs
        The noise cut-off ``K_i`` per level (levels on the last axis).
    grid_width
        The spacing ``h`` actually used for the log likelihood ratio, per case.
    decision_exact
        True where the decision probability was summed exactly (meet in the
        middle); False where the support was too large and the grid bracket
        was used instead.
    """

    marginal_posterior: np.ndarray
    marginal_risk: np.ndarray
    correct_decision_probability: np.ndarray
    posterior_error_bound: np.ndarray
    risk_error_bound: np.ndarray
    decision_error_bound: np.ndarray
    omitted_mass: np.ndarray
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


def _mechanism_level(mechanism: NoiseMechanism, has_c: bool, tail_mass: float):
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


def _level(sigma2: float, tail_mass: float) -> _Level:
    reach = int(discrete_gaussian.cutoff(sigma2, tail_mass))
    z = np.arange(-reach, reach + 1)
    omitted = float(2.0 * discrete_gaussian.tail_bound(reach + 1, sigma2))
    values = (2.0 * z + 1.0) / (2.0 * sigma2)
    return _Level(values, discrete_gaussian.pmf(z, sigma2), reach, omitted)


def _grid_prefixes(levels: list[_Level], grid_width: float):
    """Distribution of the grid version of ``L_j = Σ_{i≤j} a_i(2 z_i + 1)`` for every prefix j.

    Each level's increment is moved to the two neighbouring multiples of the
    width ``h`` with weights that keep its mean (a value at ``(k + f)h`` puts
    ``1 - f`` of its mass on ``kh`` and ``f`` on ``(k+1)h``); the grid
    distributions are then convolved exactly by shifted adds. Yields
    ``(first index, masses, spread)`` with ``spread = Σ_{i≤j} h² Σ_z P[z] f(1 - f)``,
    the summed variance the splitting adds.
    """
    h = grid_width
    dist, first, spread = np.ones(1), 0, 0.0
    for level in levels:
        position = level.values / h
        base = np.floor(position)
        frac = position - base
        spread += h * h * float(np.sum(level.masses * frac * (1.0 - frac)))
        index = np.concatenate([base, base + 1.0]).astype(np.int64)
        weight = np.concatenate([level.masses * (1.0 - frac), level.masses * frac])
        offsets, inverse = np.unique(index, return_inverse=True)
        kernel = np.bincount(inverse, weights=weight)
        new = np.zeros(dist.size + int(offsets[-1] - offsets[0]))
        for offset, w in zip(offsets - offsets[0], kernel, strict=True):
            if w > 0.0:
                new[offset : offset + dist.size] += w * dist
        dist, first = new, first + int(offsets[0])
        yield first, dist, spread


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
    chunk = max(1, _BLOCK_ELEMENTS // max(1, values.size))
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


def _exact_upper_tail(levels: list[_Level], thresholds: np.ndarray, strict: np.ndarray):
    """``P[L ≥ t]`` (``P[L > t]`` where ``strict``) over the truncated noise, exactly.

    Meet in the middle: ``L = A + B`` over two groups of levels; the support of
    B is sorted once with its suffix sums of mass, and for each support point
    of A the mass of ``B ≥ t - A`` is looked up. Returns None if a group's
    support exceeds ``_MAX_EXACT_SUPPORT`` points.
    """
    group_a, group_b = _split(levels)
    sizes = [int(np.prod([lv.values.size for lv in g])) for g in (group_a, group_b)]
    if max(sizes) > _MAX_EXACT_SUPPORT:
        return None
    a_values, a_masses = _half_support(group_a)
    b_values, b_masses = _half_support(group_b)
    order = np.argsort(b_values, kind="stable")
    b_values = b_values[order]
    suffix = _upper_tail_sums(b_masses[order])  # mass of B at sorted positions ≥ k
    # Sums within rounding of the threshold are ties (commensurate ρ_i): counted for
    # "≥", left out for ">".
    reach = sum(float(np.max(np.abs(lv.values))) for lv in levels)
    tolerance = _tie_tolerance(reach + np.abs(thresholds), len(levels))
    out = np.empty(thresholds.shape)
    chunk = max(1, _BLOCK_ELEMENTS // max(1, a_values.size))
    for start in range(0, thresholds.size, chunk):
        part = slice(start, start + chunk)
        target = thresholds[part, None] - a_values[None, :]
        slack = tolerance[part, None]
        left = np.searchsorted(b_values, target - slack, side="left")
        right = np.searchsorted(b_values, target + slack, side="right")
        position = np.where(strict[part, None], right, left)
        out[part] = suffix[position] @ a_masses
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


def _marginals_of_row(sigma2_row, offsets, strict, tail_mass, grid_width):
    """Marginal measures for one ρ row, for every prefix of its levels.

    ``offsets`` are the prior log odds of the truth, ``c = ±logit(p)``; the
    posterior of the truth is ``expit(c + L)`` with ``L`` the log likelihood
    ratio of the T = 1 law (also for the truth T = 0, by the symmetry
    ``Z ↦ -Z``), and the decision is right iff ``L ≥ -c`` (truth T = 1) or
    ``L > -c`` (T = 0, ties go to T = 1). Returns a dict of arrays with a
    leading prefix axis.
    """
    n_levels = sigma2_row.size
    levels = [_level(float(s2), tail_mass / n_levels) for s2 in sigma2_row]
    return _marginals_of_levels(levels, None, offsets, strict, grid_width)


def _marginals_of_levels(levels, certain, offsets, strict, grid_width):
    """:func:`_marginals_of_row` from the levels' increments (every prefix of them).

    ``certain`` is None or, per level, the mass of a ``+inf`` increment: a
    release that only the truth can produce, whose posterior of the truth is 1
    and whose decision is right. A prefix's certain mass is
    ``Π (finite + certain) - Π finite`` over its levels; it is added to the
    sums over the finite increments.
    """
    n_levels = len(levels)
    span = sum(float(lv.values[-1] - lv.values[0]) for lv in levels)
    h = max(grid_width, span / (_MAX_GRID_POINTS - 2 * n_levels - 1))
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
        exact = _exact_upper_tail(levels[:j], -offsets, strict)
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


def _validated_tail_and_grid(tail_mass, grid_width) -> tuple[float, float]:
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    grid_width = as_positive(grid_width, "grid_width")
    if grid_width.ndim != 0:
        raise ValueError(f"grid_width must be one number > 0, got {grid_width!r}")
    return tail_mass, float(grid_width)


def _marginal_cases(
    prior, rhos, known_counts, true_count, convention, tail_mass, grid_width, mechanism=None
):
    """Broadcast cases, compute every prefix of levels; arrays have a leading prefix axis."""
    prior = as_probability(prior, "prior")
    sigma2, mechanisms, n_levels = _noise(rhos, convention, mechanism)
    known = _known_counts(known_counts, n_levels)
    has_c = _truth_has_c(known[..., 0], true_count)
    tail_mass, grid_width = _validated_tail_and_grid(tail_mass, grid_width)
    if mechanisms is not None:
        return _mechanism_cases(prior, has_c, mechanisms, tail_mass, grid_width)
    shape = np.broadcast_shapes(prior.shape, has_c.shape, sigma2.shape[:-1])
    prior = np.broadcast_to(prior, shape).ravel()
    has_c = np.broadcast_to(has_c, shape).ravel()
    rows = np.broadcast_to(sigma2, (*shape, n_levels)).reshape(-1, n_levels)
    logit = special.logit(prior)
    offsets = np.where(has_c, logit, -logit)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)

    n_cases = prior.size
    names = ("posterior", "posterior_bound", "decision", "decision_bound", "omitted", "exact")
    out = {
        name: np.empty((n_levels, n_cases), dtype=bool if name == "exact" else np.float64)
        for name in names
    }
    cutoffs = np.empty((n_cases, n_levels), dtype=np.int64)
    widths = np.empty(n_cases)
    unique_rows, which = np.unique(rows, axis=0, return_inverse=True)
    for r, row in enumerate(unique_rows):
        at = which.reshape(-1) == r
        part = _marginals_of_row(row, offsets[at], ~has_c[at], tail_mass, grid_width)
        for name in names:
            out[name][:, at] = part[name]
        cutoffs[at] = part["cutoffs"]
        widths[at] = part["grid_width"]
    return out, prior_of_truth, shape, cutoffs, widths


def _mechanism_cases(prior, has_c, mechanisms, tail_mass, grid_width):
    """:func:`_marginal_cases` for one row of mechanisms (one per level), any noise.

    Cases are grouped by their truth: without symmetry of the noise the law of
    the increments differs between T = 1 and T = 0.
    """
    n_levels = len(mechanisms)
    shape = np.broadcast_shapes(prior.shape, has_c.shape)
    prior = np.broadcast_to(prior, shape).ravel()
    has_c = np.broadcast_to(has_c, shape).ravel()
    logit = special.logit(prior)
    offsets = np.where(has_c, logit, -logit)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    names = ("posterior", "posterior_bound", "decision", "decision_bound", "omitted", "exact")
    out = {
        name: np.empty((n_levels, prior.size), dtype=bool if name == "exact" else np.float64)
        for name in names
    }
    cutoffs = np.empty((prior.size, n_levels), dtype=np.int64)
    widths = np.empty(prior.size)
    for flag in (True, False):
        at = has_c == flag
        if not np.any(at):
            continue
        parts = [_mechanism_level(m, flag, tail_mass / n_levels) for m in mechanisms]
        levels = [level for level, _ in parts]
        certain = [mass for _, mass in parts]
        part = _marginals_of_levels(levels, certain, offsets[at], ~has_c[at], grid_width)
        for name in names:
            out[name][:, at] = part[name]
        cutoffs[at] = part["cutoffs"]
        widths[at] = part["grid_width"]
    return out, prior_of_truth, shape, cutoffs, widths


def marginals(
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    *,
    mechanism=None,
) -> MultiLevelMarginals:
    """Marginal posterior, marginal risk and correct-decision probability over the ℓ releases.

    The data holder's measures (3.3), (3.4) and (3.6) with the posterior
    (S1.1): averages over ``x_i* = x_i + Z_i``, ``Z_i ~ DG(0, σ_i²)``
    independent. With ``a_i = 1/(2σ_i²)`` and the truth T = 1, the posterior is
    ``expit(logit p + L)``, ``L = Σ_i a_i (2 Z_i + 1)``; for the truth T = 0
    the same law of L gives ``expit(logit(1-p) + L)`` (``Z ↦ -Z``). L is a sum
    of independent variables on the incommensurate lattices ``a_i(2ℤ + 1)``,
    whose joint support (~50⁶ points for the 2020 ρ) is too large to sum.

    **Noise truncation.** Level i's noise is summed over ``|z| ≤ K_i``,
    ``K_i = cutoff(σ_i², tail_mass/ℓ)``
    (:func:`adversary.noise.discrete_gaussian.cutoff`); the omitted releases
    have probability at most ``ε = Σ_i 2·tail_bound(K_i + 1, σ_i²) ≤ tail_mass``
    (reported as ``omitted_mass``). Sums are not renormalised, so with values
    in [0, 1] the truncated sum lies in ``[E - ε, E]``.

    **Marginal posterior and risk: mean-preserving grid.** Each level's
    increment ``v = a_i(2z + 1) = (k + f)h`` is split onto the grid ``hℤ``
    (mass ``1 - f`` at ``kh``, ``f`` at ``(k+1)h``), which keeps its mean, and
    the grid distributions are convolved exactly (all prefixes ℓ' ≤ ℓ come out
    of one pass). For any ``g`` with ``|g''| ≤ M`` a split changes ``E g`` by at
    most ``(M/2) h² f(1-f)`` per point (Taylor to second order; the first
    order cancels), and averaging over the other levels keeps ``|g''| ≤ M``. With
    ``g = expit``, ``M = 1/(6√3)`` (:data:`EXPIT_SECOND_DERIVATIVE_BOUND`), so

        |error of the marginal posterior| ≤ (M/2) Σ_i h² Σ_z P[z] f(1-f) + ε
                                           ≤ ℓ M h²/8 + ε,

    about 7e-10 for ℓ = 6 at the default ``h = 1e-4`` (``posterior_error_bound``;
    the risk's bound is this over the prior of the truth). ``h`` grows beyond
    ``grid_width`` only if the grid would exceed 2²³ points.

    **Correct-decision probability: exact, meet in the middle.** The decision
    is right iff ``L ≥ -logit p`` (truth T = 1) or ``L > logit p`` (T = 0). The
    levels are split into two groups whose truncated supports A, B are
    enumerated exactly (≈ 1.0·10⁵ and 7·10⁴ points for the 2020 ρ, ℓ = 6); B is
    sorted with suffix sums of mass and ``P[A + B ≥ t]`` is summed over A by
    binary search. The error is only the truncation, ``≤ ε``. Log odds within
    floating rounding of 0 (``8(ℓ+2)·eps`` times the largest possible size of
    the sum) are taken as ties and go to ``m_1 + 1``, as :func:`decision` does:
    exact ties occur when the ρ_i are commensurate (e.g. repeated releases with
    one ρ and p = 1/2, :mod:`adversary.analyses.sequential`), and their float sums
    need not be exactly 0. Should a group exceed 2²² points, the
    grid above brackets it instead: ``|L_h - L| ≤ ℓh`` gives
    ``P[L_h > t + ℓh] ≤ P[L ≥ t] ≤ P[L_h ≥ t - ℓh] + ε``; the midpoint is
    returned with half the bracket as the bound (``decision_exact`` False).

    **Other noise** (``mechanism``, one per level, not all discrete
    Gaussian): level i's truncated noise is its table (the whole support for
    bounded noise, whose ε is 0), and its increment of the truth's log odds is
    ``logpmf_i(z) - logpmf_i(z ± 1)`` instead of ``a_i(2z + 1)`` (equal
    increments merged: the discrete Laplace has two values). A ``+inf``
    increment — a release only the truth can produce — makes the posterior 1
    and the decision right whatever the other levels say; that mass,
    ``Π_i (finite_i + certain_i) - Π_i finite_i``, is added to both sums over
    the finite increments, which go through the same grid and meet in the
    middle as above, with the same bounds. Without symmetric noise the truths
    T = 1 and T = 0 are summed separately.

    Arguments broadcast as in :func:`posterior` (levels on the last axis of
    ``rhos`` and ``known_counts``); ``true_count`` is the true ``x1``
    (default ``m_1 + 1``). ``known_counts`` matter only through the truth.
    With ``mechanism``, the cases are the broadcast of ``prior`` and ``true_count``.
    """
    out, prior_of_truth, shape, cutoffs, widths = _marginal_cases(
        prior, rhos, known_counts, true_count, convention, tail_mass, grid_width, mechanism
    )
    last = -1
    return MultiLevelMarginals(
        marginal_posterior=out["posterior"][last].reshape(shape),
        marginal_risk=(out["posterior"][last] / prior_of_truth).reshape(shape),
        correct_decision_probability=out["decision"][last].reshape(shape),
        posterior_error_bound=out["posterior_bound"][last].reshape(shape),
        risk_error_bound=(out["posterior_bound"][last] / prior_of_truth).reshape(shape),
        decision_error_bound=out["decision_bound"][last].reshape(shape),
        omitted_mass=out["omitted"][last].reshape(shape),
        cutoffs=cutoffs.reshape(*shape, -1),
        grid_width=widths.reshape(shape),
        decision_exact=out["exact"][last].reshape(shape),
    )


def marginal_posterior(
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    *,
    mechanism=None,
) -> np.ndarray:
    """Posterior (S1.1) of the truth averaged over the ℓ releases, (3.3); see :func:`marginals`."""
    return marginals(
        prior,
        rhos,
        known_counts,
        true_count,
        convention,
        tail_mass,
        grid_width,
        mechanism=mechanism,
    ).marginal_posterior


def marginal_risk(
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    *,
    mechanism=None,
) -> np.ndarray:
    """Marginal disclosure risk (3.4) of the ℓ-level attack; see :func:`marginals`."""
    return marginals(
        prior,
        rhos,
        known_counts,
        true_count,
        convention,
        tail_mass,
        grid_width,
        mechanism=mechanism,
    ).marginal_risk


def correct_decision_probability(
    prior,
    rhos=None,
    known_counts=None,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    *,
    mechanism=None,
) -> np.ndarray:
    """Probability that the Bayes decision from all ℓ releases is right, as (3.6).

    Exact up to the truncated noise mass (``≤ tail_mass``); see :func:`marginals`.
    """
    return marginals(
        prior, rhos, known_counts, true_count, convention, tail_mass, mechanism=mechanism
    ).correct_decision_probability


def marginal_by_levels(
    priors,
    rhos=None,
    *,
    true_count=None,
    known_count=0,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    mechanism=None,
) -> xr.Dataset:
    """S1.3's Figure 1: the marginal measures for ℓ = 1, 2, …, n levels of uniqueness.

    ``priors`` is a number or 1-d sequence of p; ``rhos`` a 1-d sequence of
    per-level ρ, default :func:`rhos_2020` (block → … → US). Level ℓ uses the
    first ℓ entries of ``rhos``. Returns a Dataset over ``(levels, prior)``
    with ``marginal_posterior``, ``marginal_risk``,
    ``correct_decision_probability``, their error bounds (:func:`marginals`)
    and ``omitted_mass``; coordinate ``level_name`` names the level added at
    each ℓ when ``rhos`` is the default. ``known_count`` is a unique target's
    m at every level (it does not change the marginal measures).
    ``mechanism`` (one per level) replaces ``rhos`` and ``convention``; the
    coordinate ``mechanism`` then labels each level's noise instead of ``rho``.
    """
    default = rhos is None and mechanism is None
    if mechanism is None:
        rhos = rhos_2020() if default else _rhos(rhos)
        if rhos.ndim != 1:
            raise ValueError(f"rhos must be a 1-d sequence of per-level ρ, got shape {rhos.shape}")
    priors = as_probability(priors, "priors")
    if priors.ndim > 1:
        raise ValueError(f"priors must be a number or a 1-d sequence, got shape {priors.shape}")
    priors = np.atleast_1d(priors)
    out, prior_of_truth, _, cutoffs, widths = _marginal_cases(
        priors, rhos, known_count, true_count, convention, tail_mass, grid_width, mechanism
    )
    n_levels = cutoffs.shape[-1]
    dims = ("levels", "prior")
    data = {
        "marginal_posterior": (dims, out["posterior"]),
        "marginal_risk": (dims, out["posterior"] / prior_of_truth),
        "correct_decision_probability": (dims, out["decision"]),
        "posterior_error_bound": (dims, out["posterior_bound"]),
        "risk_error_bound": (dims, out["posterior_bound"] / prior_of_truth),
        "decision_error_bound": (dims, out["decision_bound"]),
        "omitted_mass": (dims, out["omitted"]),
        "decision_exact": (dims, out["exact"]),
    }
    coords = {
        "levels": np.arange(1, n_levels + 1),
        "prior": priors,
        "cutoff": ("levels", cutoffs[0]),
    }
    if mechanism is None:
        coords["rho"] = ("levels", rhos)
    else:
        labels = [m.label for m in mechanism_tuple(mechanism)]
        coords["mechanism"] = ("levels", labels)
    if default:
        coords["level_name"] = ("levels", list(LEVELS_2020[:n_levels]))
    attrs = {
        "convention": str(convention) if mechanism is None else "mechanism",
        "tail_mass": float(tail_mass),
        "grid_width": float(widths[0]),
        "source": "Kazan & Reiter (2023), supplement S1.3, (S1.1) and Figure 1",
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


# --- the attack as a PyMC model ----------------------------------------------------------


def model(releases, prior, rhos=None, known_counts=None, convention="paper", *, mechanism=None):
    """The ℓ-level attack as a PyMC model; its exact posterior is (S1.1).

    Latent ``X1 ~ BernoulliCount(m_1, p)`` (``X1 = m_1 + T``); the level-i
    count is ``m_i + (X1 - m_1)`` and the releases are observed as
    ``DiscreteGaussian(mu = counts, σ_i²)`` over a ``level`` dimension
    (coordinates 1..ℓ). ``releases`` is one observation: a 1-d sequence, one
    noisy count per level. With ``mechanism`` (not all discrete Gaussian) the
    releases are a :func:`~adversary.distributions.NoiseRelease` with each
    level's mechanism.
    """
    import pymc as pm  # deferred: the exact functions above need no PyMC

    from ..distributions import BernoulliCount, DiscreteGaussian, NoiseRelease

    prior = as_probability(prior, "prior")
    if prior.ndim != 0:
        raise ValueError(f"prior must be one probability for a model, got {prior!r}")
    sigma2, mechanisms, n_levels = _noise(rhos, convention, mechanism, _level_count(releases))
    if sigma2 is not None and sigma2.ndim != 1:
        raise ValueError(f"rhos must be a 1-d sequence of per-level ρ, got shape {sigma2.shape}")
    releases = _releases(releases, n_levels)
    if releases.ndim != 1:
        raise ValueError(f"releases must be 1-d, one noisy count per level, got {releases.shape}")
    known = _known_counts(known_counts, n_levels)
    if known.ndim != 1:
        raise ValueError(f"known_counts must be 1-d, one count per level, got {known.shape}")
    with pm.Model(coords={"level": np.arange(1, n_levels + 1)}) as attack:
        x1 = BernoulliCount("X1", known=int(known[0]), p=float(prior))
        counts = known + (x1 - int(known[0]))
        if mechanisms is None:
            DiscreteGaussian("releases", mu=counts, sigma2=sigma2, observed=releases, dims="level")
        else:
            NoiseRelease(
                "releases", mu=counts, mechanism=mechanisms, observed=releases, dims="level"
            )
    return attack


# --- a concrete case ---------------------------------------------------------------------


@dataclass(frozen=True)
class MultiLevelCase(CaseFields):
    """A concrete ℓ-level attack (S1.3): ρ per level, priors, truth and observed releases.

    Implements :class:`~adversary.measures.protocol.Attack`. ``rhos`` holds ρ of
    every level the case knows of, lowest (the block) first; ``levels`` is
    how many of them the target is unique at and the adversary uses (the
    first ``levels``; default all), so the S1.3 curve over ℓ is a sweep of
    ``levels`` with :func:`dataclasses.replace`. ``known_counts`` is ``m_i``
    per level (one number: the same m at every level; default 0, the unique
    target); ``true_count`` the data holder's ``x1`` (default ``m_1 + 1``);
    ``priors`` maps a label to ``p = P[T = 1]``; ``observed_releases`` the
    noisy counts per level that :meth:`model` and :meth:`posterior` condition
    on (``None``: none stated, and those two methods refuse); ``level_names``
    optional names of the levels. ``mechanism``, if given, is the noise of
    every level (a sequence, one per level; stored as a tuple) instead of
    ``rhos`` (then ``None``) and ``convention``.
    """

    name: str
    rhos: tuple[float, ...] | None
    priors: dict[str, float]
    observed_releases: tuple[int, ...] | None = None
    levels: int | None = None
    known_counts: int | tuple[int, ...] = 0
    true_count: int | None = None
    convention: str = "paper"
    level_names: tuple[str, ...] = ()
    description: str = ""
    mechanism: tuple[NoiseMechanism, ...] | None = None

    def __post_init__(self):
        if self.mechanism is not None:
            if self.rhos is not None:
                raise ValueError("rhos: give rhos or mechanism, not both (got both)")
            object.__setattr__(self, "mechanism", mechanism_tuple(self.mechanism))
            n_all = len(self.mechanism)
        else:
            if self.rhos is None:
                raise ValueError("rhos: give rhos (with convention) or mechanism")
            rhos = _rhos(self.rhos)
            if rhos.ndim != 1:
                raise ValueError(
                    f"rhos must be a 1-d sequence of per-level ρ, got shape {rhos.shape}"
                )
            noise_variance(rhos, self.convention)
            object.__setattr__(self, "rhos", tuple(float(r) for r in rhos))
            n_all = rhos.size
        if self.levels is not None and (
            isinstance(self.levels, bool)
            or not isinstance(self.levels, int | np.integer)
            or not 1 <= self.levels <= n_all
        ):
            raise ValueError(
                f"levels must be an integer from 1 to {n_all} (the number of levels of rhos "
                f"or mechanism), got {self.levels!r}"
            )
        known = _known_counts(self.known_counts, n_all)
        if known.ndim != 1:
            raise ValueError(f"known_counts must be one count or one per level, got {known.shape}")
        if np.ndim(self.known_counts) != 0:
            object.__setattr__(self, "known_counts", tuple(int(k) for k in known))
        _truth_has_c(known[0], self.true_count)
        if self.observed_releases is not None:
            releases = _releases(self.observed_releases, n_all, "observed_releases")
            if releases.ndim != 1:
                raise ValueError(
                    f"observed_releases must be 1-d, one noisy count per level, got "
                    f"{releases.shape}"
                )
            object.__setattr__(self, "observed_releases", tuple(int(x) for x in releases))
        if self.level_names and len(self.level_names) != n_all:
            raise ValueError(
                f"level_names must name every level ({n_all}), got {self.level_names!r}"
            )
        if not self.priors:
            raise ValueError("priors must map at least one label to a prior probability")
        as_probability(list(self.priors.values()), "priors")
        if self.levels is not None:
            object.__setattr__(self, "levels", int(self.levels))

    @property
    def _all_levels(self) -> int:
        return len(self.rhos) if self.mechanism is None else len(self.mechanism)

    @property
    def n_levels(self) -> int:
        """ℓ, the number of levels used."""
        return self._all_levels if self.levels is None else int(self.levels)

    @property
    def used_rhos(self) -> np.ndarray | None:
        """ρ of the ℓ levels used (``None`` for a case with mechanisms)."""
        return None if self.rhos is None else np.array(self.rhos[: self.n_levels])

    @property
    def used_mechanisms(self) -> tuple[NoiseMechanism, ...] | None:
        """The mechanisms of the ℓ levels used (``None`` for a case with ρ)."""
        return None if self.mechanism is None else self.mechanism[: self.n_levels]

    @property
    def used_known_counts(self) -> np.ndarray:
        """``m_i`` of the ℓ levels used."""
        return _known_counts(self.known_counts, self._all_levels)[: self.n_levels]

    @property
    def target(self) -> str:
        """The latent of the decision: the level-1 count ``X1``."""
        return "X1"

    @property
    def true_latents(self) -> dict[str, int]:
        """``{"X1": x1}``: the truth of the model's latent."""
        return {"X1": self.truth}

    @property
    def truth(self) -> int:
        """The data holder's true level-1 count ``x1`` (``m_1 + 1`` unless given)."""
        first = int(self.used_known_counts[0])
        return first + 1 if self.true_count is None else int(self.true_count)

    def _prior(self, prior_label: str | None) -> float:
        return float(self.priors[prior_label_of(self.priors, prior_label)])

    def _observed(self) -> np.ndarray:
        if self.observed_releases is None:
            raise ValueError(
                "observed_releases: the case states no observed releases to condition on"
            )
        return np.array(self.observed_releases[: self.n_levels])

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given the observed releases of the ℓ levels."""
        return model(
            self._observed(),
            self._prior(prior_label),
            self.used_rhos,
            self.used_known_counts,
            self.convention,
            mechanism=self.used_mechanisms,
        )

    def posterior(self, prior_label: str | None = None) -> float:
        """The adversary's posterior (S1.1) of the truth given the observed releases."""
        return float(
            posterior(
                self._observed(),
                self._prior(prior_label),
                self.used_rhos,
                self.used_known_counts,
                self.true_count,
                self.convention,
                mechanism=self.used_mechanisms,
            )
        )

    def marginal_measures(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) with the posterior (S1.1), from :func:`marginals`.

        ``omitted_mass`` is the release probability the sums leave out;
        ``error_bound`` the larger of the marginal posterior's bound (grid plus
        truncation) and the decision probability's (truncation, or the grid
        bracket); the marginal risk's own bound and the rest are in
        ``details``.
        """
        p = self._prior(prior_label)
        result = marginals(
            p,
            self.used_rhos,
            self.used_known_counts,
            self.true_count,
            self.convention,
            tail_mass,
            grid_width,
            mechanism=self.used_mechanisms,
        )
        has_c = self.truth == int(self.used_known_counts[0]) + 1
        return MarginalMeasures(
            marginal_posterior=float(result.marginal_posterior),
            marginal_risk=float(result.marginal_risk),
            correct_decision_probability=float(result.correct_decision_probability),
            prior_of_truth=p if has_c else 1.0 - p,
            omitted_mass=float(result.omitted_mass),
            error_bound=float(max(result.posterior_error_bound, result.decision_error_bound)),
            details={
                "levels": self.n_levels,
                "posterior_error_bound": float(result.posterior_error_bound),
                "risk_error_bound": float(result.risk_error_bound),
                "decision_error_bound": float(result.decision_error_bound),
                "decision_exact": bool(result.decision_exact),
                "cutoffs": [int(k) for k in result.cutoffs],
                "grid_width": float(result.grid_width),
            },
        )
