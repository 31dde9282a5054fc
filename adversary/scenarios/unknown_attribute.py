"""The unknown-attribute attack: Kazan & Reiter (2023), S1.2's third attack, for K categories.

The adversary knows every record of block g1 and every characteristic of the
target t except one variable, which takes one of K categories (ethnicity: K = 2;
race: K = 6, …). Fixing the target's other characteristics, the K cells of
the released table that differ only in that variable hold ``m_1..m_K`` other
people, which the adversary knows, and the target adds one to the cell of
their category ``C``:

    X_k = m_k + 1[C = k],   prior P[C = k] = π_k,

and each released cell k is published as ``x_k* = X_k + Z_k`` with
``Z_k ~ DG(0, σ_k²)`` independent, ``σ_k² = 1/(2ρ_k)`` (paper) or ``1/ρ_k``
(DAS), ρ per cell or common. A cell may also be left out of the release
(``released``): then it says nothing.

**Posterior.** The likelihood of ``C = k`` against "the target in no released
cell" is ``exp(s_k)`` with ``s_k = (2 (x_k* - m_k) - 1) / (2σ_k²)`` for a
released cell (as the single-block ratio, :mod:`.single_block`) and ``s_k = 0``
for a cell not released, so

    P[C = k | x*] = π_k e^{s_k} / Σ_j π_j e^{s_j},

the softmax of ``log π_k + s_k`` (in the paper's convention, with every cell
released, ``∝ π_k Π_j e^{-ρ_j (x_j* - m_j - 1[j = k])²}``). The risk of category
k is its posterior over ``π_k``, as (3.2); the Bayes decision under 0-1 loss
(3.5) is the posterior mode. **Tie rule**: scores ``log π_k + s_k`` within
floating rounding of the largest (``8(K+2)·eps`` times their size) are tied,
and a tie goes to the category listed first (the lowest index). With K = 2
and only the first category's cell released this is the single-block attack
with ``p = π_1`` (S1.2: "replace p with p_v"), its tie going to ``m + 1`` as
:func:`.single_block.decision` does.

**The data holder's view** (:func:`marginals`): for a true category c, the
marginal posterior (3.3), marginal risk (3.4) and probability of a correct
decision (3.6) average over the K independent noises; see :func:`marginals`
for the exact methods and their rigorous error bounds. As in S1.1 they do not
depend on the known counts.

Arrays of releases have the released cells on their **last axis** (one noisy
count per released cell, in category order); priors, ρ and known counts have
the K categories on their last axis (ρ may be one number); other leading axes
broadcast.

**Other noise.** Every function takes ``mechanism=`` instead of ``rho`` (pass
``rho=None``) and ``convention``: one
:class:`~adversary.noise.mechanisms.NoiseMechanism` for every cell, or a
sequence with one per category. All discrete Gaussian: the closed forms above
(the same numbers as the ρ giving their σ²). Otherwise a released cell's ratio
is ``s_k = logpmf_k(x_k* - m_k - 1) - logpmf_k(x_k* - m_k)``: ``+inf`` where
bounded noise lets only "the target is in cell k" produce ``x_k*`` (the
posterior of k is then exactly 1), ``-inf`` where it rules k out. Releases no
category can produce (two cells each proving the target, or every category
ruled out) raise ``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validation import as_counts, as_integers, as_positive, as_probability
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
    "GRID_CURVATURE_BOUND",
    "MARGINAL_METHODS",
    "UnknownAttributeCase",
    "UnknownAttributeMarginals",
    "correct_decision_probability",
    "decision",
    "log_likelihood_ratios",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "posterior",
    "release_pmf",
    "risk",
]

#: Spacing ``h`` of the grid on which ``log Σ_{k≠c} π_k e^{s_k}`` is accumulated.
DEFAULT_GRID_WIDTH = 1e-4

#: ``1/(6√3) + 1/16``: bound on ``|g''|`` for every function the grid method splits a
#: point mass under (:func:`marginals`): ``max|expit''| + max|expit'| · max|σ'|``.
GRID_CURVATURE_BOUND = 1.0 / (6.0 * math.sqrt(3.0)) + 1.0 / 16.0

#: Methods of :func:`marginals` for the marginal posterior.
MARGINAL_METHODS = ("auto", "enumeration", "grid")

# Tolerance of a probability vector's sum (as FinitePmf).
_SUM_TOLERANCE = 1e-9
# Largest joint noise grid summed by the enumeration method (and chosen by "auto").
_MAX_ENUMERATION = 1 << 21
# Largest grid for log S; wider supports get a coarser grid (and a larger bound).
_MAX_GRID_POINTS = 1 << 23
# Largest number of (grid point, noise value) pairs evaluated at once.
_BLOCK_ELEMENTS = 1 << 21


# --- inputs ------------------------------------------------------------------------------


def _prior(prior, name: str = "prior") -> np.ndarray:
    """π with the K ≥ 2 categories on the last axis: every π_k > 0, summing to 1 (renormalised)."""
    array = as_positive(prior, name)
    if array.ndim == 0 or array.shape[-1] < 2:
        raise ValueError(
            f"{name} must hold one probability per category (K >= 2) on its last axis, "
            f"got {prior!r}"
        )
    total = array.sum(axis=-1, keepdims=True)
    if np.any(np.abs(total - 1.0) > _SUM_TOLERANCE):
        raise ValueError(
            f"{name} must sum to 1 over the categories (within {_SUM_TOLERANCE:g}), got sum "
            f"{np.squeeze(total)!r}"
        )
    return array / total


def _released(released, n_categories: int) -> np.ndarray:
    """Boolean mask of the released cells; ``None`` means every cell."""
    if released is None:
        return np.ones(n_categories, dtype=bool)
    index = as_integers(released, "released")
    if index.ndim != 1 or index.size == 0:
        raise ValueError(
            f"released must be a non-empty sequence of category indices, got {released!r}"
        )
    if np.any((index < 0) | (index >= n_categories)) or len(set(index.tolist())) != index.size:
        raise ValueError(
            f"released must list distinct category indices from 0 to {n_categories - 1}, "
            f"got {released!r}"
        )
    mask = np.zeros(n_categories, dtype=bool)
    mask[index] = True
    return mask


def _sigma2(rho, n_categories: int, convention) -> np.ndarray:
    """σ² per category, (..., K): one ρ for every cell or one per cell."""
    rho = as_positive(rho, "rho")
    if rho.ndim == 0:
        rho = np.full(n_categories, float(rho))
    elif rho.shape[-1] != n_categories:
        raise ValueError(
            f"rho must be one number or one per category on its last axis (K = {n_categories} "
            f"from the prior), got shape {rho.shape}"
        )
    return noise_variance(rho, convention)


def _cell_noise(rho, n_categories: int, convention, mechanism):
    """``(σ² per category | None, mechanisms per category | None)``: ρ or ``mechanism``.

    ``mechanism`` is one mechanism for every cell or a sequence of K; all
    discrete Gaussian give their σ² (the closed-form path).
    """
    if mechanism is None:
        if rho is None:
            raise ValueError("rho: give rho (with convention) or mechanism")
        return _sigma2(rho, n_categories, convention), None
    return resolve_many(rho, convention, mechanism, n_categories, "rho")


def _known(known_counts, n_categories: int) -> np.ndarray:
    known = as_counts(known_counts, "known_counts")
    if known.ndim == 0 or known.shape[-1] != n_categories:
        raise ValueError(
            f"known_counts must have one count per category on its last axis (K = "
            f"{n_categories} from the prior), got {known_counts!r}"
        )
    return known


def _releases(releases, n_released: int, name: str = "releases") -> np.ndarray:
    releases = as_integers(releases, name)
    if releases.ndim == 0 or releases.shape[-1] != n_released:
        raise ValueError(
            f"{name} must have one noisy count per released cell on their last axis "
            f"({n_released} released), got shape {releases.shape}"
        )
    return releases


def _category(true_category, n_categories: int) -> int:
    if (
        isinstance(true_category, bool)
        or not isinstance(true_category, int | np.integer)
        or not 0 <= true_category < n_categories
    ):
        raise ValueError(
            f"true_category must be a category index from 0 to {n_categories - 1}, "
            f"got {true_category!r}"
        )
    return int(true_category)


# --- the adversary's posterior -----------------------------------------------------------


def _scores(releases, prior, rho, known_counts, convention, released, mechanism=None):
    """``(log π_k + s_k, log π_k, s_k)`` with the categories on the last axis."""
    prior = _prior(prior)
    n_categories = prior.shape[-1]
    mask = _released(released, n_categories)
    sigma2, mechanisms = _cell_noise(rho, n_categories, convention, mechanism)
    known = _known(known_counts, n_categories)
    releases = _releases(releases, int(mask.sum()))
    noise_shape = () if sigma2 is None else sigma2.shape[:-1]
    shape = np.broadcast_shapes(
        releases.shape[:-1], known.shape[:-1], noise_shape, prior.shape[:-1]
    )
    known = np.broadcast_to(known, (*shape, n_categories))
    ratios = np.zeros((*shape, n_categories))
    difference = np.broadcast_to(releases, (*shape, int(mask.sum()))) - known[..., mask]
    if mechanisms is None:
        sigma2 = np.broadcast_to(sigma2, (*shape, n_categories))
        ratios[..., mask] = (2.0 * difference.astype(np.float64) - 1.0) / (2.0 * sigma2[..., mask])
    else:
        ratios[..., mask] = _mechanism_ratios(releases, difference, mask, mechanisms)
    log_prior = np.broadcast_to(np.log(prior), (*shape, n_categories))
    return log_prior + ratios, log_prior, ratios


def _mechanism_ratios(releases, difference, mask, mechanisms) -> np.ndarray:
    """``s_k`` of the released cells from their mechanisms, checked to be possible."""
    cells = np.flatnonzero(mask)
    columns = [
        log_ratio(
            mechanisms[k].logpmf(difference[..., j] - 1), mechanisms[k].logpmf(difference[..., j])
        )
        for j, k in enumerate(cells)
    ]
    ratios = np.stack(columns, axis=-1)
    impossible = np.any(np.isnan(ratios), axis=-1) | (np.sum(ratios == np.inf, axis=-1) > 1)
    if mask.all():  # every category ruled out
        impossible |= np.all(ratios == -np.inf, axis=-1)
    if np.any(impossible):
        bad = np.broadcast_to(releases, difference.shape)[impossible]
        raise impossible_release_error("releases", bad.tolist(), mechanisms)
    return ratios


def _softmax(scores) -> np.ndarray:
    """Softmax over the last axis, one-hot where a score is ``+inf`` (at most one per row)."""
    certain = scores == np.inf
    if not np.any(certain):
        return special.softmax(scores, axis=-1)
    finite = special.softmax(np.where(certain, 0.0, scores), axis=-1)
    return np.where(np.any(certain, axis=-1, keepdims=True), certain.astype(np.float64), finite)


def log_likelihood_ratios(
    releases, rho, known_counts, convention="paper", released=None, *, mechanism=None
) -> np.ndarray:
    """``s_k = log P[x* | C = k] - log P[x* | target in no released cell]``, one per category.

    ``(2(x_k* - m_k) - 1)/(2σ_k²)`` for a released cell k (the single-block
    ratio of :func:`.single_block.log_likelihood_ratio`), 0 for a cell not
    released. ``known_counts`` fixes K (its last axis). With ``mechanism``:
    ``logpmf_k(x_k* - m_k - 1) - logpmf_k(x_k* - m_k)``, possibly ``±inf``.
    """
    known = as_counts(known_counts, "known_counts")
    n_categories = known.shape[-1] if known.ndim else 0
    if n_categories < 2:
        raise ValueError(
            f"known_counts must have one count per category (K >= 2) on its last axis, "
            f"got {known_counts!r}"
        )
    prior = np.full(n_categories, 1.0 / n_categories)
    return _scores(releases, prior, rho, known, convention, released, mechanism)[2]


def posterior(
    releases, prior, rho, known_counts, convention="paper", released=None, *, mechanism=None
) -> np.ndarray:
    """``P[C = k | x*] = π_k e^{s_k} / Σ_j π_j e^{s_j}`` for every category k (last axis).

    The multi-cell analogue of (3.1), computed as a softmax in log space (no
    overflow for any ρ or count). With bounded noise a category can be certain
    (posterior exactly 1) or ruled out (exactly 0).
    """
    scores = _scores(releases, prior, rho, known_counts, convention, released, mechanism)[0]
    return _softmax(scores)


def risk(
    releases, prior, rho, known_counts, convention="paper", released=None, *, mechanism=None
) -> np.ndarray:
    """Disclosure risk of every category: its posterior over its prior, as (3.2)."""
    scores, log_prior, _ = _scores(
        releases, prior, rho, known_counts, convention, released, mechanism
    )
    if np.any(scores == np.inf):
        return _softmax(scores) / np.exp(log_prior)
    return np.exp(special.log_softmax(scores, axis=-1) - log_prior)


def _tie_tolerance(magnitude, n_categories: int):
    """Scores within this of each other are tied (rounding of ``log π_k + s_k``)."""
    return 8.0 * (n_categories + 2) * np.finfo(np.float64).eps * magnitude


def decision(
    releases, prior, rho, known_counts, convention="paper", released=None, *, mechanism=None
) -> np.ndarray:
    """The Bayes decision under 0-1 loss (3.5): the index of the posterior mode.

    Scores ``log π_k + s_k`` within rounding of the largest are tied; a tie
    goes to the lowest index (the category listed first).
    """
    scores, log_prior, ratios = _scores(
        releases, prior, rho, known_counts, convention, released, mechanism
    )
    n_categories = scores.shape[-1]
    ratios = np.where(np.isfinite(ratios), ratios, 0.0)
    magnitude = np.max(np.abs(log_prior), axis=-1) + np.max(np.abs(ratios), axis=-1)
    tolerance = _tie_tolerance(magnitude, n_categories)[..., None]
    tied = scores >= scores.max(axis=-1, keepdims=True) - tolerance
    return np.argmax(tied, axis=-1)


def release_pmf(
    releases, rho, known_counts, true_category, convention="paper", released=None, *, mechanism=None
) -> np.ndarray:
    """``P[x* | C = c]``: the product over released cells of the DG pmf of ``x_k* - X_k``.

    ``X_k = m_k + 1[k = c]`` are the true counts when the target's category is c.
    With ``mechanism``: each cell's own pmf.
    """
    known = as_counts(known_counts, "known_counts")
    if known.ndim == 0 or known.shape[-1] < 2:
        raise ValueError(
            f"known_counts must have one count per category (K >= 2) on its last axis, "
            f"got {known_counts!r}"
        )
    n_categories = known.shape[-1]
    c = _category(true_category, n_categories)
    mask = _released(released, n_categories)
    sigma2, mechanisms = _cell_noise(rho, n_categories, convention, mechanism)
    releases = _releases(releases, int(mask.sum()))
    truth = known + (np.arange(n_categories) == c)
    noise = releases - truth[..., mask]
    if mechanisms is not None:
        cells = np.flatnonzero(mask)
        columns = [mechanisms[k].pmf(noise[..., j]) for j, k in enumerate(cells)]
        return np.prod(np.stack(columns, axis=-1), axis=-1)
    sigma2 = np.broadcast_to(sigma2, known.shape)
    pmf = discrete_gaussian.pmf(noise, sigma2[..., mask])
    return pmf.prod(axis=-1)


# --- the data holder's view: marginal over releases -------------------------------------


@dataclass(frozen=True)
class UnknownAttributeMarginals:
    """Marginal measures of the unknown-attribute attack for a true category, with bounds.

    Attributes
    ----------
    marginal_posterior, marginal_risk, correct_decision_probability
        (3.3), (3.4) and (3.6) for the true category.
    posterior_error_bound, risk_error_bound, decision_error_bound
        Rigorous bounds on the absolute error of each (before floating-point
        rounding): noise truncation, plus the grid's term for the posterior
        and risk when ``method`` is ``"grid"``.
    omitted_mass
        Bound on the release probability the sums leave out.
    cutoffs
        Noise cut-off ``K_k`` per released cell.
    method
        ``"enumeration"`` (joint noise grid) or ``"grid"`` (log-sum-exp grid).
    grid_width
        ``h`` of the grid method (``None`` for enumeration).
    """

    marginal_posterior: float
    marginal_risk: float
    correct_decision_probability: float
    posterior_error_bound: float
    risk_error_bound: float
    decision_error_bound: float
    omitted_mass: float
    cutoffs: tuple[int, ...]
    method: str
    grid_width: float | None


@dataclass(frozen=True)
class _Noise:
    """One released cell's truncated noise: values ``z``, masses, cut-off, omitted mass."""

    z: np.ndarray
    masses: np.ndarray
    cutoff: int
    omitted: float


