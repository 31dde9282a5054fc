"""A target in a block group with TopDown's tables published: :class:`PublishedTablesCase`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..._validation import as_counts, as_generator, binary_priors
from ...measures.marginal import MarginalMeasures
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...measures.standard_errors import DEFAULT_SE_MULTIPLE
from ...memory import check_memory
from ...noise.mechanisms import NoiseMechanism
from .adversaries import (
    PublishedLaw,
    published_law,
    published_tables,
    simulated_laws,
    three_adversaries,
)
from .grid import MAX_NOISE_VECTORS, grid_size
from .setting import POST_PROCESSING, BlockGroupTables, block_counts

if TYPE_CHECKING:  # imported where a PyMC model is built
    import pymc as pm

__all__ = ["POST_PROCESSING", "PublishedTablesCase"]

#: How the measures are found: summed over the noise grid, or simulated (``auto``: the grid when
#: it has at most :data:`~.grid.MAX_NOISE_VECTORS` vectors).
METHODS = ("auto", "exact", "simulation")
#: Arrays of draws × units a simulation holds at once: the noise, the measurements and the
#: four tables of :func:`~.adversaries.published_tables` (int64 or float64 each).
SIMULATION_ARRAYS = 8


@dataclass(frozen=True)
class PublishedTablesCase(CaseFields, BlockGroupTables):
    """The single-block attack (Sec. 3.1) when the data holder publishes TopDown's tables.

    A block group and its blocks (:class:`~.setting.BlockGroupTables`: their
    ρ, convention, noise grid and ``post_processing``), one count per unit:
    the count of the target's cell.
    ``known_counts`` are the other persons' counts in each block (the
    adversary knows them all; the block group's is their sum); the target is
    in block ``target_block``, and ``X1 ∈ {m, m+1}`` (``m`` the known count of
    that block) with prior ``P[X1 = m+1] = p`` from ``priors``; the truth is
    ``true_count`` (default ``m + 1``). The noise is the discrete Gaussian of
    ``convention`` (``"paper"``: σ² = 1/(2ρ); ``"das"``: σ² = 1/ρ), or
    ``mechanism`` for every unit. TopDown (:func:`adversary.topdown.topdown`)
    makes the published tables: the block group's measurement (or, with
    ``invariant=True``, its true count) rounded, then the blocks fitted to it
    and rounded keeping it. ``post_processing`` is what the adversary of
    :meth:`marginal_measures` sees: ``"none"`` (the noisy measurements),
    ``"topdown"`` (the published tables) or ``"both"``; ``published`` is a
    published table (block group first) that :meth:`model` and
    :meth:`posterior` condition on. The sums run over the noise grid, each
    unit's table leaving out at most ``tail_mass`` (``method="exact"``), or
    (``"simulation"``; ``"auto"`` when the grid is too large) ``draws``
    simulated runs in ``batches`` chunks: each chunk's measures use the
    table's law estimated from the other chunks (cross-fitting), and the
    spread of the chunks' measures gives the standard errors; the error bound
    adds the share of runs whose table no other chunk published
    (``details["unseen_tables"]``: their posterior is the prior's), which
    nears 1 when the blocks are many and the tables outnumber the draws.
    """

    name: str
    priors: dict[str, float]
    known_counts: tuple[int, ...]
    true_count: int | None = None
    mechanism: NoiseMechanism | None = None
    invariant: bool = False
    published: tuple[int, ...] | None = None
    method: str = "auto"
    draws: int = 100_000
    batches: int = 10

    def __post_init__(self):
        set_ = lambda field, value: object.__setattr__(self, field, value)  # noqa: E731
        set_("priors", binary_priors(self.priors))
        known = block_counts(self.known_counts, "known_counts")
        if known.ndim != 1 or known.size < 1:
            raise ValueError(
                f"known_counts must hold one count per block, got {self.known_counts!r}"
            )
        set_("known_counts", tuple(int(k) for k in known))
        self._check_setting(known.size, self.mechanism)
        m = self.known_counts[self.target_block]
        if self.true_count is not None and self.true_count not in (m, m + 1):
            raise ValueError(
                f"true_count must be {m} or {m + 1} (known count m = {m}), got {self.true_count!r}"
            )
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not isinstance(self.invariant, bool | np.bool_):
            raise TypeError(f"invariant must be True or False, got {self.invariant!r}")
        for name, least in (("draws", 2), ("batches", 2)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        if self.batches > self.draws // 2:
            raise ValueError(
                f"batches must leave at least 2 draws each ({self.draws} draws), "
                f"got {self.batches!r}"
            )
        if self.published is not None:
            table = as_counts(self.published, "published")
            if table.shape != (known.size + 1,):
                raise ValueError(
                    f"published must be {known.size + 1} counts (block group, then each block), "
                    f"got {self.published!r}"
                )
            if table[0] != table[1:].sum():
                raise ValueError(
                    "published: the blocks must sum to the block group, as TopDown's do"
                )
            block_counts(table[1:], "published")
            set_("published", tuple(int(t) for t in table))

    # --- the hierarchy ---------------------------------------------------------------------

    @property
    def truth(self) -> int:
        """The true count ``x1`` of the target's block (``m + 1`` unless given)."""
        m = self.known_counts[self.target_block]
        return m + 1 if self.true_count is None else int(self.true_count)

    @property
    def parents(self) -> np.ndarray:
        return self._hierarchy(len(self.known_counts))[0]

    @property
    def _known(self) -> np.ndarray:
        return np.array([sum(self.known_counts), *self.known_counts], dtype=np.float64)

    @property
    def _path(self) -> np.ndarray:
        return self._hierarchy(len(self.known_counts))[1]

    def mechanisms(self) -> tuple[NoiseMechanism, ...]:
        """The noise of each unit: the block group first."""
        return self._unit_noise(len(self.known_counts), self.mechanism)

    @cached_property
    def law(self) -> PublishedLaw:
        """The published table's law on the grid (:func:`.adversaries.published_law`)."""
        known, path, _, variances, parents, invariant = self._arguments()
        return published_law(known, path, variances, parents, invariant, self.grid)

    @cached_property
    def exact(self) -> bool:
        """Whether the measures are summed over the grid (else simulated): by :attr:`method`."""
        if self.method != "auto":
            return self.method == "exact"
        return grid_size(self.mechanisms(), self.tail_mass) <= MAX_NOISE_VECTORS

    @cached_property
    def _simulated(self) -> list:
        """``batches`` cross-fitted ``(grid, law)`` (:func:`.adversaries.simulated_laws`)."""
        self._check_draws(self.draws, "draws")
        known, path, mechanisms, variances, parents, invariant = self._arguments()
        rng = np.random.default_rng(self.seed)
        return simulated_laws(
            known, path, variances, parents, invariant, mechanisms, self.draws, self.batches, rng
        )

    def _adversaries(self, p: float, truth: int) -> list[dict]:
        """Each adversary's measures for ``truth`` (``x``), with their standard errors."""
        if self.exact:
            rows = three_adversaries(
                p, truth, self.mechanisms(), self._path, self.grid, self.law, self.tie_rule
            )
            return [
                {**vars(r), "se_posterior": 0.0, "se_correct": 0.0, "unseen": 0.0} for r in rows
            ]
        batches = [
            three_adversaries(p, truth, self.mechanisms(), self._path, grid, law, self.tie_rule)
            for grid, law, _ in self._simulated
        ]
        unseen = float(np.mean([share[truth] for _, _, share in self._simulated]))
        rows = []
        for i, first in enumerate(batches[0]):
            values = {
                name: np.array([getattr(batch[i], name) for batch in batches])
                for name in ("marginal_posterior", "marginal_risk", "correct_decision_probability")
            }
            se = {name: v.std(ddof=1) / np.sqrt(len(v)) for name, v in values.items()}
            rows.append(
                {
                    **vars(first),
                    **{name: float(v.mean()) for name, v in values.items()},
                    "omitted_mass": 0.0,
                    "se_posterior": float(se["marginal_posterior"]),
                    "se_correct": float(se["correct_decision_probability"]),
                    "unseen": unseen if first.adversary == "published" else 0.0,
                }
            )
        return rows

    def _arguments(self):
        variances = np.array([m.variance for m in self.mechanisms()])
        invariant = int(self._known[0]) if self.invariant else None
        return self._known, self._path, self.mechanisms(), variances, self.parents, invariant

    # --- measures --------------------------------------------------------------------------

    def three_adversaries(self, prior_label: str | None = None) -> pd.DataFrame:
        """The three adversaries side by side, for the truth and for the other value.

        One row per adversary and truth (``x`` = 1: the target in the cell):
        (3.3), (3.4), (3.6) and ``bayes_accuracy``, the probability of a
        correct decision averaged over the prior (the same in both rows of an
        adversary). Every value is exact up to ``omitted_mass``.
        """
        p = self.priors[prior_label_of(self.priors, prior_label)]
        rows = [row for truth in (1, 0) for row in self._adversaries(p, truth)]
        frame = pd.DataFrame(rows)
        correct = frame.pivot(
            index="adversary", columns="truth", values="correct_decision_probability"
        )
        accuracy = p * correct[1] + (1 - p) * correct[0]
        frame["bayes_accuracy"] = frame["adversary"].map(accuracy)
        return frame

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4), (3.6) for the truth, of the adversary :attr:`post_processing` names."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        truth = int(self.truth != self.known_counts[self.target_block])
        rows = self._adversaries(p, truth)
        row = next(r for r in rows if r["adversary"] == POST_PROCESSING[self.post_processing])
        details = {"adversary": row["adversary"]}
        if self.exact:
            error, method = row["omitted_mass"], "exact"
            details["noise_vectors"] = len(self.grid.weight)
        else:
            # runs whose table no other batch published sit at the prior: off by up to their share
            error = DEFAULT_SE_MULTIPLE * max(row["se_posterior"], row["se_correct"])
            error += row["unseen"]
            method = "monte-carlo"
            details["standard_errors"] = {
                "marginal_posterior": row["se_posterior"],
                "correct_decision_probability": row["se_correct"],
            }
            details["draws"] = self.draws
            details["unseen_tables"] = row["unseen"]
        return MarginalMeasures(
            marginal_posterior=row["marginal_posterior"],
            marginal_risk=row["marginal_risk"],
            correct_decision_probability=row["correct_decision_probability"],
            prior_of_truth=p if truth else 1.0 - p,
            omitted_mass=row["omitted_mass"],
            error_bound=error,
            method=method,
            details=details,
            tie_rule=self.tie_rule,
        )

    # --- the adversary who sees one published table -----------------------------------------

    def table_likelihood(self, table=None) -> np.ndarray:
        """``(P[T | X1 = m], P[T | X1 = m+1])`` of a published table (default ``published``),
        from the law on the noise grid (:attr:`law`; exact up to its omitted mass)."""
        return self.law.of_table(self._table(table))

    def simulated_table_likelihood(self, table=None, draws: int = 100_000, seed=0):
        """:meth:`table_likelihood` by simulating noise and TopDown: ``(estimates, SEs)``.

        For hierarchies whose grid is too large to sum; the estimate of each
        probability is a binomial proportion over ``draws`` runs.
        """
        target = self._table(table)
        if isinstance(draws, bool) or not isinstance(draws, int) or draws < 2:
            raise ValueError(f"draws must be an integer >= 2, got {draws!r}")
        self._check_draws(draws, "draws")
        known, path, mechanisms, variances, parents, invariant = self._arguments()
        rng = as_generator(seed, "seed")
        noise = np.stack([np.asarray(m.sample(draws, rng)) for m in mechanisms], axis=1)
        tables, _ = published_tables(noise, known, path, variances, parents, invariant)
        estimates = np.array([np.mean(np.all(tables[x] == target, axis=1)) for x in (0, 1)])
        return estimates, np.sqrt(estimates * (1 - estimates) / draws)

    def _check_draws(self, draws: int, name: str) -> None:
        """Refuse, naming ``name``, simulations whose arrays would pass the memory budget."""
        units = len(self.known_counts) + 1
        check_memory(8.0 * SIMULATION_ARRAYS * draws * units, f"{name} ({draws:,} simulated runs)")

    def _table(self, table) -> np.ndarray:
        name, table = ("published", self.published) if table is None else ("table", table)
        if table is None:
            raise ValueError("published: the case states no published table to condition on")
        table = as_counts(table, name)
        if table.shape != (len(self.known_counts) + 1,):
            raise ValueError(
                f"{name} must be {len(self.known_counts) + 1} counts (block group, then each "
                f"block), got shape {table.shape}"
            )
        return table

    def posterior(self, prior_label: str | None = None) -> float:
        """``P[X1 = m + 1 | published]`` under one prior."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        without, with_target = self.table_likelihood()
        if without + with_target == 0:
            raise ValueError("published: TopDown cannot publish this table from either value")
        return float(p * with_target / (p * with_target + (1 - p) * without))

    def model(self, prior_label: str | None = None) -> pm.Model:
        """``X1`` (:class:`~adversary.distributions.BernoulliCount`) and the published table's
        log likelihood as a ``pm.Potential`` (the table's law has no closed form)."""
        import pymc as pm
        import pytensor.tensor as pt

        from ...distributions import BernoulliCount

        p = self.priors[prior_label_of(self.priors, prior_label)]
        m = self.known_counts[self.target_block]
        with np.errstate(divide="ignore"):
            log_likelihood = np.log(self.table_likelihood())
        with pm.Model() as model:
            x1 = BernoulliCount("X1", known=m, p=p)
            pm.Potential("published_table", pt.as_tensor_variable(log_likelihood)[x1 - m])
        return model
