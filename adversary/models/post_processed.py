"""A post-processed block count (Kazan & Reiter 2023, supplement S6).

The data holder does not publish the noisy block count but a post-processed
one: the noisy counts of the target's block and of the d = 27 other blocks of
its block group are moved by least squares to add up to the post-processed
block-group count ``x̃2 = 10``, clipped to ``[0, x̃2]`` and rounded (S6.1–S6.3).
As in S6 the target is unique in the block and in the block group (truth
``x1 = x2 = 1``), the adversary knows everyone else in the block (``m = 0``)
and knows ``x2 = 1`` exactly, and sees ``x̃1`` and ``x̃2``. The block counts are
released with the 2020 block-level detailed (GVHR) ρ1 ≈ 0.0992 (paper Table 2)
in the paper's convention; the other blocks' summed noise is approximated by a
discrete Gaussian, (3.7). S6 does not state d; 27 is the paper's block-group
case study (Granville County). The prior 1/2 is S6's; the others are the
paper's usual set.

The observed ``x̃1 = 2`` is illustrative, not from the paper (the most likely
release under the truth is 0, because clipping gathers the mass below zero
there). The data holder's measures do not depend on it; sweeping ``x2_tilde``
or ``rho`` gives S6's Figure 6.

Copy this file to declare a post-processing case of your own.
"""

# The paper's five priors of the target's cell and the 2020 block-level detailed (GVHR)
# query's ρ, 2.56 · 165/4099 · 3945/4097 ≈ 0.0992 (Table 2).
from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.post_processing import PostProcessingCase

CASE = PostProcessingCase(
    name="Post-processed block count (S6)",
    description=__doc__,
    rho=RHO_BLOCK,
    priors=PRIORS,
    d=27,
    x2=1,
    x2_tilde=10,
    observed_x1_tilde=2,
    known_count=0,
    true_count=1,
    convention="paper",
    exact_sum=False,
)
