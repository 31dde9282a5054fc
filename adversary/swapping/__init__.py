"""Swapping: households exchanged between blocks, as the 1990–2010 US censuses and the 2021 EU ones.

Swapping is a release mechanism whose hidden state is discrete (was this
household swapped? what came in?). The modules:

:mod:`.households`
    a population of persons given its households and their match keys;
:mod:`.household_swapping`
    :class:`HouseholdSwapping`, the US method: a share of households
    exchanged with households of the same match key in another block;
:mod:`.targeted`
    :class:`TargetedRecordSwapping`, the EU method (after sdcMicro's
    ``recordSwap``): risky households swapped first, donors matched on
    similarity profiles;
:mod:`.cell_key`
    the cell key method on tables, and swapping followed by it (TRS + CKM);
:mod:`.tables`
    the swapped population counted in every unit's cells, on Dask.

The adversary's view of a block released after swapping is in
:mod:`adversary.scenarios.swapping`.
"""

from .household_swapping import SWAP_AREAS, HouseholdSwapping, SwapSummary
from .households import (
    HOUSEHOLD,
    HOUSEHOLD_SIZE_PMF,
    MATCH_KEY,
    assign_households,
    household_table,
    target_blocks,
)
from .targeted import RISK_VARIABLES, TargetedRecordSwapping, TargetedSwapRun

__all__ = [
    "HOUSEHOLD",
    "HOUSEHOLD_SIZE_PMF",
    "MATCH_KEY",
    "RISK_VARIABLES",
    "SWAP_AREAS",
    "HouseholdSwapping",
    "SwapSummary",
    "TargetedRecordSwapping",
    "TargetedSwapRun",
    "assign_households",
    "household_table",
    "target_blocks",
]
