"""The single-block attack of Kazan & Reiter (2023), Sec. 3.1, computed exactly.

The adversary knows every record of block g1 except the target t's, so they
know ``m = x_{1,-t}``, the count of the others with characteristics c
(``m = 0`` for a unique target; any ``m ≥ 0`` is supplement S1.1). The count
with c is ``X1 ∈ {m, m+1}`` with prior ``P[X1 = m+1] = p``, and the release is
``x1* = x1 + Z`` with ``Z ~ DG(0, σ²)``, ``σ² = 1/(2ρ)`` under the paper's
convention (``1/ρ`` under the DAS one). The log likelihood ratio of the two
hypotheses is linear in the release,

    log P[x1* | m+1] - log P[x1* | m] = (2 (x1* - m) - 1) / (2σ²),

so the posterior (3.1) is a logistic function of ``x1*`` and the Bayes
decision (3.5) a threshold on ``x1*``. Every function here broadcasts its
array arguments (releases, priors, ρ, counts) against each other.

"The truth" is the data holder's true count ``x1``: ``m + 1`` when the target
has c (the paper's setting, the default) or ``m`` when they do not. Posterior
and risk functions give the probability of the truth.

**Other noise.** Every function takes ``mechanism=`` (a
:class:`~adversary.noise.mechanisms.NoiseMechanism`) instead of ``rho`` and
``convention``. A :class:`~adversary.noise.mechanisms.DiscreteGaussianNoise`
uses the closed forms above (``DiscreteGaussianNoise.from_rho(rho, convention)``
gives the same numbers as ``rho``); any other mechanism the general forms: the
log likelihood ratio is ``logpmf(x1* - m - 1) - logpmf(x1* - m)``, which is no
longer linear in ``x1*``, so the decision probability is the noise pmf summed
over the releases where the decision is right. With bounded noise the ratio
is ``+inf`` or ``-inf`` where only one hypothesis can produce the release: the
posterior is then exactly 1 or 0 (the release reveals the truth or rules it
out); a release neither hypothesis can produce is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from .._validation import as_counts, as_integers, as_probability
from ..measures.decision import (
    DEFAULT_TIE_RULE,
    binary_credit,
    check_tie_rule,
    decide,
    tie_tolerance,
)
from ..measures.marginal import MarginalMeasures, over_prior_of_truth
from ..measures.noise import (
    impossible_release_error,
    log_ratio,
    noise_table,
    resolve,
    support_points,
)
from ..measures.protocol import CaseFields
from ..measures.protocol import prior_label as prior_label_of
from ..measures.releases import DEFAULT_TAIL_MASS, expectation_over_noise, expectation_over_table
from ..noise import discrete_gaussian
from ..noise.mechanisms import NoiseMechanism

if TYPE_CHECKING:  # PyMC is imported by model() only: the closed forms need none of it
    import pymc as pm

__all__ = [
    "SingleBlockCase",
    "correct_decision_probability",
    "decision",
    "log_likelihood_ratio",
    "marginal_posterior",
    "marginal_risk",
    "model",
    "posterior",
    "release_pmf",
    "risk",
]


def _true_count(known_count, true_count) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(m, x1)``; ``x1`` defaults to ``m + 1`` and must be ``m`` or ``m + 1``."""
    known = as_counts(known_count, "known_count")
    if true_count is None:
        return known, known + 1
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known) & (truth != known + 1)):
        raise ValueError(
            f"true_count must equal known_count or known_count + 1, got true_count={true_count!r}"
            f" with known_count={known_count!r}"
        )
    return known, truth


def log_likelihood_ratio(
    release, rho=None, known_count=0, convention="paper", *, mechanism=None
) -> np.ndarray:
    """``log P[X1* = x1* | X1 = m+1] - log P[X1* = x1* | X1 = m] = (2(x1* - m) - 1)/(2σ²)``.

    With ``mechanism``: ``logpmf(x1* - m - 1) - logpmf(x1* - m)``, ``±inf``
    where only one value of ``X1`` can produce the release; a release neither
    can produce raises ``ValueError``.
    """
    release = as_integers(release, "release")
    known = as_counts(known_count, "known_count")
    sigma2, mech = resolve(rho, convention, mechanism)
    if mech is None:
        return (2.0 * (release - known).astype(np.float64) - 1.0) / (2.0 * sigma2)
    noise = release - known
    ratio = log_ratio(mech.logpmf(noise - 1), mech.logpmf(noise))
    if np.any(np.isnan(ratio)):
        bad = np.broadcast_to(release, ratio.shape)[np.isnan(ratio)]
        raise impossible_release_error("release", bad.tolist(), mech)
    return ratio


