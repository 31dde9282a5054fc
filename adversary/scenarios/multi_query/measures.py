"""The data holder's measures of a multi-query attack: exact over a release grid, or Monte Carlo.

For the target's true cell ``t*`` the data holder averages, over the looks'
noise, the adversary's posterior of the true class (3.3), its ratio to the
prior (3.4) and the credit of the Bayes decision (3.6, ties by
:mod:`adversary.measures.decision`). With few looks the average is a sum over
every release set within the noise tables' cut-offs (``method="exact"``; the
error is at most the omitted noise mass); otherwise it is a mean over
``replications`` release sets drawn from the truth (``"monte-carlo"``, with
standard errors; ``error_bound`` is ``se_multiple`` of them).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...measures.decision import truth_credit
from ...measures.marginal import MarginalMeasures
from ...measures.product_grid import noise_laws, product_law
from ...measures.releases import DEFAULT_TAIL_MASS
from ...measures.standard_errors import DEFAULT_SE_MULTIPLE, credit_standard_error
from .likelihood import class_log_posteriors, log_likelihoods

__all__ = ["MAX_GRID", "METHODS", "look_measures"]

#: The largest release grid summed exactly (``method="auto"`` draws beyond it).
MAX_GRID = 400_000
METHODS = ("auto", "exact", "monte-carlo")


@functools.lru_cache(maxsize=4)
def _draws(mechanisms: tuple, replications: int, seed) -> np.ndarray:
    """Noise of every look in ``replications`` release sets (kept for the next prior: the
    priors of a case are compared on the same release sets)."""
    rng = np.random.default_rng(seed)
    draws = np.stack([np.asarray(m.sample(replications, rng)) for m in mechanisms], axis=1)
    draws.flags.writeable = False
    return draws


def look_measures(
    prior: np.ndarray,
    incidence: np.ndarray,
    mechanisms,
    true_cell: int,
    classes: np.ndarray,
    *,
    tie_rule: str,
    method: str = "auto",
    replications: int = 20_000,
    seed=0,
    tail_mass: float = DEFAULT_TAIL_MASS,
    se_multiple: float = DEFAULT_SE_MULTIPLE,
) -> MarginalMeasures:
    """(3.3), (3.4) and (3.6) for the true cell ``true_cell`` (an index of the possible cells).

    ``classes[j]`` is the answer possible cell ``j`` gives; ``prior`` the
    adversary's probability of each possible cell.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    classes = np.asarray(classes)
    n_classes = int(classes.max()) + 1
    true_class = int(classes[true_cell])
    prior_of_truth = float(prior[classes == true_class].sum())
    laws, omitted = noise_laws(mechanisms, tail_mass)
    exact = method == "exact" or (
        method == "auto" and math.prod(len(values) for values, _ in laws) <= MAX_GRID
    )
    if exact:  # the likelihoods take 3 floats per possible cell and release set
        noise, weight = product_law(
            laws, "method='exact' (the release grid)", 24.0 * incidence.shape[1]
        )
    else:
        noise = _draws(tuple(mechanisms), replications, seed)
        weight = np.full(len(noise), 1.0 / len(noise))
    residuals = noise + incidence[:, true_cell].astype(np.int64)[None, :]
    log_post = class_log_posteriors(
        log_likelihoods(residuals, incidence, mechanisms), prior, classes, n_classes
    )
    posterior = np.exp(log_post[:, true_class])
    credit = truth_credit(log_post, true_class, tie_rule)
    marginal_posterior = float(weight @ posterior)
    correct = float(weight @ credit)
    details = {"looks": len(mechanisms), "release_sets": len(noise)}
    if exact:
        error = omitted
        details["risk_error_bound"] = omitted / prior_of_truth
    else:
        omitted = 0.0
        n = len(noise)
        se_post = float(posterior.std(ddof=1) / math.sqrt(n))
        se_decision = credit_standard_error(credit)
        details["standard_errors"] = {
            "marginal_posterior": se_post,
            "marginal_risk": se_post / prior_of_truth,
            "correct_decision_probability": se_decision,
        }
        details["se_multiple"] = se_multiple
        error = se_multiple * max(se_post, se_decision)
        details["risk_error_bound"] = se_multiple * se_post / prior_of_truth
    method = "exact" if exact else "monte-carlo"
    rest = {"omitted_mass": omitted, "error_bound": error, "details": details}
    return MarginalMeasures.of_average(
        marginal_posterior, correct, prior_of_truth, method=method, tie_rule=tie_rule, **rest
    )
