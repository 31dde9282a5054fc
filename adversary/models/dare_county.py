"""Dare County, North Carolina, 1940: enumeration district 28-21.

Kazan & Reiter (2023), Sec. 4.2. The district's GVHR counts (Table 3) hold 45
non-Hispanic people in households; one of them is the only voting-age, non-
Hispanic Black householder. The adversary knows the 44 others, so the count of
the target's cell without the target is ``m = 0`` and the truth is ``x1 = 1``.
Five adversaries differ only in their prior ``p`` that the target is in that
cell; ``1/864`` spreads the prior evenly over the 864 cells of the 1940 GVHR
query. The release is the block-level detailed (GVHR) query of the 2020
persons-file budget, ρ ≈ 0.0992 (Table 2), in the paper's convention
``σ² = 1/(2ρ)``.

Copy this file to declare a single-block case of your own.
"""

# The paper's five priors of the target's cell and the 2020 block-level detailed (GVHR)
# query's ρ, 2.56 · 165/4099 · 3945/4097 ≈ 0.0992 (Table 2).
from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.single_block import SingleBlockCase

# Table 3: (household/group quarters, voting age, Hispanic, race) -> count.
GVHR_COUNTS = (
    ("Household, of voting age, not Hispanic, White", 34),
    ("Household, not of voting age, not Hispanic, White", 10),
    ("Household, of voting age, not Hispanic, Black", 1),
)

CASE = SingleBlockCase(
    name="Dare County ED 28-21 (1940)",
    description=__doc__,
    rho=RHO_BLOCK,
    priors=PRIORS,
    known_count=0,
    true_count=1,
    convention="paper",
    releases=(1, 2, 3, 4, 5),
    cell_counts=GVHR_COUNTS,
)
