"""The counts whose accuracy is measured: each a 0/1 vector over the cells of a classification.

A metric count of a unit is ``aᵀx`` for its cell vector ``x``:

``total``
    the total population (``a`` is all ones);
``voting_age``
    the persons of voting age (``a`` marks the cells with ``voting_age = 1``);
``hispanic_race``
    the Hispanic × race counts (14 on :data:`~adversary.scenarios.reconstruction.REDUCED`,
    126 on :data:`~adversary.scenarios.reconstruction.DETAILED`), each its own vector;
    the metric reports the mean of their statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...scenarios.reconstruction.classification import Classification

__all__ = ["METRICS", "MetricVectors", "metric_vectors"]

#: The metrics, in report order.
METRICS = ("total", "voting_age", "hispanic_race")


@dataclass(frozen=True)
class MetricVectors:
    """``matrix`` (vectors × cells, 0/1), each row's metric (``metric[r]`` indexes ``names``)."""

    matrix: np.ndarray
    metric: np.ndarray
    names: tuple[str, ...]
    labels: tuple[str, ...]

    def by_metric(self, values: np.ndarray) -> np.ndarray:
        """``values`` (…, vectors) averaged over each metric's vectors: (…, metrics)."""
        values = np.asarray(values, dtype=np.float64)
        return np.stack(
            [values[..., self.metric == m].mean(axis=-1) for m in range(len(self.names))],
            axis=-1,
        )


def metric_vectors(classification: Classification) -> MetricVectors:
    """The vectors of :data:`METRICS` on ``classification`` (it needs ``voting_age``,
    ``hispanic`` and ``race`` attributes)."""
    if not isinstance(classification, Classification):
        raise TypeError(f"classification must be a Classification, got {classification!r}")
    missing = [a for a in ("voting_age", "hispanic", "race") if a not in classification.names]
    if missing:
        raise ValueError(f"classification has no attribute {missing[0]!r} for the metrics")
    n = classification.n_cells
    voting = classification.margin_of_cells(("voting_age",)) == 1
    hispanic_race = classification.table(("hispanic", "race"))
    rows = [np.ones(n), voting.astype(np.float64)]
    labels = ["total", "voting_age"]
    for index, cells in enumerate(hispanic_race):
        row = np.zeros(n)
        row[list(cells)] = 1.0
        rows.append(row)
        labels.append(f"hispanic_race[{index}]")
    metric = np.array([0, 1] + [2] * len(hispanic_race))
    return MetricVectors(np.array(rows), metric, METRICS, tuple(labels))
