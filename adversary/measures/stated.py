"""An attack model with the data holder's statements checked, ready for its measures.

Both routes to the data holder's measures of a PyMC attack model — exact over
a release grid (:func:`~adversary.measures.exact.exact_measures`) and by
simulation (:func:`~adversary.measures.monte_carlo.monte_carlo_measures`) —
check the same statements (:mod:`~adversary.measures.attack_model`), compute
the prior of the event the same way, and score the adversary's decision with
the one rule of :mod:`~adversary.measures.decision`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._validation import as_probability
from .attack_model import (
    check_releases_drawable,
    is_discrete,
    label_value,
    validated_event,
    validated_target,
    validated_truth,
)
from .decision import check_tie_rule, truth_credit
from .prior_of_event import prior_of_event

__all__ = ["StatedAttack", "Statements", "decision_credit", "risk_error", "state_attack"]


class Statements(NamedTuple):
    """What the data holder states about an attack model (checked by :func:`state_attack`).

    ``truth`` (the true values), ``event`` (what the adversary is after),
    ``target`` (the latent decided), ``prior_of_truth`` (``None``: computed)
    and ``tie_rule`` (how a tied decision counts in (3.6)).
    """

    truth: object
    event: object
    target: object
    prior_of_truth: object
    tie_rule: str


@dataclass(frozen=True)
class StatedAttack:
    """A model, its validated truth, target, event and the prior probability of the event.

    ``prior_details`` says how the prior was found (exact, drawn, or given)
    and its ``standard_error`` (0 unless drawn).
    """

    model: object
    truth: dict
    target: str
    event: Mapping | Callable
    true_target: int
    prior_of_truth: float
    tie_rule: str
    prior_details: dict = field(default_factory=dict)

    @property
    def prior_standard_error(self) -> float:
        return float(self.prior_details.get("standard_error", 0.0))


def state_attack(
    model,
    statements: Statements,
    tail_mass,
    max_cells,
    compile_kwargs=None,
    random_seed=None,
    discrete_only: str | None = None,
) -> StatedAttack:
    """Check the ``statements`` and find the prior of the event (see :class:`StatedAttack`).

    ``discrete_only``, when given, refuses a model with continuous latents with
    that advice (a path that enumerates latents).
    """
    truth, event, target, prior_of_truth, tie_rule = statements
    tie_rule = check_tie_rule(tie_rule)
    if prior_of_truth is not None:
        prior_of_truth = float(prior_of_truth)
        if not 0 < prior_of_truth <= 1:
            raise ValueError(f"prior_of_truth must be in (0, 1], got {prior_of_truth!r}")
    if not model.free_RVs:
        raise ValueError("model: has no free (latent) variables")
    continuous = [rv.name for rv in model.free_RVs if not is_discrete(rv)]
    if discrete_only is not None and continuous:
        raise TypeError(f"model: has continuous latents {continuous}; {discrete_only}")
    check_releases_drawable(model)
    truth = validated_truth(model, truth)
    target = validated_target(model, truth, target)
    event = validated_event(model, truth, event, target)
    details = {"method": "given", "standard_error": 0.0}
    if prior_of_truth is None:
        details = prior_of_event(
            model,
            truth,
            event,
            tail_mass=float(as_probability(tail_mass, "tail_mass")),
            max_cells=max_cells,
            compile_kwargs=compile_kwargs,
            random_seed=random_seed,
        )
        prior_of_truth = details.pop("prior_of_truth")
        if not prior_of_truth > 0:
            raise ValueError(
                "event: has prior probability 0, so its marginal risk (3.4) is undefined"
            )
    return StatedAttack(
        model=model,
        truth=truth,
        target=target,
        event=event,
        true_target=int(label_value(truth, target)),
        prior_of_truth=prior_of_truth,
        tie_rule=tie_rule,
        prior_details=details,
    )


def decision_credit(pmf: np.ndarray, values: np.ndarray, true_value: int, tie_rule: str):
    """(3.6)'s count per row of target pmfs ``(n, len(values))``: the rule's credit of the truth.

    A truth outside ``values`` has posterior 0 and is never decided: credit 0.
    """
    where = np.flatnonzero(np.asarray(values) == true_value)
    if where.size == 0:
        return np.zeros(len(pmf))
    with np.errstate(divide="ignore"):
        log_pmf = np.log(np.asarray(pmf, dtype=np.float64))
    return truth_credit(log_pmf, int(where[0]), tie_rule)


def risk_error(posterior_error: float, prior: float, prior_error: float) -> float:
    """A bound on the error of posterior/prior from bounds on both (first order in each)."""
    if prior_error == 0:
        return posterior_error / prior
    low = max(prior - prior_error, math.ulp(prior))
    return posterior_error / low + prior_error / (prior * low)
