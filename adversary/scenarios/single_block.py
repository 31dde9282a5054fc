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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pymc as pm
from scipy import special

from .._validation import as_counts, as_integers, as_probability
from ..distributions import BernoulliCount, DiscreteGaussian
from ..noise import discrete_gaussian, noise_variance
from ..risk.measures import MarginalMeasures
from ..risk.releases import DEFAULT_TAIL_MASS, expectation_over_noise

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


def log_likelihood_ratio(release, rho, known_count=0, convention="paper") -> np.ndarray:
    """``log P[X1* = x1* | X1 = m+1] - log P[X1* = x1* | X1 = m] = (2(x1* - m) - 1)/(2σ²)``."""
    release = as_integers(release, "release")
    known = as_counts(known_count, "known_count")
    sigma2 = noise_variance(rho, convention)
    return (2.0 * (release - known).astype(np.float64) - 1.0) / (2.0 * sigma2)


def _log_odds_of_truth(release, prior, rho, known_count, true_count, convention):
    """Posterior log odds of ``X1 = x1`` (the truth) against the other value, and its prior."""
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    has_c = truth == known + 1
    log_odds_c = special.logit(prior) + log_likelihood_ratio(release, rho, known, convention)
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    return np.where(has_c, log_odds_c, -log_odds_c), prior_of_truth


def posterior(
    release, prior, rho, known_count=0, true_count=None, convention="paper"
) -> np.ndarray:
    """Posterior probability of the truth given the release, equation (3.1).

    With the default truth ``x1 = m + 1``: ``p e^{-ρ(x1*-x1)²} / (p e^{-ρ(x1*-x1)²}
    + (1-p) e^{-ρ(x1*-m)²})`` in the paper's convention, computed as the logistic
    function of the posterior log odds (no overflow for any ρ or count).
    """
    log_odds, _ = _log_odds_of_truth(release, prior, rho, known_count, true_count, convention)
    return special.expit(log_odds)


def risk(release, prior, rho, known_count=0, true_count=None, convention="paper") -> np.ndarray:
    """Disclosure risk, equation (3.2): the posterior (3.1) of the truth over its prior."""
    log_odds, prior_of_truth = _log_odds_of_truth(
        release, prior, rho, known_count, true_count, convention
    )
    return special.expit(log_odds) / prior_of_truth


def release_pmf(release, rho, true_count=1, convention="paper") -> np.ndarray:
    """``P[X1* = x1* | X1 = x1]``: the discrete Gaussian pmf of the noise ``x1* - x1``."""
    release = as_integers(release, "release")
    truth = as_counts(true_count, "true_count")
    return discrete_gaussian.pmf(release - truth, noise_variance(rho, convention))


