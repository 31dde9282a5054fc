"""A concrete S6 attack: :class:`PostProcessingCase`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.noise import resolve
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise.mechanisms import NoiseMechanism
from .data_holder import marginals
from .release_noise import mechanism_tables, release_noise
from .releases import attack_setting
from .rule import scalar_count
from .scores import posterior, true_count_of

__all__ = ["PostProcessingCase"]


@dataclass(frozen=True)
class PostProcessingCase(CaseFields):
    """A concrete S6 attack: the post-processed release seen, priors held, and the truth.

    Implements :class:`~adversary.measures.protocol.Attack`. ``rho`` is the
    block counts' ρ (``convention`` gives σ²); ``d`` the other blocks of the
    block group; ``x2`` the block-group count the adversary knows; ``x2_tilde``
    the post-processed block-group count; ``priors`` maps a label to
    ``p = P[X1 = m + 1]``; ``true_count`` is the data holder's ``x1``
    (default ``m + 1``); ``exact_sum`` the noise model of ``y1*`` (the
    approximation (3.7) by default). ``observed_x1_tilde`` is the
    post-processed block count :meth:`model` and :meth:`posterior` condition
    on (``None``: none stated). It must lie in ``0 … x̃2``; that is checked
    where it is used, so a sweep of ``x2_tilde`` over a case works for the
    marginal measures, which do not depend on it. ``mechanism``, if given, is
    the noise of the block counts instead of ``rho`` (then ``None``) and
    ``convention``; ``exact_sum`` defaults to false for discrete Gaussians and
    true otherwise. ``tie_rule`` is how a tied decision counts in (3.6)
    (:mod:`adversary.measures.decision`).
    """

    name: str
    rho: float | None
    priors: dict[str, float]
    d: int
    x2: int
    x2_tilde: int
    observed_x1_tilde: int | None = None
    known_count: int = 0
    true_count: int | None = None
    convention: str = "paper"
    exact_sum: bool | None = None
    description: str = ""
    mechanism: NoiseMechanism | None = None
    tie_rule: str = DEFAULT_TIE_RULE

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        attack_setting(d=self.d, x2=self.x2, x2_tilde=self.x2_tilde, known_count=self.known_count)
        true_count_of(int(self.known_count), self.true_count)
        if self.rho is not None and np.ndim(self.rho) != 0:
            raise ValueError(f"rho must be a single number, got {self.rho!r}")
        exact_sum = release_noise(self.rho, self.convention, self.mechanism, self.exact_sum)[2]
        object.__setattr__(self, "exact_sum", exact_sum)
        if not self.priors:
            raise ValueError("priors must map at least one label to a prior probability")
        as_probability(list(self.priors.values()), "priors")
        if self.observed_x1_tilde is not None:
            scalar_count(self.observed_x1_tilde, "observed_x1_tilde")

    @property
    def truth(self) -> int:
        """The data holder's true block count ``x1`` (``m + 1`` unless given)."""
        return int(true_count_of(int(self.known_count), self.true_count))

    def _prior(self, prior_label: str | None) -> float:
        return float(self.priors[prior_label_of(self.priors, prior_label)])

    def _scenario(self) -> dict:
        return {
            "d": self.d,
            "x2": self.x2,
            "x2_tilde": self.x2_tilde,
            "known_count": self.known_count,
            "convention": self.convention,
            "mechanism": self.mechanism,
        }

    def _observed(self) -> int:
        if self.observed_x1_tilde is None:
            raise ValueError(
                "observed_x1_tilde: the case states no post-processed release to condition on"
            )
        value = int(self.observed_x1_tilde)
        if value > self.x2_tilde:
            raise ValueError(
                f"observed_x1_tilde must lie in 0..x2_tilde (= {self.x2_tilde}), got {value}"
            )
        return value

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given ``observed_x1_tilde``, under one prior.

        Only the approximation (3.7) is modelled for the discrete Gaussian: such
        a case with ``exact_sum`` set raises (other noise is modelled with the
        exact sum). Enumerating it needs stated ranges for the noisy counts
        (:meth:`enumeration_ranges`).
        """
        from .pymc_model import model  # PyMC: imported when a model is built

        gaussian = resolve(self.rho, self.convention, self.mechanism)[1] is None
        if self.exact_sum and gaussian:
            raise ValueError(
                "exact_sum: the PyMC model uses the approximation (3.7) only; use the exact "
                "functions (posterior, marginal_measures) for the exact sum"
            )
        return model(self._observed(), self._prior(prior_label), self.rho, **self._scenario())

    def enumeration_ranges(self, sds: float = 12.0) -> dict[str, tuple[int, int]]:
        """Ranges of the model's ``x1_star`` and ``y1_star`` for
        :func:`adversary.inference.enumerate_posterior`: ``sds`` standard deviations beyond
        both hypotheses' centres (12 leave out less than ``e^{-70}`` of each noise).
        """
        m = int(self.known_count)
        sigma2, mech = resolve(self.rho, self.convention, self.mechanism)
        if mech is not None:  # the tables' reach (the whole support of bounded noise)
            z, w = mechanism_tables(self.d, mech, DEFAULT_TAIL_MASS)
            a = int(z.support[-1]) + 1
            return {
                "x1_star": (m - a, m + 1 + a),
                "y1_star": (self.x2 - m - 1 + int(w.start), self.x2 - m + int(w.support[-1])),
            }
        sigma = float(np.sqrt(sigma2))
        a = int(sds * sigma) + 2
        b = int(sds * sigma * np.sqrt(self.d)) + 2
        return {
            "x1_star": (m - a, m + 1 + a),
            "y1_star": (self.x2 - m - 1 - b, self.x2 - m + b),
        }

    def posterior(self, prior_label: str | None = None) -> float:
        """The adversary's posterior (S6.7) of the truth given ``observed_x1_tilde``."""
        return float(
            posterior(
                self._observed(),
                self._prior(prior_label),
                self.rho,
                true_count=self.true_count,
                exact_sum=self.exact_sum,
                **self._scenario(),
            )
        )

    def marginal_measures(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> MarginalMeasures:
        """(S6.8), its risk and the correct-decision probability, from :func:`marginals`.

        ``omitted_mass`` bounds the noise probability the tables leave out;
        ``error_bound`` is the larger of the marginal posterior's and the
        decision probability's bounds; the risk's bound and the rest are in
        ``details``.
        """
        p = self._prior(prior_label)
        result = marginals(
            p,
            self.rho,
            true_count=self.true_count,
            exact_sum=self.exact_sum,
            tail_mass=tail_mass,
            tie_rule=self.tie_rule,
            **self._scenario(),
        )
        return MarginalMeasures(
            marginal_posterior=float(result.marginal_posterior),
            marginal_risk=float(result.marginal_risk),
            correct_decision_probability=float(result.correct_decision_probability),
            prior_of_truth=p if self.truth == int(self.known_count) + 1 else 1.0 - p,
            omitted_mass=float(result.omitted_mass),
            error_bound=float(max(result.posterior_error_bound, result.decision_error_bound)),
            details={
                "posterior_error_bound": float(result.posterior_error_bound),
                "risk_error_bound": float(result.risk_error_bound),
                "decision_error_bound": float(result.decision_error_bound),
                "x2_tilde": int(self.x2_tilde),
                "exact_sum": bool(self.exact_sum),
            },
            tie_rule=self.tie_rule,
        )
