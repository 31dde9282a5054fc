"""Reconstructing a block of 12 persons from its 2020 PL 94-171 tables (reduced cells).

The block's persons are cross-classified by household or group quarters (2),
voting age (2), Hispanic origin (2) and race (7: the six single races and
"two or more"): 56 cells. The adversary knows the block has 12 persons and
takes each person's cell to be drawn independently from the block's tract,
here approximated by the 2020 national shares of each attribute (illustrative,
rounded): 97.5% in households, 78% of voting age, 19% Hispanic, and
White 61.6%, Black 12.4%, American Indian and Alaska Native 1.1%, Asian 6.0%,
Native Hawaiian and Pacific Islander 0.2%, some other race 8.4%, two or
more races 10.3%. The released tables are the ten PL 94-171 queries at block
level on these cells (total, race, hispanic, voting_age, hhgq, hispanic ×
race, voting_age × race, voting_age × hispanic, voting_age × hispanic × race,
detailed: 130 noisy counts), each with its ρ in the 2020 persons budget, in
the paper's convention σ² = 1/(2ρ). The true histogram and the releases are
drawn once (seed 2020) from this same model.

Copy this file to declare a reconstruction case of your own.
"""

from adversary.scenarios.reconstruction import REDUCED, pl94_block

PRIOR = REDUCED.independent_prior(
    {
        "hhgq": (0.975, 0.025),
        "voting_age": (0.22, 0.78),
        "hispanic": (0.81, 0.19),
        "race": (0.616, 0.124, 0.011, 0.060, 0.002, 0.084, 0.103),
    }
)
CASE = pl94_block(
    "A block of 12 persons, ten PL 94-171 tables (56 cells)",
    REDUCED,
    n=12,
    prior=PRIOR,
    seed=2020,
    description=__doc__,
)
