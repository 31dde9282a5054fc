"""The post-processed release of Kazan & Reiter (2023), supplement S6, computed exactly.

The data holder does not publish the noisy block count ``x1*`` but a
post-processed count ``x̃1``: taking the block-group count ``x̃2`` as fixed,
the noisy counts of block g1 and of the d other blocks are moved to sum to
``x̃2`` by least squares (S6.1), which gives the share (S6.2)

    x̄1 = (d x1* + (x̃2 - y1*)) / (d + 1),

and ``x̃1 = f(x1*, y1*, x̃2)`` is ``x̄1`` clipped to ``[0, x̃2]`` and rounded to
the nearest integer (S6.3). Ties (``x̄1`` exactly halfway between two integers,
possible only when ``d + 1`` is even) are rounded **up**, i.e.
``[x̄1] = ⌊x̄1 + 1/2⌋``; every step is done in exact integer arithmetic.

The adversary sees ``x̃1`` (and ``x̃2``), knows the target's block except the
target (known count ``m``: ``X1 ∈ {m, m+1}``, ``P[X1 = m+1] = p``) and knows the
block-group count ``x2`` exactly, so the other blocks hold ``Y1 = x2 - X1``.
Their likelihood of ``x̃1`` is the indicator (S6.4) summed over the noisy
counts (S6.5)–(S6.6). Because ``f`` depends on ``(x1*, y1*)`` only through
``s = d x1* - y1*``, and

    d x1* - y1* = (d + 1) X1 - x2 + V,    V = d Z1 - W,

with ``Z1 ~ DG(σ²)`` the noise of ``x1*`` and ``W`` the noise of ``y1*``, the
double sum is a single sum over the distribution of ``V``
(:func:`combined_noise`). ``W`` is ``DG(dσ²)`` under the approximation (3.7)
the paper uses (default) or the exact sum of d independent ``DG(σ²)``
(``exact_sum=True``, :func:`adversary.noise.sums.sum_of_discrete_gaussians`).

Truncation. ``Z1`` and ``W`` are tabulated on grids that each leave out at
most ``tail_mass / 2`` of their probability, so the table of ``V`` misses at
most ``omitted_mass ≤ tail_mass`` (reported by :func:`release_table`). Every
likelihood ``P[x̃1 | X1 = k]`` is then underestimated, and the errors summed
over ``x̃1`` are at most ``omitted_mass`` for each ``k``. The marginal
posterior (S6.8) ``M = Σ_j π(j) L_T(j)`` has ``∂M/∂L_T(j) ∈ [0, 1]`` and
``|∂M/∂L_O(j)| ≤ (1 - p_T)/p_T`` (``T`` the truth, ``O`` the other value,
``p_T`` the prior of the truth), so the computed marginal posterior is within
``omitted_mass / p_T`` of the exact one and the marginal risk within
``omitted_mass / p_T²``.

The data holder's measures. :func:`marginals` gives the marginal posterior
(S6.8), the marginal risk and the probability that the adversary's Bayes
decision from ``x̃1`` (:func:`decision`) is right, each with an error bound;
:class:`PostProcessingCase` is a concrete case (the
:class:`~adversary.measures.protocol.Attack` interface); :func:`marginal_by_x2_tilde`
and :func:`marginal_by_rho` are Figure 6's two panels. The decision
probability is not monotone in ``x̃2``: it swings with the fractional part of
``(x̃2 - x2)/(d + 1)`` (at ρ1 ≈ 0.0992, p = 1/2, d = 27: 0.593, 0.647, 0.537,
0.510 for x̃2 = 1, 10, 20, 100, against 0.589 from ``x1*`` alone).

"Without post-processing". The paper's Figure 6 compares (S6.8) with "the
marginal disclosure risk without post-processing". Two quantities fit that
phrase: the single-block marginal risk (3.4) of an adversary who sees only
``x1*`` (:func:`adversary.scenarios.single_block.marginal_risk`), and the
marginal risk of this same adversary seeing the noisy counts ``x1*`` and
``y1*`` that ``x̃1`` is computed from (:func:`unprocessed_marginal_risk`).
Only the second is an upper bound by a theorem: ``x̃1`` is a function of
``(x1*, y1*)``, and the marginal posterior ``Σ_D P[D, T]² / (p_T P[D])`` can
only decrease when observations ``D`` are merged (Sedrakyan's inequality).

Numbers that differ from S6's text (p = 1/2, m = 0, x1 = x2 = 1; S6 does not
state d, we take the case study's d = 27). The single-block risk (3.4) is not
an upper bound for every x̃2: at ρ1 ≈ 0.0992 it is 1.047333, while (S6.8)
gives 1.047961 for x̃2 = 100 (and exceeds it from x̃2 ≈ 70 on); the
``(x1*, y1*)`` risk, 1.049005, bounds every x̃2. ``d x1* - y1*`` carries more
information about X1 than ``x1*`` alone (for d = 1 the post-processed risk
exceeds (3.4) at every ρ1). Nor does the risk rise with x̃2 at every ρ1: at
ρ1 = 2 it is 1.619, 1.589, 1.443 for x̃2 = 1, 10, 100, because the share is
shifted by ``(x̃2 - x2)/(d + 1)`` and a shift near a half-integer makes the
rounding hide an almost noiseless count. At the ρ1 of Figure 6 and below, it
rises toward the bound as S6 says.

**Other noise.** Every function takes ``mechanism=`` (one
:class:`~adversary.noise.mechanisms.NoiseMechanism`, the noise of every
block's count) instead of ``rho`` (pass ``None``) and ``convention``. ``W`` is
then the exact sum of d copies
(:meth:`~adversary.noise.mechanisms.NoiseMechanism.sum_table`): the
approximation (3.7) is the discrete Gaussian's, so ``exact_sum`` defaults to
false for discrete Gaussians (ρ or mechanism, the same numbers) and to true
for other noise, and false is refused for it. Bounded noise is tabulated in
full (``omitted_mass`` 0, up to the rounding of a long FFT sum). The curves
over ρ (:func:`marginal_by_rho`) are the discrete Gaussian's.

**Ties.** The Bayes decision (3.5) from ``x̃1`` is tied where
``p L1 = (1 - p) L0`` — with ``p = 1/2`` wherever clipping or rounding makes
both likelihoods equal; (3.6) counts a tie by the package's one tie rule
(:mod:`adversary.measures.decision`, ``tie_rule=``; default ``"split"``).

The package's modules: :mod:`~.rule` (f of (S6.2)-(S6.3)),
:mod:`~.release_noise` (the noise ``V``), :mod:`~.releases` (the release
tables and likelihood (S6.5)-(S6.6)), :mod:`~.scores` (posterior (S6.7),
risk, decision), :mod:`~.data_holder` (the marginal measures (S6.8)),
:mod:`~.unprocessed` (the same adversary without post-processing, the bound),
:mod:`~.curves` (Figure 6), :mod:`~.pymc_model` and :mod:`~.case`.
"""

from ..._lazy import lazy_names
from .case import PostProcessingCase
from .curves import marginal_by_rho, marginal_by_x2_tilde
from .data_holder import (
    PostProcessedMarginals,
    correct_decision_probability,
    marginal_posterior,
    marginal_risk,
    marginals,
)
from .release_noise import combined_noise
from .releases import (
    AttackSetting,
    PostProcessedReleases,
    attack_setting,
    likelihood,
    release_table,
)
from .rule import post_process, post_process_graph
from .scores import decision, posterior, risk
from .unprocessed import unprocessed_marginal_posterior, unprocessed_marginal_risk

__all__ = [
    "AttackSetting",
    "PostProcessedMarginals",
    "PostProcessedReleases",
    "PostProcessingCase",
    "attack_setting",
    "combined_noise",
    "correct_decision_probability",
    "decision",
    "likelihood",
    "marginal_by_rho",
    "marginal_by_x2_tilde",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "post_process",
    "post_process_graph",
    "posterior",
    "release_table",
    "risk",
    "unprocessed_marginal_posterior",
    "unprocessed_marginal_risk",
]

# The PyMC model is imported on first use: the closed forms need no PyMC.
__getattr__, __dir__ = lazy_names(__name__, {"model": ".pymc_model"}, globals())
