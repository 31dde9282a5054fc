"""The data holder's view: reconstruction measures averaged over releases from the truth.

The data holder knows the true histogram ``t`` but not which noise the
mechanism will draw. The data holder's version of each measure is its
expectation over releases ``x* ~ P(x* | t) = Π_q P_q(x*_q - a_q·t)``: the
expected posterior probability of the truth, the expected overlap, the
probability that the most probable histogram is the truth (the
exact-reconstruction rate; ties counted by the case's ``tie_rule``), and the
expected match rate of the top records.
:func:`holder_measures` computes them

- **exactly over the release grid** (``releases="grid"``) where it is small:
  every combination of each query's noise within its cut-off
  (:meth:`~adversary.noise.mechanisms.NoiseMechanism.cutoff` at
  ``tail_mass`` / queries), each posterior exact over every histogram. The
  grid leaves out at most ``omitted_mass`` of the release probability, so
  each expectation is within ``omitted_mass`` times the measure's range
  (1, or ``n`` for the overlap) of the full sum — reported as ``bound``;
- **by Monte Carlo** (``releases="sampled"``) over ``replications`` release
  sets drawn from the truth, each posterior exact or sampled, with the
  standard error over replications (for sampled posteriors this includes
  their own Monte Carlo error).

``"auto"`` takes the grid when it has at most :data:`MAX_GRID` releases and
its posteriors fit the memory budget. The baseline (the prior alone) does not
depend on the releases and is exact.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..._validation import scalar_integer
from ...memory import MemoryBudgetError, check_memory
from .case import ReconstructionCase
from .measures import ReconstructionMeasures, posterior_measures, prior_measures
from .posterior import (
    ExactPosteriors,
    HistogramPosterior,
    compositions,
    log_prior,
    sampled_posterior,
)
from .simulate import drawn_releases

__all__ = ["MAX_GRID", "RELEASES", "holder_measures", "release_grid_size"]

_SCALARS = ("p_true_histogram", "expected_overlap", "overlap_share", "map_exact")
#: Ways to average over releases.
RELEASES = ("auto", "grid", "sampled")
#: Largest release grid ``"auto"`` sums exactly.
MAX_GRID = 20_000


def release_grid_size(case: ReconstructionCase, tail_mass: float) -> int:
    """Number of release sets in the grid: ``Π_q (2 K_q + 1)``, ``K_q`` each query's cut-off."""
    share = tail_mass / len(case.queries)
    return math.prod(2 * m.cutoff(share) + 1 for m in case.noise())


def holder_measures(
    case: ReconstructionCase,
    replications: int = 20,
    method: str = "exact",
    *,
    releases: str = "sampled",
    tail_mass: float = 1e-9,
    seed=None,
    **sample_kwargs,
) -> dict:
    """Each measure's expectation over releases from the truth (module docstring).

    ``method`` ``"exact"`` or ``"mcmc"`` — each posterior (``sample_kwargs`` go
    to :func:`~.posterior.sampled_posterior`; the grid needs ``"exact"``);
    ``releases`` ``"grid"``, ``"sampled"`` or ``"auto"``. Returns a JSON-ready
    dict: per measure ``{"mean", "standard_error", "bound"}`` (``map_exact``:
    the rate at which the most probable histogram is the truth; on the grid
    the standard error is 0 and ``bound`` the most the omitted releases could
    change the mean; sampled, ``bound`` is ``None``), ``match_rate`` (the mean
    curve), ``releases``, ``replications`` (``None`` on the grid),
    ``omitted_mass`` (the grid's), ``method``, ``tie_rule`` and ``baseline``
    (the prior alone, exact).
    """
    if case.truth is None:
        raise ValueError("truth: the case has none; the data holder's measures need it")
    replications = scalar_integer(replications, "replications", 2)
    seed = None if seed is None else scalar_integer(seed, "seed", 0)
    if releases not in RELEASES:
        raise ValueError(f"releases must be one of {', '.join(RELEASES)}, got {releases!r}")
    if method not in ("exact", "mcmc"):
        raise ValueError(f"method must be exact or mcmc, got {method!r}")
    if not (isinstance(tail_mass, float | int) and 0 < tail_mass < 1):
        raise ValueError(f"tail_mass must be in (0, 1), got {tail_mass!r}")
    if releases == "auto":
        releases = "grid" if method == "exact" and _grid_fits(case, tail_mass) else "sampled"
    if releases == "grid":
        if method != "exact":
            raise ValueError("method: the release grid's posteriors are exact; use method='exact'")
        out = _over_grid(case, tail_mass)
    else:
        out = _over_draws(case, replications, method, seed, sample_kwargs)
    out["method"], out["tie_rule"] = method, case.tie_rule
    out["baseline"] = prior_measures(case).to_dict()
    return out


