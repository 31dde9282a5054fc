"""A concrete block-group case (Kazan & Reiter Sec. 4.3): what the adversary sees and the truth.

:class:`BlockGroupCase` ties the exact posterior (:mod:`.exact_posterior`), the
release-grid measures (:mod:`.releases`) and the PyMC model of one
case together, and implements :class:`~adversary.measures.protocol.Attack`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import xarray as xr

from ..._validation import as_counts, as_probability
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise.mechanisms import NoiseMechanism
from . import exact_posterior
from .noise_laws import _mechanism_pair, resolved_sum_noise
from .prior import BlockGroupPrior, improper_uniform
from .releases import decision_map, release_measures
from .setting import _validated_releases, attack_setting

if TYPE_CHECKING:  # imported where a PyMC model is built
    import pymc as pm

__all__ = ["BlockGroupCase"]


@dataclass(frozen=True)
class BlockGroupCase(CaseFields):
    """A concrete block-group attack: releases seen, priors held, and the truth.

    ``releases`` are ``(x1*, x2*, y1*)``; ``truth`` the data holder's
    ``(x1, x2, y1)``; ``priors`` maps a label to ``P[X1 = m + 1]``; ``x2_prior``
    is the prior of ``X2 | X1``. ``mechanism``, if given, is the noise instead
    of ``rho1``, ``rho2`` (then ``None``) and ``convention``: one mechanism for
    both releases or a pair ``(block, block group)`` (stored as a pair).
    ``sum_noise`` defaults to ``"approximate"`` (3.7) for discrete Gaussians and
    ``"exact"`` for other noise. ``tie_rule`` is how a tied decision counts in
    (3.6) (:mod:`adversary.measures.decision`; the paper's is ``"largest"``).
    """

    name: str
    releases: tuple[int, int, int]
    truth: tuple[int, int, int]
    priors: dict[str, float]
    rho1: float | None
    rho2: float | None
    d: int
    x2_prior: BlockGroupPrior = field(default_factory=improper_uniform)
    known_count: int = 0
    convention: str = "paper"
    sum_noise: str | None = None
    description: str = ""
    mechanism: tuple[NoiseMechanism, NoiseMechanism] | None = None
    tie_rule: str = DEFAULT_TIE_RULE

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        _validated_releases(*self.releases)
        as_counts(list(self.truth), "truth")
        as_probability(list(self.priors.values()), "priors")
        if self.mechanism is not None:
            object.__setattr__(self, "mechanism", _mechanism_pair(self.mechanism))
        object.__setattr__(self, "sum_noise", resolved_sum_noise(self.sum_noise, self.mechanism))
        attack_setting(**self._arguments(None))

    @property
    def true_latents(self) -> dict[str, int]:
        """``{"X1": x1, "X2": x2}``: the truth of the model's latents."""
        return {"X1": int(self.truth[0]), "X2": int(self.truth[1])}

    def _arguments(self, prior_label: str | None) -> dict:
        label = prior_label_of(self.priors, prior_label)
        return {
            "prior": self.priors[label],
            "rho1": self.rho1,
            "rho2": self.rho2,
            "d": self.d,
            "x2_prior": self.x2_prior,
            "known_count": self.known_count,
            "convention": self.convention,
            "sum_noise": self.sum_noise,
            "mechanism": self.mechanism,
        }

    def model(self, prior_label: str | None = None) -> pm.Model:
        """The PyMC model (:func:`model`) of this case under one prior (default: the first)."""
        from . import pymc_model  # PyMC: imported when a model is built

        return pymc_model.model(*self.releases, **self._arguments(prior_label))

    def posterior(self, prior_label: str | None = None) -> xr.DataArray:
        """The exact joint posterior (:func:`posterior`) of this case under one prior."""
        return exact_posterior.posterior(*self.releases, **self._arguments(prior_label))

    def decision_map(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> xr.Dataset:
        """Every release from the truth with the adversary's posterior and decision (Figure 4)."""
        return decision_map(
            self.truth,
            tail_mass=tail_mass,
            tie_rule=self.tie_rule,
            **self._arguments(prior_label),
        )

    def marginal_measures(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the case's truth, summed over its release grid in blocks.

        The same sums as :meth:`decision_map`'s attributes, in memory bounded by
        the budget (:func:`~adversary.scenarios.block_group.releases.release_measures`).
        """
        releases = release_measures(
            self.truth, tail_mass=tail_mass, tie_rule=self.tie_rule, **self._arguments(prior_label)
        )
        prior = self.priors[prior_label_of(self.priors, prior_label)]
        prior_of_truth = prior if self.truth[0] == self.known_count + 1 else 1.0 - prior
        keys = (
            "correct_decision_probability_without_hierarchy",
            "changed_to_correct",
            "changed_to_wrong",
            "x2_window",
        )
        return MarginalMeasures(
            marginal_posterior=releases["marginal_posterior"],
            marginal_risk=releases["marginal_risk"],
            correct_decision_probability=releases["correct_decision_probability"],
            prior_of_truth=prior_of_truth,
            omitted_mass=releases["omitted_mass"],
            error_bound=releases["omitted_mass"],
            details={key: releases[key] for key in keys},
            tie_rule=self.tie_rule,
        )