def decision(release, prior, rho, known_count=0, convention="paper") -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss, equation (3.5).

    ``m + 1`` where its posterior is at least 1/2, else ``m`` (a tie, which
    needs ``logit(p) = -(2(x1*-m)-1)/(2σ²)`` exactly, goes to ``m + 1``).
    """
    prior = as_probability(prior, "prior")
    known = as_counts(known_count, "known_count")
    log_odds = special.logit(prior) + log_likelihood_ratio(release, rho, known, convention)
    return known + (log_odds >= 0).astype(np.int64)


def _decision_threshold(prior, sigma2) -> np.ndarray:
    """Smallest noise value ``z = x1* - (m+1)`` at which (3.5) decides ``m + 1``.

    The decision is ``m + 1`` iff ``logit(p) + (2z + 1)/(2σ²) ≥ 0``, i.e.
    ``z ≥ -σ² logit(p) - 1/2``.
    """
    return np.ceil(-sigma2 * special.logit(prior) - 0.5)


def correct_decision_probability(
    prior, rho, known_count=0, true_count=None, convention="paper"
) -> np.ndarray:
    """Probability that the Bayes decision (3.5) equals the truth, equation (3.6).

    For the truth ``x1 = m + 1`` this is ``P[Z ≥ z0]`` with ``z0`` the decision
    threshold on the noise; for ``x1 = m`` the adversary is right iff the
    noise ``x1* - m`` lies below ``z0 + 1``. Exact: a discrete Gaussian tail.
    """
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    sigma2 = noise_variance(rho, convention)
    threshold = _decision_threshold(prior, sigma2)
    # Saturate far-off thresholds to ±2^62 (probabilities 0 or 1) to keep them integral.
    threshold = np.clip(threshold, -(2.0**62), 2.0**62).astype(np.int64)
    upper_tail = discrete_gaussian.sf(threshold, sigma2)
    right_when_has_c = upper_tail
    right_when_lacks_c = 1.0 - discrete_gaussian.sf(threshold + 1, sigma2)
    return np.where(truth == known + 1, right_when_has_c, right_when_lacks_c)


def marginal_posterior(
    prior, rho, known_count=0, true_count=None, convention="paper", tail_mass=DEFAULT_TAIL_MASS
) -> np.ndarray:
    """Posterior of the truth averaged over releases from the truth, equation (3.3).

    ``Σ_{x1*} P[X1* = x1* | X1 = x1] · P[X1 = x1 | x1*]``, summed over the noise
    values within :func:`~adversary.noise.discrete_gaussian.cutoff`; the
    omitted releases carry at most ``tail_mass`` of probability, so the result
    is exact to within ``tail_mass``. By S1.1 it does not depend on ``m``.
    """
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    sigma2 = noise_variance(rho, convention)
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


def marginal_risk(
    prior, rho, known_count=0, true_count=None, convention="paper", tail_mass=DEFAULT_TAIL_MASS
) -> np.ndarray:
    """Marginal disclosure risk, equation (3.4): (3.3) over the prior of the truth."""
    prior = as_probability(prior, "prior")
    known, truth = _true_count(known_count, true_count)
    prior_of_truth = np.where(truth == known + 1, prior, 1.0 - prior)
    return (
        marginal_posterior(prior, rho, known_count, true_count, convention, tail_mass)
        / prior_of_truth
    )


def model(release, prior, rho, known_count=0, convention="paper") -> pm.Model:
    """The single-block attack as a PyMC model: ``X1 ~ BernoulliCount(m, p)``, ``x1* ~ DG(X1)``.

    Its posterior of ``X1`` is (3.1); enumerating or sampling it reproduces
    :func:`posterior`.
    """
    release = int(as_integers(release, "release"))
    prior = float(as_probability(prior, "prior"))
    known = int(as_counts(known_count, "known_count"))
    sigma2 = float(noise_variance(rho, convention).item())
    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=known, p=prior)
        DiscreteGaussian("x1_release", mu=x1, sigma2=sigma2, observed=release)
    return attack


@dataclass(frozen=True)
class SingleBlockCase:
    """A concrete single-block attack: what the adversary knows and sees, and the truth.

    ``priors`` maps a label (e.g. ``"1/50"``) to the prior probability ``p``
    that the target has the characteristics; ``releases`` are the released
    values ``x1*`` a report tabulates (the paper's Table 4 rows);
    ``observed_release`` is the one release :meth:`model` conditions on.
    """

    name: str
    rho: float
    priors: dict[str, float]
    known_count: int = 0
    true_count: int | None = None
    convention: str = "paper"
    releases: tuple[int, ...] = (1, 2, 3, 4, 5)
    observed_release: int = 1
    description: str = ""
    cell_counts: tuple[tuple[str, int], ...] = field(default=())

    def __post_init__(self):
        as_probability(list(self.priors.values()), "priors")
        noise_variance(self.rho, self.convention)
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
        p = self.priors[_prior_label(self.priors, prior_label)]
        return model(self.observed_release, p, self.rho, self.known_count, self.convention)

    def marginal_measures(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the case's truth under one prior; error ≤ ``tail_mass``."""
        p = self.priors[_prior_label(self.priors, prior_label)]
        args = (p, self.rho, self.known_count, self.true_count, self.convention)
        post = float(marginal_posterior(*args, tail_mass=tail_mass))
        prior_of_truth = p if self.truth == self.known_count + 1 else 1.0 - p
        return MarginalMeasures(
            marginal_posterior=post,
            marginal_risk=post / prior_of_truth,
            correct_decision_probability=float(correct_decision_probability(*args)),
            prior_of_truth=prior_of_truth,
            omitted_mass=tail_mass,
            error_bound=tail_mass,
            details={
                "cutoff": int(
                    discrete_gaussian.cutoff(noise_variance(self.rho, self.convention), tail_mass)
                )
            },
        )


def _prior_label(priors: dict, label: str | None) -> str:
    """``label`` checked against ``priors`` (default: the first)."""
    if label is None:
        return next(iter(priors))
    if label not in priors:
        raise ValueError(f"prior must be one of {', '.join(priors)}; got {label!r}")
    return label
