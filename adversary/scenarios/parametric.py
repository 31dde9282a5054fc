"""A model factory's float arguments as PyTensor shared scalars: one model for a whole scan.

A scan over ρ (:func:`~adversary.analyses.choose_rho.choose_rho`) or a sweep
of a :class:`~adversary.scenarios.user_attack.ModelAttack` asks for the data
holder's measures at many values of a float argument of the factory. Calling
the factory at each costs PyMC's model building (1–5 ms), more than a
hand-written scenario spends on the whole evaluation. :class:`ParametricModels`
calls it once more with each float argument a ``pytensor.shared`` float64
scalar instead (``DiscreteGaussian(rho=ρ)`` takes one: σ² = Δ²/(2ρ) becomes
part of the graph) and afterwards only sets the shared values.

That model is used only when it is the factory's model:

- it is built on the **second** request with the same other arguments (a
  scan), never for a one-off evaluation;
- the factory must accept the shared scalars: one that needs a number
  (``float(rho)``, ``if rho < 0.1``, a window ``int(10 / rho)``) raises, and
  the factory is then called at every value as before;
- its joint log-p must equal the plain model's at the values of that request
  (at the initial point and at each ``points`` given, relative 1e-9), with the
  same free and observed variables; otherwise it is not used;
- only finite positive floats are shared (ρ, σ, a probability): any other (NaN, ±inf,
  0, a negative value) is passed to the factory as it is, so that the factory's own
  checks name the argument (``rho must be finite and > 0``), not a parameter derived
  from it inside the shared model (``sigma2 … got -5.0``).

The shared model is internal: :meth:`ParametricModels.model` sets the values
and returns it to a caller that uses it at once (the measures), never to a
user, who would see it change under a later request.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping

import numpy as np
import pymc as pm
import pytensor

from ..measures.structure import fixed_structure

__all__ = ["ParametricModels", "parametric_models"]

# Argument sets kept per factory (least recently used dropped first).
_KEPT = 8
# How close the two models' joint log-p must be (σ² computed in the graph may round differently).
_RELATIVE = 1e-9
_FACTORIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Unkeyable(Exception):
    """An argument value with no stable key (the factory is then called every time)."""


def _key(value):
    """A hashable key of an argument value: numbers, strings, sequences, mappings, arrays."""
    if value is None or isinstance(value, (bool, int, str, float, np.generic)):
        return (type(value).__name__, value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((str(k), _key(v)) for k, v in value.items())))
    raise _Unkeyable(type(value).__name__)


def _is_float(value) -> bool:
    return isinstance(value, (float, np.floating)) and not isinstance(value, bool)


def _split(kwargs: Mapping):
    """``(key, float arguments)``: the key of the other arguments and the float ones' names;
    ``None`` when there is no float argument or an argument has no key."""
    floats = {k: v for k, v in kwargs.items() if _is_float(v) and 0 < v < np.inf}
    if not floats:
        return None
    try:
        others = _key({k: v for k, v in kwargs.items() if k not in floats})
    except _Unkeyable:
        return None
    return (tuple(sorted(floats)), others), floats


class _Entry:
    """One argument set's state: requests seen, then the shared model (or ``None``: refused)."""

    def __init__(self):
        self.requests = 0
        self.model: pm.Model | None = None
        self.shared: dict[str, pytensor.compile.SharedVariable] = {}
        self.refused = False

    def set(self, floats: Mapping) -> pm.Model:
        for name, value in floats.items():
            self.shared[name].set_value(np.float64(value))
        return self.model


class ParametricModels:
    """A factory's models with its float arguments shared (module docstring)."""

    def __init__(self, factory: Callable[..., pm.Model]):
        self.factory = factory
        self._entries: OrderedDict = OrderedDict()

    def existing(self, kwargs: Mapping) -> pm.Model | None:
        """The shared model at ``kwargs`` if one was built and checked (not a request)."""
        split = _split(kwargs)
        entry = None if split is None else self._entries.get(split[0])
        if entry is None or entry.model is None:
            return None
        return entry.set(split[1])

    def model(self, kwargs: Mapping, plain: Callable[[], pm.Model], points=()) -> pm.Model | None:
        """The shared model at ``kwargs``, or ``None`` (then call the factory as usual).

        ``plain()`` builds the factory's own model at ``kwargs`` (called only
        when the shared model is first checked); ``points`` are further
        ``{latent: value}`` points the check evaluates (e.g. the truth).
        """
        split = _split(kwargs)
        if split is None:
            return None
        key, floats = split
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
            while len(self._entries) > _KEPT:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        entry.requests += 1
        if entry.refused or (entry.model is None and entry.requests < 2):
            return None
        if entry.model is None:
            self._build(entry, kwargs, floats, plain(), points)
            if entry.refused:
                return None
        return entry.set(floats)

    def _build(self, entry: _Entry, kwargs, floats, plain: pm.Model, points) -> None:
        shared = {k: pytensor.shared(np.float64(v), name=k) for k, v in floats.items()}
        for variable in shared.values():
            variable.tag.shared_argument = True  # counted by identity in a structure's key
        try:
            model = self.factory(**{**kwargs, **shared})
            same = isinstance(model, pm.Model) and _same_model(model, plain, points)
        except Exception:  # any failure means: call the factory with numbers
            same = False
        if same:
            entry.model, entry.shared = model, shared
            fixed_structure(model)  # only this entry holds it: keyed once, not at every value
        else:
            entry.refused = True


def _names(model) -> tuple:
    return tuple(rv.name for rv in model.free_RVs), tuple(rv.name for rv in model.observed_RVs)


def _same_model(shared: pm.Model, plain: pm.Model, points) -> bool:
    """The same variables and the same joint log-p at the initial point and ``points``."""
    if _names(shared) != _names(plain):
        return False
    start = plain.initial_point()
    candidates = [start]
    for point in points:
        candidate = dict(start)
        for name, value in point.items():
            if name in candidate:
                candidate[name] = np.asarray(value, dtype=candidate[name].dtype).reshape(
                    np.shape(candidate[name])
                )
        candidates.append(candidate)
    ours = shared.compile_logp(mode="FAST_COMPILE")
    theirs = plain.compile_logp(mode="FAST_COMPILE")
    for point in candidates:
        a, b = float(ours(point)), float(theirs(point))
        if not (a == b or abs(a - b) <= _RELATIVE * max(abs(a), abs(b))):
            return False
    return True


def parametric_models(factory: Callable[..., pm.Model]) -> ParametricModels | None:
    """The :class:`ParametricModels` of ``factory`` (one per factory), or ``None`` when the
    factory cannot be weakly referenced (then it is called at every value)."""
    try:
        found = _FACTORIES.get(factory)
        if found is None:
            found = _FACTORIES[factory] = ParametricModels(factory)
    except TypeError:
        return None
    return found