def posterior(
    release, prior, rho=None, known_count=0, true_count=None, convention="paper", *, mechanism=None
) -> np.ndarray:
    """Posterior probability of the truth given the release, equation (3.1).

    With the default truth ``x1 = m + 1``: ``p e^{-ρ(x1*-x1)²} / (p e^{-ρ(x1*-x1)²}
    + (1-p) e^{-ρ(x1*-m)²})`` in the paper's convention, computed as the logistic
    function of the posterior log odds (no overflow for any ρ or count). With
    ``mechanism`` the likelihoods are its pmf; bounded noise can give exactly 0 or 1.
    """
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    log_odds_c = special.logit(prior) + log_likelihood_ratio(
        release, rho, known, convention, mechanism=mechanism
    )
    return special.expit(np.where(truth == known + 1, log_odds_c, -log_odds_c))


risk = over_prior_of_truth(posterior, "Disclosure risk, equation (3.2)")


def release_pmf(release, rho=None, true_count=1, convention="paper", *, mechanism=None):
    """``P[X1* = x1* | X1 = x1]``: the pmf of the noise ``x1* - x1`` (discrete Gaussian for ρ)."""
    release = as_integers(release, "release")
    truth = as_counts(true_count, "true_count")
    sigma2, mech = resolve(rho, convention, mechanism)
    if mech is None:
        return discrete_gaussian.pmf(release - truth, sigma2)
    return mech.pmf(release - truth)


