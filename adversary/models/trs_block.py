"""Dare County, North Carolina, 1940, ED 28-21 under targeted record swapping (TRS).

The block, target, households, county composition and priors of
:mod:`adversary.models.swapping_block` (which states them), released as exact counts after
targeted record swapping instead: :class:`~adversary.swapping.targeted.TargetedRecordSwapping`
at rate 0.1 with ``k_anonymity`` 3 on voting age × Hispanic × race, whose law
for one block is :class:`~adversary.scenarios.swapping.targeted_law.TargetedSwapLaw`.

Under TRS being swapped is informative. If the target is voting-age Black
(c), they are the only person of that combination in the block, so their
household is risky and swapped with probability 1 (and no household is
sampled: the block's target of 12 · 0.1 / 2 = 0.6 swaps is met). If they are
White (a), no household is risky and each is swapped with probability
0.6 / 12 = 0.05 when sampled, plus the donor rate. The donor rate — the chance
that a household neither risky nor sampled is taken as a donor by another
block of the county — is not a function of the block: stated here as 0.25,
the share of such households that the mechanism swapped on the package's
20 000-person synthetic state at rate 0.1, k = 3 (0.23–0.28, the law's
docstring).
"""

import dataclasses

from adversary.models.swapping_block import CASE as HOUSEHOLD_SWAPPING
from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw
from adversary.swapping.targeted import TargetedRecordSwapping

MECHANISM = TargetedRecordSwapping(rate=0.1, k_anonymity=3)

CASE = dataclasses.replace(
    HOUSEHOLD_SWAPPING,
    name="Dare County ED 28-21 (1940), targeted record swapping at rate 0.1, k = 3",
    description=__doc__,
    law=TargetedSwapLaw(MECHANISM, donor_rate=0.25),
)
