"""The exact privacy loss of additive integer noise, its distribution and its Bayesian reading.

A count ``x`` released as ``o = x + Z`` with integer noise ``Z`` of known pmf
``p`` (an :class:`~.integer_noise.IntegerNoise`) is compared with the
neighbouring count ``x - s`` (``s`` = ``shift``, 1 for a count). With
``z = o - x`` the noise value, the *privacy loss* of the output is

    L(z) = log P[M(D) = o] - log P[M(D') = o] = log p(z) - log p(z + s),

and the privacy loss random variable is ``L(Z)`` with ``Z ~ p`` (the output
drawn under D). For the discrete Gaussian ``DG(0, σ²)``,
``L(z) = (2zs + s²)/(2σ²)``, linear in z and unbounded (no pure ε); for the
two-sided geometric ``p(z) ∝ e^{-a|z|}``, ``L(z) = a(|z + s| - |z|)`` lies in
``[-as, as]`` (pure ``as``-DP). :func:`privacy_loss`,
:func:`privacy_loss_distribution` and :func:`max_privacy_loss` work for every
such noise; :func:`exact_empirical_privacy_loss` is the population value of
Petti & Flaxman's estimator (:mod:`.estimator`).

**Bayesian reading.** With prior probability ``π`` on D, an output with
privacy loss L has posterior ``P[D | o] = 1/(1 + (1-π)/π · e^{-L})``
(:func:`posterior_from_privacy_loss`): Kazan & Reiter's (3.1) is this with
``D: X1 = m + 1``, ``D': X1 = m`` and ``z = x1* - m - 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..._validation import _as_real_array, as_integers
from ._checks import _as_integer_shift, _as_percentile, _as_positive_scalar, _as_prior
from .integer_noise import IntegerNoise

__all__ = [
    "PrivacyLossDistribution",
    "exact_empirical_privacy_loss",
    "max_privacy_loss",
    "posterior_from_privacy_loss",
    "privacy_loss",
    "privacy_loss_distribution",
]


def privacy_loss(z, noise: IntegerNoise, shift=1) -> np.ndarray:
    """``L(z) = log p(z) - log p(z + s)``: Petti & Flaxman's EPL(x), computed exactly.

    The output ``o = x + z`` of D (count x) against D' (count ``x - s``). ``+inf``
    where only D can produce the output, ``-inf`` where only D' can; ``z``
    impossible under both raises. For ``DG(0, σ²)`` this is ``(2zs + s²)/(2σ²)``.
    """
    shift = _as_integer_shift(shift)
    z = as_integers(z, "z")
    log_d = noise.logpmf(z)
    log_d_prime = noise.logpmf(z + shift)
    if np.any(np.isneginf(log_d) & np.isneginf(log_d_prime)):
        raise ValueError(f"z must be possible under D or D', got {z!r}")
    with np.errstate(invalid="ignore"):
        loss = log_d - log_d_prime
    return np.where(np.isneginf(log_d_prime), np.inf, np.where(np.isneginf(log_d), -np.inf, loss))


@dataclass(frozen=True)
class PrivacyLossDistribution:
    """The privacy loss random variable ``L(Z)``, ``Z ~ p``, tabulated on the window.

    ``z`` are the window's noise values with positive probability,
    ``loss = L(z)`` and ``probability = p(z)``; ``omitted_mass`` bounds the
    probability left out (every expectation below is off by at most that
    times the largest integrand on the omitted points).
    """

    z: np.ndarray
    loss: np.ndarray
    probability: np.ndarray
    omitted_mass: float
    shift: int

    def mean(self) -> float:
        """``E[L] = KL(M(D) ‖ M(D'))``; for ``DG(0, σ²)`` exactly ``s²/(2σ²)``."""
        finite = np.isfinite(self.loss)
        if np.any(~finite & (self.probability > 0)):
            return math.inf
        return float(self.loss @ self.probability / self.probability.sum())

    def variance(self) -> float:
        mean = self.mean()
        if not math.isfinite(mean):
            return math.nan
        return float((self.loss - mean) ** 2 @ self.probability / self.probability.sum())

    def maximum(self) -> float:
        """``max L`` over the window (the pure-DP ε of the pair when the window is the support)."""
        return float(np.max(self.loss))

    def delta(self, epsilon) -> np.ndarray:
        """``δ(ε) = E[(1 - e^{ε - L})₊] = Σ_o (P[M(D)=o] - e^ε P[M(D')=o])₊``.

        The smallest δ with which this pair of neighbours satisfies
        ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ`` for every S (the hockey-stick
        divergence), summed from the smallest terms; off by at most
        ``omitted_mass``. ``epsilon`` must be >= 0.
        """
        eps = _as_real_array(epsilon, "epsilon").astype(np.float64)
        if not np.all(np.isfinite(eps)) or np.any(eps < 0):
            raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
        with np.errstate(over="ignore"):
            gap = -np.expm1(eps[..., None] - self.loss)  # 1 - e^{ε - L}
        terms = np.where(gap > 0, gap, 0.0) * self.probability
        return np.sort(terms, axis=-1).sum(axis=-1)


def privacy_loss_distribution(noise: IntegerNoise, shift=1) -> PrivacyLossDistribution:
    """The exact distribution of ``L(Z)``, ``Z ~ p``, on ``noise``'s window."""
    shift = _as_integer_shift(shift)
    z, probabilities = noise._table()
    keep = probabilities > 0
    z = z[keep]
    loss = privacy_loss(z, noise, shift)
    return PrivacyLossDistribution(z, loss, probabilities[keep], noise.omitted_mass, shift)


def max_privacy_loss(noise: IntegerNoise, lower, upper, shift=1) -> tuple[float, int]:
    """``max |L(z)|`` over the integers ``lower ≤ z ≤ upper``, and a maximising z.

    The exact counterpart of Petti & Flaxman's ``EPL = max_x |EPL(x)|`` over
    an evaluation range. Points impossible under both D and D' are skipped.
    """
    lower, upper = int(as_integers(lower, "lower")), int(as_integers(upper, "upper"))
    if upper < lower:
        raise ValueError(f"upper must be >= lower, got lower={lower}, upper={upper}")
    shift = _as_integer_shift(shift)
    z = np.arange(lower, upper + 1, dtype=np.int64)
    possible = np.isfinite(noise.logpmf(z)) | np.isfinite(noise.logpmf(z + shift))
    if not np.any(possible):
        raise ValueError(f"lower..upper holds no output possible under D or D': {lower}..{upper}")
    z = z[possible]
    magnitude = np.abs(privacy_loss(z, noise, shift))
    at = int(np.argmax(magnitude))
    return float(magnitude[at]), int(z[at])


def exact_empirical_privacy_loss(
    noise: IntegerNoise, range_percentile=95.0, range_multiplier=1.0, shift=1
) -> tuple[float, int, float]:
    """The population version of :func:`~.estimator.empirical_privacy_loss`'s target.

    ``B = multiplier · max(|Q(1 - q/100)|, |Q(q/100)|)`` with ``Q`` the noise's
    lower quantile (:meth:`~.integer_noise.IntegerNoise.quantile`), then
    :func:`max_privacy_loss` over the integers z with ``-B ≤ z`` and
    ``z + s ≤ B`` (both outputs compared lie in the range, as in the
    estimator). Returns ``(max |L|, argmax z, B)``.
    """
    q = _as_percentile(range_percentile, "range_percentile") / 100.0
    multiplier = _as_positive_scalar(range_multiplier, "range_multiplier")
    shift = _as_integer_shift(shift)
    bound = multiplier * float(np.max(np.abs(noise.quantile([1.0 - q, q]))))
    lower, upper = math.ceil(-bound), math.floor(bound) - shift
    if upper < lower:
        raise ValueError(
            f"range_percentile/range_multiplier give the range ±{bound:g}, narrower than one shift"
        )
    value, at = max_privacy_loss(noise, lower, upper, shift)
    return value, at, bound


def posterior_from_privacy_loss(loss, prior) -> np.ndarray:
    """``P[D | o] = expit(logit π + L)``: prior ``π`` on D, privacy loss L of the output.

    Posterior odds are prior odds times ``e^L``. Kazan & Reiter's posterior
    (3.1) is this with D: ``X1 = m + 1`` and L the loss at ``z = x1* - m - 1``;
    their risk (3.2) is the result divided by ``π``.
    """
    loss = _as_real_array(loss, "loss").astype(np.float64)
    if np.any(np.isnan(loss)):
        raise ValueError(f"loss must not be NaN, got {loss!r}")
    prior = _as_prior(prior)
    return special.expit(special.logit(prior) + loss)
