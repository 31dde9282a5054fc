"""The data holder's view: reconstruction measures averaged over releases from the truth.

The data holder knows the true histogram ``t`` but not which noise the
mechanism will draw. The data holder's version of each measure is its
expectation over releases ``x* ~ P(x* | t)``: the expected posterior
probability of the truth, the expected overlap, the probability that the
most probable histogram is the truth (the exact-reconstruction rate), and the
expected match rate of the top records. :func:`holder_measures` estimates
them by Monte Carlo over ``replications`` release sets drawn from the truth,
each posterior exact or sampled, with the standard error over replications
(for sampled posteriors this includes their own Monte Carlo error). The
release grid of even a small block (one noisy count per query) is far too
large to sum exactly, so there is no exact path. The baseline (the prior
alone) does not depend on the releases and is exact.
"""

from __future__ import annotations

import numpy as np

from .case import ReconstructionCase
from .measures import posterior_measures, prior_measures
from .posterior import exact_posterior, sampled_posterior
from .simulate import drawn_releases

__all__ = ["holder_measures"]

_SCALARS = ("p_true_histogram", "expected_overlap", "overlap_share", "map_exact")


def holder_measures(
    case: ReconstructionCase,
    replications: int = 20,
    method: str = "exact",
    *,
    seed=None,
    **sample_kwargs,
) -> dict:
    """Each measure's mean over ``replications`` release sets from the truth, and its error.

    ``method`` ``"exact"`` or ``"mcmc"`` (``sample_kwargs`` go to
    :func:`~.posterior.sampled_posterior`). Returns a JSON-ready dict: per
    measure ``{"mean", "standard_error"}`` (``map_exact``: the rate at which
    the most probable histogram is the truth), ``match_rate`` (the mean curve),
    ``replications``, ``method`` and ``baseline`` (the prior alone, exact).
    """
    if case.truth is None:
        raise ValueError("truth: the case has none; the data holder's measures need it")
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 2:
        raise ValueError(f"replications must be an integer >= 2, got {replications!r}")
    if method not in ("exact", "mcmc"):
        raise ValueError(f"method must be exact or mcmc, got {method!r}")
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(replications):
        releases = drawn_releases(case, case.truth, rng)
        if method == "exact":
            posterior = exact_posterior(case, releases)
        else:
            posterior = sampled_posterior(
                case, releases, random_seed=int(rng.integers(2**31)), **sample_kwargs
            )
        rows.append(posterior_measures(posterior, case.truth))
    out = {}
    for key in _SCALARS:
        values = np.array([float(getattr(row, key)) for row in rows])
        out[key] = {
            "mean": float(values.mean()),
            "standard_error": float(values.std(ddof=1) / np.sqrt(len(values))),
        }
    out["match_rate"] = [float(x) for x in np.mean([row.match_rate for row in rows], axis=0)]
    out["replications"], out["method"] = replications, method
    out["baseline"] = prior_measures(case).to_dict()
    return out
