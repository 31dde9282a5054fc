"""One Gibbs sweep over a block's persons, the tables kept up to date, compiled by numba.

To update person i in cell c the sweep removes the person (``m_q -= 1`` for
the released counts q holding c) and scores every cell k by its log full
conditional, up to a constant,

    log prior_k + Σ_{q ∋ k} [log P_q(x*_q - m_q - 1) - log P_q(x*_q - m_q)],

the noise's log-pmf read from a table over the counts a query can hold
(0…n). An infinite term (bounded noise) is counted apart, so a cell whose
placement leaves some count impossible gets ``-inf``. Under a Dirichlet prior
the prior term is the Pólya sequence's, ``log(α_k + h_k)`` with ``h`` the
histogram without the person. The new cell is drawn by the inverse CDF of
the normalised weights at a uniform drawn beforehand (the rule of
:func:`adversary.inference._conditional.draw_index`), and the person re-enters
the counts. A sweep costs ``O(n · (queries + Σ_k queries holding k))``.

:class:`PersonsKernel` holds the tables of one case and release;
:class:`~.step.PersonsGibbs` runs it as a PyMC step, :func:`persons_chains`
directly (no model to compile).
"""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np

from ..._numba_cache import njit_cached
from ..._output import progress_bar
from ..._validation import scalar_integer
from .case import ReconstructionCase

__all__ = ["PersonsKernel", "persons_chains"]


@njit_cached(nogil=True)
def _refresh(table, counts, step, stuck, queries) -> int:
    """Recompute ``step`` and ``stuck`` of ``queries`` from ``counts``; the change of stuck ones.

    ``step[q]`` is ``log P(x* - m - 1) - log P(x* - m)``, ``-inf`` where the
    first is (the cell's placement impossible) and the second read as 0 where
    it is ``-inf`` (``stuck[q]``).
    """
    change = 0
    for q in queries:
        here, above = table[q, counts[q]], table[q, counts[q] + 1]
        change -= stuck[q]
        stuck[q] = here == -np.inf
        change += stuck[q]
        step[q] = -np.inf if above == -np.inf else above - (0.0 if stuck[q] else here)
    return change


@njit_cached(nogil=True)  # on disk: NUMBA_CACHE_DIR, else __pycache__ beside this file
def _sweep(cells, table, indptr, indices, log_prior, alpha, uniforms):
    """Update every person of ``cells`` in place (module docstring); returns how many moved.

    ``alpha`` empty: multinomial prior ``log_prior``; else the Dirichlet's α.
    Returns -1 - i if person i has no possible cell. Between two persons only
    the queries holding the cell one entered or the other left change their
    counts, so only their terms are recomputed (each with a person out, so no
    count exceeds n - 1); a cell of prior ``-inf`` is not scored further.
    """
    n_queries, n_cells = table.shape[0], log_prior.size
    histogram = np.zeros(n_cells, dtype=np.int64)
    counts = np.zeros(n_queries, dtype=np.int64)  # the released counts' true values
    for i in range(cells.size):
        histogram[cells[i]] += 1
        for j in range(indptr[cells[i]], indptr[cells[i] + 1]):
            counts[indices[j]] += 1
    step = np.empty(n_queries)
    stuck = np.zeros(n_queries, dtype=np.bool_)  # log P(x* - m) = -inf
    n_stuck, entered = 0, np.arange(n_queries)  # the queries the last person entered: all
    scores = np.empty(n_cells)
    moved = 0
    for i in range(cells.size):
        old = cells[i]
        for j in range(indptr[old], indptr[old + 1]):
            counts[indices[j]] -= 1
        histogram[old] -= 1
        n_stuck += _refresh(table, counts, step, stuck, entered)
        n_stuck += _refresh(table, counts, step, stuck, indices[indptr[old] : indptr[old + 1]])
        top = -np.inf
        for k in range(n_cells):
            if alpha.size:
                score = math.log(alpha[k] + histogram[k]) if alpha[k] > 0 else -np.inf
            else:
                score = log_prior[k]
            if score > -np.inf:
                for j in range(indptr[k], indptr[k + 1]):
                    score += step[indices[j]]
                if n_stuck > 0:
                    left_stuck = n_stuck
                    for j in range(indptr[k], indptr[k + 1]):
                        left_stuck -= stuck[indices[j]]
                    if left_stuck > 0:
                        score = -np.inf
            scores[k] = score
            top = max(top, score)
        if not np.isfinite(top):
            return -1 - i
        total = 0.0
        for k in range(n_cells):
            if scores[k] > -np.inf:  # else its weight is 0: the total unchanged
                total += math.exp(scores[k] - top)
            scores[k] = total
        target, new = uniforms[i] * total, n_cells - 1
        for k in range(n_cells):
            if target < scores[k]:
                new = k
                break
        moved += new != old
        cells[i] = new
        for j in range(indptr[new], indptr[new + 1]):
            counts[indices[j]] += 1
        histogram[new] += 1
        entered = indices[indptr[new] : indptr[new + 1]]
    return moved


