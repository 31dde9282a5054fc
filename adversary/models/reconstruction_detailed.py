"""Reconstructing a block of 20 persons from its 2020 PL 94-171 tables (the full detailed query).

The cells are those of the detailed query: household or group-quarters type
(8: households and seven group-quarters types) × voting age (2) × Hispanic
origin (2) × race (63 combinations of the six races): 2 016 cells. The
adversary knows the block has 20 persons and takes each person's cell from the
tract's distribution, here the 2020 national shares of each attribute
(illustrative, rounded, attributes independent): 97.5% in households and
0.5%, 0.4%, 0.6%, 0.3%, 0.4%, 0.2%, 0.1% in the seven group-quarters types;
78% of voting age; 19% Hispanic; the six single races White 61.6%, Black
12.4%, American Indian and Alaska Native 1.1%, Asian 6.0%, Native Hawaiian and
Pacific Islander 0.2%, some other race 8.4%, and the 57 combinations of two or
more races sharing 10.3% equally. The released tables are the ten PL 94-171
queries at block level (2 600 noisy counts), each with its ρ in the 2020
persons budget, in the paper's convention σ² = 1/(2ρ). The true histogram
and the releases are drawn once (seed 2020) from this same model.
"""

from adversary.scenarios.reconstruction import DETAILED, pl94_block

SINGLE_RACES = (0.616, 0.124, 0.011, 0.060, 0.002, 0.084)
RACE = (*SINGLE_RACES, *[(1.0 - sum(SINGLE_RACES)) / 57] * 57)
PRIOR = DETAILED.independent_prior(
    {
        "hhgq": (0.975, 0.005, 0.004, 0.006, 0.003, 0.004, 0.002, 0.001),
        "voting_age": (0.22, 0.78),
        "hispanic": (0.81, 0.19),
        "race": RACE,
    }
)
CASE = pl94_block(
    "A block of 20 persons, ten PL 94-171 tables (2 016 cells)",
    DETAILED,
    n=20,
    prior=PRIOR,
    seed=2020,
    description=__doc__,
)