def _grid_fits(case: ReconstructionCase, tail_mass: float) -> bool:
    size = release_grid_size(case, tail_mass)
    if size > MAX_GRID:
        return False
    histograms = math.comb(case.n + case.n_cells - 1, case.n_cells - 1)
    try:
        check_memory(8.0 * 4 * size * histograms, "the release grid's posteriors")
    except MemoryBudgetError:
        return False
    return True


def _over_grid(case: ReconstructionCase, tail_mass: float) -> dict:
    """Every release set within the noise's cut-offs, weighted by its probability."""
    truth = np.asarray(case.truth, dtype=np.int64)
    share = tail_mass / len(case.queries)
    counts = case.incidence() @ truth
    noises = [np.arange(-m.cutoff(share), m.cutoff(share) + 1) for m in case.noise()]
    size = math.prod(len(z) for z in noises)
    histograms = compositions(case.n, case.n_cells)
    check_memory(8.0 * 4 * size * len(histograms), "the release grid's posteriors")
    prior = log_prior(case, histograms)
    # Each query's noise pmf, and each histogram's likelihood of each release of that query,
    # x*_q = counts_q + z, tabulated once: log P_q(counts_q + z - a_q·h) (histograms, noise).
    offsets = counts[None, :] - histograms.astype(np.int64) @ case.incidence().T
    noise_logpmf, likelihoods = [], []
    for q, (mechanism, z) in enumerate(zip(case.noise(), noises, strict=True)):
        noise_logpmf.append(mechanism.logpmf(z))
        likelihoods.append(mechanism.logpmf(offsets[:, q, None] + z[None, :]))
    rows, weights = [], []
    for index in itertools.product(*(range(z.size) for z in noises)):
        weight = math.exp(sum(float(t[i]) for t, i in zip(noise_logpmf, index, strict=True)))
        log_weights = prior + sum(t[:, i] for t, i in zip(likelihoods, index, strict=True))
        posterior = np.exp(log_weights - log_weights.max())
        rows.append(
            posterior_measures(
                HistogramPosterior(histograms, posterior / posterior.sum(), "exact"),
                truth,
                case.tie_rule,
            )
        )
        weights.append(weight)
    weights = np.array(weights)
    # a rigorous bound on the release probability outside the grid: Σ_q P[|Z_q| > K_q]
    omitted = min(1.0, sum(m.outside_mass(m.cutoff(share)) for m in case.noise()))
    out = _averaged(rows, weights / weights.sum(), errors=None)
    for key in _SCALARS:
        # E = (1 - ω) E_grid + ω E_outside, so |E - E_grid| ≤ ω × the measure's range
        out[key]["bound"] = omitted * (case.n if key == "expected_overlap" else 1.0)
    out["releases"], out["replications"], out["omitted_mass"] = "grid", None, omitted
    out["grid_size"] = size
    return out


def _over_draws(case, replications, method, seed, sample_kwargs) -> dict:
    rng = np.random.default_rng(seed)
    rows = []
    exact = ExactPosteriors(case) if method == "exact" else None
    for _ in range(replications):
        releases = drawn_releases(case, case.truth, rng)
        if exact is not None:
            posterior = exact(releases)
        else:
            posterior = sampled_posterior(
                case, releases, random_seed=int(rng.integers(2**31)), **sample_kwargs
            )
        rows.append(posterior_measures(posterior, case.truth, case.tie_rule))
    weights = np.full(replications, 1.0 / replications)
    out = _averaged(rows, weights, errors=replications)
    out["releases"], out["replications"], out["omitted_mass"] = "sampled", replications, None
    return out


def _averaged(rows: list[ReconstructionMeasures], weights: np.ndarray, errors) -> dict:
    """Weighted means of the measures; with ``errors`` (replications) their standard errors."""
    out = {}
    for key in _SCALARS:
        values = np.array([float(getattr(row, key)) for row in rows])
        error = 0.0 if errors is None else float(values.std(ddof=1) / np.sqrt(errors))
        out[key] = {"mean": float(weights @ values), "standard_error": error, "bound": None}
    curves = np.array([row.match_rate for row in rows])
    out["match_rate"] = [float(x) for x in weights @ curves]
    return out