def _noise(sigma2: float, tail_mass: float) -> _Noise:
    reach = int(discrete_gaussian.cutoff(sigma2, tail_mass))
    z = np.arange(-reach, reach + 1)
    omitted = float(2.0 * discrete_gaussian.tail_bound(reach + 1, sigma2))
    return _Noise(z, discrete_gaussian.pmf(z, sigma2), reach, omitted)


def _truth_scores(log_prior, a, noises, c):
    """Per category: the score values ``log π_k + a_k(2z + 2·1[k=c] - 1)`` and their masses.

    A cell not released has one value, ``log π_k``, with mass 1.
    """
    out = []
    for k, (lp, noise) in enumerate(zip(log_prior, noises, strict=True)):
        if noise is None:
            out.append((np.array([lp]), np.ones(1)))
        else:
            shift = 1.0 if k == c else -1.0
            out.append((lp + a[k] * (2.0 * noise.z + shift), noise.masses))
    return out


def _enumerated_posterior(terms, c):
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


def _logsumexp_distribution(others, grid_width):
    """Distribution of ``L = log Σ_{k≠c} π_k e^{s_k}`` on a grid, with the splitting spread.

    ``others`` are ``(values, masses)`` of the scores of the categories other
    than the truth; constants (cells not released) are combined exactly, the
    first random term is kept exactly, and every further term is combined by
    ``logaddexp`` and its result split onto the grid ``hℤ`` keeping its mean
    (``(k + f)h`` puts ``1 - f`` at ``kh`` and ``f`` at ``(k+1)h``). Returns
    ``(values, masses, spread, h)`` with ``spread = Σ h² Σ P f(1-f)`` over the
    splits (0 when nothing was split).
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
    # Range of every L_j after the first split: logaddexp is increasing in each argument
    # (so the least value is that of the first split, the largest that of the last).
    low = float(np.logaddexp(values.min(), random[1][0].min()))
    high = float(values.max())
    for v, _ in random[1:]:
        high = float(np.logaddexp(high, v.max()))
    h = max(grid_width, (high - low) / (_MAX_GRID_POINTS - 4))
    # Each split moves a value by less than h, so every L_j lies within (steps + 1)h of the range.
    steps = len(random)
    first = math.floor(low / h) - steps - 1
    size = math.floor(high / h) + steps + 3 - first
    spread = 0.0
    for v, m in random[1:]:
        dist = np.zeros(size)
        chunk = max(1, _BLOCK_ELEMENTS // v.size)
        for start in range(0, values.size, chunk):
            part = slice(start, start + chunk)
            combined = np.logaddexp(values[part, None], v[None, :])
            weight = masses[part, None] * m[None, :]
            position = combined / h
            base = np.floor(position)
            frac = position - base
            spread += h * h * float(np.sum(weight * frac * (1.0 - frac)))
            index = base.astype(np.int64).ravel() - first
            dist += np.bincount(index, weights=(weight * (1.0 - frac)).ravel(), minlength=size)
            dist += np.bincount(index + 1, weights=(weight * frac).ravel(), minlength=size)
        keep = np.flatnonzero(dist > 0.0)
        values = (first + keep) * h
        masses = dist[keep]
    return values, masses, spread, h


def _gridded_posterior(terms, c, grid_width):
    """``E[expit(log π_c + s_c - L)]`` with L from :func:`_logsumexp_distribution`."""
    others = [term for k, term in enumerate(terms) if k != c]
    l_values, l_masses, spread, h = _logsumexp_distribution(others, grid_width)
    c_values, c_masses = terms[c]
    total = 0.0
    chunk = max(1, _BLOCK_ELEMENTS // l_values.size)
    for start in range(0, c_values.size, chunk):
        part = slice(start, start + chunk)
        post = special.expit(c_values[part, None] - l_values[None, :])
        total += float(c_masses[part] @ (post @ l_masses))
    return total, spread, h


def _cdf_decision_probability(log_prior, a, noises, c, tolerance):
    """``P[the decision is c]`` given the truth c: a one-dimensional sum over ``Z_c``.

    Given ``Z_c`` (score ``v``), the decision is c iff every category before c
    scores below ``v - tol`` and every one after at most ``v + tol``; the other
    cells' noises are independent, so the probability is a product of exact
    discrete Gaussian cdfs, summed over ``Z_c``. Category k ≠ c scores
    ``log π_k + a_k(2Z_k - 1)``, which is ``≤ t`` iff
    ``Z_k ≤ floor((t - log π_k + a_k)/(2a_k))``.
    """
    if noises[c] is None:
        c_values, c_masses = np.array([log_prior[c]]), np.ones(1)
    else:
        c_values = log_prior[c] + a[c] * (2.0 * noises[c].z + 1.0)
        c_masses = noises[c].masses
    limit = 2.0**61
    product = np.ones(c_values.size)
    for k in range(len(log_prior)):
        if k == c:
            continue
        if k < c:
            bound, strict = c_values - tolerance, True
        else:
            bound, strict = c_values + tolerance, False
        if noises[k] is None:
            product *= (log_prior[k] < bound) if strict else (log_prior[k] <= bound)
            continue
        position = (bound - log_prior[k] + a[k]) / (2.0 * a[k])
        top = np.ceil(position) - 1.0 if strict else np.floor(position)
        top = np.clip(top, -limit, limit)
        product *= discrete_gaussian.cdf(top.astype(np.int64), 1.0 / (2.0 * a[k]))
    return float(product @ c_masses)


def marginals(
    prior,
    rho,
    true_category,
    convention="paper",
    released=None,
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=DEFAULT_GRID_WIDTH,
    method="auto",
    *,
    mechanism=None,
) -> UnknownAttributeMarginals:
    """Marginal posterior, marginal risk and correct-decision probability for true category c.

    The data holder's measures (3.3), (3.4) and (3.6) with the posterior over
    categories: averages over ``x_k* = m_k + 1[k = c] + Z_k``, ``Z_k ~ DG(0, σ_k²)``
    independent. With ``a_k = 1/(2σ_k²)``, category k scores
    ``log π_k + a_k(2Z_k + 2·1[k = c] - 1)`` (``log π_k`` if not released).
    ``prior`` is one 1-d π; ``rho`` one number or one per category.

    **Noise truncation.** Each released cell's noise is summed over
    ``|z| ≤ K_k``, ``K_k = cutoff(σ_k², tail_mass/R)`` for R released cells; the
    omitted releases have probability at most ``ε = Σ_k 2·tail_bound(K_k + 1, σ_k²)
    ≤ tail_mass`` (``omitted_mass``). Sums are not renormalised, so for values
    in [0, 1] the truncated sum lies in ``[E - ε, E]``.

    **Marginal posterior and risk.** ``method="enumeration"`` sums the
    posterior of c over the joint noise grid of every released cell (``Π_k
    (2K_k + 1)`` points): exact up to ε. ``method="grid"`` needs only one
    dimension at a time: the posterior of c is ``expit(log π_c + s_c - L)`` with
    ``L = log Σ_{k≠c} π_k e^{s_k}``, a function of the other cells' noises,
    independent of ``Z_c``. L is built one cell at a time, ``L_j = logaddexp(L_{j-1},
    score_j)``; after each combination (but the first, which stays exact) the
    values are split onto the grid ``hℤ`` keeping the mean (mass ``1 - f`` at
    ``kh``, ``f`` at ``(k+1)h`` for a value ``(k + f)h``). The final average over
    ``Z_c`` and L is an exact sum. Error: splitting a point mass under a
    function ``g`` with ``|g''| ≤ M`` changes ``E g`` by at most
    ``(M/2) h² f(1 - f)``; the function of ``L_j`` that the rest of the
    computation averages is ``G(ℓ) = E[expit(v - logaddexp(ℓ, Y))]`` (Y the
    later cells, v the truth's score), whose second derivative is at most
    ``max|expit''| + max|expit'| · max ∂²logaddexp = 1/(6√3) + 1/16``
    (:data:`GRID_CURVATURE_BOUND`, M). Summing over the splits (a telescoping
    sum with exact later steps)::

        |error of the marginal posterior| ≤ (M/2) Σ h² Σ P f(1-f) + ε
                                           ≤ (R' - 1) M h²/8 + ε,

    with R' the number of released cells other than c: about 2e-10 per
    further cell at the default ``h = 1e-4``; 0 + ε for K = 2 (no split).
    ``h`` grows beyond ``grid_width`` only if the grid would exceed 2²³
    points. ``"auto"`` enumerates when the joint grid has at most 2²¹ points,
    else uses the grid. The risk's bound is the posterior's over ``π_c``.

    **Correct-decision probability: exact, one dimension.** Given ``Z_c`` (the
    truth's score v), the decision is c iff every category before c scores
    below ``v - tol`` and every category after it at most ``v + tol`` (the tie
    rule of :func:`decision`); the other cells are independent, so
    ``P[correct] = Σ_z P[Z_c = z] Π_{k≠c} P[score_k ≤ (or <) v(z) ± tol]``, each
    factor a discrete Gaussian cdf at ``floor((v ± tol - log π_k + a_k)/(2a_k))``.
    Only ``Z_c`` is truncated: the error is at most its omitted mass
    (``decision_error_bound``; the result is a lower bound). ``tol`` is the
    rounding allowance of :func:`decision` at the largest scores of the grid;
    the two agree except where scores lie within a few rounding units of each
    other without being exactly tied.

    **Other noise** (``mechanism``, not all discrete Gaussian). Each released
    cell's noise is its table (the whole support for bounded noise, whose ε is
    0); cell k's score is ``log π_k + logpmf_k(z) - logpmf_k(z + 1)`` for the
    truth (k = c) and ``log π_k + logpmf_k(z - 1) - logpmf_k(z)`` for the others,
    equal values merged. A ``+inf`` truth score (only c produces the release)
    gives posterior 1 and a right decision; ``-inf`` scores of other categories
    (ruled out) drop out of L. Enumeration and grid as above, the grid carrying
    ``L = -inf`` (every other category ruled out) as a separate atom. The
    decision probability sums over the truth's noise the product of the other
    cells' ``P[score_k < v - tol]`` (or ``≤ v + tol``), now from their tables
    (scores are no longer monotone in the noise): its error is at most the
    total omitted mass ``ε``, and 0 for bounded noise.
    """
    prior = _prior(prior)
    if prior.ndim != 1:
        raise ValueError(f"prior must be one 1-d probability vector here, got {prior.shape}")
    n_categories = prior.size
    c = _category(true_category, n_categories)
    mask = _released(released, n_categories)
    sigma2, mechanisms = _cell_noise(rho, n_categories, convention, mechanism)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    grid_width = as_positive(grid_width, "grid_width")
    if grid_width.ndim != 0:
        raise ValueError(f"grid_width must be one number > 0, got {grid_width!r}")
    if method not in MARGINAL_METHODS:
        raise ValueError(f"method must be one of {MARGINAL_METHODS}, got {method!r}")
    if mechanisms is not None:
        return _mechanism_marginals(
            prior, c, mask, mechanisms, tail_mass, float(grid_width), method
        )
    sigma2 = np.broadcast_to(sigma2, (n_categories,))
    n_released = int(mask.sum())
    noises = [
        _noise(float(s2), tail_mass / n_released) if on else None
        for s2, on in zip(sigma2, mask, strict=True)
    ]
    a = 1.0 / (2.0 * sigma2)
    log_prior = np.log(prior)
    terms = _truth_scores(log_prior, a, noises, c)
    omitted = sum(noise.omitted for noise in noises if noise is not None)
    reach = float(np.max(np.abs(log_prior))) + max(
        float(a[k] * (2.0 * noises[k].cutoff + 1.0)) for k in range(n_categories) if mask[k]
    )
    tolerance = float(_tie_tolerance(2.0 * reach, n_categories))

    joint_size = math.prod(values.size for values, _ in terms)
    if method == "auto":
        method = "enumeration" if joint_size <= _MAX_ENUMERATION else "grid"
    if method == "enumeration":
        if joint_size > 4 * _MAX_ENUMERATION:
            raise ValueError(
                f"method: the joint noise grid has {joint_size} points, too many to enumerate; "
                "use method='grid'"
            )
        post, spread, h = _enumerated_posterior(terms, c), 0.0, None
    else:
        post, spread, h = _gridded_posterior(terms, c, float(grid_width))
    posterior_bound = 0.5 * GRID_CURVATURE_BOUND * spread + omitted
    correct = _cdf_decision_probability(log_prior, a, noises, c, tolerance)
    decision_bound = 0.0 if noises[c] is None else noises[c].omitted
    return UnknownAttributeMarginals(
        marginal_posterior=float(post),
        marginal_risk=float(post / prior[c]),
        correct_decision_probability=float(correct),
        posterior_error_bound=float(posterior_bound),
        risk_error_bound=float(posterior_bound / prior[c]),
        decision_error_bound=float(decision_bound),
        omitted_mass=float(omitted),
        cutoffs=tuple(noise.cutoff for noise in noises if noise is not None),
        method=method,
        grid_width=h,
    )


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


def _mechanism_marginals(prior, c, mask, mechanisms, tail_mass, grid_width, method):
    """:func:`marginals` for any noise (see its docstring, "Other noise")."""
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
    tolerance = float(_tie_tolerance(2.0 * reach, n_categories))

    joint_size = math.prod(max(1, values.size) for values, _ in terms)
    if method == "auto":
        method = "enumeration" if joint_size <= _MAX_ENUMERATION else "grid"
    if terms[c][0].size == 0:  # the truth's release always proves it
        post, spread, h = 0.0, 0.0, None
    elif method == "enumeration":
        if joint_size > 4 * _MAX_ENUMERATION:
            raise ValueError(
                f"method: the joint noise grid has {joint_size} points, too many to enumerate; "
                "use method='grid'"
            )
        post, spread, h = _enumerated_posterior(terms, c), 0.0, None
    else:
        post, spread, h = _gridded_posterior_with_atoms(terms, c, grid_width)
    post += certain
    posterior_bound = 0.5 * GRID_CURVATURE_BOUND * spread + omitted
    correct = _table_decision_probability(terms, cells, c, tolerance) + certain
    return UnknownAttributeMarginals(
        marginal_posterior=float(post),
        marginal_risk=float(post / prior[c]),
        correct_decision_probability=float(correct),
        posterior_error_bound=float(posterior_bound),
        risk_error_bound=float(posterior_bound / prior[c]),
        decision_error_bound=float(omitted),
        omitted_mass=float(omitted),
        cutoffs=tuple(cell.cutoff for cell in cells if cell is not None),
        method=method,
        grid_width=h,
    )


def _gridded_posterior_with_atoms(terms, c, grid_width):
    """The grid method of :func:`marginals` for any noise: ``L`` may be ``-inf``.

    ``L = log Σ_{k≠c} π_k e^{s_k}`` is accumulated cell by cell as finite
    values with masses plus an atom at ``-inf`` (every other category ruled
    out so far, where the posterior of c is 1). Combining two finite values is
    ``logaddexp``, split onto the grid ``hℤ`` keeping the mean (as
    :func:`_logsumexp_distribution`) unless one side is a single value (then the
    map is one-to-one and kept exact); a value meeting ``-inf`` passes through
    unchanged. Returns ``(posterior, spread, h)``.
    """
    others = [term for k, term in enumerate(terms) if k != c]
    parts = []
    for values, masses in others:
        neg = np.isneginf(values)
        parts.append((values[~neg], masses[~neg], math.fsum(masses[neg])))
    finite = [v for v, _, _ in parts if v.size]
    low = min(float(v.min()) for v in finite) if finite else 0.0
    high = float(np.logaddexp.reduce([float(v.max()) for v in finite])) if finite else 0.0
    h = max(grid_width, (high - low) / (_MAX_GRID_POINTS - 4))
    values, masses, atom = parts[0]
    spread, split = 0.0, False
    for v, m, a in parts[1:]:
        pieces_v, pieces_m = [values, v], [masses * a, m * atom]
        if values.size and v.size:
            if values.size == 1 or v.size == 1:
                pieces_v.append(np.logaddexp(values[:, None], v[None, :]).ravel())
                pieces_m.append((masses[:, None] * m[None, :]).ravel())
            else:
                grid_v, grid_m, step = _split_logaddexp(values, masses, v, m, h)
                pieces_v.append(grid_v)
                pieces_m.append(grid_m)
                spread += step
                split = True
        values, inverse = np.unique(np.concatenate(pieces_v), return_inverse=True)
        masses = np.bincount(inverse, weights=np.concatenate(pieces_m), minlength=values.size)
        keep = masses > 0
        values, masses, atom = values[keep], masses[keep], atom * a
    c_values, c_masses = terms[c]
    total = 0.0
    if values.size:
        chunk = max(1, _BLOCK_ELEMENTS // values.size)
        for start in range(0, c_values.size, chunk):
            part = slice(start, start + chunk)
            post = special.expit(c_values[part, None] - values[None, :])
            total += float(c_masses[part] @ (post @ masses))
    total += atom * math.fsum(c_masses)
    return total, spread, h if split else None


def _split_logaddexp(values, masses, v, m, h):
    """``logaddexp`` of two finite distributions, split onto ``hℤ`` keeping the mean.

    Returns ``(grid values, masses, spread)`` with ``spread = h² Σ P f(1 - f)``.
    """
    indices, weights, spread = [], [], 0.0
    chunk = max(1, _BLOCK_ELEMENTS // v.size)
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
    return index * h, np.bincount(inverse, weights=np.concatenate(weights)), spread


def _table_decision_probability(terms, cells, c, tolerance):
    """``P[decision = c]`` over the truth's finite scores: a sum over ``Z_c`` of a product.

    Category k before c must score below ``v - tol``, after c at most
    ``v + tol``; each factor is the mass of k's scores (``-inf`` included) in
    that range, from k's table (sorted values, cumulative masses).
    """
    c_values, c_masses = terms[c]
    if c_values.size == 0:
        return 0.0
    product = np.ones(c_values.size)
    for k, (values, masses) in enumerate(terms):
        if k == c:
            continue
        order = np.argsort(values, kind="stable")
        cumulative = np.concatenate([[0.0], np.cumsum(masses[order])])
        ordered = values[order]
        if k < c:
            index = np.searchsorted(ordered, c_values - tolerance, side="left")
        else:
            index = np.searchsorted(ordered, c_values + tolerance, side="right")
        product *= cumulative[index]
    return float(product @ c_masses)


def marginal_posterior(prior, rho, true_category, convention="paper", released=None, **kwargs):
    """The posterior of the true category averaged over releases, (3.3); see :func:`marginals`."""
    return marginals(prior, rho, true_category, convention, released, **kwargs).marginal_posterior


def marginal_risk(prior, rho, true_category, convention="paper", released=None, **kwargs):
    """Marginal disclosure risk (3.4) of the true category; see :func:`marginals`."""
    return marginals(prior, rho, true_category, convention, released, **kwargs).marginal_risk


def correct_decision_probability(
    prior,
    rho,
    true_category,
    convention="paper",
    released=None,
    tail_mass=DEFAULT_TAIL_MASS,
    *,
    mechanism=None,
):
    """Probability that the Bayes decision is the true category, (3.6); see :func:`marginals`."""
    return marginals(
        prior, rho, true_category, convention, released, tail_mass=tail_mass, mechanism=mechanism
    ).correct_decision_probability


# --- the attack as a PyMC model ----------------------------------------------------------


def model(
    releases,
    prior,
    rho,
    known_counts,
    convention="paper",
    released=None,
    categories=None,
    *,
    mechanism=None,
):
    """The attack as a PyMC model; its exact posterior is :func:`posterior`.

    Latent ``C ~ FinitePmf({0, …, K-1}, π)`` (the target's category, by
    index), the counts ``m + e_C`` as a Deterministic ``counts`` over the
    ``category`` dimension, and the released cells' counts observed as
    ``DiscreteGaussian(mu = counts, σ_k²)`` over the ``cell`` dimension.
    ``releases`` is one observation: a 1-d sequence, one noisy count per
    released cell. ``categories`` optionally names the categories
    (coordinates; default ``"0"``, ``"1"``, …). With ``mechanism`` (not all
    discrete Gaussian) the released cells are a
    :func:`~adversary.distributions.NoiseRelease` with each cell's mechanism.
    """
    import pymc as pm  # deferred: the exact functions above need no PyMC
    import pytensor.tensor as pt

    from ..distributions import DiscreteGaussian, FinitePmf, NoiseRelease

    prior = _prior(prior)
    if prior.ndim != 1:
        raise ValueError(f"prior must be one probability vector for a model, got {prior.shape}")
    n_categories = prior.size
    mask = _released(released, n_categories)
    known = _known(known_counts, n_categories)
    if known.ndim != 1:
        raise ValueError(f"known_counts must be 1-d, one count per category, got {known.shape}")
    releases = _releases(releases, int(mask.sum()))
    if releases.ndim != 1:
        raise ValueError(f"releases must be 1-d, one noisy count per released cell, got {releases}")
    sigma2, mechanisms = _cell_noise(rho, n_categories, convention, mechanism)
    names = _category_names(categories, n_categories)
    cells = np.flatnonzero(mask)
    coords = {"category": list(names), "cell": [names[k] for k in cells]}
    with pm.Model(coords=coords) as attack:
        category = FinitePmf("C", support=list(range(n_categories)), probs=prior)
        in_cell = pt.cast(pt.eq(pt.arange(n_categories), category), "int64")
        counts = pm.Deterministic("counts", pt.as_tensor_variable(known) + in_cell, dims="category")
        if mechanisms is None:
            sigma2 = np.broadcast_to(sigma2, (n_categories,))
            DiscreteGaussian(
                "releases",
                mu=counts[cells],
                sigma2=np.asarray(sigma2[cells], dtype=np.float64),
                observed=releases,
                dims="cell",
            )
        else:
            NoiseRelease(
                "releases",
                mu=counts[cells],
                mechanism=[mechanisms[k] for k in cells],
                observed=releases,
                dims="cell",
            )
    return attack


def _category_names(categories, n_categories: int) -> tuple[str, ...]:
    if categories is None:
        return tuple(str(k) for k in range(n_categories))
    names = tuple(str(name) for name in categories)
    if len(names) != n_categories or len(set(names)) != n_categories:
        raise ValueError(
            f"categories must name the {n_categories} categories, each once, got {categories!r}"
        )
    return names


# --- a concrete case ---------------------------------------------------------------------


@dataclass(frozen=True)
class UnknownAttributeCase(CaseFields):
    """A concrete unknown-attribute attack: categories, known counts, priors, ρ, truth, releases.

    Implements :class:`~adversary.measures.protocol.Attack`. ``categories`` names
    the K values of the unknown variable (in the order that breaks ties);
    ``known_counts`` are ``m_1..m_K``, the others in the K cells; ``priors``
    maps a label to the adversary's π, either a sequence in category order or a
    mapping ``{category: probability}`` (stored as a tuple); ``true_category``
    is the target's category (a name, or an index, stored as the name);
    ``rho`` one ρ for every cell or one per category; ``released`` the
    categories whose cells are released, in category order (default all;
    stored as names); ``observed_releases`` the noisy counts of the released
    cells, in category order, that :meth:`model` and :meth:`posterior`
    condition on (``None``: those refuse). ``mechanism``, if given, is the
    noise instead of ``rho`` (then ``None``) and ``convention``: one mechanism
    for every cell or one per category (stored as a tuple).
    """

    name: str
    categories: tuple[str, ...]
    known_counts: tuple[int, ...]
    priors: dict
    true_category: str | int
    rho: float | tuple[float, ...] | None
    convention: str = "paper"
    released: tuple[str | int, ...] | None = None
    observed_releases: tuple[int, ...] | None = None
    description: str = ""
    mechanism: NoiseMechanism | tuple[NoiseMechanism, ...] | None = None

    def __post_init__(self):
        categories = self.categories
        if isinstance(categories, str) or not hasattr(categories, "__len__"):
            raise ValueError(f"categories must be a sequence of names, got {categories!r}")
        names = tuple(str(c) for c in categories)
        if len(names) < 2 or len(set(names)) != len(names):
            raise ValueError(f"categories must name K >= 2 distinct categories, got {categories!r}")
        n = len(names)
        object.__setattr__(self, "categories", names)
        known = _known(self.known_counts, n)
        if known.ndim != 1:
            raise ValueError(f"known_counts must be 1-d, one count per category, got {known.shape}")
        object.__setattr__(self, "known_counts", tuple(int(k) for k in known))
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError("priors must map at least one label to a prior over the categories")
        priors = {}
        for label, value in self.priors.items():
            if isinstance(value, dict):
                if set(map(str, value)) != set(names):
                    raise ValueError(
                        f"priors[{label!r}] must give a probability for each category "
                        f"{names}, got {value!r}"
                    )
                value = [value[key] for key in _keys_in_order(value, names)]
            vector = _prior(value, f"priors[{label!r}]")
            if vector.shape != (n,):
                raise ValueError(
                    f"priors[{label!r}] must hold one probability per category (K = {n}), "
                    f"got {value!r}"
                )
            priors[str(label)] = tuple(float(x) for x in vector)
        object.__setattr__(self, "priors", priors)
        object.__setattr__(
            self, "true_category", names[self._index(self.true_category, "true_category")]
        )
        if self.mechanism is not None:
            _cell_noise(self.rho, n, self.convention, self.mechanism)
            if not isinstance(self.mechanism, NoiseMechanism):
                object.__setattr__(self, "mechanism", mechanism_tuple(self.mechanism, n))
        else:
            if self.rho is None:
                raise ValueError("rho: give rho (with convention) or mechanism")
            rho = as_positive(self.rho, "rho")
            if rho.ndim == 0:
                object.__setattr__(self, "rho", float(rho))
            elif rho.shape != (n,):
                raise ValueError(
                    f"rho must be one number or one per category (K = {n}), got {self.rho!r}"
                )
            else:
                object.__setattr__(self, "rho", tuple(float(r) for r in rho))
            noise_variance(rho, self.convention)
        if self.released is not None:
            if isinstance(self.released, str) or not hasattr(self.released, "__len__"):
                raise ValueError(
                    f"released must be a sequence of categories, got {self.released!r}"
                )
            index = [self._index(c, "released") for c in self.released]
            mask = _released(index, n)
            if index != sorted(index):
                raise ValueError(
                    f"released must list the categories in the order of categories {names} "
                    f"(observed_releases follow it), got {self.released!r}"
                )
            object.__setattr__(self, "released", tuple(names[k] for k in np.flatnonzero(mask)))
        if self.observed_releases is not None:
            releases = _releases(
                self.observed_releases, len(self.released_indices), "observed_releases"
            )
            if releases.ndim != 1:
                raise ValueError(
                    f"observed_releases must be 1-d, one noisy count per released cell, got "
                    f"{self.observed_releases!r}"
                )
            object.__setattr__(self, "observed_releases", tuple(int(x) for x in releases))

    def _index(self, category, name: str) -> int:
        if isinstance(category, str):
            if category not in self.categories:
                raise ValueError(
                    f"{name} must be one of the categories {self.categories}, got {category!r}"
                )
            return self.categories.index(category)
        return (
            _category(category, len(self.categories))
            if name == "true_category"
            else int(_released_index(category, len(self.categories), name))
        )

    @property
    def n_categories(self) -> int:
        """K."""
        return len(self.categories)

    @property
    def target(self) -> str:
        """The latent of the decision: the target's category index ``C``."""
        return "C"

    @property
    def true_latents(self) -> dict[str, int]:
        """``{"C": index of the true category}``."""
        return {"C": self.true_index}

    @property
    def true_index(self) -> int:
        """Index of the true category."""
        return self.categories.index(self.true_category)

    @property
    def released_indices(self) -> tuple[int, ...]:
        """Indices of the released cells (all by default)."""
        if self.released is None:
            return tuple(range(self.n_categories))
        return tuple(self.categories.index(c) for c in self.released)

    def prior_vector(self, prior_label: str | None = None) -> np.ndarray:
        """π under one prior (default: the first)."""
        return np.array(self.priors[prior_label_of(self.priors, prior_label)])

    def _observed(self) -> np.ndarray:
        if self.observed_releases is None:
            raise ValueError(
                "observed_releases: the case states no observed releases to condition on"
            )
        return np.array(self.observed_releases)

    def _arguments(self, prior_label):
        return {
            "prior": self.prior_vector(prior_label),
            "rho": self.rho,
            "known_counts": self.known_counts,
            "convention": self.convention,
            "released": self.released_indices,
            "mechanism": self.mechanism,
        }

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given the observed releases, under one prior."""
        return model(self._observed(), categories=self.categories, **self._arguments(prior_label))

    def posterior(self, prior_label: str | None = None):
        """The adversary's posterior over the categories given the observed releases."""
        import xarray as xr

        values = posterior(self._observed(), **self._arguments(prior_label))
        return xr.DataArray(values, dims="category", coords={"category": list(self.categories)})

    def decision(self, prior_label: str | None = None) -> str:
        """The Bayes decision (posterior mode; ties to the category listed first)."""
        return self.categories[int(decision(self._observed(), **self._arguments(prior_label)))]

    def marginals(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
        method: str = "auto",
    ) -> UnknownAttributeMarginals:
        """:func:`marginals` of the case's true category under one prior."""
        arguments = self._arguments(prior_label)
        return marginals(
            arguments["prior"],
            self.rho,
            self.true_index,
            self.convention,
            arguments["released"],
            tail_mass=tail_mass,
            grid_width=grid_width,
            method=method,
            mechanism=self.mechanism,
        )

    def marginal_measures(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
        method: str = "auto",
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the true category, from :func:`marginals`.

        ``error_bound`` is the larger of the marginal posterior's and the
        decision probability's bounds; ``details`` has each bound, the risk's,
        the method, the cut-offs and the grid width.
        """
        result = self.marginals(prior_label, tail_mass, grid_width, method)
        return MarginalMeasures(
            marginal_posterior=result.marginal_posterior,
            marginal_risk=result.marginal_risk,
            correct_decision_probability=result.correct_decision_probability,
            prior_of_truth=float(self.prior_vector(prior_label)[self.true_index]),
            omitted_mass=result.omitted_mass,
            error_bound=max(result.posterior_error_bound, result.decision_error_bound),
            details={
                "posterior_error_bound": result.posterior_error_bound,
                "risk_error_bound": result.risk_error_bound,
                "decision_error_bound": result.decision_error_bound,
                "marginal_method": result.method,
                "cutoffs": list(result.cutoffs),
                "grid_width": result.grid_width,
            },
        )


def _keys_in_order(mapping: dict, names: tuple[str, ...]) -> list:
    by_name = {str(key): key for key in mapping}
    return [by_name[name] for name in names]


def _released_index(category, n_categories: int, name: str) -> int:
    if (
        isinstance(category, bool)
        or not isinstance(category, int | np.integer)
        or not 0 <= category < n_categories
    ):
        raise ValueError(
            f"{name} must list categories by name or index from 0 to {n_categories - 1}, "
            f"got {category!r}"
        )
    return int(category)
