"""The attack under swapping, for any finite set of hypotheses about the target's cell.

Hypothesis k puts the target in cell ``cells[k]``; its likelihood of a release
(the swapped block's counts of the tracked cells) is the convolution of
:mod:`.release` on that hypothesised block — with the law's π_h evaluated on
it, so a law that depends on the block (targeted swapping) makes being swapped
informative. With prior π_k the posterior is Bayes' rule (Kazan & Reiter
(3.1)), the Bayes decision under 0-1 loss the posterior mode (3.5), ties
counted by the package's rule (:mod:`adversary.measures.decision`). The data
holder's measures for the true hypothesis t sum over every release, a finite
grid: the marginal posterior (3.3) ``Σ_x P[x | t] P[t | x]`` and the
probability of a correct decision (3.6) ``Σ_x P[x | t] credit_t(x)`` — exact,
nothing omitted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..._validation import as_integers
from ...measures.decision import truth_credit
from ...measures.marginal import MarginalMeasures
from .block import check_block, check_cell, check_target, with_target_cell
from .release import HouseholdTables, household_tables, release_pmf

__all__ = ["SwapHypotheses", "swap_hypotheses"]


@dataclass(frozen=True)
class SwapHypotheses:
    """Each hypothesis's tables and release pmf (``likelihoods``: hypotheses × release grid)."""

    cells: tuple[int, ...]
    tracked: tuple[int, ...]
    tables: tuple[HouseholdTables, ...]
    likelihoods: np.ndarray

    def release_index(self, release, name: str = "release") -> tuple[int, ...]:
        """``release`` (one count per tracked cell) checked, as a grid index."""
        counts = as_integers(release, name).reshape(-1)
        if counts.size != len(self.tracked):
            raise ValueError(
                f"{name} must hold {len(self.tracked)} count(s), one per released cell "
                f"{self.tracked}, got {release!r}"
            )
        return tuple(int(x) for x in counts)

    def log_scores(self, release, prior, name: str = "release") -> np.ndarray:
        """``log π_k + log P[release | k]`` per hypothesis; a release no hypothesis with prior
        mass can produce is an error naming ``name``."""
        index = self.release_index(release, name)
        grid = self.likelihoods.shape[1:]
        inside = all(0 <= i < n for i, n in zip(index, grid, strict=True))
        at = self.likelihoods[(slice(None), *index)] if inside else np.zeros(len(self.cells))
        with np.errstate(divide="ignore"):
            scores = np.log(prior) + np.log(at)
        if np.all(scores == -np.inf):
            raise ValueError(
                f"{name} {list(index)} is impossible under every hypothesis (target in cell "
                f"{' or '.join(map(str, self.cells))}): no swap outcome produces it"
            )
        return scores

    def posterior(self, release, prior, name: str = "release") -> np.ndarray:
        """``P[k | release]`` over the hypotheses, (3.1)."""
        scores = self.log_scores(release, prior, name)
        return np.exp(scores - special.logsumexp(scores))

    def marginal_measures(self, prior, truth: int, tie_rule: str) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) of hypothesis ``truth``: exact sums over every release
        (``omitted_mass`` and ``error_bound`` 0)."""
        pmf = self.likelihoods[truth].reshape(-1)
        possible = pmf > 0
        rows = self.likelihoods.reshape(len(self.cells), -1)[:, possible].T
        with np.errstate(divide="ignore"):
            scores = np.log(prior)[None, :] + np.log(rows)
        posterior = np.exp(scores[:, truth] - special.logsumexp(scores, axis=1))
        credit = truth_credit(scores, truth, tie_rule)
        weights = pmf[possible]
        return MarginalMeasures.of_average(
            weights @ posterior,
            weights @ credit,
            float(prior[truth]),
            omitted_mass=0.0,
            error_bound=0.0,
            details={"releases": int(pmf.size)},
            tie_rule=tie_rule,
        )


def swap_hypotheses(
    households, target, cells, tracked, law, composition, name: str = "target_cell"
) -> SwapHypotheses:
    """The hypotheses "the target is in ``cells[k]``" and their release pmfs of ``tracked``.

    The pmfs' grid is sized first; over the memory budget it is refused in one
    line naming ``name`` (the argument that chose the released cells).
    """
    block = check_block(households)
    target = check_target(target, block)
    cells = tuple(check_cell(c, "cells") for c in cells)
    tracked = tuple(check_cell(c, "tracked cells") for c in tracked)
    tables = tuple(
        household_tables(with_target_cell(block, target, c), law, composition, tracked)
        for c in cells
    )
    what = (
        f"{name}: the release pmf of cells {list(tracked)} in a block of {tables[0].size} persons"
    )
    likelihoods = np.stack([release_pmf(t, what) for t in tables])
    return SwapHypotheses(cells, tracked, tables, likelihoods)
