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

**Ties** count by the case's ``tie_rule``, the package's rule for the Bayes
decision (:mod:`adversary.measures.decision`; values within
:func:`~adversary.measures.decision.tie_tolerance` of each other are tied).
Under ``"split"`` (the default) the adversary picks uniformly among tied
choices: ``map_exact`` is ``1/k`` when the truth is one of ``k`` most
probable histograms (``map_modes``; ``map_histogram`` is then ``None``),
and the records tied at the edge of the top r count each the share of true
records among them. So no measure depends on the order of the cells: with a
uniform prior over K cells and one person, ``map_exact`` is ``1/K`` and
``match_rate`` ``(1/K,)`` whatever the truth. ``"smallest"`` /
``"largest"`` take the first / last tied choice in the cells' order
(:mod:`.ties`).

The **baseline** is the same for the prior alone — the adversary who saw no
release: what chance and the prior give (Ruggles & Van Riper 2021). It is
exact: by enumeration, or in closed form from the cells' marginals
(binomial, or beta-binomial under a Dirichlet prior).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import xarray as xr
from scipy import stats

from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...memory import check_memory
from .case import ReconstructionCase
from .posterior import HistogramPosterior, log_prior
from .ties import map_decision, match_rate, prior_map_decision

__all__ = ["ReconstructionMeasures", "posterior_measures", "prior_measures"]


@dataclass(frozen=True)
class ReconstructionMeasures:
    """The measures of the module docstring.

    ``map_exact`` is the probability that the decided most probable
    histogram is the truth (1 or 0 without ties); ``map_modes`` how many
    histograms tie for most probable. ``standard_errors``: the Monte Carlo
    standard errors of sampled measures (empty when exact; ``None`` where
    every draw gave the same value, e.g. no draw was the true histogram).
    """

    p_true_histogram: float
    expected_overlap: float
    overlap_share: float
    map_histogram: tuple[int, ...] | None
    map_exact: float | None
    map_modes: int | None
    match_rate: tuple[float, ...]
    method: str
    tie_rule: str = DEFAULT_TIE_RULE
    standard_errors: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _records_check(n: int, k: int, what: str) -> None:
    """Refuse, naming ``what``, records ``(n, k)`` whose ranking would not fit the budget."""
    # the probabilities, their logs, the partition's copy (8 bytes each) and the truth's mask
    check_memory(n * k * 25.0, f"the {n:,} × {k:,} ranked records of {what}")


def _at_least(histograms: np.ndarray, probabilities: np.ndarray, n: int) -> np.ndarray:
    """``P(h_k ≥ j)`` for j = 1…n (rows) and every cell k, from each cell's law."""
    k = histograms.shape[1]
    law = np.zeros((n + 1, k))
    np.add.at(law, (histograms, np.arange(k)[None, :]), probabilities[:, None])
    return np.cumsum(law[::-1], axis=0)[::-1][1:]


def posterior_measures(
    posterior: HistogramPosterior, truth, tie_rule: str = DEFAULT_TIE_RULE
) -> ReconstructionMeasures:
    """The measures of ``posterior`` for the true histogram ``truth``, ties by ``tie_rule``."""
    check_tie_rule(tie_rule)
    truth = np.asarray(truth, dtype=np.int64)
    h, p = posterior.histograms, posterior.probabilities
    n = int(truth.sum())
    _records_check(n, h.shape[1], "the posterior")
    is_true = (h == truth).all(axis=1)
    overlap = np.minimum(h, truth).sum(axis=1)
    credit, mode, modes = map_decision(h, p, truth, tie_rule)
    errors = {}
    if posterior.draws is not None:
        errors = _standard_errors(posterior.draws, truth)
    expected = float(p @ overlap)
    return ReconstructionMeasures(
        p_true_histogram=float(p @ is_true),
        expected_overlap=expected,
        overlap_share=expected / n,
        map_histogram=None if mode is None else tuple(int(x) for x in mode),
        map_exact=credit,
        map_modes=modes,
        match_rate=match_rate(_at_least(h, p, n), truth, tie_rule),
        method=posterior.method,
        tie_rule=tie_rule,
        standard_errors=errors,
    )


def _standard_errors(draws: np.ndarray, truth: np.ndarray) -> dict:
    """Monte Carlo standard errors of the sampled means (ArviZ's ESS of each indicator)."""
    from arviz_stats import mcse as arviz_mcse  # ArviZ's statistics: only where they are used

    out = {}
    series = {
        "p_true_histogram": (draws == truth).all(axis=-1).astype(np.float64),
        "expected_overlap": np.minimum(draws, truth).sum(axis=-1).astype(np.float64),
    }
    for name, values in series.items():
        if values.shape[-1] < 2 or np.all(values == values.flat[0]):
            out[name] = None  # one draw per chain, or every draw alike: no error estimable
            continue
        mcse = float(arviz_mcse(xr.DataArray(values, dims=("chain", "draw")), method="mean"))
        out[name] = mcse if np.isfinite(mcse) else None
    overlap = out["expected_overlap"]
    out["overlap_share"] = None if overlap is None else overlap / int(truth.sum())
    return out


def prior_measures(case: ReconstructionCase) -> ReconstructionMeasures:
    """The baseline: the measures of the prior alone, exactly, from the cells' marginals.

    Ties count by the case's ``tie_rule``.
    """
    if case.truth is None:
        raise ValueError("truth: the case has none; the measures need the true histogram")
    truth = np.asarray(case.truth, dtype=np.int64)
    n, p = case.n, np.array(case.prior)
    _records_check(n, case.n_cells, "the prior")
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
    gains = _prior_gains(case)
    credit, mode, modes = (
        (None, None, None) if gains is None else prior_map_decision(gains, truth, case.tie_rule)
    )
    return ReconstructionMeasures(
        p_true_histogram=float(np.exp(log_prior(case, truth[None, :])[0])),
        expected_overlap=overlap,
        overlap_share=overlap / n,
        map_histogram=None if mode is None else tuple(int(x) for x in mode),
        map_exact=credit,
        map_modes=modes,
        match_rate=match_rate(at_least, truth, case.tie_rule),
        method="exact",
        tie_rule=case.tie_rule,
    )


def _prior_gains(case: ReconstructionCase) -> np.ndarray | None:
    """The log prior's increments ``(cells, n)``: cell k from ``h`` to ``h + 1`` persons.

    ``log(p_k/(h + 1))`` (multinomial) or ``log((α_k + h)/(h + 1))``
    (Dirichlet), non-increasing in ``h`` — the Dirichlet's only when every
    ``α_k ≥ 1``: ``None`` otherwise (no closed-form mode; use
    :func:`~.posterior.prior_posterior`).
    """
    p = np.array(case.prior)[:, None]
    h = np.arange(case.n)[None, :]
    if case.concentration is None:
        with np.errstate(divide="ignore"):
            return np.log(p) - np.log(h + 1.0)
    alpha = case.concentration * p
    if np.any((alpha > 0) & (alpha < 1)):
        return None
    with np.errstate(divide="ignore"):
        return np.log(np.where(alpha > 0, alpha + h, 0.0)) - np.log(h + 1.0)
