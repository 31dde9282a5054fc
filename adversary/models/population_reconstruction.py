"""Reconstruction of sampled blocks from their 2020 PL 94-171 tables, by block size.

For ``adversary population (DATA | --synthetic PERSONS) --model population_reconstruction``.
Twenty blocks are drawn in each of JASON Table 8-11's size bins (< 10, 10–49,
50–99, 100–249, ≥ 250 persons). Each block's ten PL 94-171 tables on the
reduced cross-classification (household or group quarters × voting age ×
Hispanic × 7 races, 56 cells; 130 counts) are released once from its true
histogram with discrete Gaussian noise at the block-level ρ of each query in
the 2020 budget, times 1, 4 and 16, and without noise, in both conventions
(σ² = 1/(2ρ) and 1/ρ). The adversary knows the block's size, takes its
tract's cell shares as prior, and samples the posterior of the block's
histogram (1 000 draws after 200 sweeps, two chains). The summary gives the
share of records reconstructed and the exact-block rate per bin and overall,
with standard errors and 95 % intervals from the stratified sample, beside
the prior alone and the 2010 reconstruction's 46.48 % (JASON 2022, Sec. 4.2).

Copy this file to change the sample size, the classification (``"detailed"``:
the 2 016 cells of the detailed query), the budgets or the chains.
"""

import math

from adversary.analyses.reconstruction_study import ReconstructionStudy

RECONSTRUCTION = ReconstructionStudy(
    name="2020 PL 94-171 reconstruction by block size",
    description=__doc__,
    per_bin=20,
    classification="reduced",
    budget="pl94-2020-persons",
    scales=(1.0, 4.0, 16.0, math.inf),
    conventions=("paper", "das"),
    draws=1000,
    tune=200,
    chains=2,
    seed=0,
)
