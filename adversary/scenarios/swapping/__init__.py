"""Swapping under the Bayesian adversary of Kazan & Reiter (2023).

The package's attacks on a block, with the release an exact count of a
*swapped* block instead of a noisy one. The adversary's model of the
mechanism:

- a **block** is a tuple of households, each a tuple of its members' reduced
  cell codes; the **target** is one member, whose cell is unknown
  (:mod:`.block`);
- each household h of the hypothesised block is swapped with probability π_h
  given by a **law** (``swap_probabilities(block)``, :mod:`.laws`; household
  swapping: π_h = rate; targeted swapping depends on the block), swaps
  independent across households given the block (a stated approximation);
- a swapped household is replaced by one of the same match key (size,
  voting-age persons) whose persons' cells are independent draws from the
  partner area's published **composition** (:class:`~.block.Composition`);
- the release is the swapped block's exact counts of the attacked cells.

Its likelihood is an exact convolution over households (:mod:`.release`);
:mod:`.hypotheses` turns it into the posterior (3.1), decision (3.5) and the
data holder's measures (3.3), (3.4), (3.6) summed over every release. The
single-block attack (Sec. 3.1: target in cell c or in an alternative cell) is
:mod:`.single_block`, the unknown attribute (K candidate cells)
:mod:`.unknown_attribute`; :mod:`.pymc_model` is the PyMC model (the target's
latent and the swap indicators) and :mod:`.case` the attacks ``adversary run``
and ``adversary risk`` take.
"""

from ..._lazy import lazy_names
from . import single_block, unknown_attribute
from .block import Composition
from .case import SwappingBlockCase, SwappingUnknownAttributeCase
from .laws import HouseholdSwapLaw, SwapLaw

__all__ = [
    "Composition",
    "HouseholdSwapLaw",
    "SwapLaw",
    "SwappingBlockCase",
    "SwappingUnknownAttributeCase",
    "model",
    "single_block",
    "unknown_attribute",
]

# The PyMC model is imported on first use: the closed forms need no PyMC.
__getattr__, __dir__ = lazy_names(__name__, {"model": ".pymc_model"}, globals())