def decision(
    release,
    prior,
    rho=None,
    known_count=0,
    convention="paper",
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
    rng=None,
) -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss, equation (3.5).

    ``m + 1`` where its posterior is above 1/2, ``m`` where below. A tie
    (posterior exactly 1/2: ``logit(p) = -(2(x1*-m)-1)/(2σ²)``) goes by
    ``tie_rule`` (:mod:`adversary.measures.decision`): to ``m + 1``
    (``"largest"``, the paper's rule), to ``m`` (``"smallest"``), or drawn
    with ``rng`` (``"split"``, which then needs it).
    """
    prior = as_probability(prior, "prior")
    known = as_counts(known_count, "known_count")
    log_odds = special.logit(prior) + log_likelihood_ratio(
        release, rho, known, convention, mechanism=mechanism
    )
    scores = np.stack(np.broadcast_arrays(np.zeros_like(log_odds), log_odds), axis=-1)
    tolerance = tie_tolerance(np.abs(special.logit(prior)))
    step = decide(np.array([0, 1]), scores, tie_rule, rng=rng, tolerance=tolerance)
    return known + step


def _tie_band(prior, sigma2) -> tuple[np.ndarray, np.ndarray]:
    """Integer noise values ``z = x1* - (m+1)`` bounding the tie of (3.5), as floats.

    The decision's log odds are ``(z - t)/σ²`` with ``t = -σ² logit(p) - 1/2``;
    they are tied (within :func:`~adversary.measures.decision.tie_tolerance`)
    for ``first ≤ z ≤ last`` (empty when ``first > last``), above for ``z > last``.
    """
    logit = special.logit(prior)
    threshold = -sigma2 * logit - 0.5
    band = sigma2 * tie_tolerance(np.abs(logit))
    return np.ceil(threshold - band), np.floor(threshold + band)


def _noise_log_ratios(mech: NoiseMechanism, tail_mass: float):
    """The truth's noise table and, at each noise value z, the log likelihood ratio of the
    truth against the other value: ``logpmf(z) - logpmf(z + 1)`` for ``x1 = m + 1`` and
    ``logpmf(z) - logpmf(z - 1)`` for ``x1 = m`` (each in ``(-inf, +inf]``)."""
    table = noise_table(mech, tail_mass)
    z, masses = support_points(table)
    here = mech.logpmf(z)
    return table, masses, log_ratio(here, mech.logpmf(z + 1)), log_ratio(here, mech.logpmf(z - 1))


def correct_decision_probability(
    prior,
    rho=None,
    known_count=0,
    true_count=None,
    convention="paper",
    *,
    mechanism=None,
    tail_mass=DEFAULT_TAIL_MASS,
    tie_rule=DEFAULT_TIE_RULE,
) -> np.ndarray:
    """Probability that the Bayes decision (3.5) equals the truth, equation (3.6).

    For the truth ``x1 = m + 1`` the decision is right when the noise lies
    above the threshold of :func:`_tie_band`; for ``x1 = m`` when the noise
    ``x1* - m`` lies below the threshold plus one. Releases exactly at a
    threshold are ties, counted by ``tie_rule``
    (:mod:`adversary.measures.decision`: half under ``"split"``, for ``m + 1``
    under the paper's ``"largest"``). Exact: discrete Gaussian tails.

    With a ``mechanism`` other than the discrete Gaussian the log odds are not
    linear in the release, so there is no threshold: the noise pmf is summed
    over the noise values (the mechanism's table, :func:`noise_table`)
    weighted by the decision's credit. Exact for bounded noise; otherwise a
    lower bound within the table's ``omitted_mass ≤ tail_mass`` (``tail_mass``
    is used only on this path).
    """
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    check_tie_rule(tie_rule)
    sigma2, mech = resolve(rho, convention, mechanism)
    if mech is not None:
        _, masses, ratio_c, ratio_0 = _noise_log_ratios(mech, tail_mass)
        has_c = truth == known + 1
        logit = special.logit(prior)
        logit, has_c = np.broadcast_arrays(logit, has_c)
        tolerance = tie_tolerance(np.abs(logit)).ravel()[:, None]
        # The log odds of m + 1 at noise z: logit p + ratio_c (truth m + 1), logit p - ratio_0
        # (truth m).
        return expectation_over_table(
            lambda at: binary_credit(
                np.where(
                    has_c.ravel()[:, None],
                    logit.ravel()[:, None] + ratio_c[None, at],
                    logit.ravel()[:, None] - ratio_0[None, at],
                ),
                has_c.ravel()[:, None],
                tie_rule,
                tolerance,
            ),
            masses,
            logit.size,
        ).reshape(logit.shape)
    first, last = _tie_band(prior, sigma2)
    # Saturate far-off thresholds to ±2^62 (probabilities 0 or 1) to keep them integral.
    first, last = (np.clip(x, -(2.0**62), 2.0**62).astype(np.int64) for x in (first, last))
    upper_share = binary_credit(0.0, True, tie_rule)
    sf = discrete_gaussian.sf
    # Truth m + 1: the noise z is above the band, or in it (a tie).
    right_when_has_c = sf(last + 1, sigma2) + upper_share * (
        sf(first, sigma2) - sf(last + 1, sigma2)
    )
    # Truth m: the noise z' = x1* - m = z + 1 is below the band shifted by one, or in it.
    right_when_lacks_c = (1.0 - sf(first + 1, sigma2)) + (1.0 - upper_share) * (
        sf(first + 1, sigma2) - sf(last + 2, sigma2)
    )
    return np.where(truth == known + 1, right_when_has_c, right_when_lacks_c)


def marginal_posterior(
    prior,
    rho=None,
    known_count=0,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    *,
    mechanism=None,
) -> np.ndarray:
    """Posterior of the truth averaged over releases from the truth, equation (3.3).

    ``Σ_{x1*} P[X1* = x1* | X1 = x1] · P[X1 = x1 | x1*]``, summed over the noise
    values within :func:`~adversary.noise.discrete_gaussian.cutoff`; the
    omitted releases carry at most ``tail_mass`` of probability, so the result
    is exact to within ``tail_mass``. By S1.1 it does not depend on ``m``.
    With ``mechanism``: summed over its table (the whole support for bounded
    noise, so exact; else within its ``omitted_mass ≤ tail_mass``).
    """
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    sigma2, mech = resolve(rho, convention, mechanism)
    if mech is not None:
        _, masses, ratio_c, ratio_0 = _noise_log_ratios(mech, tail_mass)
        has_c = truth == known + 1
        offset = np.where(has_c, special.logit(prior), -special.logit(prior))
        offset, has_c = np.broadcast_arrays(offset, has_c)
        return expectation_over_table(
            lambda at: special.expit(
                offset.ravel()[:, None]
                + np.where(has_c.ravel()[:, None], ratio_c[None, at], ratio_0[None, at])
            ),
            masses,
            offset.size,
        ).reshape(offset.shape)
    prior, sigma2, known, truth = np.broadcast_arrays(prior, sigma2, known, truth)
    has_c = truth == known + 1
    # In terms of the noise z = x1* - x1, the log odds of "has c" are
    # logit(p) + (2z + 1)/(2σ²) when x1 = m + 1 and logit(p) + (2z - 1)/(2σ²) when x1 = m.
    shift = np.where(has_c, 1.0, -1.0)
    sign = np.where(has_c, 1.0, -1.0)

    def posterior_of_truth(z, at):
        log_odds = special.logit(prior[at])[:, None] + (2.0 * z + shift[at][:, None]) / (
            2.0 * sigma2[at][:, None]
        )
        return special.expit(sign[at][:, None] * log_odds)

    return expectation_over_noise(posterior_of_truth, sigma2, tail_mass)


marginal_risk = over_prior_of_truth(marginal_posterior, "Marginal disclosure risk, equation (3.4)")


def model(release, prior, rho=None, known_count=0, convention="paper", *, mechanism=None):
    """The single-block attack as a PyMC model: ``X1 ~ BernoulliCount(m, p)``, ``x1* ~ DG(X1)``.

    Its posterior of ``X1`` is (3.1); enumerating or sampling it reproduces
    :func:`posterior`. With a ``mechanism`` other than the discrete Gaussian
    the release is a :func:`~adversary.distributions.NoiseRelease`.
    """
    release = int(as_integers(release, "release"))
    prior = float(as_probability(prior, "prior"))
    known = int(as_counts(known_count, "known_count"))
    import pymc as pm

    from ..distributions import BernoulliCount, DiscreteGaussian
    from ..distributions.noise_release import NoiseRelease

    sigma2, mech = resolve(rho, convention, mechanism)
    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=known, p=prior)
        if mech is None:
            DiscreteGaussian("x1_release", mu=x1, sigma2=float(sigma2), observed=release)
        else:
            NoiseRelease("x1_release", mu=x1, mechanism=mech, observed=release)
    return attack


@dataclass(frozen=True)
class SingleBlockCase(CaseFields):
    """A concrete single-block attack: what the adversary knows and sees, and the truth.

    ``priors`` maps a label (e.g. ``"1/50"``) to the prior probability ``p``
    that the target has the characteristics; ``releases`` are the released
    values ``x1*`` a report tabulates (the paper's Table 4 rows);
    ``observed_release`` is the one release :meth:`model` conditions on.
    ``mechanism``, if given, is the release's noise instead of ``rho`` (which is
    then ``None``) and ``convention``. ``tie_rule`` is how a tied decision
    counts in (3.6) (:mod:`adversary.measures.decision`).
    """

    name: str
    rho: float | None
    priors: dict[str, float]
    known_count: int = 0
    true_count: int | None = None
    convention: str = "paper"
    releases: tuple[int, ...] = (1, 2, 3, 4, 5)
    observed_release: int = 1
    description: str = ""
    cell_counts: tuple[tuple[str, int], ...] = field(default=())
    mechanism: NoiseMechanism | None = None
    tie_rule: str = DEFAULT_TIE_RULE

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        as_probability(list(self.priors.values()), "priors")
        resolve(self.rho, self.convention, self.mechanism)
        _true_count(self.known_count, self.true_count)
        as_integers(list(self.releases), "releases")

    @property
    def truth(self) -> int:
        """The data holder's true count ``x1`` (``m + 1`` unless given)."""
        return int(_true_count(self.known_count, self.true_count)[1])

    @property
    def prior_values(self) -> np.ndarray:
        return np.array(list(self.priors.values()), dtype=np.float64)

    def model(self, prior_label: str | None = None) -> pm.Model:
        """The PyMC model of the attack given ``observed_release``, under one prior."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        return model(
            self.observed_release,
            p,
            self.rho,
            self.known_count,
            self.convention,
            mechanism=self.mechanism,
        )

    def marginal_measures(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the case's truth under one prior; error ≤ ``tail_mass``."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        args = (p, self.rho, self.known_count, self.true_count, self.convention)
        post = float(marginal_posterior(*args, tail_mass=tail_mass, mechanism=self.mechanism))
        prior_of_truth = p if self.truth == self.known_count + 1 else 1.0 - p
        sigma2, mech = resolve(self.rho, self.convention, self.mechanism)
        if mech is None:
            correct = correct_decision_probability(
                *args, mechanism=self.mechanism, tie_rule=self.tie_rule
            )
            omitted, cutoff = tail_mass, int(discrete_gaussian.cutoff(sigma2, tail_mass))
        else:
            correct = correct_decision_probability(
                *args, mechanism=mech, tail_mass=tail_mass, tie_rule=self.tie_rule
            )
            table = noise_table(mech, tail_mass)
            omitted, cutoff = table.omitted_mass, int(max(-table.start, table.support[-1]))
        return MarginalMeasures(
            marginal_posterior=post,
            marginal_risk=post / prior_of_truth,
            correct_decision_probability=float(correct),
            prior_of_truth=prior_of_truth,
            omitted_mass=omitted,
            error_bound=omitted,
            details={"cutoff": cutoff},
            tie_rule=self.tie_rule,
        )
