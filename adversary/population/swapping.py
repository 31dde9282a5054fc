"""A swapping study at population scale: what the model file of a ``SWAPPING`` run declares.

For ``adversary population --synthetic PERSONS --model MODEL_FILE`` where the
model file declares ``SWAPPING``, a :class:`SwappingStudy` (the shipped
``population_swapping``). The run (:func:`adversary.population.swapping_survey.survey`)
assesses every person living in a household who is alone in their cell of the
block's 56-cell histogram (``REDUCED``: household or group quarters × voting
age × Hispanic × 7 races), or in a cell of at most ``small_cell_max`` persons,
under each swapping mechanism and prior, with the single-block attack of
Kazan & Reiter (2023) under swapping
(:func:`adversary.scenarios.swapping.single_block.marginal_measures`): the
marginal risk (3.4) and the probability of a correct decision (3.6), exactly.

**The adversary's knowledge** (the attack's, stated here once):

- the block: every household of the target's real block with its members'
  cells, the target's cell unknown; group-quarters persons are left out (they
  are never swapped and their cells are not the household cells attacked);
- the hypotheses: the target's true cell c (prior ``p``) or the
  **alternative cell** a: the household cell of the target's voting age most
  common among the other household persons of the block (ties: the smallest
  code); where the block has none, the same in the target's composition area;
- the law of the mechanism: :class:`~adversary.scenarios.swapping.laws.HouseholdSwapLaw`
  at the mechanism's rate for household swapping; for targeted record swapping
  :class:`~adversary.scenarios.swapping.targeted_law.TargetedSwapLaw` with the
  donor rates per household profile measured on the study's run of the
  mechanism;
- the composition of swapped-in households: the published 56-cell table of the
  target's ``composition`` area (county or state) *after* swapping (for
  household swapping within the county it is the truth's).

The persons assessed may be too many: ``per_bin`` caps them per block-size bin
of JASON Table 8-11 (a seeded sample without replacement; means with standard
errors of the stratified sample). The run swaps the population once per
mechanism (``seed``) and reports the realised protection: the share of the
assessed persons whose household was swapped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import as_probability
from ..measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ..model_files import load_declared
from ..scenarios.swapping.laws import HouseholdSwapLaw
from ..scenarios.swapping.targeted_law import TargetedSwapLaw
from ..swapping import HouseholdSwapping
from ..swapping.targeted import TargetedRecordSwapping

__all__ = [
    "ALTERNATIVE_RULE",
    "COMPOSITION_AREAS",
    "SwappingStudy",
    "law_and_swap",
    "load_swapping_study",
]

#: Areas whose published table can be the composition of swapped-in households.
COMPOSITION_AREAS = ("county", "state")

#: The alternative cell of the hypothesis "the target is not in its cell", as stated.
ALTERNATIVE_RULE = (
    "the household cell of the target's voting age most common among the block's other "
    "household persons (ties: smallest code); where none, the same in the composition area"
)

_MECHANISMS = (HouseholdSwapping, TargetedRecordSwapping)


def _integer(value, name: str, least: int, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")


@dataclass(frozen=True)
class SwappingStudy:
    """The mechanisms, priors and persons of a swapping study (module docstring).

    ``mechanisms``: ``{label: mechanism}``, each a
    :class:`~adversary.swapping.HouseholdSwapping` or
    :class:`~adversary.swapping.targeted.TargetedRecordSwapping`.
    ``priors``: ``{label: p}``, the adversary's prior that the target is in its
    cell. ``small_cell_max``: persons in a block cell of at most this many are
    assessed (1: the unique). ``composition``: ``"county"`` or ``"state"``.
    ``risk_thresholds`` / ``decision_thresholds``: the summary counts persons
    whose marginal risk (3.4) / probability of a correct decision (3.6) is
    strictly above each. ``tie_rule``: as :mod:`adversary.measures.decision`.
    ``per_bin``: at most this many assessed persons per block-size bin (``None``:
    all). ``seed``: of the households, the mechanisms' runs and the sample.
    """

    name: str = "swapping"
    description: str = ""
    mechanisms: dict = field(default_factory=lambda: {"household 4%": HouseholdSwapping(0.04)})
    priors: dict[str, float] = field(default_factory=lambda: {"1/10": 0.1})
    small_cell_max: int = 1
    composition: str = "county"
    risk_thresholds: tuple[float, ...] = (1.5, 2.0)
    decision_thresholds: tuple[float, ...] = (0.5, 0.9)
    tie_rule: str = DEFAULT_TIE_RULE
    per_bin: int | None = None
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.mechanisms, dict) or not self.mechanisms:
            raise ValueError("mechanisms must map at least one label to a mechanism")
        for label, mechanism in self.mechanisms.items():
            if not isinstance(label, str) or ":" in label:
                raise ValueError(f"mechanisms: labels must be strings without ':', got {label!r}")
            if not isinstance(mechanism, _MECHANISMS):
                raise TypeError(
                    f"mechanisms[{label!r}] must be a HouseholdSwapping or "
                    f"TargetedRecordSwapping, got {type(mechanism).__name__}"
                )
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError("priors must map at least one label to a probability")
        as_probability(list(self.priors.values()), "priors")
        if any(not 0.0 < float(p) < 1.0 for p in self.priors.values()):
            raise ValueError(f"priors must lie strictly between 0 and 1, got {self.priors}")
        _integer(self.small_cell_max, "small_cell_max", 1)
        _integer(self.per_bin, "per_bin", 2, optional=True)
        _integer(self.seed, "seed", 0)
        if self.composition not in COMPOSITION_AREAS:
            raise ValueError(
                f"composition must be one of {COMPOSITION_AREAS}, got {self.composition!r}"
            )
        for name in ("risk_thresholds", "decision_thresholds"):
            values = getattr(self, name)
            if not values or not all(np.isfinite(float(v)) for v in values):
                raise ValueError(f"{name} must hold at least one finite number, got {values!r}")
        check_tie_rule(self.tie_rule)

    def describe(self) -> dict:
        """The study as a JSON-ready object."""
        return {
            "name": self.name,
            "mechanisms": {label: m.label for label, m in self.mechanisms.items()},
            "priors": dict(self.priors),
            "small_cell_max": int(self.small_cell_max),
            "composition": self.composition,
            "alternative_cell": ALTERNATIVE_RULE,
            "risk_thresholds": list(self.risk_thresholds),
            "decision_thresholds": list(self.decision_thresholds),
            "tie_rule": self.tie_rule,
            "per_bin": self.per_bin,
            "seed": int(self.seed),
        }


def load_swapping_study(model: str | Path) -> SwappingStudy | None:
    """The ``SWAPPING`` a model file declares, or ``None`` if it declares none."""
    return load_declared(model, "SWAPPING", SwappingStudy, "population_swapping")


def law_and_swap(mechanism, persons: pd.DataFrame, seed: int):
    """``(law, swapped persons)`` of one run of ``mechanism`` on ``persons`` (with households).

    Household swapping: :class:`~adversary.scenarios.swapping.laws.HouseholdSwapLaw` at its
    rate. Targeted record swapping: its
    :class:`~adversary.scenarios.swapping.targeted_law.TargetedSwapLaw` with the donor rates
    per household profile measured on this run.
    """
    if isinstance(mechanism, TargetedRecordSwapping):
        run = mechanism.run(persons, seed=seed)
        law = TargetedSwapLaw.from_mechanism(mechanism, donor_rate=run.donor_rates())
        return law, run.persons
    return HouseholdSwapLaw(mechanism.rate), mechanism.swap(persons, seed=seed)
