"""Monte Carlo standard errors of the data holder's measures, shared by every estimator.

numpy and the standard library only: the closed-form scenarios that estimate a
measure by simulation import these without the inference layer.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DEFAULT_SE_MULTIPLE", "credit_standard_error"]

#: Standard errors in :attr:`MarginalMeasures.error_bound`, unless a caller says otherwise.
DEFAULT_SE_MULTIPLE = 4.0


def credit_standard_error(credit: np.ndarray) -> float:
    """Standard error of the mean of decision credits in [0, 1] (a proportion's).

    ``sqrt(q (1 - q) / n)`` bounds it, with ``q`` the mean shrunk by half a
    release towards 1/2, so that no credit, or full credit, on every release
    does not claim an error of 0.
    """
    n = len(credit)
    q = (float(np.sum(credit)) + 0.5) / (n + 1.0)
    return math.sqrt(q * (1.0 - q) / n)
