"""Swap laws: the probability that each household of a hypothesised block is swapped.

The adversary's model of a swapping mechanism is a **law**: any object with
``swap_probabilities(block) -> array`` giving, for the block (a tuple of
households, each a tuple of cell codes: :mod:`.block`), one probability π_h
per household. Swaps are taken as independent across households given the
block (a stated approximation: a mechanism swaps a share of households, not
each one independently). A law may depend on the whole block — under
targeted record swapping the risky households are swapped first, so being
swapped or not is itself informative about the target's cell — and the
attack evaluates it on each hypothesised block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["HouseholdSwapLaw", "SwapLaw", "swap_probabilities"]


@runtime_checkable
class SwapLaw(Protocol):
    """What the attack needs of a swapping mechanism (module docstring)."""

    def swap_probabilities(self, block) -> np.ndarray:
        """π_h for every household of ``block``, in order."""


@dataclass(frozen=True)
class HouseholdSwapLaw:
    """Household swapping: every household is swapped with probability ``rate`` (π_h = rate)."""

    rate: float

    def __post_init__(self):
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, int | float | np.number):
            raise ValueError(f"rate must be a number in [0, 1], got {rate!r}")
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"rate must be in [0, 1], got {rate!r}")
        object.__setattr__(self, "rate", float(rate))

    def swap_probabilities(self, block) -> np.ndarray:
        return np.full(len(block), self.rate, dtype=np.float64)


def swap_probabilities(law, block) -> np.ndarray:
    """``law.swap_probabilities(block)`` checked: one probability in [0, 1] per household."""
    if not isinstance(law, SwapLaw):
        raise TypeError(f"law must have swap_probabilities(block), got {type(law).__name__}")
    values = np.asarray(law.swap_probabilities(block), dtype=np.float64)
    if values.shape != (len(block),):
        raise ValueError(
            f"law: swap_probabilities gave shape {values.shape} for {len(block)} households"
        )
    if not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError(f"law: swap probabilities must lie in [0, 1], got {values.tolist()}")
    return values
