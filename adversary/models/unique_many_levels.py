"""A target unique at six levels of the hierarchy (Kazan & Reiter 2023, supplement S1.3).

The adversary wants the target's unknown ethnicity and knows that the target's
other characteristics are unique at every level block ⊂ block group ⊂ tract ⊂
county ⊂ state ⊂ US, so no one else at any level has the target's full
characteristics c (``m_i = 0``) and each level's count with c is 1 if the
target has c and 0 if not. The truth is ``x1 = 1``. Each level's count is
released with that level's ρ of the detailed (GVHR) query of the 2020
persons-file budget (paper Table 2: ≈ 0.0992, 0.2465, 0.0504, 0.0514,
0.0505, 0.0509), in the paper's convention ``σ² = 1/(2ρ)``. The five priors
are those of the paper's analysis (1/864 spreads the prior evenly over the
864 GVHR cells).

The observed releases are illustrative, not from the paper: one draw of the
mechanism from the truth (``numpy.random.default_rng(2023)``, the package's
exact sampler, block first). The data holder's measures do not depend on
them. S1.3's curve over the number of levels ℓ is a sweep of ``levels`` from
1 to 6.

Copy this file to declare an ℓ-level case of your own.
"""

# The paper's five priors of the target's cell.
from adversary.paper_setting import PRIORS
from adversary.scenarios.multi_level import LEVELS_2020, MultiLevelCase, rhos_2020

CASE = MultiLevelCase(
    name="Unique at six levels (S1.3)",
    description=__doc__,
    rhos=tuple(float(rho) for rho in rhos_2020(6)),
    priors=PRIORS,
    observed_releases=(0, 1, 1, 3, 3, 6),
    levels=6,
    known_counts=0,
    true_count=1,
    convention="paper",
    level_names=LEVELS_2020,
)
