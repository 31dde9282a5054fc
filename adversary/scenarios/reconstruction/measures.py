"""How well a posterior over the block's histogram reconstructs the true one.

For the true histogram ``t`` and a posterior ``P(h | x*)``:

- ``p_true_histogram`` — ``P(h = t | x*)``;
- ``expected_overlap`` — ``Σ_h P(h | x*) Σ_k min(h_k, t_k)``: the expected
  number of true records in a reconstruction drawn from the posterior
  (``overlap_share``: that over ``n``);
- ``map_histogram``, ``map_exact`` — the most probable histogram, and
  whether it is the truth (the 2018 reconstruction's "exact match");
- ``match_rate`` — records ranked by confidence (Dick et al. 2023): the
  record "at least j persons in cell k" has posterior probability
  ``P(h_k ≥ j | x*)``; ranked from the most probable, ``match_rate[r-1]`` is
  the share of the top r records that are true (``t_k ≥ j``), r = 1…n.

The **baseline** is the same for the prior alone — the adversary who saw no
release: what chance and the prior give (Ruggles & Van Riper 2021). It is
exact: by enumeration, or in closed form from the cells' marginals
(binomial, or beta-binomial under a Dirichlet prior).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import arviz as az
import numpy as np
import xarray as xr
from scipy import stats

from .case import ReconstructionCase
from .posterior import HistogramPosterior, log_prior

__all__ = ["ReconstructionMeasures", "posterior_measures", "prior_measures"]


@dataclass(frozen=True)
class ReconstructionMeasures:
    """The measures of the module docstring.

    ``standard_errors``: the Monte Carlo standard errors of sampled measures
    (empty when exact; ``None`` where every draw gave the same value, e.g. no
    draw was the true histogram).
    """

    p_true_histogram: float
    expected_overlap: float
    overlap_share: float
    map_histogram: tuple[int, ...] | None
    map_exact: bool | None
    match_rate: tuple[float, ...]
    method: str
    standard_errors: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _match_rate(at_least: np.ndarray, truth: np.ndarray) -> tuple[float, ...]:
    """Share of true records among the top r, records ranked by ``at_least[j-1, k]``."""
    n = at_least.shape[0]
    j = np.arange(1, n + 1)[:, None]
    true = (truth[None, :] >= j).reshape(-1)
    order = np.argsort(-at_least.reshape(-1), kind="stable")[:n]
    hits = np.cumsum(true[order])
    return tuple(float(x) for x in hits / np.arange(1, n + 1))


def posterior_measures(posterior: HistogramPosterior, truth) -> ReconstructionMeasures:
    """The measures of ``posterior`` for the true histogram ``truth``."""
    truth = np.asarray(truth, dtype=np.int64)
    h, p = posterior.histograms, posterior.probabilities
    n = int(truth.sum())
    is_true = (h == truth).all(axis=1)
    overlap = np.minimum(h, truth).sum(axis=1)
    at_least = np.stack([p @ (h >= j) for j in range(1, n + 1)])
    best = h[int(np.argmax(p))]
    errors = {}
    if posterior.draws is not None:
        errors = _standard_errors(posterior.draws, truth)
    expected = float(p @ overlap)
    return ReconstructionMeasures(
        p_true_histogram=float(p @ is_true),
        expected_overlap=expected,
        overlap_share=expected / n,
        map_histogram=tuple(int(x) for x in best),
        map_exact=bool((best == truth).all()),
        match_rate=_match_rate(at_least, truth),
        method=posterior.method,
        standard_errors=errors,
    )


def _standard_errors(draws: np.ndarray, truth: np.ndarray) -> dict:
    """Monte Carlo standard errors of the sampled means (ArviZ's ESS of each indicator)."""
    out = {}
    series = {
        "p_true_histogram": (draws == truth).all(axis=-1).astype(np.float64),
        "expected_overlap": np.minimum(draws, truth).sum(axis=-1).astype(np.float64),
    }
    for name, values in series.items():
        if np.all(values == values.flat[0]):
            out[name] = None  # every draw alike: no Monte Carlo error can be estimated
            continue
        data = xr.DataArray(values, dims=("chain", "draw"))
        out[name] = float(az.mcse(data, method="mean"))
    overlap = out["expected_overlap"]
    out["overlap_share"] = None if overlap is None else overlap / int(truth.sum())
    return out


def prior_measures(case: ReconstructionCase) -> ReconstructionMeasures:
    """The baseline: the measures of the prior alone, exactly, from the cells' marginals."""
    if case.truth is None:
        raise ValueError("truth: the case has none; the measures need the true histogram")
    truth = np.asarray(case.truth, dtype=np.int64)
    n, p = case.n, np.array(case.prior)
    j = np.arange(1, n + 1)[:, None]
    if case.concentration is None:
        at_least = stats.binom.sf(j - 1, n, p[None, :])
    else:
        alpha = case.concentration * p
        rest = alpha.sum() - alpha
        with np.errstate(invalid="ignore", divide="ignore"):
            at_least = np.where(
                alpha > 0, stats.betabinom.sf(j - 1, n, np.where(alpha > 0, alpha, 1.0), rest), 0.0
            )
    overlap = float(sum(at_least[: truth[k], k].sum() for k in range(case.n_cells)))
    mode = _prior_mode(case)
    return ReconstructionMeasures(
        p_true_histogram=float(np.exp(log_prior(case, truth[None, :])[0])),
        expected_overlap=overlap,
        overlap_share=overlap / n,
        map_histogram=None if mode is None else tuple(int(x) for x in mode),
        map_exact=None if mode is None else bool((mode == truth).all()),
        match_rate=_match_rate(at_least, truth),
        method="exact",
    )


def _prior_mode(case: ReconstructionCase) -> np.ndarray | None:
    """The most probable histogram a priori: persons added one at a time to the best cell.

    The log prior is a sum over cells of a function of ``h_k`` whose increments
    ``log(p_k/(h_k + 1))`` (multinomial) or ``log((α_k + h_k)/(h_k + 1))``
    (Dirichlet, concave when every ``α_k ≥ 1``) fall as ``h_k`` grows, so the
    greedy choice is optimal. ``None`` for a Dirichlet prior with some
    ``0 < α_k < 1`` (not concave: use :func:`~.posterior.prior_posterior`).
    """
    p = np.array(case.prior)
    if case.concentration is None:
        gain = lambda h: np.log(p) - np.log(h + 1.0)  # noqa: E731
    else:
        alpha = case.concentration * p
        if np.any((alpha > 0) & (alpha < 1)):
            return None
        gain = lambda h: np.log(np.where(alpha > 0, alpha + h, 0.0)) - np.log(h + 1.0)  # noqa: E731
    h = np.zeros(case.n_cells)
    with np.errstate(divide="ignore"):
        for _ in range(case.n):
            h[int(np.argmax(gain(h)))] += 1
    return h.astype(np.int64)
