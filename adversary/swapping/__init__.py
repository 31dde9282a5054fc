"""Swapping: households exchanged between blocks, as the 1990–2010 US censuses and the 2021 EU ones.

Swapping is a release mechanism whose hidden state is discrete (was this
household swapped? what came in?). :mod:`.households` gives a population of
persons its households and their match keys.
"""

from .household_swapping import SWAP_AREAS, HouseholdSwapping, SwapSummary
from .households import (
    HOUSEHOLD,
    HOUSEHOLD_SIZE_PMF,
    MATCH_KEY,
    assign_households,
    household_table,
)

__all__ = [
    "HOUSEHOLD",
    "HOUSEHOLD_SIZE_PMF",
    "MATCH_KEY",
    "SWAP_AREAS",
    "HouseholdSwapping",
    "SwapSummary",
    "assign_households",
    "household_table",
]
