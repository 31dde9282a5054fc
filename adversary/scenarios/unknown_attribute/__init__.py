"""The unknown-attribute attack: Kazan & Reiter (2023), S1.2's third attack, for K categories.

The adversary knows every record of block g1 and every characteristic of the
target t except one variable, which takes one of K categories (ethnicity: K = 2;
race: K = 6, …). Fixing the target's other characteristics, the K cells of
the released table that differ only in that variable hold ``m_1..m_K`` other
people, which the adversary knows, and the target adds one to the cell of
their category ``C``:

    X_k = m_k + 1[C = k],   prior P[C = k] = π_k,

and each released cell k is published as ``x_k* = X_k + Z_k`` with
``Z_k ~ DG(0, σ_k²)`` independent, ``σ_k² = 1/(2ρ_k)`` (paper) or ``1/ρ_k``
(DAS), ρ per cell or common. A cell may also be left out of the release
(``released``): then it says nothing.

**Posterior.** The likelihood of ``C = k`` against "the target in no released
cell" is ``exp(s_k)`` with ``s_k = (2 (x_k* - m_k) - 1) / (2σ_k²)`` for a
released cell (as the single-block ratio, :mod:`adversary.scenarios.single_block`) and ``s_k = 0``
for a cell not released, so

    P[C = k | x*] = π_k e^{s_k} / Σ_j π_j e^{s_j},

the softmax of ``log π_k + s_k`` (in the paper's convention, with every cell
released, ``∝ π_k Π_j e^{-ρ_j (x_j* - m_j - 1[j = k])²}``). The risk of category
k is its posterior over ``π_k``, as (3.2); the Bayes decision under 0-1 loss
(3.5) is the posterior mode. **Ties** (scores within
:func:`~adversary.measures.decision.tie_tolerance` of the largest) are common
here — a uniform prior with symmetric releases — and count in (3.6) by the
package's one tie rule (:mod:`adversary.measures.decision`; ``tie_rule=``,
default ``"split"``: a tie among k categories counts 1/k). With K = 2 and only
the first category's cell released this is the single-block attack with
``p = π_1`` (S1.2: "replace p with p_v"), the first category playing
``m + 1``: ``tie_rule="smallest"`` here is the single block's ``"largest"``.

**The data holder's view** (:func:`marginals`): for a true category c, the
marginal posterior (3.3), marginal risk (3.4) and probability of a correct
decision (3.6) average over the K independent noises; see :func:`marginals`
for the exact methods and their rigorous error bounds. As in S1.1 they do not
depend on the known counts.

Arrays of releases have the released cells on their **last axis** (one noisy
count per released cell, in category order); priors, ρ and known counts have
the K categories on their last axis (ρ may be one number); other leading axes
broadcast.

**Other noise.** Every function takes ``mechanism=`` instead of ``rho`` (pass
``rho=None``) and ``convention``: one
:class:`~adversary.noise.mechanisms.NoiseMechanism` for every cell, or a
sequence with one per category. All discrete Gaussian: the closed forms above
(the same numbers as the ρ giving their σ²). Otherwise a released cell's ratio
is ``s_k = logpmf_k(x_k* - m_k - 1) - logpmf_k(x_k* - m_k)``: ``+inf`` where
bounded noise lets only "the target is in cell k" produce ``x_k*`` (the
posterior of k is then exactly 1), ``-inf`` where it rules k out. Releases no
category can produce (two cells each proving the target, or every category
ruled out) raise ``ValueError``.

The package's modules: :mod:`~.inputs` (checks), :mod:`~.scores`
(posterior, risk, decision), :mod:`~.data_holder` (the data holder's
measures, by :mod:`~.gaussian` for discrete Gaussian noise and
:mod:`~.mechanisms` for any other, over the sums of :mod:`~.sums`),
:mod:`~.pymc_model` (PyMC) and :mod:`~.case`.
"""

from ..._lazy import lazy_names
from .case import UnknownAttributeCase
from .data_holder import correct_decision_probability, marginal_posterior, marginal_risk, marginals
from .scores import decision, log_likelihood_ratios, posterior, release_pmf, risk
from .sums import (
    DEFAULT_GRID_WIDTH,
    GRID_CURVATURE_BOUND,
    MARGINAL_METHODS,
    UnknownAttributeMarginals,
)

__all__ = [
    "DEFAULT_GRID_WIDTH",
    "GRID_CURVATURE_BOUND",
    "MARGINAL_METHODS",
    "UnknownAttributeCase",
    "UnknownAttributeMarginals",
    "correct_decision_probability",
    "decision",
    "log_likelihood_ratios",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "posterior",
    "release_pmf",
    "risk",
]

# The PyMC model is imported on first use: the closed forms need no PyMC.
__getattr__, __dir__ = lazy_names(__name__, {"model": ".pymc_model"}, globals())
