"""The unknown-attribute attack on TopDown's tables: :class:`PublishedAttributeCase`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from ..._validation import as_counts
from ...measures.marginal import MarginalMeasures
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...memory import check_memory
from .adversaries import PublishedLaw, published_law
from .attribute import attribute_measures, noisy_ratio_laws, published_ratio_laws
from .setting import POST_PROCESSING, BlockGroupTables, block_counts

if TYPE_CHECKING:  # imported where a PyMC model is built
    import pymc as pm

__all__ = ["PublishedAttributeCase"]

#: Arrays of replications × categories the Monte Carlo sum holds at once (the draws of the
#: log ratios, the joint, the posteriors and their temporaries).
MONTE_CARLO_ARRAYS = 8


@dataclass(frozen=True)
class PublishedAttributeCase(CaseFields, BlockGroupTables):
    """S1.2's unknown-attribute attack in a block group whose tables are TopDown's.

    ``categories`` name the K values of the unknown attribute; each has a
    cell, and ``known_counts[k]`` are the other persons' counts of category
    ``k``'s cell in each block (K rows, one count per block). The target is in
    block ``target_block``; ``priors`` map a label to the adversary's π over
    the categories; ``true_category`` is the truth. Every cell of every unit
    is measured as :class:`~.setting.BlockGroupTables` says and
    post-processed on its own by TopDown (no invariant). ``post_processing``
    says what the adversary sees: ``"none"`` (the measurements),
    ``"topdown"`` (the tables) or ``"both"`` (then the measurements'
    adversary: the tables are a function of them). ``published`` are the
    category cells' published tables (K rows: block group, then blocks) that
    :meth:`model` and :meth:`posterior` condition on. The measures are sums over the cells' laws
    (:mod:`.attribute`), Monte Carlo (``replications``, ``seed``) when the
    product is too large.
    """

    name: str
    categories: tuple[str, ...]
    priors: dict
    known_counts: tuple[tuple[int, ...], ...]
    true_category: str
    published: tuple[tuple[int, ...], ...] | None = None
    replications: int = 20_000

    def __post_init__(self):
        set_ = lambda field, value: object.__setattr__(self, field, value)  # noqa: E731
        if not isinstance(self.categories, tuple | list):
            raise TypeError(f"categories must be a tuple of names, got {self.categories!r}")
        categories = tuple(str(c) for c in self.categories)
        if len(categories) < 2 or len(set(categories)) != len(categories):
            raise ValueError(
                f"categories must name K >= 2 distinct values, got {self.categories!r}"
            )
        set_("categories", categories)
        known = block_counts(self.known_counts, "known_counts")
        if known.ndim != 2 or known.shape[0] != len(categories) or known.shape[1] < 1:
            raise ValueError(
                f"known_counts must hold one row of block counts per category "
                f"({len(categories)} rows), got {self.known_counts!r}"
            )
        set_("known_counts", tuple(tuple(int(k) for k in row) for row in known))
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError(
                f"priors must map at least one label to a prior over the categories, "
                f"got {self.priors!r}"
            )
        priors = {}
        for label, value in self.priors.items():
            try:
                vector = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                vector = np.full(len(categories) + 1, np.nan)  # refused below
            if (
                vector.shape != (len(categories),)
                or np.any(vector <= 0)
                or not np.isclose(vector.sum(), 1.0)
            ):
                raise ValueError(
                    f"priors[{label!r}] must be {len(categories)} probabilities > 0 summing to 1"
                )
            priors[str(label)] = tuple(float(v) for v in vector)
        set_("priors", priors)
        if self.true_category not in categories:
            raise ValueError(
                f"true_category must be one of {categories}, got {self.true_category!r}"
            )
        self._check_setting(known.shape[1])
        replications = self.replications
        if isinstance(replications, bool) or not isinstance(replications, int) or replications < 2:
            raise ValueError(f"replications must be an integer >= 2, got {replications!r}")
        check_memory(
            8.0 * MONTE_CARLO_ARRAYS * replications * len(categories),
            f"replications ({replications:,} Monte Carlo draws)",
        )
        if self.published is not None:
            tables = as_counts(self.published, "published")
            if tables.shape != (known.shape[0], known.shape[1] + 1):
                raise ValueError(
                    f"published must hold one table per category ({known.shape[0]} rows of "
                    f"{known.shape[1] + 1} counts: block group, then blocks), "
                    f"got {self.published!r}"
                )
            if np.any(tables[:, 0] != tables[:, 1:].sum(axis=1)):
                raise ValueError("published: each category's blocks must sum to its block group")
            block_counts(tables[:, 1:], "published")
            set_("published", tuple(tuple(int(t) for t in row) for row in tables))

    #: The latent of the decision: the target's category index.
    target = "C"

    @property
    def truth(self) -> int:
        return self.categories.index(self.true_category)

    def mechanisms(self):
        """The noise of each unit: the block group first."""
        return self._unit_noise(len(self.known_counts[0]))

    @cached_property
    def published_laws(self) -> list[PublishedLaw]:
        """The law of each category's published table on the noise grid."""
        parents, path = self._hierarchy(len(self.known_counts[0]))
        variances = np.array([m.variance for m in self.mechanisms()])
        return [
            published_law(
                np.array([sum(row), *row], dtype=np.float64),
                path,
                variances,
                parents,
                None,
                self.grid,
            )
            for row in self.known_counts
        ]

    @cached_property
    def laws(self) -> list[dict]:
        """Each category cell's laws of its log ratio R (:mod:`.attribute`), by adversary."""
        path = self._hierarchy(len(self.known_counts[0]))[1]
        noisy = noisy_ratio_laws(self.grid, path, self.mechanisms())
        return [
            {"noisy": noisy, "published": published_ratio_laws(law, self.grid)}
            for law in self.published_laws
        ]

    def _measures(self, prior: np.ndarray, truth: int, adversary: str) -> dict:
        law = "noisy" if adversary in ("noisy", "both") else "published"
        return attribute_measures(
            prior,
            truth,
            self.laws,
            law,
            tie_rule=self.tie_rule,
            replications=self.replications,
            seed=self.seed,
        )

    def bayes_accuracy(self, prior_label: str | None = None) -> dict[str, float]:
        """``{adversary: P[correct] averaged over the prior's categories}`` (the data-processing
        inequality: ``published`` ≤ ``noisy``)."""
        prior = np.array(self.priors[prior_label_of(self.priors, prior_label)])
        return {
            adversary: float(
                sum(
                    prior[k] * self._measures(prior, k, adversary)["correct_decision_probability"]
                    for k in range(len(self.categories))
                )
            )
            for adversary in ("noisy", "published")
        }

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4), (3.6) for the true category, of the adversary ``post_processing`` names."""
        prior = np.array(self.priors[prior_label_of(self.priors, prior_label)])
        result = self._measures(prior, self.truth, POST_PROCESSING[self.post_processing])
        prior_of_truth = float(prior[self.truth])
        error = result.get("error", self.grid.omitted_mass * len(self.categories))
        return MarginalMeasures.of_average(
            result["marginal_posterior"],
            result["correct_decision_probability"],
            prior_of_truth,
            omitted_mass=self.grid.omitted_mass * len(self.categories),
            error_bound=error,
            method=result["method"],
            details={k: v for k, v in result.items() if k not in ("method", "error")},
            tie_rule=self.tie_rule,
        )

    def _cell_likelihoods(self) -> np.ndarray:
        """``L[c, x] = P[T_c | x]`` of each category's published table (``published``)."""
        if self.published is None:
            raise ValueError("published: the case states no published tables to condition on")
        return np.array(
            [
                law.of_table(table)
                for law, table in zip(self.published_laws, self.published, strict=True)
            ]
        )

    def _log_likelihood(self) -> np.ndarray:
        """``log P[T | C = k]`` for every category, up to a constant."""
        with np.errstate(divide="ignore"):
            log_l = np.log(self._cell_likelihoods())
        return log_l[:, 0].sum() + log_l[:, 1] - log_l[:, 0]

    def posterior(self, prior_label: str | None = None) -> np.ndarray:
        """The adversary's posterior over the categories given the ``published`` tables."""
        prior = np.array(self.priors[prior_label_of(self.priors, prior_label)])
        joint = np.log(prior) + self._log_likelihood()
        return np.exp(joint - logsumexp(joint))

    def model(self, prior_label: str | None = None) -> pm.Model:
        """``C`` (``pm.Categorical`` over the categories) and the published tables' log
        likelihood as a ``pm.Potential`` (summed over the noise grid)."""
        import pymc as pm
        import pytensor.tensor as pt

        prior = np.array(self.priors[prior_label_of(self.priors, prior_label)])
        log_likelihood = self._log_likelihood()
        with pm.Model() as model:
            category = pm.Categorical("C", p=prior)
            pm.Potential("published_tables", pt.as_tensor_variable(log_likelihood)[category])
        return model
