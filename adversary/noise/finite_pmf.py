"""A probability mass function on a finite run of integers.

The exact distribution of a sum of discrete Gaussians (:mod:`.sums`) and any
noise a user tabulates are held as :class:`FinitePmf`: the probabilities of
``start, start+1, …, start+len-1`` and the probability mass the table leaves
out (``omitted_mass``, from truncating an infinite support).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_integers

__all__ = ["FinitePmf"]


@dataclass(frozen=True)
class FinitePmf:
    """Probabilities of the integers ``start .. start + len(probabilities) - 1``."""

    start: int
    probabilities: np.ndarray
    omitted_mass: float = 0.0

    def __post_init__(self):
        probabilities = np.asarray(self.probabilities, dtype=np.float64)
        if probabilities.ndim != 1 or probabilities.size == 0:
            raise ValueError("probabilities must be a non-empty 1-d array")
        if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
            raise ValueError("probabilities must be finite and >= 0")
        object.__setattr__(self, "probabilities", probabilities)

    @property
    def support(self) -> np.ndarray:
        """The integers the table covers."""
        return np.arange(self.start, self.start + self.probabilities.size)

    def pmf(self, z) -> np.ndarray:
        """``P[Z = z]``; zero outside the tabulated run."""
        z = as_integers(z, "z")
        index = z - self.start
        inside = (index >= 0) & (index < self.probabilities.size)
        return np.where(
            inside, self.probabilities[np.clip(index, 0, self.probabilities.size - 1)], 0.0
        )

    def logpmf(self, z) -> np.ndarray:
        """``log P[Z = z]``; ``-inf`` outside the tabulated run or where the mass is 0."""
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(z))

    @property
    def mean(self) -> float:
        return float(self.support @ self.probabilities / self.probabilities.sum())

    @property
    def variance(self) -> float:
        centred = self.support - self.mean
        return float(centred**2 @ self.probabilities / self.probabilities.sum())
