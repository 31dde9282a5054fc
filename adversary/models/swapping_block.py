"""Dare County, North Carolina, 1940, ED 28-21 under household swapping at rate 0.04.

The block of :mod:`adversary.models.dare_county` (Kazan & Reiter (2023), Sec. 4.2; Table 3: 34
voting-age non-Hispanic White persons, 10 non-voting-age White, and the
target, the one voting-age non-Hispanic Black person, 45 in households)
released as exact counts after household swapping instead of with noise. The
adversary knows the 44 others' cells and where everyone lives; the target's
cell is c = household, voting age, not Hispanic, Black, against the
alternative a = the block's majority cell (voting age, not Hispanic, White).

**Households (stated, not in the paper's tables).** Twelve households: the
target lives alone — a one-person household, the common arrangement for a
lone lodger or worker, and the one where a swap replaces the target's record
entirely (a household of one swapped in has one voting-age person drawn from
the county); the 44 others in eleven White households of 2, 2, 3, 3, 4, 4,
4, 5, 5, 6 and 6 persons, the 10 children in the four largest (2, 2, 3, 3).

**Composition of the partner area (stated, illustrative round numbers, not
a census table).** Swapped-in households come from the rest of the county,
whose persons in households are taken as 3,700 voting-age White and 300
voting-age Black, 1,800 White and 200 Black under voting age (all non-
Hispanic): q(c) = 0.075 among voting-age persons.

The law is :class:`~adversary.scenarios.swapping.HouseholdSwapLaw` (every
household swapped with probability 0.04); the priors are dare_county's;
the observed release is the block's count of c, 1 (the truth, unswapped).
"""

import numpy as np

from adversary.paper_setting import PRIORS
from adversary.scenarios.swapping import Composition, HouseholdSwapLaw, SwappingBlockCase

# Reduced cell codes ((hhgq * 2 + voting_age) * 2 + hispanic) * 7 + race: households,
# not Hispanic; race 0 White, 1 Black.
ADULT_WHITE, ADULT_BLACK, CHILD_WHITE, CHILD_BLACK = 14, 15, 0, 1

# (voting-age persons, children) of the eleven households besides the target's.
OTHERS = ((2, 0), (2, 0), (3, 0), (3, 0), (4, 0), (4, 0), (4, 0), (3, 2), (3, 2), (3, 3), (3, 3))
HOUSEHOLDS = (
    (ADULT_BLACK,),
    *((ADULT_WHITE,) * adults + (CHILD_WHITE,) * children for adults, children in OTHERS),
)

COUNTY_COUNTS = np.zeros(56, dtype=np.int64)
COUNTY_COUNTS[[ADULT_WHITE, ADULT_BLACK, CHILD_WHITE, CHILD_BLACK]] = 3700, 300, 1800, 200

CASE = SwappingBlockCase(
    name="Dare County ED 28-21 (1940) under household swapping",
    description=__doc__,
    households=HOUSEHOLDS,
    target_member=(0, 0),
    target_cell=ADULT_BLACK,
    alternative_cell=ADULT_WHITE,
    law=HouseholdSwapLaw(0.04),
    composition=Composition.from_counts(COUNTY_COUNTS),
    priors=PRIORS,
    releases=(0, 1, 2, 3),
    observed_release=1,
)
