"""An attack that sees every query holding the target's cell: :class:`MultiQueryCase`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import xarray as xr

from ..._validation import as_index, scalar_positive
from ...budget import BudgetAllocation, as_allocation
from ...budget_files import stored_budget
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...noise import noise_variance
from ...noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism
from ..reconstruction.case import ReconstructionCase
from ..reconstruction.classification import REDUCED, Classification
from .likelihood import class_log_posteriors, log_likelihoods
from .looks import TargetLooks, query_names, target_looks
from .measures import METHODS, look_measures

__all__ = ["CELL", "MultiQueryCase", "cell_prior"]

#: ``question`` of the single-block attack: is the target in the cell of interest?
CELL = "cell"


def cell_prior(cell: dict, p: float, classification: Classification = REDUCED) -> np.ndarray:
    """A prior over the cells: ``p`` on ``cell`` (``{attribute: level}``), the rest spread evenly
    over the other cells (the adversary of Kazan & Reiter's single-block attack, whose prior is
    only ``p``)."""
    index = int(
        np.ravel_multi_index(tuple(cell[a] for a in classification.names), classification.sizes)
    )
    prior = np.full(classification.n_cells, (1.0 - p) / (classification.n_cells - 1))
    prior[index] = p
    return prior


@dataclass(frozen=True)
class MultiQueryCase(CaseFields):
    """The target's record seen through every query (and level) that holds it.

    The adversary knows every other record of the unit at each of ``levels``
    and the target's cell up to what ``question`` asks:

    - ``question="cell"`` (Kazan & Reiter Sec. 3.1): is the target in
      ``cell`` (default: the target's true cell)? The looks are the counts
      holding ``cell``; under "no" the target is in another cell, drawn from
      the prior, which the aggregate queries may also show. With
      ``queries="detailed"`` this is the single-block attack exactly.
    - ``question=<attribute>`` (the unknown-attribute attack): the adversary
      knows the target's other attributes (the truth's) and asks this one; the
      looks are every count holding one of the possible cells.

    ``priors`` maps a label to the adversary's probability of each cell of
    ``classification`` (a sequence in cell order, or ``{attribute: level
    probabilities}`` for independent attributes; stored as a tuple);
    ``truth`` is the target's cell (an index, a label of the classification's
    ``cell_labels()`` or ``{attribute: level}``; stored as the index).
    ``queries`` is ``"detailed"``, ``"all"`` or a list of PL 94-171 query
    names; ``budget`` a preset's name, a :class:`~adversary.budget.BudgetAllocation` or a
    budget file (stored as the preset's name or the allocation); each count's ρ is its
    query's share at its level of ``budget``'s
    total ρ ``rho_total`` (default, and stored: the budget's, 2.56 for the 2020
    persons file; another value scales the whole budget), its noise the discrete Gaussian of
    ``convention`` (σ² = 1/(2ρ) for ``"paper"``, 1/ρ for ``"das"``) or
    ``mechanism`` for every count. ``releases`` are the looks' noisy counts
    minus the others' contribution, in the order of :meth:`looks` (only
    :meth:`posterior` and :meth:`model` need them). The data holder's
    measures are exact over the release grid when it is small and Monte
    Carlo (``replications`` release sets, ``seed``) otherwise, by ``method``.
    """

    name: str
    priors: dict
    truth: int | str | dict
    question: str = CELL
    cell: int | str | dict | None = None
    queries: str | tuple[str, ...] = "detailed"
    levels: tuple[str, ...] = ("block",)
    budget: str | BudgetAllocation = "pl94-2020-persons"
    rho_total: float | None = None
    convention: str = "paper"
    mechanism: NoiseMechanism | None = None
    classification: Classification = REDUCED
    releases: tuple[int, ...] | None = None
    tie_rule: str = DEFAULT_TIE_RULE
    method: str = "auto"
    replications: int = 20_000
    seed: int = 0
    description: str = ""

    def __post_init__(self):
        set_ = lambda field, value: object.__setattr__(self, field, value)  # noqa: E731
        check_tie_rule(self.tie_rule)
        if not isinstance(self.classification, Classification):
            raise ValueError(
                f"classification must be a Classification, got {self.classification!r}"
            )
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError("priors must map at least one label to a prior over the cells")
        set_("priors", {str(k): self._prior(v, k) for k, v in self.priors.items()})
        set_("truth", self._cell(self.truth, "truth"))
        if self.question != CELL and self.question not in self.classification.names:
            raise ValueError(
                f"question must be 'cell' or an attribute of {self.classification.names}, "
                f"got {self.question!r}"
            )
        if self.cell is not None:
            if self.question != CELL:
                raise ValueError("cell: only the question 'cell' has a cell of interest")
            set_("cell", self._cell(self.cell, "cell"))
        set_("queries", query_names(self.queries))
        set_("levels", (self.levels,) if isinstance(self.levels, str) else tuple(self.levels))
        set_("budget", stored_budget(self.budget))
        if self.rho_total is None:  # the budget's own, stored: choose_rho can vary it
            set_("rho_total", float(as_allocation(self.budget).rho_total))
        set_("rho_total", scalar_positive(self.rho_total, "rho_total"))
        noise_variance(1.0, self.convention)
        if self.mechanism is not None and not isinstance(self.mechanism, NoiseMechanism):
            raise ValueError(f"mechanism must be a NoiseMechanism, got {self.mechanism!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if isinstance(self.replications, bool) or not isinstance(self.replications, int):
            raise ValueError(f"replications must be an integer >= 2, got {self.replications!r}")
        if self.replications < 2:
            raise ValueError(f"replications must be an integer >= 2, got {self.replications!r}")
        for label, prior in self.priors.items():
            if prior[self.truth] == 0:
                raise ValueError(f"priors[{label!r}] gives the true cell probability 0")
        self.looks()  # the levels, budget and queries resolve
        if self.releases is not None:
            releases = np.asarray(self.releases)
            n = len(self.looks().labels)
            if releases.shape != (n,) or not np.issubdtype(releases.dtype, np.integer):
                raise ValueError(
                    f"releases must be {n} integers, one per look {self.looks().labels}, "
                    f"got {self.releases!r}"
                )
            set_("releases", tuple(int(r) for r in releases))

    # --- inputs ---------------------------------------------------------------------------

    def _prior(self, value, label) -> tuple[float, ...]:
        if isinstance(value, dict):
            try:
                return self.classification.independent_prior(value)
            except ValueError as error:
                raise ValueError(f"priors[{label!r}]: {error}") from None
        array = np.asarray(value, dtype=np.float64)
        k = self.classification.n_cells
        if array.shape != (k,) or np.any(array < 0) or not math.isclose(array.sum(), 1.0):
            raise ValueError(
                f"priors[{label!r}] must be {k} probabilities summing to 1 (one per cell) "
                f"or {{attribute: level probabilities}}"
            )
        return tuple(float(p) for p in array)

    def _cell(self, value, name: str) -> int:
        labels = self.classification.cell_labels()
        if isinstance(value, dict):
            if set(value) != set(self.classification.names):
                raise ValueError(f"{name} must give a level of each of {self.classification.names}")
            index = tuple(value[a] for a in self.classification.names)
            for (attribute, size), level in zip(self.classification.attributes, index, strict=True):
                as_index(level, size, f"{name}[{attribute!r}]", "a level")
            return int(np.ravel_multi_index(index, self.classification.sizes))
        if isinstance(value, str):
            if value not in labels:
                raise ValueError(
                    f"{name} must be a cell label such as {labels[0]!r}, got {value!r}"
                )
            return labels.index(value)
        return as_index(value, len(labels), name, "a cell index")

    # --- what the adversary sees ----------------------------------------------------------

    @property
    def cell_of_interest(self) -> int:
        """The cell the question ``"cell"`` asks about (default: the true cell)."""
        return self.truth if self.cell is None else self.cell

    def _possible_and_watched(self) -> tuple[np.ndarray, np.ndarray]:
        if self.question == CELL:
            support = np.flatnonzero(np.max([self.priors[p] for p in self.priors], axis=0) > 0)
            return support, np.array([self.cell_of_interest])
        levels = self.classification.levels()
        column = self.classification.names.index(self.question)
        others = np.delete(np.arange(len(self.classification.sizes)), column)
        same = np.all(levels[:, others] == levels[self.truth, others], axis=1)
        possible = np.flatnonzero(same)
        return possible, possible

    @cached_property
    def _design(self) -> tuple[np.ndarray, np.ndarray, TargetLooks]:
        possible, watched = self._possible_and_watched()
        looks = target_looks(
            self.classification,
            possible,
            watched,
            self.queries,
            self.levels,
            self.budget,
            self.rho_total,
        )
        if self.question == CELL:
            classes = (possible == self.cell_of_interest).astype(np.int64)
        else:
            column = self.classification.names.index(self.question)
            classes = self.classification.levels()[possible, column]
        return possible, classes, looks

    def looks(self) -> TargetLooks:
        """The informative counts (labels, ρ, incidence on the possible cells)."""
        return self._design[2]

    def answers(self) -> tuple[str, ...]:
        """The values the adversary decides among (``"elsewhere"``/``"in cell"``, or levels)."""
        if self.question == CELL:
            return ("elsewhere", "in cell")
        size = self.classification.sizes[self.classification.names.index(self.question)]
        return tuple(f"{self.question}={v}" for v in range(size))

    def mechanisms(self) -> tuple[NoiseMechanism, ...]:
        """The noise of each look."""
        if self.mechanism is not None:
            return (self.mechanism,) * len(self.looks().labels)
        return tuple(DiscreteGaussianNoise.from_rho(r, self.convention) for r in self.looks().rhos)

    def _possible_prior(self, prior_label):
        """The possible cells of one prior (those it gives mass), their answers, their prior
        (normalised) and the looks' incidence on them."""
        possible, classes, looks = self._design
        prior = np.array(self.priors[prior_label_of(self.priors, prior_label)])[possible]
        keep = prior > 0
        incidence = looks.incidence[:, keep]
        return possible[keep], classes[keep], prior[keep] / prior[keep].sum(), incidence

    # --- the protocol ---------------------------------------------------------------------

    @property
    def target(self) -> str:
        return "answer"

    @property
    def true_latents(self) -> dict[str, int]:
        possible, classes, _ = self._design
        return {"answer": int(classes[np.flatnonzero(possible == self.truth)[0]])}

    def posterior(self, prior_label: str | None = None) -> xr.DataArray:
        """The adversary's posterior over :meth:`answers` given ``releases``."""
        if self.releases is None:
            raise ValueError("releases: the case states no noisy counts to condition on")
        _, classes, prior, incidence = self._possible_prior(prior_label)
        loglik = log_likelihoods(np.array([self.releases]), incidence, self.mechanisms())
        answers = self.answers()
        log_post = class_log_posteriors(loglik, prior, classes, len(answers))[0]
        return xr.DataArray(np.exp(log_post), dims="answer", coords={"answer": list(answers)})

    def model(self, prior_label: str | None = None):
        """The adversary's PyMC model: the target's cell ``persons[0]`` among the possible cells.

        ``answer`` (a deterministic) is the answer that cell gives. The model is
        the one-person block of
        :class:`~adversary.scenarios.reconstruction.ReconstructionCase` whose
        queries are the looks (the others' contribution subtracted).
        """
        import pymc as pm
        import pytensor.tensor as pt

        if self.releases is None:
            raise ValueError("releases: the case states no noisy counts to condition on")
        possible, classes, prior, incidence = self._possible_prior(prior_label)
        labels = self.classification.cell_labels()
        one_person = ReconstructionCase(
            name=self.name,
            n=1,
            cells=[labels[c] for c in possible],
            prior=prior,
            queries=[tuple(np.flatnonzero(row)) for row in incidence],
            mechanism=self.mechanisms(),
            releases=self.releases,
            query_labels=self.looks().labels,
        )
        model = one_person.model()
        with model:
            pm.Deterministic("answer", pt.as_tensor_variable(classes)[model["persons"][0]])
        return model

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4), (3.6) for the true answer (module :mod:`.measures`)."""
        possible, classes, prior, incidence = self._possible_prior(prior_label)
        return look_measures(
            prior,
            incidence,
            self.mechanisms(),
            int(np.flatnonzero(possible == self.truth)[0]),
            classes,
            tie_rule=self.tie_rule,
            method=self.method,
            replications=self.replications,
            seed=self.seed,
        )

    def replace(self, **changes) -> MultiQueryCase:
        if "queries" in changes or "levels" in changes:
            changes.setdefault("releases", None)
        return super().replace(**changes)
