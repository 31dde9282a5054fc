"""What a population run assesses: the population model file.

For ``adversary population … --model MODEL_FILE`` a model file is a plain
Python file (or the name of one shipped in ``models/``, e.g.
``population_gvhr``) that declares ``POPULATION``, a :class:`PopulationModel`:
which characteristics define a person's cell, which attacks to run, the
adversary's priors, the budgets to sweep, and the thresholds that make a
person "at risk" in the summary. Copy ``models/population_gvhr.py`` to write
your own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validation import as_positive, as_probability
from ..budget import DEFAULT_PRESET, BudgetAllocation, as_allocation
from ..budget_files import budget_json, stored_budget
from ..measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ..measures.releases import DEFAULT_TAIL_MASS
from ..model_files import load_module
from ..noise.conventions import as_convention
from ..scenarios.block_group import SUM_NOISE_CHOICES
from ..scenarios.block_group.prior import BlockGroupPrior, improper_uniform

__all__ = ["ATTACKS", "LEVELS", "PopulationModel", "load_population_model"]

#: Attacks a population run can assess (Kazan & Reiter 2023).
ATTACKS = ("single_block", "block_group", "multi_level")

#: Levels of the ℓ-level attack, lowest first (:data:`~adversary.scenarios.multi_level.LEVELS_2020`
#: up to the state, the top level of an input table).
LEVELS = ("block", "block_group", "tract", "county", "state")


@dataclass(frozen=True)
class PopulationModel:
    """The attacks, priors, budgets and thresholds of a population assessment.

    ``characteristics``
        Columns whose values make a person's cell ``c``; the released count of
        the cell is the ``query`` of the budget preset (default the detailed
        GVHR query, whose cells are hhgq × voting age × Hispanic × race).
    ``attacks``
        Any of ``single_block`` (Sec. 3.1), ``block_group`` (Sec. 3.2, S3;
        ``d`` = the other blocks of the block group present in the data) and
        ``multi_level`` (S1.3, ℓ = the levels block … state at which the
        person's cell is small).
    ``priors``
        ``{label: p}``, the adversary's prior that the target has ``c``.
    ``budgets``
        ``{label: scale}``: each run multiplies every ρ of the preset by
        ``scale`` (1 = the preset as published).
    ``preset``, ``query``, ``convention``
        The budget: a preset's name, a :class:`~adversary.budget.BudgetAllocation`
        or a budget file (:func:`adversary.budget.as_allocation`; stored as the
        preset's name or the allocation; the command line's ``--budget``
        overrides it), the query whose ρ each level's release uses, and the
        noise convention (``paper`` or ``das``).
    ``small_cell_max``
        Persons in cells of at most this many people in their block are
        assessed (1: the unique; ``m = x1 - 1`` others share the cell), and a
        level counts towards ℓ while the cell has at most this many there.
    ``risk_thresholds``, ``decision_thresholds``
        The summary counts persons whose marginal risk (3.4), or probability
        of a correct decision (3.6), is strictly above each threshold.
    ``x2_prior``, ``sum_noise``, ``tail_mass``
        The block-group attack's prior of ``X2 | X1`` and noise of the other
        blocks' sum, and the release probability every marginal sum may leave
        out.
    ``tie_rule``
        How a tied decision counts in (3.6) (:mod:`adversary.measures.decision`).
    """

    name: str
    characteristics: tuple[str, ...]
    priors: dict[str, float]
    budgets: dict[str, float] = field(default_factory=lambda: {"x1": 1.0})
    attacks: tuple[str, ...] = ATTACKS
    preset: str | BudgetAllocation = DEFAULT_PRESET
    query: str = "detailed"
    convention: str = "paper"
    small_cell_max: int = 1
    risk_thresholds: tuple[float, ...] = (1.5, 2.0)
    decision_thresholds: tuple[float, ...] = (0.5, 0.9)
    x2_prior: BlockGroupPrior = field(default_factory=improper_uniform)
    sum_noise: str = "approximate"
    tail_mass: float = DEFAULT_TAIL_MASS
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        object.__setattr__(self, "characteristics", tuple(self.characteristics))
        object.__setattr__(self, "attacks", tuple(self.attacks))
        if not self.characteristics or len(set(self.characteristics)) != len(self.characteristics):
            raise ValueError("characteristics must name at least one column, each once")
        unknown = [a for a in self.attacks if a not in ATTACKS]
        if unknown or not self.attacks or len(set(self.attacks)) != len(self.attacks):
            raise ValueError(f"attacks must be distinct names among {ATTACKS}, got {self.attacks}")
        if not self.priors:
            raise ValueError("priors must map at least one label to a probability")
        as_probability(list(self.priors.values()), "priors")
        if not self.budgets:
            raise ValueError("budgets must map at least one label to a scale > 0")
        as_positive(list(self.budgets.values()), "budgets")
        object.__setattr__(self, "preset", stored_budget(self.preset, "preset"))
        allocation = as_allocation(self.preset)
        for level in LEVELS:
            allocation.sigma2(level, self.query, self.convention)  # measured at every level
        as_convention(self.convention)
        if (
            isinstance(self.small_cell_max, bool)
            or not isinstance(self.small_cell_max, int | np.integer)
            or self.small_cell_max < 1
        ):
            raise ValueError(f"small_cell_max must be an integer >= 1, got {self.small_cell_max!r}")
        for name in ("risk_thresholds", "decision_thresholds"):
            values = tuple(float(v) for v in getattr(self, name))
            if not all(np.isfinite(values)):
                raise ValueError(f"{name} must be finite numbers, got {values}")
            object.__setattr__(self, name, values)
        if not isinstance(self.x2_prior, BlockGroupPrior):
            raise TypeError(f"x2_prior must be a BlockGroupPrior, got {self.x2_prior!r}")
        if self.sum_noise not in SUM_NOISE_CHOICES:
            raise ValueError(
                f"sum_noise must be one of {SUM_NOISE_CHOICES}, got {self.sum_noise!r}"
            )
        as_probability(self.tail_mass, "tail_mass")

    def with_preset(self, preset: str | BudgetAllocation | None) -> PopulationModel:
        """This model with another budget (a preset, allocation or file; ``None``: unchanged)."""
        if preset is None:
            return self
        from dataclasses import replace

        return replace(self, preset=as_allocation(preset, "--budget"))

    def rhos(self, budget_label: str) -> dict[str, float]:
        """ρ of :attr:`query` at each level of :data:`LEVELS` under one budget."""
        scale = float(self.budgets[budget_label])
        allocation = as_allocation(self.preset)
        return {level: scale * allocation.rho(level, self.query) for level in LEVELS}

    def describe(self) -> dict:
        """The model as plain data (for JSON output)."""
        return {
            "name": self.name,
            "characteristics": list(self.characteristics),
            "attacks": list(self.attacks),
            "priors": dict(self.priors),
            "budgets": dict(self.budgets),
            "preset": budget_json(self.preset),
            "query": self.query,
            "convention": str(self.convention),
            "small_cell_max": int(self.small_cell_max),
            "risk_thresholds": list(self.risk_thresholds),
            "decision_thresholds": list(self.decision_thresholds),
            "x2_prior": self.x2_prior.describe(),
            "sum_noise": self.sum_noise,
            "tail_mass": float(self.tail_mass),
            "tie_rule": self.tie_rule,
            "rho": {label: self.rhos(label) for label in self.budgets},
        }


def load_population_model(model: str | Path) -> PopulationModel:
    """The ``POPULATION`` declared by a model file path or a shipped model's name."""
    module = load_module(model)
    population = getattr(module, "POPULATION", None)
    if not isinstance(population, PopulationModel):
        raise ValueError(
            f"model file {str(model)!r} declares no POPULATION (a PopulationModel); "
            "see models/population_gvhr.py"
        )
    return population
