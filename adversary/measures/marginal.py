"""The data holder's risk measures of one attack under one prior.

For a known truth, the data holder averages the adversary's posterior over
every release the mechanism could produce (Kazan & Reiter (3.3)–(3.4)) and asks
how often the adversary's 0-1 decision (3.5) is right (3.6). Every attack
(:class:`~adversary.measures.protocol.Attack`) returns its measures as
:class:`MarginalMeasures`, however it computes them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np

from .decision import DEFAULT_TIE_RULE

__all__ = ["BoundedMarginals", "MarginalMeasures", "one_measure", "over_prior_of_truth"]


@dataclass(frozen=True)
class MarginalMeasures:
    """Marginal measures of one case under one prior, with how exact they are.

    ``error_bound`` bounds the absolute error of ``marginal_posterior`` and
    ``correct_decision_probability`` (from the release probability the sums
    leave out, ``omitted_mass``, plus any stated numerical approximation), and
    :attr:`risk_error_bound` that of ``marginal_risk``;
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

    @classmethod
    def of_average(cls, posterior_of_truth, correct, prior_of_truth, **rest) -> MarginalMeasures:
        """The measures from the averaged posterior of the truth (3.3) and decision credit (3.6);
        the marginal risk (3.4) is the first over ``prior_of_truth``."""
        return cls(
            marginal_posterior=float(posterior_of_truth),
            marginal_risk=float(posterior_of_truth) / prior_of_truth,
            correct_decision_probability=float(correct),
            prior_of_truth=prior_of_truth,
            **rest,
        )

    @property
    def risk_error_bound(self) -> float:
        """Bound on the absolute error of ``marginal_risk``: the scenario's, else (3.4)'s
        ``error_bound / prior_of_truth``."""
        bound = self.details.get("risk_error_bound")
        return float(self.error_bound / self.prior_of_truth if bound is None else bound)

    def as_dict(self) -> dict:
        """The fields but ``details``, and :attr:`risk_error_bound`, for a table row."""
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "details"}
        return {**row, "risk_error_bound": self.risk_error_bound}


@dataclass(frozen=True)
class BoundedMarginals:
    """A scenario's closed-form marginal measures for a truth, each with an error bound.

    The base of the scenarios' ``marginals`` results (numbers, or arrays over
    the cases they broadcast), which add what their method used.

    Attributes
    ----------
    marginal_posterior, marginal_risk, correct_decision_probability
        (3.3), (3.4) and (3.6) for the truth.
    posterior_error_bound, risk_error_bound, decision_error_bound
        Rigorous bounds on the absolute error of each (before floating-point
        rounding).
    omitted_mass
        Bound on the release probability the sums leave out.
    """

    marginal_posterior: np.ndarray
    marginal_risk: np.ndarray
    correct_decision_probability: np.ndarray
    posterior_error_bound: np.ndarray
    risk_error_bound: np.ndarray
    decision_error_bound: np.ndarray
    omitted_mass: np.ndarray

    @classmethod
    def of_truth(cls, prior_of_truth, posterior, posterior_bound, **rest):
        """The measures from (3.3) and its bound: (3.4) and its bound divide them by the prior."""
        return cls(
            marginal_posterior=posterior,
            marginal_risk=posterior / prior_of_truth,
            posterior_error_bound=posterior_bound,
            risk_error_bound=posterior_bound / prior_of_truth,
            **rest,
        )


def one_measure(marginals: Callable, measure: str, summary: str) -> Callable:
    """A function returning one field of ``marginals(...)``'s result, with its signature.

    Scenarios compute their marginal measures together in one ``marginals``
    function; their public ``marginal_posterior``, ``marginal_risk`` and
    ``correct_decision_probability`` are this, e.g.
    ``marginal_risk = one_measure(marginals, "marginal_risk", "Marginal risk (3.4)")``.
    The docstring is ``summary`` and a pointer to ``marginals`` for the arguments.
    """

    @functools.wraps(marginals)
    def measure_of(*args, **kwargs):
        return getattr(marginals(*args, **kwargs), measure)

    measure_of.__name__ = measure_of.__qualname__ = measure
    del measure_of.__wrapped__  # its signature is the same, but not its return type
    measure_of.__annotations__ = {
        k: v for k, v in marginals.__annotations__.items() if k != "return"
    }
    measure_of.__signature__ = inspect.signature(marginals).replace(
        return_annotation=inspect.Signature.empty
    )
    measure_of.__doc__ = (
        f"{summary}: the ``{measure}`` of :func:`{marginals.__name__}`, whose arguments it takes."
    )
    return measure_of


def over_prior_of_truth(posterior: Callable, summary: str) -> Callable:
    """A function returning ``posterior(...)`` over the prior of the truth, with its signature.

    For the attacks on a count ``X1 ∈ {m, m + 1}`` with prior ``P[X1 = m+1] = p``:
    the prior of the truth is ``p`` when the truth (``true_count``, default
    ``m + 1``) is ``m + 1`` and ``1 - p`` when it is ``m``; ``posterior`` must
    take ``prior`` and ``true_count`` arguments and ``known_count`` (default 0),
    named or among its ``**`` keyword arguments. Its risk (3.2)
    or marginal risk (3.4) is then
    ``risk = over_prior_of_truth(posterior, "Disclosure risk (3.2)")``.
    """
    signature = inspect.signature(posterior)

    @functools.wraps(posterior)
    def ratio(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        for name, parameter in signature.parameters.items():
            if parameter.kind is parameter.VAR_KEYWORD:  # a scenario's **setting
                arguments.update(arguments.pop(name))
        prior = np.asarray(arguments["prior"], dtype=np.float64)
        known = np.asarray(arguments.get("known_count", 0))
        truth = arguments.get("true_count")
        has_c = True if truth is None else np.asarray(truth) == known + 1
        return posterior(*args, **kwargs) / np.where(has_c, prior, 1.0 - prior)

    ratio.__doc__ = (
        f"{summary}: :func:`{posterior.__name__}` over the prior of the truth (``p`` for "
        "the truth ``m + 1``, ``1 - p`` for ``m``); it takes the same arguments."
    )
    del ratio.__wrapped__
    ratio.__signature__ = signature
    return ratio
