"""Concrete attacks under swapping: :class:`SwappingBlockCase` and
:class:`SwappingUnknownAttributeCase` (the :class:`~adversary.measures.protocol.Attack`
protocol, so ``adversary run`` and ``adversary risk`` take them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_integers, binary_priors
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from . import single_block, unknown_attribute
from .block import Composition, check_block, check_cell, check_target
from .laws import as_law, swap_probabilities

__all__ = ["SwappingBlockCase", "SwappingUnknownAttributeCase"]


def _check_setting(case) -> None:
    """The block, target, law and composition of a case, checked (stored as tuples)."""
    block = check_block(case.households)
    object.__setattr__(case, "households", block)
    object.__setattr__(
        case, "target_member", check_target(case.target_member, block, "target_member")
    )
    object.__setattr__(case, "law", as_law(case.law))
    swap_probabilities(case.law, block)
    if not isinstance(case.composition, Composition):
        raise TypeError(f"composition must be a Composition, got {type(case.composition).__name__}")
    check_tie_rule(case.tie_rule)


@dataclass(frozen=True)
class SwappingBlockCase(CaseFields):
    """The single-block attack under swapping (:mod:`.single_block`), Kazan & Reiter 3.1.

    ``households``: the block as it truly is (tuples of reduced cell codes);
    ``target_member``: ``(household, member)`` (named so because an attack's
    ``target`` is its decided latent, here ``X1``), whose cell in the block is the truth
    and must be ``target_cell`` (c) or ``alternative_cell`` (a: the cell the
    adversary holds if not c); ``law``: a swap law (``swap_probabilities(block)``,
    :mod:`.laws`) or a swapping mechanism of :mod:`adversary.swapping`, taken
    as its law (:func:`~.laws.as_law`); ``composition``: the partner area's
    :class:`~.block.Composition`; ``priors``: ``{label: p}``, p the prior that
    the target is in c; ``releases``: counts of c a report tabulates;
    ``observed_release``: the swapped block's count of c that :meth:`model`
    conditions on. The decided latent is ``X1``, the block's count of c,
    ``m`` or ``m + 1`` (m the others'). ``tie_rule``: how a tied decision counts
    in (3.6) (``"largest"`` decides c).
    """

    name: str
    households: tuple
    target_member: tuple[int, int]
    target_cell: int
    alternative_cell: int
    law: object
    composition: Composition
    priors: dict[str, float]
    releases: tuple[int, ...] = (0, 1, 2, 3)
    observed_release: int = 1
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    def __post_init__(self):
        _check_setting(self)
        object.__setattr__(self, "target_cell", check_cell(self.target_cell, "target_cell"))
        object.__setattr__(
            self, "alternative_cell", check_cell(self.alternative_cell, "alternative_cell")
        )
        object.__setattr__(self, "priors", binary_priors(self.priors))
        releases = as_integers(list(self.releases), "releases")
        object.__setattr__(self, "releases", tuple(int(x) for x in releases))
        object.__setattr__(
            self, "observed_release", int(as_integers(self.observed_release, "observed_release"))
        )
        single_block.release_pmf(*self._setting())  # the truth is c or a

    def _setting(self) -> tuple:
        return (
            self.households,
            self.target_member,
            self.target_cell,
            self.alternative_cell,
            self.law,
            self.composition,
        )

    @property
    def known_count(self) -> int:
        """m: the others' count of ``target_cell``."""
        household, member = self.target_member
        count = sum(code == self.target_cell for members in self.households for code in members)
        return count - int(self.households[household][member] == self.target_cell)

    @property
    def truth(self) -> int:
        """The block's true count of ``target_cell`` (``m`` or ``m + 1``)."""
        return sum(code == self.target_cell for members in self.households for code in members)

    def posterior(self, prior_label: str | None = None, release: int | None = None) -> float:
        """``P[target in target_cell | release]`` (3.1) (default: ``observed_release``)."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        release = self.observed_release if release is None else release
        return single_block.posterior(release, p, *self._setting())

    def model(self, prior_label: str | None = None):
        """The PyMC model (:mod:`.pymc_model`) given ``observed_release``, under one prior."""
        from .pymc_model import model  # PyMC: imported when a model is built

        p = self.priors[prior_label_of(self.priors, prior_label)]
        attack = single_block.hypotheses(*self._setting())
        return model(attack, (self.observed_release,), (1.0 - p, p), known_count=self.known_count)

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the truth under one prior, exact."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        return single_block.marginal_measures(p, *self._setting(), tie_rule=self.tie_rule)


@dataclass(frozen=True)
class SwappingUnknownAttributeCase(CaseFields):
    """The unknown attribute under swapping (:mod:`.unknown_attribute`).

    ``candidates``: the K cells the target may be in (the target's cell in
    ``households`` is the truth and must be one of them); ``priors``:
    ``{label: π}``, one probability per candidate; ``observed_release``: the
    swapped block's counts of the candidates that :meth:`model` conditions on.
    The decided latent is ``C``, the candidate's index. Other fields as
    :class:`SwappingBlockCase`.
    """

    name: str
    households: tuple
    target_member: tuple[int, int]
    candidates: tuple[int, ...]
    law: object
    composition: Composition
    priors: dict
    observed_release: tuple[int, ...]
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    #: The latent of the decision: the candidate index ``C``.
    target = "C"

    def __post_init__(self):
        _check_setting(self)
        object.__setattr__(self, "candidates", unknown_attribute.hypotheses_cells(self.candidates))
        unknown_attribute.true_index(self.households, self.target_member, self.candidates)
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError("priors must map at least one label to a prior over the candidates")
        object.__setattr__(
            self,
            "priors",
            {
                str(label): tuple(
                    float(x)
                    for x in unknown_attribute.prior_vector(
                        value, len(self.candidates), f"priors[{label!r}]"
                    )
                )
                for label, value in self.priors.items()
            },
        )
        release = as_integers(list(self.observed_release), "observed_release")
        if release.shape != (len(self.candidates),):
            raise ValueError(
                f"observed_release must hold one count per candidate (K = {len(self.candidates)})"
                f", got {self.observed_release!r}"
            )
        object.__setattr__(self, "observed_release", tuple(int(x) for x in release))

    @property
    def truth(self) -> int:
        """The index of the target's true cell among ``candidates``."""
        return unknown_attribute.true_index(self.households, self.target_member, self.candidates)

    def _setting(self) -> tuple:
        return (self.households, self.target_member, self.candidates, self.law, self.composition)

    def posterior(self, prior_label: str | None = None) -> np.ndarray:
        """``P[C = k | observed_release]`` over the candidates, (3.1)."""
        prior = self.priors[prior_label_of(self.priors, prior_label)]
        return unknown_attribute.posterior(self.observed_release, prior, *self._setting())

    def model(self, prior_label: str | None = None):
        """The PyMC model (:mod:`.pymc_model`) given ``observed_release``, under one prior."""
        from .pymc_model import model  # PyMC: imported when a model is built

        prior = self.priors[prior_label_of(self.priors, prior_label)]
        attack = unknown_attribute.hypotheses(*self._setting())
        return model(attack, self.observed_release, prior)

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the truth under one prior, exact."""
        prior = self.priors[prior_label_of(self.priors, prior_label)]
        return unknown_attribute.marginal_measures(prior, *self._setting(), self.tie_rule)
