"""Unknown ethnicity (illustrative): supplement S1.2's third attack in Dare County ED 28-21.

Kazan & Reiter (2023), supplement S1.2: the adversary knows every record of
the block and every characteristic of the target except one variable — here
ethnicity — and ``p_v`` is their prior probability of the target's true
ethnicity. The setting borrows the Dare County district of
``models/dare_county.py`` (Table 3): the target is its only voting-age Black
householder and the adversary knows the 44 others, so the two cells
(household, voting age, Black) × {not Hispanic, Hispanic} hold ``m = (0, 0)``
others, and the target is not Hispanic. **Illustrative**: the 1940 census
asked no Hispanic-origin question, and the observed releases ``(1, 0)`` are
made up for the example; only the counts come from the paper.

Both cells belong to the block-level detailed (GVHR) query, ρ ≈ 0.0992 each
(paper Table 2; the paper's convention ``σ² = 1/(2ρ)``), so this adversary
sees two noisy counts: the log likelihood ratio of the two ethnicities is the
sum of two single-block ratios, exactly the two-level attack of S1.3 with
``ρ = (0.0992, 0.0992)`` (:mod:`adversary.scenarios.multi_level`). S1.2's
"replace p with p_v" is the same attack with only the first cell released
(``dataclasses.replace(CASE, released=("not Hispanic",))``): then every number
is the single-block one of ``dare_county`` with ``p = p_v``.

The priors are labelled by ``p_v``, the prior of "not Hispanic", as the
paper's five p of Sec. 4.2. Copy this file to declare an unknown-attribute
case of your own (any K: race with six categories, say).
"""

# The paper's five priors of the target's cell and the 2020 block-level detailed (GVHR)
# query's ρ, 2.56 · 165/4099 · 3945/4097 ≈ 0.0992 (Table 2).
from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.unknown_attribute import UnknownAttributeCase

CASE = UnknownAttributeCase(
    name="Dare County ED 28-21 (1940), unknown ethnicity (illustrative)",
    description=__doc__,
    categories=("not Hispanic", "Hispanic"),
    known_counts=(0, 0),
    priors={label: {"not Hispanic": p, "Hispanic": 1 - p} for label, p in PRIORS.items()},
    true_category="not Hispanic",
    rho=RHO_BLOCK,
    convention="paper",
    observed_releases=(1, 0),
)
