"""Noise with a pmf a user tabulates on a finite run of integers."""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..._validation import _as_real_array, scalar_integer
from ..finite_pmf import FinitePmf
from .base import _draw, _FiniteSupportNoise, _make_uniform_below
from .checks import MAX_BOUND, as_sensitivity

__all__ = ["FinitePmfNoise"]


@dataclass(frozen=True)
class FinitePmfNoise(_FiniteSupportNoise):
    """Noise with a pmf a user tabulates: ``P[Z = start + i] ∝ probabilities[i]``.

    The weights are normalised (divided by their sum) and zero weights at
    either end are dropped, so ``support`` is tight. They are stored as a
    tuple, which keeps the mechanism hashable. Draws are exact for the stored
    binary values: every weight is an exact multiple of a common power of two,
    and an exactly uniform integer below their total picks the value. Not
    assumed symmetric or centred (``mean`` is computed). DP: as every bounded
    noise, not ε-DP; (ε, δ) by :meth:`dp_delta`.
    """

    start: int
    probabilities: tuple
    sensitivity: int = 1

    name = "finite_pmf"
    citation = "user-supplied table"

    def __post_init__(self):
        start = scalar_integer(self.start, "start", -(2**62))
        weights = _as_real_array(self.probabilities, "probabilities").astype(np.float64)
        if weights.ndim != 1 or weights.size == 0:
            raise ValueError("probabilities must be a non-empty 1-d sequence")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("probabilities must be finite and >= 0")
        nonzero = np.flatnonzero(weights)
        if nonzero.size == 0:
            raise ValueError("probabilities must have a positive sum")
        weights = weights[nonzero[0] : nonzero[-1] + 1]
        start += int(nonzero[0])
        if weights.size > 2 * MAX_BOUND + 1:
            raise ValueError(f"probabilities must have at most {2 * MAX_BOUND + 1} entries")
        weights = weights / math.fsum(weights)
        self._set_fields(
            start=start,
            probabilities=tuple(float(w) for w in weights),
            sensitivity=as_sensitivity(self.sensitivity),
        )

    @classmethod
    def from_table(cls, table: FinitePmf, sensitivity=1) -> FinitePmfNoise:
        """From a :class:`FinitePmf`; its ``omitted_mass`` is dropped (renormalised)."""
        if not isinstance(table, FinitePmf):
            raise TypeError(f"table must be a FinitePmf, got {table!r}")
        return cls(table.start, table.probabilities, sensitivity)

    @property
    def label(self) -> str:
        return f"finite pmf on [{self._lower}, {self._upper}]"

    @property
    def _lower(self) -> int:
        return self.start

    @property
    def _upper(self) -> int:
        return self.start + len(self.probabilities) - 1

    @cached_property
    def _probabilities(self) -> np.ndarray:
        return np.array(self.probabilities, dtype=np.float64)

    @cached_property
    def symmetric(self) -> bool:
        p = self._probabilities
        return self._lower == -self._upper and bool(np.array_equal(p, p[::-1]))

    def sample(self, size=None, rng=None):
        fractions = [Fraction(w) for w in self.probabilities]
        denominator = max(f.denominator for f in fractions)  # all powers of two
        cumulative, total = [], 0
        for f in fractions:
            total += f.numerator * (denominator // f.denominator)
            cumulative.append(total)
        start = self.start

        def make(next_word):
            uniform = _make_uniform_below(total, next_word)

            def draw():
                return start + bisect_right(cumulative, uniform())

            return draw

        return _draw(make, size, rng)
