"""The adversary's posterior over the K categories: scores, posterior, risk, decision (3.5)."""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._validation import as_counts
from ...measures.decision import DEFAULT_TIE_RULE, decide, tie_tolerance
from ...measures.noise import impossible_release_error, log_ratio
from ...noise import discrete_gaussian
from .inputs import (
    cell_noise,
    checked_category,
    checked_known,
    checked_prior,
    checked_releases,
    released_mask,
)

__all__ = ["decision", "log_likelihood_ratios", "posterior", "release_pmf", "risk"]


def _scores(releases, prior, rho, known_counts, convention, released, mechanism=None):
    """``(log π_k + s_k, log π_k, s_k)`` with the categories on the last axis."""
    prior = checked_prior(prior)
    n_categories = prior.shape[-1]
    mask = released_mask(released, n_categories)
    sigma2, mechanisms = cell_noise(rho, n_categories, convention, mechanism)
    known = checked_known(known_counts, n_categories)
    releases = checked_releases(releases, int(mask.sum()))
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
    ratio of :func:`adversary.scenarios.single_block.log_likelihood_ratio`), 0 for a cell not
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


def decision(
    releases,
    prior,
    rho,
    known_counts,
    convention="paper",
    released=None,
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
    rng=None,
) -> np.ndarray:
    """The Bayes decision under 0-1 loss (3.5): the index of the posterior mode.

    Scores ``log π_k + s_k`` within :func:`~adversary.measures.decision.tie_tolerance`
    of the largest (for their size) are tied; a tie goes by ``tie_rule``
    (:mod:`adversary.measures.decision`): to the category listed last
    (``"largest"``) or first (``"smallest"``), or drawn with ``rng``
    (``"split"``, which then needs it).
    """
    scores, log_prior, ratios = _scores(
        releases, prior, rho, known_counts, convention, released, mechanism
    )
    ratios = np.where(np.isfinite(ratios), ratios, 0.0)
    magnitude = np.max(np.abs(log_prior), axis=-1) + np.max(np.abs(ratios), axis=-1)
    categories = np.arange(scores.shape[-1])
    return decide(categories, scores, tie_rule, rng=rng, tolerance=tie_tolerance(magnitude))


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
    c = checked_category(true_category, n_categories)
    mask = released_mask(released, n_categories)
    sigma2, mechanisms = cell_noise(rho, n_categories, convention, mechanism)
    releases = checked_releases(releases, int(mask.sum()))
    truth = known + (np.arange(n_categories) == c)
    noise = releases - truth[..., mask]
    if mechanisms is not None:
        cells = np.flatnonzero(mask)
        columns = [mechanisms[k].pmf(noise[..., j]) for j, k in enumerate(cells)]
        return np.prod(np.stack(columns, axis=-1), axis=-1)
    sigma2 = np.broadcast_to(sigma2, known.shape)
    pmf = discrete_gaussian.pmf(noise, sigma2[..., mask])
    return pmf.prod(axis=-1)
