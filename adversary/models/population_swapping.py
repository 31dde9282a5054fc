"""Population assessment of swapping: who is unique in their block, and what does swapping hide?

For ``adversary population --synthetic PERSONS --model population_swapping``.
A person's cell is their cell of the reduced classification (household or
group quarters × voting age × Hispanic origin × 7 races, 56 cells); every
person living in a household and alone in their cell in their block
(``small_cell_max = 1``) is assessed under the single-block attack of Kazan &
Reiter (2023) when the block's exact counts are released after swapping:

- **household swapping** as in the US censuses 1990–2010: 4 % of households
  exchanged with a household of the same size and voting-age persons from
  another block of the same county;
- **targeted record swapping** as in the EU 2021 censuses (sdcMicro's
  ``recordSwap``) at its defaults: swap rate 5 %, households with a member whose
  voting age × Hispanic × race combination is held by fewer than 3 persons of
  the area swapped first, across county, tract and block.

The adversary knows every other person's cell in the block and the
mechanism's law, and takes the county's published table (after swapping) as the
composition of swapped-in households; the target's cell is their true cell or
the block's most common other household cell of their voting age. Priors ``p``
are those of the paper's analysis (1/2, 1/10, 1/50). The summary counts
persons whose marginal risk (3.4) exceeds 1.5 and 2 and whose probability of a
correct decision (3.6) exceeds 1/2 and 0.9, by block size, with the share of
them whose household was swapped in one run of each mechanism.

At most 20 persons are assessed per block-size bin (a seeded sample; the
summary's standard errors are those of the stratified sample): an exact
release pmf of a block of N persons costs a convolution over its households on
a grid of N + 1 counts, so large blocks dominate the run. Copy this file to
change the rates, the area of partners, the priors or the sample
(``per_bin=None``: everyone).
"""

from adversary.population.swapping import SwappingStudy
from adversary.swapping import HouseholdSwapping
from adversary.swapping.targeted import TargetedRecordSwapping

SWAPPING = SwappingStudy(
    name="household and targeted record swapping of unique persons",
    description=__doc__,
    mechanisms={
        "household 4%": HouseholdSwapping(rate=0.04, within="county"),
        "trs 5%": TargetedRecordSwapping(),
    },
    priors={"1/2": 1 / 2, "1/10": 1 / 10, "1/50": 1 / 50},
    small_cell_max=1,
    composition="county",
    risk_thresholds=(1.5, 2.0),
    decision_thresholds=(0.5, 0.9),
    per_bin=20,
    seed=0,
)
