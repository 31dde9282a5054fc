"""A concrete unknown-attribute attack: :class:`UnknownAttributeCase`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_positive
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.marginal import MarginalMeasures
from ...measures.noise import mechanism_tuple
from ...measures.protocol import CaseFields
from ...measures.protocol import prior_label as prior_label_of
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import noise_variance
from ...noise.mechanisms import NoiseMechanism
from . import inputs
from .data_holder import marginals
from .scores import decision, posterior
from .sums import DEFAULT_GRID_WIDTH, UnknownAttributeMarginals

__all__ = ["UnknownAttributeCase"]


@dataclass(frozen=True)
class UnknownAttributeCase(CaseFields):
    """A concrete unknown-attribute attack: categories, known counts, priors, ρ, truth, releases.

    Implements :class:`~adversary.measures.protocol.Attack`. ``categories`` names
    the K values of the unknown variable;
    ``known_counts`` are ``m_1..m_K``, the others in the K cells; ``priors``
    maps a label to the adversary's π, either a sequence in category order or a
    mapping ``{category: probability}`` (stored as a tuple); ``true_category``
    is the target's category (a name, or an index, stored as the name);
    ``rho`` one ρ for every cell or one per category; ``released`` the
    categories whose cells are released, in category order (default all;
    stored as names); ``observed_releases`` the noisy counts of the released
    cells, in category order, that :meth:`model` and :meth:`posterior`
    condition on (``None``: those refuse). ``mechanism``, if given, is the
    noise instead of ``rho`` (then ``None``) and ``convention``: one mechanism
    for every cell or one per category (stored as a tuple). ``tie_rule`` is
    how a tied decision counts in (3.6) (:mod:`adversary.measures.decision`;
    ``"smallest"`` and ``"largest"`` follow the order of ``categories``).
    """

    name: str
    categories: tuple[str, ...]
    known_counts: tuple[int, ...]
    priors: dict
    true_category: str | int
    rho: float | tuple[float, ...] | None
    convention: str = "paper"
    released: tuple[str | int, ...] | None = None
    observed_releases: tuple[int, ...] | None = None
    description: str = ""
    mechanism: NoiseMechanism | tuple[NoiseMechanism, ...] | None = None
    tie_rule: str = DEFAULT_TIE_RULE

    def __post_init__(self):
        check_tie_rule(self.tie_rule)
        categories = self.categories
        if isinstance(categories, str) or not hasattr(categories, "__len__"):
            raise ValueError(f"categories must be a sequence of names, got {categories!r}")
        names = tuple(str(c) for c in categories)
        if len(names) < 2 or len(set(names)) != len(names):
            raise ValueError(f"categories must name K >= 2 distinct categories, got {categories!r}")
        n = len(names)
        object.__setattr__(self, "categories", names)
        known = inputs.checked_known(self.known_counts, n)
        if known.ndim != 1:
            raise ValueError(f"known_counts must be 1-d, one count per category, got {known.shape}")
        object.__setattr__(self, "known_counts", tuple(int(k) for k in known))
        if not isinstance(self.priors, dict) or not self.priors:
            raise ValueError("priors must map at least one label to a prior over the categories")
        priors = {}
        for label, value in self.priors.items():
            if isinstance(value, dict):
                if set(map(str, value)) != set(names):
                    raise ValueError(
                        f"priors[{label!r}] must give a probability for each category "
                        f"{names}, got {value!r}"
                    )
                value = [value[key] for key in inputs.keys_in_order(value, names)]
            vector = inputs.checked_prior(value, f"priors[{label!r}]")
            if vector.shape != (n,):
                raise ValueError(
                    f"priors[{label!r}] must hold one probability per category (K = {n}), "
                    f"got {value!r}"
                )
            priors[str(label)] = tuple(float(x) for x in vector)
        object.__setattr__(self, "priors", priors)
        object.__setattr__(
            self, "true_category", names[self._index(self.true_category, "true_category")]
        )
        if self.mechanism is not None:
            inputs.cell_noise(self.rho, n, self.convention, self.mechanism)
            if not isinstance(self.mechanism, NoiseMechanism):
                object.__setattr__(self, "mechanism", mechanism_tuple(self.mechanism, n))
        else:
            if self.rho is None:
                raise ValueError("rho: give rho (with convention) or mechanism")
            rho = as_positive(self.rho, "rho")
            if rho.ndim == 0:
                object.__setattr__(self, "rho", float(rho))
            elif rho.shape != (n,):
                raise ValueError(
                    f"rho must be one number or one per category (K = {n}), got {self.rho!r}"
                )
            else:
                object.__setattr__(self, "rho", tuple(float(r) for r in rho))
            noise_variance(rho, self.convention)
        if self.released is not None:
            if isinstance(self.released, str) or not hasattr(self.released, "__len__"):
                raise ValueError(
                    f"released must be a sequence of categories, got {self.released!r}"
                )
            index = [self._index(c, "released") for c in self.released]
            mask = inputs.released_mask(index, n)
            if index != sorted(index):
                raise ValueError(
                    f"released must list the categories in the order of categories {names} "
                    f"(observed_releases follow it), got {self.released!r}"
                )
            object.__setattr__(self, "released", tuple(names[k] for k in np.flatnonzero(mask)))
        if self.observed_releases is not None:
            releases = inputs.checked_releases(
                self.observed_releases, len(self.released_indices), "observed_releases"
            )
            if releases.ndim != 1:
                raise ValueError(
                    f"observed_releases must be 1-d, one noisy count per released cell, got "
                    f"{self.observed_releases!r}"
                )
            object.__setattr__(self, "observed_releases", tuple(int(x) for x in releases))

    def _index(self, category, name: str) -> int:
        if isinstance(category, str):
            if category not in self.categories:
                raise ValueError(
                    f"{name} must be one of the categories {self.categories}, got {category!r}"
                )
            return self.categories.index(category)
        return (
            inputs.checked_category(category, len(self.categories))
            if name == "true_category"
            else int(inputs.released_index(category, len(self.categories), name))
        )

    @property
    def n_categories(self) -> int:
        """K."""
        return len(self.categories)

    #: The latent of the decision: the target's category index ``C``.
    target = "C"

    @property
    def truth(self) -> int:
        """The index of the true category, the truth of ``C``."""
        return self.true_index

    @property
    def true_index(self) -> int:
        """Index of the true category."""
        return self.categories.index(self.true_category)

    @property
    def released_indices(self) -> tuple[int, ...]:
        """Indices of the released cells (all by default)."""
        if self.released is None:
            return tuple(range(self.n_categories))
        return tuple(self.categories.index(c) for c in self.released)

    def prior_vector(self, prior_label: str | None = None) -> np.ndarray:
        """π under one prior (default: the first)."""
        return np.array(self.priors[prior_label_of(self.priors, prior_label)])

    def _observed(self) -> np.ndarray:
        if self.observed_releases is None:
            raise ValueError(
                "observed_releases: the case states no observed releases to condition on"
            )
        return np.array(self.observed_releases)

    def _arguments(self, prior_label):
        return {
            "prior": self.prior_vector(prior_label),
            "rho": self.rho,
            "known_counts": self.known_counts,
            "convention": self.convention,
            "released": self.released_indices,
            "mechanism": self.mechanism,
        }

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given the observed releases, under one prior."""
        from .pymc_model import model  # PyMC: imported when a model is built

        return model(self._observed(), categories=self.categories, **self._arguments(prior_label))

    def posterior(self, prior_label: str | None = None):
        """The adversary's posterior over the categories given the observed releases."""
        import xarray as xr

        values = posterior(self._observed(), **self._arguments(prior_label))
        return xr.DataArray(values, dims="category", coords={"category": list(self.categories)})

    def decision(self, prior_label: str | None = None, rng=None) -> str:
        """The Bayes decision (3.5) given the observed releases; a tie by :attr:`tie_rule`.

        Under ``"split"`` a tied decision is drawn with ``rng`` (which it then needs).
        """
        chosen = decision(
            self._observed(), **self._arguments(prior_label), tie_rule=self.tie_rule, rng=rng
        )
        return self.categories[int(chosen)]

    def marginals(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
        method: str = "auto",
    ) -> UnknownAttributeMarginals:
        """:func:`marginals` of the case's true category under one prior."""
        arguments = self._arguments(prior_label)
        return marginals(
            arguments["prior"],
            self.rho,
            self.true_index,
            self.convention,
            arguments["released"],
            tail_mass=tail_mass,
            grid_width=grid_width,
            method=method,
            mechanism=self.mechanism,
            tie_rule=self.tie_rule,
        )

    def marginal_measures(
        self,
        prior_label: str | None = None,
        tail_mass: float = DEFAULT_TAIL_MASS,
        grid_width: float = DEFAULT_GRID_WIDTH,
        method: str = "auto",
    ) -> MarginalMeasures:
        """(3.3), (3.4) and (3.6) for the true category, from :func:`marginals`.

        ``error_bound`` is the larger of the marginal posterior's and the
        decision probability's bounds; ``details`` has each bound, the risk's,
        the method, the cut-offs and the grid width.
        """
        result = self.marginals(prior_label, tail_mass, grid_width, method)
        return MarginalMeasures(
            marginal_posterior=result.marginal_posterior,
            marginal_risk=result.marginal_risk,
            correct_decision_probability=result.correct_decision_probability,
            prior_of_truth=float(self.prior_vector(prior_label)[self.true_index]),
            omitted_mass=result.omitted_mass,
            error_bound=max(result.posterior_error_bound, result.decision_error_bound),
            details={
                "posterior_error_bound": result.posterior_error_bound,
                "risk_error_bound": result.risk_error_bound,
                "decision_error_bound": result.decision_error_bound,
                "marginal_method": result.method,
                "cutoffs": list(result.cutoffs),
                "grid_width": result.grid_width,
            },
            tie_rule=self.tie_rule,
        )
