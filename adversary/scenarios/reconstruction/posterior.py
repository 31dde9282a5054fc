"""The posterior over a block's histogram: exact over every histogram, or sampled.

Every histogram ``h`` (K counts summing to n) has posterior
``P(h | x*) ∝ P(h) Π_q P_q(x*_q - a_q·h)``: the prior (multinomial,
``n!/Π h_k! Π p_k^{h_k}``, or Dirichlet-multinomial) times each released
count's noise pmf at its error. :func:`exact_posterior` sums over all
``C(n + K - 1, K - 1)`` histograms (refused, naming the size, beyond the
memory budget); :func:`sampled_posterior` draws histograms by MCMC (each
person's cell drawn from its exact full conditional, directly or under
:func:`adversary.inference.sample`).
Both give a :class:`HistogramPosterior`: distinct histograms with weights,
and for a sampled one the draws per chain for Monte Carlo errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np
from scipy import special

from ..._validation import scalar_integer
from ...memory import check_memory
from .case import HISTOGRAM, PERSONS, ReconstructionCase
from .kernel import persons_chains

__all__ = [
    "ExactPosteriors",
    "HistogramPosterior",
    "compositions",
    "exact_posterior",
    "log_prior",
    "prior_posterior",
    "sampled_posterior",
]


@dataclass(frozen=True)
class HistogramPosterior:
    """Histograms ``(m, K)`` and their probabilities; sampled: ``draws`` ``(chains, draws, K)``."""

    histograms: np.ndarray
    probabilities: np.ndarray
    method: str
    draws: np.ndarray | None = None


def histograms_bytes(n: int, k: int) -> tuple[int, int]:
    """``(number of histograms, bytes to build them)`` of ``n`` persons over ``k`` cells."""
    count = math.comb(n + k - 1, k - 1)
    return count, count * (k * 4 + n * 8)


def compositions(n: int, k: int) -> np.ndarray:
    """Every histogram of ``n`` persons over ``k`` cells, one row each (``int32``)."""
    count, size = histograms_bytes(n, k)
    check_memory(size, f"the {count:,} histograms of {n} persons in {k} cells")
    persons = np.array(list(combinations_with_replacement(range(k), n)), dtype=np.int64)
    rows = np.zeros((count, k), dtype=np.int32)
    np.add.at(rows, (np.repeat(np.arange(count), n), persons.reshape(-1)), 1)
    return rows


def log_prior(case: ReconstructionCase, histograms: np.ndarray) -> np.ndarray:
    """Log prior probability of each histogram (multinomial or Dirichlet-multinomial)."""
    h = histograms.astype(np.float64)
    p = np.array(case.prior)
    log_coefficient = special.gammaln(case.n + 1) - special.gammaln(h + 1).sum(axis=-1)
    if case.concentration is None:
        with np.errstate(divide="ignore"):
            terms = np.where(h > 0, h * np.log(np.where(p > 0, p, 1.0)), 0.0)
            impossible = ((h > 0) & (p == 0)).any(axis=-1)
        return np.where(impossible, -np.inf, log_coefficient + terms.sum(axis=-1))
    alpha = case.concentration * p
    positive = alpha > 0
    a = np.where(positive, alpha, 1.0)
    cells = np.where(positive, special.gammaln(a + h) - special.gammaln(a), 0.0)
    impossible = ((h > 0) & ~positive).any(axis=-1)
    total = special.gammaln(alpha.sum()) - special.gammaln(alpha.sum() + case.n)
    return np.where(impossible, -np.inf, log_coefficient + total + cells.sum(axis=-1))


def _noise_tables(case: ReconstructionCase, releases) -> np.ndarray:
    """``(queries, n + 1)``: ``log P_q(x*_q - c)`` for every count ``c`` in 0..n a histogram of
    ``n`` persons can give (the released counts' only values: few, so each pmf is tabulated)."""
    values = np.arange(case.n + 1)
    return np.stack(
        [m.logpmf(r - values) for r, m in zip(releases, case.noise(), strict=True)]
    ).reshape(len(case.queries), case.n + 1)


def _normalised(log_weights: np.ndarray) -> np.ndarray:
    top = np.max(log_weights)
    if not np.isfinite(top):
        raise ValueError(
            "releases: impossible under the prior and the noise (every histogram has probability 0)"
        )
    weights = np.exp(log_weights - top)
    return weights / weights.sum()


class ExactPosteriors:
    """:func:`exact_posterior` of one case for many release sets: every histogram, its log
    prior and its released counts ``a_q·h`` (none depends on the releases) computed once."""

    def __init__(self, case: ReconstructionCase):
        self.case = case
        self.histograms = compositions(case.n, case.n_cells)
        count, queries = len(self.histograms), len(case.queries)
        check_memory(16.0 * count * queries, f"the released counts of {count:,} histograms")
        self.log_prior = log_prior(case, self.histograms)
        self.counts = self.histograms.astype(np.int64) @ case.incidence().T
        self._rows = np.arange(queries)

    def __call__(self, releases=None) -> HistogramPosterior:
        table = _noise_tables(self.case, self.case.checked_releases(releases))
        log_weights = self.log_prior + table[self._rows, self.counts].sum(axis=-1)
        return HistogramPosterior(self.histograms, _normalised(log_weights), "exact")


def exact_posterior(case: ReconstructionCase, releases=None) -> HistogramPosterior:
    """The exact posterior over every histogram, given ``releases`` (default the case's)."""
    return ExactPosteriors(case)(releases)


def prior_posterior(case: ReconstructionCase) -> HistogramPosterior:
    """The prior over every histogram (the adversary with no release), exactly."""
    histograms = compositions(case.n, case.n_cells)
    return HistogramPosterior(histograms, _normalised(log_prior(case, histograms)), "exact")


_QUIET = {"compute_convergence_checks": False}  # the measures carry their own Monte Carlo errors
SAMPLERS = ("direct", "pymc")
#: Copies of the trace (chains × draws × cells, int64) held at once: the draws, the sorted
#: copy and distinct histograms of ``numpy.unique``, and the measures' masks of them.
TRACE_COPIES = 6


def chain_bytes(case: ReconstructionCase, draws: int, chains: int, sampler: str) -> float:
    """Memory of :func:`sampled_posterior`: its trace and the sampler's state, in bytes.

    The trace is every draw's histogram (``chains × draws × K`` int64, held
    :data:`TRACE_COPIES` times); the state is the table of each query's
    noise log-probability at each count ``0…n`` (``queries × (n + 1)``), the
    incidence matrix (``queries × K``), the persons' cells and uniforms, and
    under PyMC the persons' trace (``chains × draws × n``) and its histograms.
    """
    trace = 8.0 * chains * draws * case.n_cells * TRACE_COPIES
    queries = len(case.queries)
    state = 8.0 * (queries * (case.n + 1) + queries * case.n_cells + 4 * case.n)
    if sampler == "pymc":
        state += 8.0 * chains * draws * case.n * 2
    return trace + state


def sampled_posterior(
    case: ReconstructionCase,
    releases=None,
    *,
    draws: int = 2000,
    tune: int = 500,
    chains: int = 2,
    random_seed=None,
    latent: str = "persons",
    sampler: str = "direct",
    progressbar: bool = False,
) -> HistogramPosterior:
    """The posterior by MCMC: the persons' exact Gibbs chains, run directly or by PyMC.

    ``sampler="direct"`` runs the persons' compiled sweep itself
    (:func:`~.kernel.persons_chains`: no model to compile, for studies over
    many blocks). ``sampler="pymc"`` runs :func:`adversary.inference.sample`
    on the case's model (:meth:`~.case.ReconstructionCase.model`) with
    ``latent``: ``"persons"`` updated by :class:`~.step.PersonsGibbs` (the
    same sweep), ``"histogram"`` by pair moves. The draws are histograms
    either way. The trace and the sampler's state (:func:`chain_bytes`) are
    checked against the memory budget before anything runs; ``progressbar``
    shows the sweeps on stderr.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")
    draws, tune = scalar_integer(draws, "draws", 1), scalar_integer(tune, "tune", 0)
    chains = scalar_integer(chains, "chains", 1)
    if random_seed is not None:
        random_seed = scalar_integer(random_seed, "random_seed", 0)
    check_memory(
        chain_bytes(case, draws, chains, sampler),
        f"the MCMC trace ({chains} chains × {draws:,} draws × {case.n_cells:,} cells) and the "
        f"sampler's state ({case.n:,} persons, {len(case.queries):,} released counts)",
    )
    run = {"draws": draws, "tune": tune, "chains": chains, "random_seed": random_seed}
    if sampler == "direct":
        if latent != PERSONS:
            raise ValueError(f"latent: sampler='direct' runs the persons' chain, got {latent!r}")
        values = persons_chains(case, releases, **run, progress=progressbar)
    else:
        values = _pymc_draws(case, releases, latent, run, progressbar)
    flat = values.reshape(-1, case.n_cells)
    histograms, counts = np.unique(flat, axis=0, return_counts=True)
    return HistogramPosterior(histograms, counts / counts.sum(), "mcmc", draws=values)


def _pymc_draws(case, releases, latent, run, progressbar) -> np.ndarray:
    """Histograms ``(chains, draws, K)`` sampled by :func:`adversary.inference.sample`."""
    from ...inference import sample  # the sampler is heavy to import; only this path needs it
    from .step import PersonsGibbs

    model = case.model(releases, latent=latent)
    step = None if latent == HISTOGRAM else [PersonsGibbs(case, releases, model=model)]
    tree = sample(model, step=step, cores=1, progressbar=progressbar, **run, **_QUIET)
    if latent == HISTOGRAM:
        return np.asarray(tree.posterior[HISTOGRAM].values, dtype=np.int64)
    persons = np.asarray(tree.posterior[PERSONS].values, dtype=np.int64)
    return (persons[..., None] == np.arange(case.n_cells)).sum(axis=-2)
