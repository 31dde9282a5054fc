"""The exact likelihood of the target's cell given every noisy look at it, and the posterior.

With the others' records subtracted, look ``o`` is ``e_o = A[o, t] + Z_o``
for the target's cell ``t`` (``A`` the incidence of
:class:`~.looks.TargetLooks`), the noises independent, so

    log P[e | t] = Σ_o log f_o(e_o − A[o, t]),

a sum of the mechanisms' log-pmfs — no Gaussian approximation. The
posterior of a class of cells (the answer the adversary decides on: "in the
cell of interest" or not, or one value of an attribute) is the posterior
mass of its cells, Kazan & Reiter (3.1) with the single release replaced by
all of them.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["class_log_posteriors", "log_likelihoods"]


def log_likelihoods(residuals: np.ndarray, incidence: np.ndarray, mechanisms) -> np.ndarray:
    """``log P[e | t]`` for each release set (rows of ``residuals``) and possible cell ``t``.

    ``residuals`` has shape ``(releases, looks)``: each released count minus
    the others' known contribution. ``incidence[o, t]`` is how many times
    look ``o`` counts the target in cell ``t`` (0 or 1 for a count; ``k`` for
    a sum of ``k`` releases of the target's count). Returns shape ``(releases, cells)``;
    ``-inf`` where a bounded noise cannot produce a look from that cell.
    """
    residuals = np.asarray(residuals, dtype=np.int64)
    # Cells of equal incidence columns have equal likelihoods: each distinct column once (a
    # row a column, so each add is one contiguous pass), its looks' log-pmfs added in order.
    columns, inverse = np.unique(np.asarray(incidence, dtype=np.int64), axis=1, return_inverse=True)
    by_column = np.zeros((columns.shape[1], residuals.shape[0]))
    for look, mechanism in enumerate(mechanisms):
        shifts = columns[look]
        logpmf = {
            shift: mechanism.logpmf(residuals[:, look] - shift) for shift in np.unique(shifts)
        }
        for column, shift in enumerate(shifts):
            by_column[column] += logpmf[shift]
    # In C order, as before: the sums over cells (logsumexp) round differently on another layout.
    return np.take(by_column.T, inverse.reshape(-1), axis=1)


def class_log_posteriors(
    log_likelihood: np.ndarray, prior: np.ndarray, classes: np.ndarray, n_classes: int
) -> np.ndarray:
    """Normalised log posterior of each class of cells, shape ``(releases, n_classes)``.

    ``prior`` is the adversary's probability of each possible cell (> 0);
    ``classes[j]`` the class of possible cell ``j``. A release set no cell
    can produce is an error.
    """
    joint = log_likelihood + np.log(prior)[None, :]
    evidence = logsumexp(joint, axis=1)
    if not np.all(np.isfinite(evidence)):
        raise ValueError("releases: a release set that no possible cell of the target can produce")
    by_class = np.stack(
        [logsumexp(joint[:, classes == c], axis=1) for c in range(n_classes)], axis=1
    )
    return by_class - evidence[:, None]
