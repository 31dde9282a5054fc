"""Petti & Flaxman's Table SA1: the Geometric-mechanism validation of their estimator, redrawn.

Table SA1 (printed in the authors' response to the referees of version 1 and
in the Supplementary Methods Appendix): :data:`SA1_PRINTED`, and the archived
output of the notebook that computed it (``008_appendix_calcs.ipynb``),
:data:`SA1_NOTEBOOK`. The setting, read from that notebook: C = 2663 residuals
(the enumeration districts of 1940 Washington state), noise
``Geom(p) - Geom(p)`` with ``p = ε/2`` drawn by numpy's legacy ``RandomState``
(seed 123435, ten replicates per ε, ε in the order of the table), the
estimator (:func:`~.estimator.empirical_privacy_loss`) with bandwidth factor
0.1, ``q = 95``, multiplier 1. :func:`petti_flaxman_sa1` redraws exactly that
stream and reproduces the notebook's output digit for digit; the printed
table comes from another run of the same setting (its numbers are not in the
repository), and agrees with the estimator's sampling distribution.

The exact privacy loss of that noise is ``-log(1 - ε/2) ≈ ε/2`` per count
(the text's ``G(ε/2)``), not ε: at C = 2663 the estimator's mean is about
twice the exact value, so the table's "EPL ≈ ε" is an upward bias of the
maximum of a noisy log-ratio of the same size as the loss itself, not
agreement with the mechanism (see ``tests/empirical``). With C large the
estimator converges to its own limit (:func:`~.kde.kde_limit_privacy_loss`,
the exact pmf smoothed by the same kernel), which is close to the exact loss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._validation import as_integers
from ._checks import _as_positive_scalar
from .estimator import empirical_privacy_loss

__all__ = [
    "SA1_NOTEBOOK",
    "SA1_NOTEBOOK_EPSILONS",
    "SA1_NOTEBOOK_SETTINGS",
    "SA1_PRINTED",
    "SA1_RESIDUALS",
    "SA1_SEED",
    "petti_flaxman_residuals",
    "petti_flaxman_sa1",
]


#: Table SA1 as printed (authors' response to the referees, Gates Open Research
#: 3:1722, version 2; Supplementary Methods Appendix, zenodo 3727242), and the
#: archived output of ``008_appendix_calcs.ipynb`` (aflaxman/dp_2020_census,
#: commit 424dc20), the notebook that computes it: the same summary, rounded to
#: 4 decimals, for the ε it printed (the rows 0.15–0.25 are elided in the
#: archived output). ε ↦ (printed, notebook), each (mean EPL, 2.5th percentile,
#: 97.5th percentile) over replicates, or ``None`` where that source has no row.
_SA1_SOURCES: dict[float, tuple[tuple | None, tuple | None]] = {
    0.001: ((0.0010, 0.0008, 0.0013), (0.0010, 0.0008, 0.0011)),
    0.005: ((0.0048, 0.0039, 0.0068), (0.0045, 0.0037, 0.0053)),
    0.01: ((0.0099, 0.0076, 0.0130), (0.0092, 0.0082, 0.0112)),
    0.05: ((0.0490, 0.0390, 0.0673), (0.0477, 0.0388, 0.0561)),
    0.1: ((0.0980, 0.0752, 0.1262), (0.1015, 0.0823, 0.1368)),
    0.15: ((0.1475, 0.1181, 0.1941), None),
    0.2: ((0.1988, 0.1521, 0.2639), None),
    0.3: (None, (0.2823, 0.2292, 0.3909)),
    0.35: (None, (0.3326, 0.2769, 0.4564)),
    0.4: (None, (0.3407, 0.2869, 0.4290)),
    0.45: (None, (0.3788, 0.3171, 0.4216)),
    0.5: (None, (0.3786, 0.3376, 0.4182)),
}
#: Table SA1 as printed: ε ↦ (mean EPL, 2.5th percentile, 97.5th percentile).
SA1_PRINTED: dict[float, tuple[float, float, float]] = {
    epsilon: printed for epsilon, (printed, _) in _SA1_SOURCES.items() if printed is not None
}
#: The archived notebook output of Table SA1, in the same form.
SA1_NOTEBOOK: dict[float, tuple[float, float, float]] = {
    epsilon: kept for epsilon, (_, kept) in _SA1_SOURCES.items() if kept is not None
}
#: ε values of the notebook's loop, in the order their noise was drawn.
SA1_NOTEBOOK_EPSILONS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
SA1_SEED = 123435
SA1_RESIDUALS = 2663
SA1_NOTEBOOK_SETTINGS = {
    "bandwidth": 0.1,
    "bandwidth_units": "std",
    "range_percentile": 95.0,
    "range_multiplier": 1.0,
}


def petti_flaxman_residuals(epsilon, n, random_state) -> np.ndarray:
    """Residuals of their ``GDPC(ε/2, counts)``: ``Geom(ε/2) - Geom(ε/2)``, n of each.

    Drawn with numpy's legacy ``RandomState.geometric`` (a frozen stream), so
    that a given seed reproduces their notebooks. The law is
    :meth:`~.integer_noise.IntegerNoise.two_sided_geometric` with decay ``-log(1 - ε/2)``.
    """
    epsilon = _as_positive_scalar(epsilon, "epsilon")
    if not epsilon < 2:
        raise ValueError(f"epsilon must be < 2 (p = epsilon/2 < 1), got {epsilon!r}")
    if not isinstance(random_state, np.random.RandomState):
        random_state = np.random.RandomState(random_state)
    p = epsilon / 2.0
    first = random_state.geometric(p, size=n)
    second = random_state.geometric(p, size=n)
    return (first - second).astype(np.float64)


def petti_flaxman_sa1(
    epsilons: Sequence[float] = SA1_NOTEBOOK_EPSILONS,
    n_replicates: int = 10,
    seed=SA1_SEED,
    n_residuals: int = SA1_RESIDUALS,
    evaluate: Sequence[float] | None = None,
    **settings,
) -> dict[float, np.ndarray]:
    """Replicate EPLs of the Geometric mechanism, drawn as in Table SA1's notebook.

    For each ε in ``epsilons`` (in order) and each replicate, ``n_residuals``
    residuals from :func:`petti_flaxman_residuals` with one legacy
    ``RandomState(seed)``, and their :func:`empirical_privacy_loss` with
    ``settings`` (default :data:`SA1_NOTEBOOK_SETTINGS`). Only the ε in
    ``evaluate`` (default all) are estimated; the others' draws are made and
    discarded so that the stream stays aligned. Returns ε ↦ array of
    replicate EPLs; the table's columns are their mean and
    ``numpy.percentile(…, [2.5, 97.5])``.
    """
    options = dict(SA1_NOTEBOOK_SETTINGS) | settings
    n_replicates = int(as_integers(n_replicates, "n_replicates"))
    if n_replicates < 1:
        raise ValueError(f"n_replicates must be >= 1, got {n_replicates}")
    state = np.random.RandomState(seed)
    wanted = set(epsilons if evaluate is None else evaluate)
    results: dict[float, np.ndarray] = {}
    for epsilon in epsilons:
        values = []
        for _ in range(n_replicates):
            residuals = petti_flaxman_residuals(epsilon, n_residuals, state)
            if epsilon in wanted:
                values.append(empirical_privacy_loss(residuals, **options).value)
        if epsilon in wanted:
            results[epsilon] = np.array(values)
    return results
