"""The adversary's reconstruction of a case, exact or sampled, beside the prior alone."""

from __future__ import annotations

from ...memory import MemoryBudgetError, check_memory
from .case import ReconstructionCase
from .measures import posterior_measures, prior_measures
from .posterior import exact_posterior, histograms_bytes, prior_posterior, sampled_posterior

__all__ = ["METHODS", "enumerable", "reconstruct"]

METHODS = ("auto", "exact", "mcmc")


def enumerable(case: ReconstructionCase) -> bool:
    """True when every histogram of the case fits the memory budget four times over."""
    _, size = histograms_bytes(case.n, case.n_cells)
    try:
        check_memory(4 * size, "the histograms")
    except MemoryBudgetError:
        return False
    return True


def reconstruct(case: ReconstructionCase, method: str = "auto", **sample_kwargs) -> dict:
    """The reconstruction measures of ``case`` and, under ``baseline``, of its prior alone.

    ``method``: ``"exact"`` (every histogram), ``"mcmc"`` (``sample_kwargs`` go
    to :func:`sampled_posterior`: ``draws``, ``tune``, ``chains``,
    ``random_seed``, ``progressbar``) or ``"auto"`` (exact when every histogram fits the memory
    budget four times over). Returns a JSON-ready dict: the measures, their
    ``method`` and ``standard_errors``, ``baseline``, and the case's ``n``
    and number of cells.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if case.truth is None:
        raise ValueError("truth: the case has none; the measures need the true histogram")
    if method == "auto":
        method = "exact" if enumerable(case) else "mcmc"
    if method == "exact":
        posterior = exact_posterior(case)
        baseline = posterior_measures(prior_posterior(case), case.truth, case.tie_rule)
    else:
        baseline = prior_measures(case)  # first: it is quick, and refuses what will not fit
        posterior = sampled_posterior(case, **sample_kwargs)
    result = posterior_measures(posterior, case.truth, case.tie_rule).to_dict()
    result["baseline"] = baseline.to_dict()
    result["n"], result["cells"] = case.n, case.n_cells
    return result
