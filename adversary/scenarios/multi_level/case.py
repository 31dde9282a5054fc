"""A concrete ℓ-level attack: :class:`MultiLevelCase`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.noise import mechanism_tuple
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import noise_variance
from ...noise.mechanisms import NoiseMechanism
from .data_holder import marginals
from .inputs import checked_known_counts, checked_releases, checked_rhos, truth_has_c
from .scores import posterior
from .sums import DEFAULT_GRID_WIDTH

__all__ = ["MultiLevelCase"]


@dataclass(frozen=True)
class MultiLevelCase(CaseFields):
    """A concrete ℓ-level attack (S1.3): ρ per level, priors, truth and observed releases.

    Implements :class:`~adversary.measures.protocol.Attack`. ``rhos`` holds ρ of
    every level the case knows of, lowest (the block) first; ``levels`` is
    how many of them the target is unique at and the adversary uses (the
    first ``levels``; default all), so the S1.3 curve over ℓ is a sweep of
    ``levels`` with :func:`dataclasses.replace`. ``known_counts`` is ``m_i``
    per level (one number: the same m at every level; default 0, the unique
    target); ``true_count`` the data holder's ``x1`` (default ``m_1 + 1``);
    ``priors`` maps a label to ``p = P[T = 1]``; ``observed_releases`` the
    noisy counts per level that :meth:`model` and :meth:`posterior` condition
    on (``None``: none stated, and those two methods refuse); ``level_names``
    optional names of the levels. ``mechanism``, if given, is the noise of
    every level (a sequence, one per level; stored as a tuple) instead of
    ``rhos`` (then ``None``) and ``convention``. ``tie_rule`` is how a tied
    decision counts in (3.6) (:mod:`adversary.measures.decision`).
    """

    name: str
    rhos: tuple[float, ...] | None
    priors: dict[str, float]
    observed_releases: tuple[int, ...] | None = None
    levels: int | None = None
    known_counts: int | tuple[int, ...] = 0
    true_count: int | None = None
    convention: str = "paper"
    level_names: tuple[str, ...] = ()
    description: str = ""
    mechanism: tuple[NoiseMechanism, ...] | None = None
    tie_rule: str = DEFAULT_TIE_RULE

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        if self.mechanism is not None:
            if self.rhos is not None:
                raise ValueError("rhos: give rhos or mechanism, not both (got both)")
            object.__setattr__(self, "mechanism", mechanism_tuple(self.mechanism))
            n_all = len(self.mechanism)
        else:
            if self.rhos is None:
                raise ValueError("rhos: give rhos (with convention) or mechanism")
            rhos = checked_rhos(self.rhos)
            if rhos.ndim != 1:
                raise ValueError(
                    f"rhos must be a 1-d sequence of per-level ρ, got shape {rhos.shape}"
                )
            noise_variance(rhos, self.convention)
            object.__setattr__(self, "rhos", tuple(float(r) for r in rhos))
            n_all = rhos.size
        if self.levels is not None and (
            isinstance(self.levels, bool)
            or not isinstance(self.levels, int | np.integer)
            or not 1 <= self.levels <= n_all
        ):
            raise ValueError(
                f"levels must be an integer from 1 to {n_all} (the number of levels of rhos "
                f"or mechanism), got {self.levels!r}"
            )
        known = checked_known_counts(self.known_counts, n_all)
        if known.ndim != 1:
            raise ValueError(f"known_counts must be one count or one per level, got {known.shape}")
        if np.ndim(self.known_counts) != 0:
            object.__setattr__(self, "known_counts", tuple(int(k) for k in known))
        truth_has_c(known[0], self.true_count)
        if self.observed_releases is not None:
            releases = checked_releases(self.observed_releases, n_all, "observed_releases")
            if releases.ndim != 1:
                raise ValueError(
                    f"observed_releases must be 1-d, one noisy count per level, got "
                    f"{releases.shape}"
                )
            object.__setattr__(self, "observed_releases", tuple(int(x) for x in releases))
        if self.level_names and len(self.level_names) != n_all:
            raise ValueError(
                f"level_names must name every level ({n_all}), got {self.level_names!r}"
            )
        if not self.priors:
            raise ValueError("priors must map at least one label to a prior probability")
        as_probability(list(self.priors.values()), "priors")
        if self.levels is not None:
            object.__setattr__(self, "levels", int(self.levels))

    @property
    def _all_levels(self) -> int:
        return len(self.rhos) if self.mechanism is None else len(self.mechanism)

    @property
    def n_levels(self) -> int:
        """ℓ, the number of levels used."""
        return self._all_levels if self.levels is None else int(self.levels)

    @property
    def used_rhos(self) -> np.ndarray | None:
        """ρ of the ℓ levels used (``None`` for a case with mechanisms)."""
        return None if self.rhos is None else np.array(self.rhos[: self.n_levels])

    @property
    def used_mechanisms(self) -> tuple[NoiseMechanism, ...] | None:
        """The mechanisms of the ℓ levels used (``None`` for a case with ρ)."""
        return None if self.mechanism is None else self.mechanism[: self.n_levels]

    @property
    def used_known_counts(self) -> np.ndarray:
        """``m_i`` of the ℓ levels used."""
        return checked_known_counts(self.known_counts, self._all_levels)[: self.n_levels]

    @property
    def truth(self) -> int:
        """The data holder's true level-1 count ``x1`` (``m_1 + 1`` unless given)."""
        first = int(self.used_known_counts[0])
        return first + 1 if self.true_count is None else int(self.true_count)

    def _prior(self, prior_label: str | None) -> float:
        return float(self.priors[prior_label_of(self.priors, prior_label)])

    def _observed(self) -> np.ndarray:
        if self.observed_releases is None:
            raise ValueError(
                "observed_releases: the case states no observed releases to condition on"
            )
        return np.array(self.observed_releases[: self.n_levels])

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given the observed releases of the ℓ levels."""
        from .pymc_model import model  # PyMC: imported when a model is built

        return model(
            self._observed(),
            self._prior(prior_label),
            self.used_rhos,
            self.used_known_counts,
            self.convention,
            mechanism=self.used_mechanisms,
        )

    def posterior(self, prior_label: str | None = None) -> float:
        """The adversary's posterior (S1.1) of the truth given the observed releases."""
        return float(
            posterior(
                self._observed(),
                self._prior(prior_label),
                self.used_rhos,
                self.used_known_counts,
                self.true_count,
                self.convention,
                mechanism=self.used_mechanisms,
            )
        )

    def marginal_measures(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) with the posterior (S1.1), from :func:`marginals`.

        ``omitted_mass`` is the release probability the sums leave out;
        ``error_bound`` the larger of the marginal posterior's bound (grid plus
        truncation) and the decision probability's (truncation, or the grid
        bracket); the marginal risk's own bound and the rest are in
        ``details``.
        """
        p = self._prior(prior_label)
        result = marginals(
            p,
            self.used_rhos,
            self.used_known_counts,
            self.true_count,
            self.convention,
            tail_mass,
            grid_width,
            mechanism=self.used_mechanisms,
            tie_rule=self.tie_rule,
        )
        has_c = self.truth == int(self.used_known_counts[0]) + 1
        return MarginalMeasures(
            marginal_posterior=float(result.marginal_posterior),
            marginal_risk=float(result.marginal_risk),
            correct_decision_probability=float(result.correct_decision_probability),
            prior_of_truth=p if has_c else 1.0 - p,
            omitted_mass=float(result.omitted_mass),
            error_bound=float(max(result.posterior_error_bound, result.decision_error_bound)),
            details={
                "levels": self.n_levels,
                "posterior_error_bound": float(result.posterior_error_bound),
                "risk_error_bound": float(result.risk_error_bound),
                "decision_error_bound": float(result.decision_error_bound),
                "decision_exact": bool(result.decision_exact),
                "cutoffs": [int(k) for k in result.cutoffs],
                "grid_width": float(result.grid_width),
            },
            tie_rule=self.tie_rule,
        )
