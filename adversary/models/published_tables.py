"""A unique target in a two-block block group whose tables are TopDown's (illustrative).

Kazan & Reiter's single-block attack (Sec. 3.1) when the data holder
publishes not the noisy counts but TopDown's tables (JASON 2022, Sec. 6.3):
the block group's measurement rounded, the blocks fitted to it by
non-negative least squares and rounded keeping it. The target's cell holds no
one else in their block (``m = 0``) and three persons in the other block; the
adversary knows all of them. The block is measured at the 2020 block-level
detailed ρ ≈ 0.0992, the block group at ≈ 0.2465 (paper Table 2), in the
paper's convention σ² = 1/(2ρ). ``post_processing="topdown"``: the adversary
sees the published tables only (``none``: the noisy measurements; ``both``).
Every sum runs over the hierarchy's noise grid (error ≤ the omitted mass,
about 2e-10). **Illustrative** block group: two blocks, so that the grid is
small; the counts are not from the paper.

Copy this file for a block group of your own (a few blocks: the grid grows
as the product of the units' noise ranges).
"""

from adversary.paper_setting import PRIORS, RHO_BLOCK, RHO_GROUP
from adversary.scenarios.published_tables import PublishedTablesCase

CASE = PublishedTablesCase(
    name="Unique target in a two-block block group, TopDown tables (illustrative)",
    description=__doc__,
    priors=PRIORS,
    known_counts=(0, 3),
    target_block=0,
    rho_block=RHO_BLOCK,
    rho_parent=RHO_GROUP,
    convention="paper",
    post_processing="topdown",
    # made up: the published block group and its two blocks
    published=(4, 1, 3),
)
