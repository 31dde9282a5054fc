"""The mean absolute error of released cells, per release, and its Monte Carlo error.

The accuracy of every mechanism in the comparison is one number per
geographic level: the mean, over the level's units and the 56 cells of
:data:`~adversary.scenarios.reconstruction.REDUCED`, of ``|released − true|``.
For a random mechanism it is computed per release (a TopDown run, a swap
seed) and reported as the mean over releases with its Monte Carlo standard
error ``sd/√R`` (the releases are independent given the population).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Z95", "mean_and_se", "release_mae"]

#: Normal quantile of the two-sided 95 % intervals.
Z95 = 1.959963984540054


def release_mae(released, true) -> np.ndarray:
    """Mean over units and cells of ``|released − true|``, per release.

    ``released``: releases × units × cells (or units × cells, one release);
    ``true``: units × cells. Returns one value per release.
    """
    released = np.asarray(released, dtype=np.float64)
    true = np.asarray(true, dtype=np.float64)
    if released.ndim == 2:
        released = released[None]
    if released.shape[1:] != true.shape:
        raise ValueError(
            f"released must be releases × {true.shape} (units × cells), got {released.shape}"
        )
    return np.abs(released - true[None]).mean(axis=(1, 2))


def mean_and_se(values) -> tuple[float, float]:
    """Mean of independent replicates and its standard error ``sd/√R`` (NaN for one)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))
