"""Population assessment of the 2020 detailed (GVHR) cells: who is unique in their block?

For ``adversary population (DATA | --synthetic PERSONS) --model population_gvhr``.
A person's cell is their value of the 2020 P.L. 94-171 detailed query —
household or group-quarters type (``hhgq``), voting age, Hispanic origin and
the 63 OMB races — whose noisy count is released at every level with that
level's ρ of the detailed query (paper Table 2: block ≈ 0.0992, block group
≈ 0.2465, tract ≈ 0.0504, county ≈ 0.0514, state ≈ 0.0505 at the published
budget), in the paper's convention ``σ² = 1/(2ρ)``.

Every person alone in their cell in their block (``small_cell_max = 1``) is
assessed under the three attacks of Kazan & Reiter (2023): the single-block
attack (Sec. 3.1), the block-group attack (Sec. 3.2, S3; prior
``X2 | X1 ~ Uniform{k1, k1+1, …}``) and uniqueness at ℓ levels (S1.3; ℓ =
the levels block … state where the cell has one person). Priors ``p`` are
those of the paper's analysis (1/2, 1/10, 1/50); the budgets scale every ρ
of the preset by 1, 2 and 4. (Smaller budgets are as easy to add but cost
more: the block-group attack's release grid grows as ρ^(-1/2) along each of
its three axes, so a quarter of the budget costs about 10 times as much.)
The summary counts persons whose marginal risk (3.4) exceeds 1.5 and 2, and
whose probability of a correct decision (3.6) exceeds 1/2 and 0.9.

Copy this file to assess other characteristics (they must be columns of the
data, and the cells of the released query), attacks, priors or budgets.
"""

from adversary.population.model import PopulationModel

POPULATION = PopulationModel(
    name="2020 detailed (GVHR) cells",
    description=__doc__,
    characteristics=("hhgq", "voting_age", "hispanic", "race"),
    attacks=("single_block", "block_group", "multi_level"),
    priors={"1/2": 1 / 2, "1/10": 1 / 10, "1/50": 1 / 50},
    budgets={"x1": 1.0, "x2": 2.0, "x4": 4.0},
    preset="pl94-2020-persons",
    query="detailed",
    convention="paper",
    small_cell_max=1,
    risk_thresholds=(1.5, 2.0),
    decision_thresholds=(0.5, 0.9),
)
