"""The attack protocol: what every attack offers, shipped with the package or written by a user.

An attack is what the adversary knows and sees, and what the data holder
knows is true. Every analysis of the package (the exact or sampled
posterior, the data holder's measures, prior comparisons, sweeps, choosing
ρ, the command line) works on any object with these members:

``name``
    a label for reports;
``priors``
    ``{label: prior}``: the adversary's priors to compare, in the form the
    attack takes them (a probability ``p``, a vector over categories, …);
``tie_rule``
    how tied Bayes decisions count in (3.6) (:mod:`~adversary.measures.decision`);
``target``
    the latent scalar the adversary decides on (3.5), e.g. ``"X1"``;
``true_latents``
    ``{latent: true value}`` for the latents of :meth:`~Attack.model` whose
    truth the data holder knows — at least the target — or ``None`` when the
    truth is unknown;
``model(prior_label=None)``
    the adversary's PyMC model under one prior: its free variables are what
    the adversary does not know, its observed variables the releases;
``marginal_measures(prior_label=None)``
    the data holder's measures (3.3), (3.4), (3.6) for the truth
    (:class:`~adversary.measures.marginal.MarginalMeasures`);
``parameters()`` and ``replace(**changes)``
    the attack's parameters that can be varied (ρ, releases, the truth, …)
    and a copy with some of them (or its ``priors``) changed.

The shipped scenarios' cases are frozen dataclasses whose fields are their
parameters (:class:`CaseFields`), with closed forms as the fast path of
``marginal_measures``; a user's PyMC model factory becomes an attack with
:func:`adversary.attack` (:class:`~adversary.scenarios.user_attack.ModelAttack`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from .marginal import MarginalMeasures

__all__ = [
    "NOT_PARAMETERS",
    "Attack",
    "CaseFields",
    "assignments",
    "prior_label",
    "true_target_value",
]

#: Fields of a case that are not parameters: labels, and the priors (which have a
#: dimension of their own in every analysis).
NOT_PARAMETERS = ("name", "description", "priors")


@runtime_checkable
class Attack(Protocol):
    """What every attack offers (module docstring)."""

    name: str
    priors: Mapping[str, object]
    tie_rule: str

    @property
    def target(self) -> str:
        """The latent scalar of the decision (3.5)."""

    @property
    def true_latents(self) -> Mapping | None:
        """``{latent: true value}`` the data holder knows (at least the target), or ``None``."""

    def model(self, prior_label: str | None = None):
        """The adversary's PyMC model given the attack's observed releases, under one prior."""

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """The data holder's measures (3.3), (3.4), (3.6) for the attack's truth."""

    def parameters(self) -> dict[str, object]:
        """``{name: value}`` of the parameters a sweep may vary."""

    def replace(self, **changes) -> Attack:
        """The attack with some parameters (or ``priors``) changed."""


class CaseFields:
    """:meth:`parameters`, :meth:`replace` and the default target of a frozen-dataclass attack.

    Its parameters are its fields except :data:`NOT_PARAMETERS`; ``replace``
    takes those and ``priors``, refuses any other name, naming the parameters
    there are, and lets the case check the new values (``__post_init__``).
    The target is the target's count ``X1`` and :attr:`true_latents` is
    ``{"X1": case.truth}`` unless the case says otherwise.
    """

    #: The latent of the decision (3.5).
    target = "X1"

    @property
    def true_latents(self) -> dict[str, int]:
        """``{target: truth}``: the truth of the model's decided latent."""
        return {self.target: int(self.truth)}

    def parameters(self) -> dict[str, object]:
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in NOT_PARAMETERS
        }

    def replace(self, **changes):
        known = self.parameters()
        for name in changes:
            if name not in known and name != "priors":
                raise ValueError(
                    f"{name!r} is not a parameter of {type(self).__name__}; have {', '.join(known)}"
                )
        return dataclasses.replace(self, **changes)


def assignments(changes: Mapping[str, object]) -> str:
    """``name=value, …`` of parameter values, as an error names the ones at fault."""
    return ", ".join(f"{name}={value!r}" for name, value in changes.items())


def prior_label(priors, label: str | None) -> str:
    """``label`` checked against an attack's labelled ``priors`` (default: the first label)."""
    if label is None:
        return next(iter(priors))
    if label not in priors:
        raise ValueError(f"prior must be one of {', '.join(priors)}; got {label!r}")
    return label


def true_target_value(attack) -> int | None:
    """The data holder's true value of the attack's target, or ``None`` when unknown.

    The target is a latent name or an element label ``"name[i]"``.
    """
    truth = attack.true_latents
    if truth is None:
        return None
    target = attack.target
    if target in truth:
        return int(np.asarray(truth[target]))
    name, _, index = target.partition("[")
    if name not in truth or not index:
        return None
    position = tuple(int(i) for i in index.rstrip("]").split(","))
    return int(np.asarray(truth[name])[position])
