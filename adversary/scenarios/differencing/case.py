"""Differencing and averaging: every redundant noisy version of the target's count.

Kazan & Reiter's single-block adversary sees one noisy count of the target's
cell, ``x1* = X1 + Z`` with ``X1 ∈ {m, m+1}``. A release can hold more
(Bach 2020, Sec. 3.3, "massive averaging"): the same count published again
with fresh noise (``repeats``), and published totals that contain the cell:
a total minus the other published cells it sums, whose counts the adversary
does not know, is ``X1`` plus the sum of ``1 + n`` independent noises
(``differences``: the ``n`` of each total). Each such *independent redundant
representation* is one more noisy look at ``X1``; their noises are
independent, so the exact likelihood is the product of their pmfs — the
noise of a difference is the ``(1 + n)``-fold convolution of the mechanism
(:meth:`~adversary.noise.mechanisms.NoiseMechanism.sum_table`), and the
``t`` repeats of a discrete Gaussian count are summarised without loss by
their sum (its log likelihood ratio is linear), a look at ``t · X1`` with the
noise of ``t`` copies. Under the cell-key method's bounded noise the repeats
stay separate looks: averaging them is what Bach shows defeats bounded noise.

:class:`DifferencingCase` gives the data holder's measures (3.3), (3.4),
(3.6) of the Bayes adversary who uses them all
(:func:`~adversary.scenarios.multi_query.look_measures`: exact over the
release grid when it is small, Monte Carlo with standard errors otherwise),
and :meth:`DifferencingCase.averaging_success`, the probability that the
rounded mean of the looks is the true count (Bach's α).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..._validation import (
    MAX_EXACT_COUNT,
    as_counts,
    as_generator,
    as_integers,
    binary_priors,
    check_count_noise,
    is_noise_free,
)
from ...budget import detailed_rho
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.noise import resolve
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...memory import TABLE_ARRAYS, check_memory
from ...noise.mechanisms import DiscreteGaussianNoise, FinitePmfNoise, NoiseMechanism
from ..multi_query.measures import METHODS, look_measures

if TYPE_CHECKING:  # imported where a PyMC model is built
    import pymc as pm

__all__ = ["DifferencingCase", "Look"]

#: Release probability each convolved noise table may leave out.
SUM_TAIL_MASS = 1e-13
#: Arrays of replications × looks a Monte Carlo sum holds at once (noise, residuals, log
#: likelihoods of both values, temporaries).
MONTE_CARLO_ARRAYS = 8


@dataclass(frozen=True)
class Look:
    """One representation of the target's count: ``label``, how many times it counts the
    target (``shift``), its noise (``mechanism``) and the mass its table left out."""

    label: str
    shift: int
    mechanism: NoiseMechanism
    omitted_mass: float


@dataclass(frozen=True)
class DifferencingCase(CaseFields):
    """The single-block target seen through repeated counts and differenced totals.

    ``priors`` maps a label to ``p = P[X1 = m + 1]``; ``known_count`` is ``m``;
    the truth ``true_count`` (default ``m + 1``). ``repeats`` is how many
    times the target's count is released with independent noise (1: the
    single-query attack); ``differences`` the number of other cells in each
    published total the adversary differences (one entry per total, e.g.
    ``(1, 6)``: a two-cell total and a seven-cell one). Each released count
    has the noise of ``rho`` under ``convention`` (σ² = 1/(2ρ) paper, 1/ρ
    DAS) or ``mechanism``. ``observed_releases`` are the looks' values, in the
    order of :meth:`looks` (each is ``shift · X1`` plus its noise: a released
    count, a total minus its other cells, or the sum of pooled repeats), which
    :meth:`model` and :meth:`posterior` condition on. ``method``,
    ``replications`` and ``seed`` as in
    :func:`~adversary.scenarios.multi_query.look_measures`.
    """

    name: str
    priors: dict[str, float]
    known_count: int = 0
    true_count: int | None = None
    repeats: int = 1
    differences: tuple[int, ...] = ()
    rho: float | None = detailed_rho("block")
    convention: str = "paper"
    mechanism: NoiseMechanism | None = None
    observed_releases: tuple[int, ...] | None = None
    method: str = "auto"
    replications: int = 20_000
    seed: int = 0
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        object.__setattr__(self, "priors", binary_priors(self.priors))
        known = as_counts(self.known_count, "known_count")
        if known.ndim != 0:
            raise ValueError(f"known_count must be one count, got shape {known.shape}")
        m = int(known)
        if self.true_count is not None and self.true_count not in (m, m + 1):
            raise ValueError(f"true_count must be {m} or {m + 1}, got {self.true_count!r}")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or self.repeats < 0:
            raise ValueError(f"repeats must be an integer >= 0, got {self.repeats!r}")
        if (m + 1) * max(self.repeats, 1) > MAX_EXACT_COUNT:
            raise ValueError(
                f"known_count: the looks ((known_count + 1) × repeats) must stay within 2**53, "
                f"got {m} with {self.repeats} repeats"
            )
        differences = as_counts(self.differences, "differences")
        if differences.ndim != 1 or np.any(differences < 1):
            raise ValueError(
                f"differences must be a tuple of numbers of other cells >= 1, "
                f"got {self.differences!r}"
            )
        object.__setattr__(self, "differences", tuple(int(n) for n in differences))
        if self.repeats + len(self.differences) == 0:
            raise ValueError(
                "repeats: the adversary needs at least one look (repeats or differences)"
            )
        resolve(self.rho, self.convention, self.mechanism)
        setting = "rho" if self.mechanism is None else "mechanism"
        check_count_noise(self.noise().variance, setting, noise_free=True)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        self._check_replications(self.replications)
        as_generator(self.seed, "seed")

    def _check_replications(self, replications) -> None:
        """An integer >= 2 whose Monte Carlo arrays (replications × looks) fit the budget."""
        if isinstance(replications, bool) or not isinstance(replications, int) or replications < 2:
            raise ValueError(f"replications must be an integer >= 2, got {replications!r}")
        pooled = isinstance(self.noise(), DiscreteGaussianNoise) and self.repeats > 1
        looks = (1 if pooled else self.repeats) + len(self.differences)
        check_memory(
            8.0 * MONTE_CARLO_ARRAYS * replications * looks,
            f"replications ({replications:,} Monte Carlo draws of {looks:,} looks)",
        )

    def _observed(self) -> np.ndarray:
        if self.observed_releases is None:
            raise ValueError("observed_releases: the case states no looks to condition on")
        observed = as_integers(list(self.observed_releases), "observed_releases")
        if observed.shape != (len(self.looks()),):
            labels = [look.label for look in self.looks()]
            raise ValueError(f"observed_releases must be one value per look {labels}")
        return observed

    def posterior(self, prior_label: str | None = None) -> float:
        """``P[X1 = m + 1 | observed_releases]`` under one prior."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        m, log_odds = int(self.known_count), np.log(p) - np.log1p(-p)
        for look, value in zip(self.looks(), self._observed(), strict=True):
            log_odds += look.mechanism.logpmf(value - look.shift * (m + 1)) - look.mechanism.logpmf(
                value - look.shift * m
            )
        return float(1.0 / (1.0 + np.exp(-log_odds)))

    def model(self, prior_label: str | None = None) -> pm.Model:
        """``X1`` (:class:`~adversary.distributions.BernoulliCount`) and one
        :func:`~adversary.distributions.NoiseRelease` per look, observed."""
        import pymc as pm

        from ...distributions import BernoulliCount, NoiseRelease

        p = self.priors[prior_label_of(self.priors, prior_label)]
        observed = self._observed()
        with pm.Model() as model:
            x1 = BernoulliCount("X1", known=int(self.known_count), p=p)
            for i, look in enumerate(self.looks()):
                NoiseRelease(f"look_{i}", look.shift * x1, look.mechanism, observed=observed[i])
        return model

    @property
    def truth(self) -> int:
        return int(self.known_count) + 1 if self.true_count is None else int(self.true_count)

    def noise(self) -> NoiseMechanism:
        """The noise of one released count."""
        if self.mechanism is not None:
            return self.mechanism
        return DiscreteGaussianNoise.from_rho(self.rho, self.convention)

    def looks(self) -> tuple[Look, ...]:
        """The representations of the target's count (module docstring)."""
        return self._looks

    @cached_property
    def _looks(self) -> tuple[Look, ...]:
        """Built once: a convolved table per summed look."""
        noise = self.noise()
        looks = []
        if isinstance(noise, DiscreteGaussianNoise) and self.repeats > 1:
            label = f"sum of {self.repeats} repeats"
            looks.append(self._summed(label, self.repeats, self.repeats, "repeats"))
        else:
            looks += [Look(f"repeat {i + 1}", 1, noise, 0.0) for i in range(self.repeats)]
        looks += [
            self._summed(f"total of 1 + {n} cells minus {n}", 1, 1 + n, "differences")
            for n in self.differences
        ]
        return tuple(looks)

    def _summed(self, label: str, shift: int, copies: int, name: str) -> Look:
        """The look at the sum of ``copies`` noises; ``name``: the argument that asked for it
        (its table of ``copies`` times one copy's length is sized before it is made)."""
        one = len(self.noise().table(SUM_TAIL_MASS / copies).probabilities)
        check_memory(
            16.0 * TABLE_ARRAYS * (copies * (one - 1) + 1),
            f"{name} (the noise of a sum of {copies:,} counts)",
        )
        table = self.noise().sum_table(copies, SUM_TAIL_MASS)
        mechanism = FinitePmfNoise(int(table.start), tuple(table.probabilities))
        return Look(label, shift, mechanism, float(table.omitted_mass))

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4), (3.6) of the Bayes adversary who uses every look."""
        p = self.priors[prior_label_of(self.priors, prior_label)]
        looks = self.looks()
        incidence = np.array([[0, look.shift] for look in looks])
        measures = look_measures(
            np.array([1.0 - p, p]),
            incidence,
            [look.mechanism for look in looks],
            int(self.truth == self.known_count + 1),
            np.array([0, 1]),
            tie_rule=self.tie_rule,
            method=self.method,
            replications=self.replications,
            seed=self.seed,
        )
        tables = sum(look.omitted_mass for look in looks)
        return dataclasses.replace(
            measures,
            omitted_mass=measures.omitted_mass + tables,
            error_bound=measures.error_bound + tables,
            details={**measures.details, "looks": [look.label for look in looks]},
        )

    def averaging_success(self, replications: int | None = None, seed=None) -> tuple[float, float]:
        """``(α, SE)``: how often the rounded mean of every look is the true count (Bach's α).

        Each look ``r`` estimates the count by ``r / shift``; the average is
        weighted by the looks' inverse noise variances (the best linear
        estimate). Monte Carlo over ``replications`` release sets.
        """
        replications = self.replications if replications is None else replications
        self._check_replications(replications)
        rng = as_generator(self.seed if seed is None else seed, "seed")
        looks = self.looks()
        if any(is_noise_free(look.mechanism.variance) for look in looks):
            return 1.0, 0.0  # a look without noise is the true count in every release set
        estimates, weights = [], []
        for look in looks:
            z = np.asarray(look.mechanism.sample(replications, rng), dtype=np.float64)
            estimates.append((look.shift * self.truth + z) / look.shift)
            weights.append(look.shift**2 / look.mechanism.variance)
        weights = np.array(weights)
        mean = np.average(np.array(estimates), axis=0, weights=weights)
        hit = np.floor(mean + 0.5) == self.truth
        return float(hit.mean()), float(np.sqrt(hit.mean() * (1 - hit.mean()) / replications))
