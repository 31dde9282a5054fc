"""The largest total ρ at which one attack stays within the limits, the allocation's shares kept.

:func:`binding_rho` scales an allocation (every share kept, ``rho_total``
varied) and asks :func:`adversary.analyses.choose_rho.choose_rho` — its scan
over a lattice of ρ, its conservative comparisons (value + error bound) and
its guarantee (the limit holds at every evaluated total ρ up to the answer,
and is broken one lattice step above) — for the largest total ρ keeping

- the marginal risk (3.4) at or below ``r*(p)`` for each prior ``p`` (one
  scan per prior, whose threshold is its own; the answer is the smallest), and
- the probability of a correct decision (3.6) at or below ``correct_bound``
  for every prior (one scan).

The attack is one of :data:`~.cases.PRIOR_ATTACKS` (the reconstruction
attack's share is not a measure choose_rho scans). The searched range is
``[rho_min, rho_max]`` of the **total** ρ; a prior whose limit is at least
``1 / (prior of the truth)`` — a ratio the marginal risk can never reach —
does not bind. Each lattice point costs one evaluation of the attack's
measures under the prior(s) scanned: a few milliseconds for the single block,
about a second for the six levels (``points_per_decade``, ``refine`` and
``tolerance`` go to choose_rho to coarsen the scan).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from fractions import Fraction

from ...budget import BudgetAllocation
from ..choose_rho import RhoChoice, choose_rho
from .cases import PRIOR_ATTACKS, as_budget, attack_case
from .evaluate import DEFAULT_PRIORS, as_priors
from .limits import as_correct_bound, as_profile

__all__ = ["BindingRho", "ScaledAttack", "binding_message", "binding_rho"]


@dataclass(frozen=True)
class ScaledAttack:
    """One attack's case at ``allocation`` scaled to total ρ ``rho`` (shares kept): an
    :class:`~adversary.measures.protocol.Attack`-like case whose one ρ field, ``rho``, is the
    total, so that :func:`~adversary.analyses.choose_rho.choose_rho` can vary it."""

    attack: str
    allocation: BudgetAllocation
    prior_values: tuple[float, ...]
    convention: str
    rho: float

    @property
    def name(self) -> str:
        return f"{self.attack} ({self.allocation.name}, total rho scaled)"

    @property
    def priors(self) -> dict[str, float]:
        return {f"{p!r}": p for p in self.prior_values}

    def parameters(self) -> dict:
        return {"rho": self.rho}

    def replace(self, **changes) -> ScaledAttack:
        return dataclasses.replace(self, **changes)

    @functools.cached_property
    def case(self):
        scaled = dataclasses.replace(self.allocation, rho_total=Fraction(self.rho))
        return attack_case(self.attack, scaled, self.prior_values, self.convention)

    def marginal_measures(self, prior_label: str | None = None):
        return self.case.marginal_measures(prior_label)


@dataclass(frozen=True)
class BindingRho:
    """The largest total ρ keeping ``attack`` within the limits (module docstring).

    ``rho_total``: the answer; ``binding``: the scan that gave it (its
    ``binding_prior``, ``measure`` and ``threshold``; ``rho_above`` is where
    the limit is broken), ``None`` when nothing binds up to ``rho_max``
    (``limited_by_rho_max``); ``choices``: every scan, per limit and prior.
    """

    attack: str
    allocation: str
    rho_total: float
    limited_by_rho_max: bool
    binding: RhoChoice | None
    choices: tuple[RhoChoice, ...]


def binding_message(result: BindingRho) -> str:
    """The frontier's one-line explanation of ``result``."""
    if result.binding is None:
        return (
            f"attack {result.attack} stays within the limits up to total rho "
            f"{result.rho_total:.6g} (the searched range's end)"
        )
    return (
        f"no allocation in the family meets the profile: attack {result.attack} binds "
        f"(prior {result.binding.binding_prior}, {result.binding.measure} <= "
        f"{result.binding.threshold:.6g}); it would at total rho <= {result.rho_total:.6g}"
    )


def binding_rho(
    allocation,
    profile=None,
    attack: str = "single_block",
    *,
    correct_bound=None,
    priors=DEFAULT_PRIORS,
    convention: str = "das",
    rho_min: float = 1e-3,
    rho_max: float = 1e3,
    **scan,
) -> BindingRho:
    """The largest total ρ of ``allocation`` (shares kept) at which ``attack`` meets the limits.

    Parameters
    ----------
    allocation : BudgetAllocation or str
        The allocation (its ``rho_total`` is replaced), or a preset's name.
    profile : adversary.analyses.allocation_risk.profile.RiskProfile or str, optional
        The risk profile on the marginal risk (3.4).
    attack : str
        One of :data:`~.cases.PRIOR_ATTACKS`.
    correct_bound : float, optional
        The largest acceptable probability of a correct decision (3.6).
    priors, convention
        As :func:`~.evaluate.allocation_risk`.
    rho_min, rho_max : float
        The searched range of the total ρ.
    **scan
        ``points_per_decade``, ``refine``, ``refine_decades``, ``tolerance``
        for :func:`~adversary.analyses.choose_rho.choose_rho`.

    Raises
    ------
    ValueError
        No limit given, an unknown attack, or (from choose_rho) a limit broken
        already at ``rho_min``.
    """
    if profile is None and correct_bound is None:
        raise ValueError("profile: give a risk profile or correct_bound to bind rho")
    if attack not in PRIOR_ATTACKS:
        raise ValueError(f"attack must be one of {', '.join(PRIOR_ATTACKS)}, got {attack!r}")
    allocation = as_budget(allocation)
    values = as_priors(priors)
    start = ScaledAttack(attack, allocation, values, convention, float(rho_min))
    common = {"rho_min": rho_min, "rho_max": rho_max, **scan}
    choices = []
    if profile is not None:
        limits = as_profile(profile)(values)
        for label, limit in zip(start.priors, limits, strict=True):
            if limit * start.marginal_measures(label).prior_of_truth >= 1.0:
                continue  # the marginal risk never reaches 1 / (prior of the truth)
            choices.append(
                choose_rho(start, float(limit), "marginal_risk", priors=[label], **common)
            )
    if correct_bound is not None:
        bound = as_correct_bound(correct_bound)
        choices.append(choose_rho(start, bound, "correct_decision_probability", **common))
    binding = min(
        (c for c in choices if not c.limited_by_rho_max), key=lambda c: c.rho, default=None
    )
    return BindingRho(
        attack=attack,
        allocation=allocation.name,
        rho_total=float(rho_max) if binding is None else binding.rho,
        limited_by_rho_max=binding is None,
        binding=binding,
        choices=tuple(choices),
    )
