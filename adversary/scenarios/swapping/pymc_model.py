"""The attack under swapping as a PyMC model with discrete latents.

Latents: the target's hypothesis (the single block's ``X1 ∈ {m, m + 1}``,
``BernoulliCount``, or the unknown attribute's candidate index ``C``,
``FinitePmf``) and one swap indicator per household ``swapped_h``, with
probability π_h, the law's on the hypothesised block (a table indexed by the
hypothesis, so a law that depends on the block makes the indicators depend on
the target's latent). Each indicator is declared ``Bernoulli(1/2)`` and its
law ``π_h^s (1 - π_h)^{1-s}`` over ``1/2`` enters in the ``swap_law`` Potential:
the same joint, but every indicator then plays the same part in the model and
the exact Gibbs steps compile one conditional for all of them
(:mod:`adversary.inference.roles`) instead of one per household; the indicators
are scalars so that ``adversary run`` prints each one's posterior. The release —
the swapped block's exact counts of the tracked cells — enters as a
``pm.Potential``: given the latents, the kept households contribute their own
counts and the ``A`` voting-age and ``B`` other persons swapped in contribute
``x* - kept``, whose probability is the product of two multinomials
(``Mult(A; q_va)`` on the voting-age cells, ``Mult(B; q_other)`` on the others:
a cell's voting age is fixed, so the two never share a cell).

**Why the incoming cells are summed out.** The release is an exact function
of the swap indicators, the target's cell and the incoming persons' cells.
Kept as latents, the incoming cells would be tied by that exact count: moving
one person's cell alone changes the count and has probability 0, so the
package's single-site Gibbs steps could never move them (and enumeration
would need ``56^N`` states). Summed out in closed form they leave only the
hypothesis and the H indicators; enumerating those (``2^H`` per hypothesis)
or sampling them by exact Gibbs steps reproduces the convolution's posterior
(Kazan & Reiter (3.1)) of :mod:`.hypotheses`.

The start point is feasible (a start of zero posterior would never move):
the most probable hypothesis and a swap vector that can produce the release
(:func:`~.release.feasible_swaps`).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ...distributions import BernoulliCount, FinitePmf
from .block import VOTING_AGE
from .hypotheses import SwapHypotheses
from .release import feasible_swaps

__all__ = ["model"]


def _multinomial_logp(counts, trials, probs: np.ndarray):
    """``log Mult(counts; trials, probs)`` with the rest of the mass on "any other cell";
    ``-inf`` off its support (a negative count, more counts than trials, a count in a cell of
    probability 0)."""
    rest = max(0.0, 1.0 - float(probs.sum()))
    with np.errstate(divide="ignore"):
        log_probs = np.log(probs).astype(np.float64)
        log_rest = np.float64(np.log(rest))
    left = trials - counts.sum()
    safe = pt.maximum(counts, 0)
    safe_left = pt.maximum(left, 0)
    cell_terms = pt.switch(pt.eq(safe, 0), np.float64(0.0), safe * log_probs)
    rest_term = pt.switch(pt.eq(safe_left, 0), np.float64(0.0), safe_left * log_rest)
    logp = (
        pt.gammaln(trials + np.float64(1.0))
        - pt.gammaln(safe + np.float64(1.0)).sum()
        - pt.gammaln(safe_left + np.float64(1.0))
        + cell_terms.sum()
        + rest_term
    )
    valid = pt.all(pt.ge(counts, 0)) & pt.ge(left, 0)
    return pt.switch(valid, logp, np.float64(-np.inf))


def _swaps_and_release(hypotheses: SwapHypotheses, hypothesis, release, start: np.ndarray):
    """The swap indicators and the release's Potential, in the current model."""
    tables = hypotheses.tables
    swap = np.stack([t.swap for t in tables]).astype(np.float64)
    own = np.stack([t.own for t in tables]).astype(np.int64)
    adults = np.stack([t.adults for t in tables]).astype(np.int64)
    others = np.stack([t.others for t in tables]).astype(np.int64)
    swapped = pt.stack(
        [
            pm.Bernoulli(f"swapped_{h}", p=np.float64(0.5), initval=np.int64(start[h]))
            for h in range(swap.shape[1])
        ]
    )
    with np.errstate(divide="ignore"):
        log_swap = pt.as_tensor_variable(np.log(swap) - np.log(0.5))[hypothesis]
        log_keep = pt.as_tensor_variable(np.log1p(-swap) - np.log(0.5))[hypothesis]
    pm.Potential("swap_law", pt.switch(pt.eq(swapped, 1), log_swap, log_keep).sum())
    kept = ((1 - swapped)[:, None] * pt.as_tensor_variable(own)[hypothesis]).sum(axis=0)
    incoming = np.asarray(release, dtype=np.int64) - kept
    adult_cell = VOTING_AGE[np.array(hypotheses.tracked)]
    logp = np.float64(0.0)
    for mask, people, q in (
        (adult_cell, adults, tables[0].q_adult),
        (~adult_cell, others, tables[0].q_other),
    ):
        trials = (swapped * pt.as_tensor_variable(people)[hypothesis]).sum()
        if mask.any():
            logp = logp + _multinomial_logp(incoming[np.flatnonzero(mask)], trials, q[mask])
    pm.Potential("release", logp)


def _start(hypotheses: SwapHypotheses, release, prior) -> tuple[int, np.ndarray]:
    """The most probable hypothesis at the release and a feasible swap vector under it."""
    best = int(np.argmax(hypotheses.log_scores(release, prior)))
    return best, feasible_swaps(hypotheses.tables[best], hypotheses.release_index(release))


def model(hypotheses: SwapHypotheses, release, prior, *, known_count: int | None = None):
    """The PyMC model of the attack given ``release`` under the prior over the hypotheses.

    With ``known_count`` m (two hypotheses: the alternative cell, then c) the
    target's latent is ``X1 ~ BernoulliCount(m, p)``, ``p = prior[1]`` (the
    single block); without, ``C ~ FinitePmf(0..K-1, prior)`` (the unknown attribute).
    """
    prior = np.asarray(prior, dtype=np.float64)
    best, start = _start(hypotheses, release, prior)
    with pm.Model() as attack:
        if known_count is None:
            latent = FinitePmf(
                "C", support=list(range(prior.size)), probs=prior, initval=np.int64(best)
            )
            hypothesis = latent
        else:
            latent = BernoulliCount(
                "X1", known=known_count, p=float(prior[1]), initval=np.int64(known_count + best)
            )
            hypothesis = latent - known_count
        _swaps_and_release(hypotheses, hypothesis, release, start)
    return attack