def _sharing(mechanisms) -> list[tuple]:
    """Each distinct mechanism (the same object) and the positions holding it."""
    groups = {}
    for q, mechanism in enumerate(mechanisms):
        groups.setdefault(id(mechanism), (mechanism, []))[1].append(q)
    return list(groups.values())


class PersonsKernel:
    """The tables of one case and release for :func:`_sweep` (module docstring)."""

    def __init__(self, case: ReconstructionCase, releases=None):
        self.case = case
        self.releases = case.checked_releases(releases)
        self.incidence = case.incidence()
        # the queries holding each cell, in CSR form: indices[indptr[k]:indptr[k + 1]]
        by_cell = [np.flatnonzero(self.incidence[:, k]) for k in range(case.n_cells)]
        self.indptr = np.concatenate([[0], np.cumsum([len(q) for q in by_cell])]).astype(np.int64)
        self.indices = np.concatenate(by_cell).astype(np.int64)
        # log P_q(x*_q - m) for every count m a query can hold, 0…n: looked up, not recomputed.
        held = np.arange(case.n + 1)
        self.table = np.empty((len(case.queries), case.n + 1))
        for mechanism, queries in _sharing(case.noise()):
            self.table[queries] = mechanism.logpmf(self.releases[queries, None] - held)
        prior = np.array(case.prior)
        with np.errstate(divide="ignore"):
            self.log_prior = np.log(prior)
        self.alpha = np.empty(0) if case.concentration is None else case.concentration * prior

    def sweep(self, cells: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """One sweep from ``cells`` (not modified): the new cells and how many persons moved."""
        cells = np.array(cells, dtype=np.int64, copy=True)
        moved = _sweep(
            cells,
            self.table,
            self.indptr,
            self.indices,
            self.log_prior,
            self.alpha,
            rng.random(cells.size),
        )
        if moved < 0:
            raise FloatingPointError(
                f"releases: person {-1 - moved} has no possible cell given the others "
                "(every cell has log-probability -inf)"
            )
        return cells, int(moved)

    def log_likelihood(self, cells: np.ndarray) -> float:
        """``Σ_q log P_q(x*_q - m_q)`` of the persons ``cells``."""
        counts = self.incidence @ np.bincount(cells, minlength=self.case.n_cells)
        return float(self.table[np.arange(len(counts)), counts].sum())

    def start(self, rng: np.random.Generator) -> np.ndarray:
        """A start: persons drawn from the prior, or (if the releases rule that out) greedily.

        The greedy start places the persons one at a time, each in the cell of
        positive prior that brings the true counts closest to the releases (least
        squares), which finds a possible start whenever the noise is small
        enough for the releases to be nearly the counts.
        """
        prior = np.array(self.case.prior)
        cells = rng.choice(self.case.n_cells, size=self.case.n, p=prior)
        if np.isfinite(self.log_likelihood(cells)):
            return cells
        support = np.flatnonzero(prior > 0)
        residual = self.releases.astype(np.float64)
        cells = np.empty(self.case.n, dtype=np.int64)
        columns = self.incidence[:, support]
        sizes = columns.sum(axis=0)
        for i in range(self.case.n):
            # ‖r - a_k‖² - ‖r‖² = |a_k| - 2 a_k·r for each cell k's incidence column a_k
            cells[i] = support[int(np.argmin(sizes - 2 * residual @ columns))]
            residual -= self.incidence[:, cells[i]]
        if not np.isfinite(self.log_likelihood(cells)):
            raise ValueError(
                "releases: no start found with every released count possible; "
                "sample with sampler='pymc', whose start search is exhaustive"
            )
        return cells


def persons_chains(
    case: ReconstructionCase,
    releases=None,
    *,
    draws: int,
    tune: int,
    chains: int,
    random_seed,
    progress: bool = False,
) -> np.ndarray:
    """Histograms ``(chains, draws, K)`` from the persons' Gibbs chains, run directly.

    The same chain as :class:`~.step.PersonsGibbs` under :func:`pymc.sample`,
    without a model to compile: each chain starts from
    :meth:`PersonsKernel.start`, discards ``tune`` sweeps and keeps ``draws``.
    Chain c draws from ``numpy.random.default_rng([random_seed, c])``.
    ``progress``: a bar of the sweeps on stderr.
    """
    draws, tune = scalar_integer(draws, "draws", 1), scalar_integer(tune, "tune", 0)
    chains = scalar_integer(chains, "chains", 1)
    kernel = PersonsKernel(case, releases)
    seed = np.random.SeedSequence(random_seed).entropy
    out = np.empty((chains, draws, case.n_cells), dtype=np.int64)
    with progress_bar("sweeps") if progress else nullcontext() as bar:
        total = chains * (tune + draws)
        task = None if bar is None else bar.add_task(f"{chains} chains", total=total)
        for chain in range(chains):
            rng = np.random.default_rng([seed, chain])
            cells = kernel.start(rng)
            for index in range(tune + draws):
                cells, _ = kernel.sweep(cells, rng)
                if index >= tune:
                    out[chain, index - tune] = np.bincount(cells, minlength=case.n_cells)
                if bar is not None:
                    bar.advance(task)
    return out
