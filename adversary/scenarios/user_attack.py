"""Your own attack, first class: a PyMC model factory as an attack of the package.

An attack written by a user is a **model factory**: a function whose keyword
arguments are the attack's parameters (the prior, ρ, the releases, …) and
which returns a ``pymc.Model`` whose free variables are what the adversary
does not know and whose observed variables are the releases.
:func:`attack` turns it into a :class:`ModelAttack`, which implements the
attack protocol (:mod:`adversary.measures.protocol`) as the shipped cases do,
so every analysis takes it with no class to write: the exact or sampled
posterior, :func:`~adversary.analyses.compare.compare_priors`,
:func:`~adversary.analyses.compare.sweep` over any factory argument,
:func:`~adversary.analyses.choose_rho.choose_rho` over an argument named
``rho…``, and the command line (a model file holding the factory as ``model``
and, where it has them, ``PRIORS``, ``TRUTH`` and ``TARGET``).

Example::

    def cell_attack(prior=(0.5, 0.3, 0.2), rho=0.0992, releases=(6, 2, 1), known=(5, 2, 0)):
        with pm.Model() as model:
            cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
            counts = pt.as_tensor(np.asarray(known)) + pt.eq(pt.arange(3), cell)
            DiscreteGaussian("releases", mu=counts, rho=rho, observed=releases)
        return model

    attack = adversary.attack(
        cell_attack, priors={"skewed": (0.5, 0.3, 0.2), "even": (1/3, 1/3, 1/3)},
        truth={"C": 0},
    )
    attack.marginal_measures("even")          # (3.3), (3.4), (3.6) for the truth
    adversary.sweep(attack, {"rho": [0.01, 0.1, 1.0]})

**The data holder's measures** of a factory's model are summed exactly over
the release grid (:func:`~adversary.measures.exact.exact_measures`) when it
has discrete latents, integer releases and a release grid of at most
``max_releases`` sets; otherwise (``method="auto"``) they are estimated from
``releases`` simulated release sets
(:func:`~adversary.measures.monte_carlo.monte_carlo_measures`, with exact
posteriors per release, or MCMC when a latent is continuous), with standard
errors. ``method="exact"`` or ``"monte-carlo"`` forces one route.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pymc as pm

from ..measures.attack_model import is_discrete
from ..measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ..measures.exact import DEFAULT_MAX_RELEASES, exact_measures
from ..measures.marginal import MarginalMeasures
from ..measures.monte_carlo import monte_carlo_measures
from ..measures.protocol import assignments
from ..measures.protocol import prior_label as checked_label
from .parametric import parametric_models

__all__ = ["METHODS", "ModelAttack", "attack"]

#: How :meth:`ModelAttack.marginal_measures` computes (module docstring).
METHODS = ("auto", "exact", "monte-carlo")

# Settings of the attack itself that a sweep may vary besides the factory's arguments.
_OWN_PARAMETERS = ("truth", "tie_rule")
_OWN_FIELDS = (*_OWN_PARAMETERS, "priors")


@dataclass(frozen=True)
class ModelAttack:
    """A PyMC model factory with the priors, truth and target of an attack (see :func:`attack`).

    ``arguments`` holds the factory's keyword arguments that differ from its
    defaults; ``priors`` maps a label to the value passed as the factory's
    ``prior_argument`` (default ``"prior"``) — ``None`` for an attack with
    one prior, the factory's own (label ``"default"``).
    """

    factory: Callable[..., pm.Model]
    arguments: Mapping = field(default_factory=dict)
    priors: Mapping | None = None
    truth: Mapping | None = None
    target: str | None = None
    name: str = ""
    prior_argument: str = "prior"
    tie_rule: str = DEFAULT_TIE_RULE
    method: str = "auto"
    releases: int = 2000
    random_seed: int = 2023
    tail_mass: float = 1e-12
    max_releases: int = DEFAULT_MAX_RELEASES

    def __post_init__(self):
        if not callable(self.factory):
            raise TypeError(
                f"model_fn must be a function returning a pymc.Model, got {self.factory!r}"
            )
        check_tie_rule(self.tie_rule)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        keywords = _keywords(self.factory)
        arguments = dict(self.arguments or {})
        unknown = sorted(set(arguments) - set(keywords))
        if unknown and not _takes_any_keyword(self.factory):
            raise ValueError(
                f"arguments: {unknown} are not keyword arguments of "
                f"{_function_name(self.factory)}(); it takes {', '.join(keywords) or 'none'}"
            )
        missing = [
            k
            for k, v in keywords.items()
            if v is inspect.Parameter.empty
            and k not in arguments
            and not (k == self.prior_argument and self.priors is not None)
        ]
        if missing:
            raise ValueError(
                f"arguments: {_function_name(self.factory)}() needs a value for {missing} "
                "(give them in arguments= or as defaults in the function)"
            )
        priors = {"default": None} if self.priors is None else self.priors
        if not isinstance(priors, Mapping) or not priors:
            raise TypeError(f"priors must be a non-empty mapping {{label: prior}}, got {priors!r}")
        if (
            self.priors is not None
            and self.prior_argument not in keywords
            and not (_takes_any_keyword(self.factory))
        ):
            raise ValueError(
                f"priors: {_function_name(self.factory)}() has no keyword argument "
                f"{self.prior_argument!r} to pass each prior to (name it with "
                "prior_argument=, in a model file PRIOR_ARGUMENT)"
            )
        _check_finite_priors(priors)
        if self.truth is not None and not isinstance(self.truth, Mapping):
            raise TypeError(f"truth must be a mapping {{latent: true value}}, got {self.truth!r}")
        object.__setattr__(self, "arguments", MappingProxyType(arguments))
        object.__setattr__(self, "priors", MappingProxyType({str(k): v for k, v in priors.items()}))
        object.__setattr__(self, "name", self.name or _function_name(self.factory))
        label = next(iter(self.priors))
        first = self._shared_model(label, build=False)
        if first is None:
            first = self._labelled_model(label)
            # Kept for the first marginal_measures of the first prior (a scan builds each ρ's once).
            object.__setattr__(self, "_built", {label: first})
        latents = [rv.name for rv in first.free_RVs]
        if not latents:
            raise ValueError(f"model_fn: {self.name}'s model has no free (latent) variables")
        if self.target is None:
            object.__setattr__(self, "target", latents[0])
        elif self.target.split("[", 1)[0] not in latents:
            raise ValueError(
                f"target: {self.target!r} is not a latent of the model; have {latents}"
            )

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_built"}

    # --- the protocol --------------------------------------------------------------------

    @property
    def true_latents(self) -> Mapping | None:
        """The data holder's truth of every latent (``truth``), or ``None``."""
        return self.truth

    def model(self, prior_label: str | None = None) -> pm.Model:
        """The factory's model under one prior (default: the first)."""
        built = self.factory(**self._kwargs(prior_label))
        if not isinstance(built, pm.Model):
            raise TypeError(
                f"model_fn: {self.name}() must return a pymc.Model, got {type(built).__name__}"
            )
        return built

    def _labelled_model(self, label: str) -> pm.Model:
        """:meth:`model` under ``label``; when the factory refuses that prior but builds its
        model under its own default prior, the refusal names the prior's label."""
        try:
            return self.model(label)
        except (ValueError, TypeError) as error:
            if type(error) not in (ValueError, TypeError) or not self._builds_by_default():
                raise
            value = self.priors[label]
            raise type(error)(f"priors[{label!r}] = {value!r}: {error}") from error

    def _builds_by_default(self) -> bool:
        """Whether the factory builds its model with its own default prior (the arguments as
        they are): when it does, a prior it refuses is at fault."""
        if _keywords(self.factory).get(self.prior_argument) is inspect.Parameter.empty:
            return False
        try:
            self.factory(**self.arguments)
        except Exception:  # any refusal: the prior is not shown to be at fault
            return False
        return True

    def _check_priors(self) -> None:
        """Build the model under every prior but the first (built already), so that a prior the
        factory refuses is refused now, naming its label, not in the middle of an analysis.
        The models are kept for the first measures of each prior."""
        built = self.__dict__.setdefault("_built", {})
        for label in list(self.priors)[1:]:
            built[label] = self._labelled_model(label)

    def _kwargs(self, prior_label: str | None) -> dict:
        kwargs = dict(self.arguments)
        value = self.priors[checked_label(self.priors, prior_label)]
        if value is not None:
            kwargs[self.prior_argument] = value
        return kwargs

    def _shared_model(self, label: str, build: bool = True) -> pm.Model | None:
        """The factory's model with its float arguments shared, set to this attack's values, for
        a computation that uses it at once (:mod:`~adversary.scenarios.parametric`); ``None``
        where there is none (``build=False``: none checked yet)."""
        models = parametric_models(self.factory)
        if models is None:
            return None
        kwargs = self._kwargs(label)
        if not build:
            return models.existing(kwargs)
        built = self.__dict__.get("_built", {})
        return models.model(
            kwargs,
            lambda: built[label] if label in built else self.model(label),
            points=() if self.truth is None else (self.truth,),
        )

    def marginal_measures(self, prior_label: str | None = None) -> MarginalMeasures:
        """(3.3), (3.4), (3.6) for the truth under one prior: exact sums or Monte Carlo."""
        if self.truth is None:
            raise ValueError(
                f"truth: {self.name} states no truth; the data holder's measures need the true "
                "value of every latent (truth= / TRUTH in a model file)"
            )
        label = checked_label(self.priors, prior_label)
        model = self._shared_model(label)
        kept = self.__dict__.get("_built", {}).pop(label, None)
        if model is None:
            model = self.model(label) if kept is None else kept
        discrete = all(is_discrete(rv) for rv in model.free_RVs + model.observed_RVs)
        if self.method == "exact" or (self.method == "auto" and discrete):
            try:
                return self._exact(model)
            except ValueError as error:
                if self.method == "exact" or not str(error).startswith(
                    ("max_releases", "max_cells")
                ):
                    raise
                reason = str(error)
        else:
            reason = "method='monte-carlo'" if discrete else "continuous variables: no release grid"
        measures = monte_carlo_measures(
            model,
            self.truth,
            target=self.target,
            releases=self.releases,
            method="exact" if all(is_discrete(rv) for rv in model.free_RVs) else "mcmc",
            tie_rule=self.tie_rule,
            random_seed=self.random_seed,
            tail_mass=self.tail_mass,
        )
        measures.details["why_monte_carlo"] = reason
        return measures

    def _exact(self, model) -> MarginalMeasures:
        return exact_measures(
            model,
            self.truth,
            target=self.target,
            tie_rule=self.tie_rule,
            tail_mass=self.tail_mass,
            max_releases=self.max_releases,
            random_seed=self.random_seed,
        )

    def parameters(self) -> dict[str, object]:
        """The factory's keyword arguments (but the prior's) and ``truth``, ``tie_rule``."""
        values = {
            k: (self.arguments[k] if k in self.arguments else default)
            for k, default in _keywords(self.factory).items()
            if k != self.prior_argument
        }
        values |= {k: getattr(self, k) for k in _OWN_PARAMETERS}
        return values

    def replace(self, **changes) -> ModelAttack:
        """The attack with some factory arguments (or ``truth``, ``tie_rule``, ``priors``) set.

        Arguments the factory's model cannot take are refused with an error naming them."""
        known = self.parameters()
        unknown = [k for k in changes if k not in known and k != "priors"]
        if self.prior_argument in unknown:
            raise ValueError(
                f"{self.prior_argument!r} is the prior argument of {self.name}: give the priors "
                "as priors={label: value} (PRIORS in a model file) and choose one by its label"
            )
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a parameter of {self.name}; have {', '.join(known)}"
            )
        own = {k: v for k, v in changes.items() if k in _OWN_FIELDS}
        arguments = dict(self.arguments) | {
            k: v for k, v in changes.items() if k not in _OWN_FIELDS
        }
        try:
            replaced = type(self)(**(self._fields() | own | {"arguments": arguments}))
        except (ValueError, TypeError) as error:
            # Only factory arguments changed, and this attack's built: the new values are at
            # fault. A refusal from inside the model (PyMC's shape error for a vector rho, say)
            # is told which of them, unless it names one already.
            message = str(error)
            if (
                own
                or type(error) not in (ValueError, TypeError)
                or message.startswith(tuple(changes))
            ):
                raise
            raise type(error)(
                f"{assignments(changes)}: {self.name}() could not build its model: {message}"
            ) from error
        if "priors" in changes:
            replaced._check_priors()
        return replaced

    def _fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _keywords(factory) -> dict[str, object]:
    """``{name: default}`` of the factory's arguments that can be passed by keyword."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        name: parameter.default
        for name, parameter in _signature(factory).parameters.items()
        if parameter.kind in kinds
    }


def _takes_any_keyword(factory) -> bool:
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in _signature(factory).parameters.values()
    )


def _signature(factory) -> inspect.Signature:
    """The factory's signature, read once per factory: a scan asks for it at every value
    (``inspect.signature`` is 60 µs, a tenth of a small attack's evaluation)."""
    try:
        return _cached_signature(factory)
    except TypeError:  # an unhashable callable
        return inspect.signature(factory)


@functools.lru_cache(maxsize=64)
def _cached_signature(factory) -> inspect.Signature:
    return inspect.signature(factory)


def _function_name(factory) -> str:
    return getattr(factory, "__name__", type(factory).__name__)


def _check_finite_priors(priors: Mapping) -> None:
    """Refuse a numeric prior with a NaN or infinite value, naming its label (PyMC's own check
    raised deep in PyTensor, naming neither)."""
    for label, value in priors.items():
        try:
            numbers = np.asarray(value)
        except ValueError:  # a ragged sequence: the factory checks it
            continue
        if numbers.dtype.kind == "f" and not np.all(np.isfinite(numbers)):
            raise ValueError(f"priors: {label!r} must be finite numbers, got {value!r}")


def attack(
    model_fn: Callable[..., pm.Model],
    *,
    priors: Mapping | None = None,
    truth: Mapping | None = None,
    target: str | None = None,
    name: str | None = None,
    **options,
) -> ModelAttack:
    """A PyMC model factory as an attack of the package (module docstring).

    Parameters
    ----------
    model_fn : callable
        ``model_fn(**parameters) -> pymc.Model``. Its keyword arguments are the
        attack's parameters; those without a default go in ``arguments=``.
    priors : mapping, optional
        ``{label: prior}``; each prior is passed as the keyword argument
        ``prior_argument`` (default ``"prior"``). Default: the factory's own.
    truth : mapping, optional
        ``{latent: true value}`` for every free latent; needed for the data
        holder's measures.
    target : str, optional
        The latent scalar of the decision (3.5); default the model's first
        free variable.
    name : str, optional
        For reports; default the function's name.
    **options
        Further fields of :class:`ModelAttack`: ``arguments``,
        ``prior_argument``, ``tie_rule``, ``method`` (``auto``, ``exact``,
        ``monte-carlo``), ``releases``, ``random_seed``, ``tail_mass``,
        ``max_releases``.
    """
    unknown = sorted(set(options) - set(ModelAttack.__dataclass_fields__))
    if unknown:
        raise TypeError(f"attack() got unknown option(s) {unknown}")
    declared = ModelAttack(
        factory=model_fn, priors=priors, truth=truth, target=target, name=name or "", **options
    )
    declared._check_priors()
    return declared
