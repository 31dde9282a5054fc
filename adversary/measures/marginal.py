"""The data holder's risk measures of one attack under one prior.

For a known truth, the data holder averages the adversary's posterior over
every release the mechanism could produce (Kazan & Reiter (3.3)–(3.4)) and asks
how often the adversary's 0-1 decision (3.5) is right (3.6). Every attack
(:class:`~adversary.measures.protocol.Attack`) returns its measures as
:class:`MarginalMeasures`, however it computes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .decision import DEFAULT_TIE_RULE

__all__ = ["MarginalMeasures"]


@dataclass(frozen=True)
class MarginalMeasures:
    """Marginal measures of one case under one prior, with how exact they are.

    ``error_bound`` bounds the absolute error of ``marginal_posterior`` and
    ``correct_decision_probability`` (from the release probability the sums
    leave out, ``omitted_mass``, plus any stated numerical approximation);
    ``details`` holds scenario-specific extras (e.g. the cut-offs used);
    ``tie_rule`` is how (3.6) counted tied decisions
    (:mod:`~adversary.measures.decision`).
    """

    marginal_posterior: float
    marginal_risk: float
    correct_decision_probability: float
    prior_of_truth: float
    omitted_mass: float
    error_bound: float
    method: str = "exact"
    details: dict = field(default_factory=dict)
    tie_rule: str = DEFAULT_TIE_RULE

    def as_dict(self) -> dict:
        return {
            "marginal_posterior": self.marginal_posterior,
            "marginal_risk": self.marginal_risk,
            "correct_decision_probability": self.correct_decision_probability,
            "prior_of_truth": self.prior_of_truth,
            "omitted_mass": self.omitted_mass,
            "error_bound": self.error_bound,
            "method": self.method,
            "tie_rule": self.tie_rule,
        }
