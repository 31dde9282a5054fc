"""The noisy answers of every measured query at every unit of a level: ``y = A x + e``.

Each count's noise is an exact discrete Gaussian draw ``DG(0, σ²)`` (Canonne,
Kamath & Steinke 2020, Algorithm 3; :func:`adversary.noise.exact_sampling.sample`)
with the σ² its query's share of the allocation gives at the level. Draws
come from one generator per (seed, run, level, county) —
``numpy.random.default_rng([seed, run, level, county])`` — so a county's
measurements do not depend on which process draws them or in what order the
counties are done.
"""

from __future__ import annotations

import numpy as np

from ...noise.exact_sampling import sample
from .operators import LEVELS, LevelOperator

__all__ = ["noisy_answers", "unit_generator"]


def unit_generator(seed: int, run: int, level: str, county: int) -> np.random.Generator:
    """The generator of the measurements of ``level`` in county ``county`` (0 for the state)
    of release ``run``."""
    return np.random.default_rng([int(seed), int(run), LEVELS.index(level), int(county)])


def noisy_answers(counts: np.ndarray, operator: LevelOperator, rng) -> np.ndarray:
    """The measured counts of every unit (units × measured counts, int64): the true answers
    ``A x`` of ``counts`` (units × cells) plus discrete Gaussian noise, one draw per count,
    drawn σ² by σ² in the order the rows first use them."""
    answers = np.asarray(counts, dtype=np.int64) @ operator.matrix.T
    _, first = np.unique(operator.variances, return_index=True)
    for variance in operator.variances[np.sort(first)]:
        rows = np.flatnonzero(operator.variances == variance)
        answers[:, rows] += sample(float(variance), size=(answers.shape[0], rows.size), rng=rng)
    return answers
