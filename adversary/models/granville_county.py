"""Granville County, North Carolina, 1940: enumeration district 39-14 in its county.

Kazan & Reiter (2023), Sec. 4.3. The target — a white, Hispanic person under
voting age living in an institution for the elderly, handicapped and poor — is
unique both in ED 39-14 (209 people) and in the county (29,364 people, 28
districts). The enumeration district plays the block, the county the block
group, with d = 27 other districts. The truth is ``x1 = 1``, ``x2 = 1`` and
``y1 = x2 - x1 = 0``; the adversary knows everyone else in the district
(``m = 0``) and sees the paper's Table 7 realisation of the 2020 mechanism:
``x1* = 2``, ``x2* = 1``, ``y1* = -1``, at the block and optimized-block-group
GVHR budgets (ρ1 ≈ 0.0992, ρ2 ≈ 0.2465), with prior ``p = 1/2`` and
``X2 | X1 = k1 ~ Uniform{k1, k1+1, …}``.

Copy this file to declare a block-group case of your own.
"""

from adversary.budget import get_preset
from adversary.scenarios.block_group.case import BlockGroupCase
from adversary.scenarios.block_group.prior import improper_uniform

BUDGET = get_preset("pl94-2020-persons")

CASE = BlockGroupCase(
    name="Granville County ED 39-14 (1940)",
    description=__doc__,
    releases=(2, 1, -1),
    truth=(1, 1, 0),
    priors={"1/2": 1 / 2},
    rho1=float(BUDGET.rho("block", "detailed")),
    rho2=float(BUDGET.rho("block_group", "detailed")),
    d=27,
    x2_prior=improper_uniform(),
    known_count=0,
    convention="paper",
    sum_noise="approximate",
)
