"""The data holder's risk measures of a case, and the interface every case offers.

For a known truth, the data holder averages the adversary's posterior over
every release the mechanism could produce (Kazan & Reiter (3.3)–(3.4)) and asks
how often the adversary's 0-1 decision (3.5) is right (3.6). Every scenario's
case class (:class:`~adversary.scenarios.single_block.SingleBlockCase`, …)
implements :class:`RiskCase`, so sweeps, comparisons and the command line
treat all scenarios alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["MarginalMeasures", "RiskCase", "prior_label"]


@dataclass(frozen=True)
class MarginalMeasures:
    """Marginal measures of one case under one prior, with how exact they are.

    ``error_bound`` bounds the absolute error of ``marginal_posterior`` and
    ``correct_decision_probability`` (from the release probability the sums
    leave out, ``omitted_mass``, plus any stated numerical approximation);
    ``details`` holds scenario-specific extras (e.g. the cut-offs used).
    """

    marginal_posterior: float
    marginal_risk: float
    correct_decision_probability: float
    prior_of_truth: float
    omitted_mass: float
    error_bound: float
    method: str = "exact"
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "marginal_posterior": self.marginal_posterior,
            "marginal_risk": self.marginal_risk,
            "correct_decision_probability": self.correct_decision_probability,
            "prior_of_truth": self.prior_of_truth,
            "omitted_mass": self.omitted_mass,
            "error_bound": self.error_bound,
            "method": self.method,
        }


@runtime_checkable
class RiskCase(Protocol):
    """What a scenario's case offers: a name, labelled priors, a model and its measures.

    Cases are frozen dataclasses; a sweep varies a field with
    :func:`dataclasses.replace`.
    """

    name: str
    priors: dict[str, float]

    def model(self, prior_label: str | None = None):
        """The adversary's PyMC model given the case's observed releases."""

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """The data holder's measures (3.3), (3.4), (3.6) for the case's truth."""


def prior_label(priors, label: str | None) -> str:
    """``label`` checked against a case's labelled ``priors`` (default: the first label)."""
    if label is None:
        return next(iter(priors))
    if label not in priors:
        raise ValueError(f"prior must be one of {', '.join(priors)}; got {label!r}")
    return label
