"""Uniqueness at ℓ levels of the hierarchy: Kazan & Reiter (2023), supplement S1.3, exact.

The adversary knows that the target t is unique in their characteristics
``c_{-e}`` at ℓ nested levels of the geography (block ⊂ block group ⊂ tract ⊂
county ⊂ state ⊂ US) and that ``m_i`` other people at level i have the full
characteristics c (``m_i = 0`` for the unique target of S1.3; any
``0 ≤ m_1 ≤ m_2 ≤ …`` by S1.1). With ``T ∈ {0, 1}`` the indicator that t has c,
prior ``P[T = 1] = p``, the count at level i is ``X_i = m_i + T`` and its
release ``x_i* = X_i + Z_i``, ``Z_i ~ DG(0, σ_i²)`` independent, with
``σ_i² = 1/(2ρ_i)`` (paper) or ``1/ρ_i`` (DAS) for level i's own ρ_i. The
levels share the single unknown T, so the log likelihood ratio adds up:

    log P[x* | T = 1] - log P[x* | T = 0] = Σ_i (2 (x_i* - m_i) - 1) / (2σ_i²),

and the posterior (S1.1) is the logistic function of ``logit(p)`` plus this
sum. For ``m_i = 0`` and the paper's convention this is exactly (S1.1),
``p Π e^{-ρ_i(x_i*-1)²} / (p Π e^{-ρ_i(x_i*-1)²} + (1-p) Π e^{-ρ_i x_i*²})``.
With ℓ = 1 everything reduces to :mod:`adversary.scenarios.single_block`.

Arrays of releases, known counts and ρ have the levels on their **last axis**
(level 1 = the lowest level, the block); priors and other per-case arguments
broadcast against the remaining axes. "The truth" is the true count ``x1`` at
level 1: ``m_1 + 1`` (the target has c, the default) or ``m_1``; posterior and
risk functions give the probability of the truth, as in :mod:`adversary.scenarios.single_block`.

The data holder's marginal measures (S1.3's Figure 1) average over all ℓ
releases; see :func:`marginals` for the method and its error bounds.

**Other noise.** Every function takes ``mechanism=`` instead of ``rhos`` and
``convention``: a sequence of :class:`~adversary.noise.mechanisms.NoiseMechanism`,
one per level (one mechanism for every level where the releases fix ℓ). When
every one is a :class:`~adversary.noise.mechanisms.DiscreteGaussianNoise` the
closed forms above are used (the numbers equal those of the same σ² given by
ρ); otherwise level i adds ``logpmf_i(x_i* - m_i - 1) - logpmf_i(x_i* - m_i)``
to the log odds, ``±inf`` where bounded noise lets only one value of T produce
the release (the posterior is then exactly 1 or 0). Releases that no value
of T can produce (at some level, or levels certain of opposite values) raise
``ValueError``.

The package's modules: :mod:`~.inputs` (checks, the 2020 ρ per level),
:mod:`~.scores` (posterior, risk, decision), :mod:`~.data_holder` (the data
holder's measures over the sums of :mod:`~.sums`), :mod:`~.pymc_model` and
:mod:`~.case`.
"""

from ..._lazy import lazy_names
from .case import MultiLevelCase
from .data_holder import (
    correct_decision_probability,
    marginal_by_levels,
    marginal_posterior,
    marginal_risk,
    marginals,
)
from .inputs import LEVELS_2020, rhos_2020
from .scores import decision, log_likelihood_ratio, posterior, risk
from .sums import DEFAULT_GRID_WIDTH, EXPIT_SECOND_DERIVATIVE_BOUND, MultiLevelMarginals

__all__ = [
    "DEFAULT_GRID_WIDTH",
    "EXPIT_SECOND_DERIVATIVE_BOUND",
    "LEVELS_2020",
    "MultiLevelCase",
    "MultiLevelMarginals",
    "correct_decision_probability",
    "decision",
    "log_likelihood_ratio",
    "marginal_by_levels",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "posterior",
    "rhos_2020",
    "risk",
]

# The PyMC model is imported on first use: the closed forms need no PyMC.
__getattr__, __dir__ = lazy_names(__name__, {"model": ".pymc_model"}, globals())
