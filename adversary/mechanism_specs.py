"""Mechanism specs: a release mechanism written as text, ``NAME:key=value,key=value``.

The command line's ``--mechanism`` takes one (e.g. ``discrete_laplace:scale=2``,
``cell_key:variance=2,bound=5``). :func:`parse_mechanism` turns a spec into the
mechanism object, :func:`mechanism_spec` writes one back
(``parse_mechanism(mechanism_spec(m)) == m``), and :func:`with_mechanism` puts a
mechanism on a case in place of its ρ.

A value is a number (``3``, ``0.04``, ``1e-3``, a fraction ``1/50``), a name
(``county``, ``das``) or a tuple of them joined by ``+``
(``match_key=size+voting_age``). :data:`MECHANISMS` is the registry: each
:class:`MechanismKind` names its class and documents its keys (meaning,
default, range), which ``--help`` and every error list. Adding a mechanism is
one entry; one whose keys are its class's fields needs no ``build`` or
``write``. Every bad spec is one ``ValueError`` line naming the spec and the
bad part; a constructor's own refusal (``rate must be in [0, 1], got 1.5``)
is passed on after the spec.

The registry names its classes as ``"module:Class"`` and imports one when a
spec of it is parsed or written: the command line's ``--help`` reads the
registry without loading numpy, SciPy or pandas.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "ALTERNATIVE",
    "FIELD_DEFAULT",
    "MECHANISMS",
    "REQUIRED",
    "MechanismKind",
    "Parameter",
    "mechanism_spec",
    "mechanisms_table",
    "parse_mechanism",
    "with_mechanism",
]

#: The default of a key that must be given.
REQUIRED = "required"
#: The default of a key that is one of alternatives (``rho`` or ``sigma2``): none.
ALTERNATIVE = "—"
#: The default of a key that is its class's field of the same name: the field's default,
#: read from the class when it is needed (:meth:`MechanismKind.default`).
FIELD_DEFAULT = "the class's field default"

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FRACTION = re.compile(r"[+-]?\d+/\d+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
#: A parameter's value types: ``number``, ``name``, ``numbers`` and ``names`` (tuples).
_TYPES = {
    "number": "a number",
    "name": "a name",
    "numbers": "numbers joined by +",
    "names": "names joined by +",
}


@dataclass(frozen=True)
class Parameter:
    """One key of a spec: its ``meaning``, ``default`` (:data:`REQUIRED`,
    :data:`ALTERNATIVE`, :data:`FIELD_DEFAULT` or a value), ``range`` (as text) and value
    ``type`` (``number``, ``name``, ``numbers`` or ``names``)."""

    name: str
    meaning: str
    default: object = REQUIRED
    range: str = ""
    type: str = "number"


@dataclass(frozen=True)
class MechanismKind:
    """A registered mechanism: its spec ``name``, class, a one-line ``summary`` and keys.

    ``class_ref`` is the class or its ``"module:Class"`` name, imported on first use
    (:attr:`cls`). ``build(values)`` makes the mechanism from the given keys (a dict;
    absent keys absent) and ``write(mechanism)`` gives the keys that rebuild it; by
    default the keys are ``cls``'s fields of the same names (defaults filled in,
    and left out of the written spec when equal to them). ``alternatives`` are
    groups of keys of which exactly one must be given (``("rho", "sigma2")``).
    """

    name: str
    class_ref: type | str
    summary: str
    parameters: tuple[Parameter, ...]
    build: Callable[[dict], object] | None = None
    write: Callable[[object], dict] | None = None
    alternatives: tuple[tuple[str, ...], ...] = ()

    @property
    def cls(self) -> type:
        """The mechanism's class (:attr:`class_ref`, imported when named as ``"module:Class"``)."""
        if isinstance(self.class_ref, type):
            return self.class_ref
        module, _, name = self.class_ref.partition(":")
        return getattr(importlib.import_module(module), name)

    def is_class_of(self, mechanism) -> bool:
        """Whether ``mechanism`` is of exactly this kind's class (a class named by its module is
        imported only if that module is: else no object of it can exist)."""
        if isinstance(self.class_ref, str) and self.class_ref.partition(":")[0] not in sys.modules:
            return False
        return type(mechanism) is self.cls

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def usage(self) -> str:
        """``name:key,…`` in short: alternatives joined by ``|``, optional keys in brackets
        (``name[:key][,key]`` when every key is optional)."""
        needed, optional = [], ""
        for p in self.parameters:
            group = next((g for g in self.alternatives if p.name in g), (p.name,))
            if group[0] != p.name:
                continue
            if p.default == REQUIRED or len(group) > 1:
                needed.append("|".join(group))
            else:
                optional += f"[,{p.name}]"
        if not needed:  # every key optional: ``name[:key][,key]…``
            optional = "[:" + optional[2:]
        return f"{self.name}:{','.join(needed)}{optional}" if needed else f"{self.name}{optional}"

    def make(self, values: dict):
        """The mechanism from parsed ``values`` (required keys and alternatives checked)."""
        for group in self.alternatives:
            given = [key for key in group if key in values]
            if not given:
                raise ValueError(f"{self.name} needs {' or '.join(group)}")
            if len(given) > 1:
                raise ValueError(f"give {' or '.join(given)}, not both")
        for p in self.parameters:
            if p.default == REQUIRED and p.name not in values:
                raise ValueError(f"{self.name} needs {p.name} ({p.meaning})")
        if self.build is not None:
            return self.build(values)
        unset = (REQUIRED, ALTERNATIVE, FIELD_DEFAULT)  # the class fills in its field defaults
        defaults = {p.name: p.default for p in self.parameters if p.default not in unset}
        return self.cls(**(defaults | values))

    def spec_values(self, mechanism) -> dict:
        """The keys that rebuild ``mechanism``, defaults left out."""
        if self.write is not None:
            return self.write(mechanism)
        values = {p.name: getattr(mechanism, p.name) for p in self.parameters}
        return {k: v for k, v in values.items() if v != self.default(k)}

    def default(self, key: str):
        """The default of ``key``: its parameter's, or the class's field default for
        :data:`FIELD_DEFAULT`."""
        default = next(p.default for p in self.parameters if p.name == key)
        if default != FIELD_DEFAULT:
            return default
        return next(f.default for f in dataclasses.fields(self.cls) if f.name == key)


# --- the noise mechanisms ------------------------------------------------------------------

_SENSITIVITY = Parameter("sensitivity", "how far one person moves a count (L1)", 1, "integer >= 1")


def _class(kind_name: str) -> type:
    """The class of the registered kind ``kind_name`` (imported on first use)."""
    return MECHANISMS[kind_name].cls


def _gaussian(values: dict):
    gaussian = _class("discrete_gaussian")
    if "rho" in values:
        if "sensitivity" in values:
            raise ValueError("sensitivity goes with sigma2; with rho the convention sets it")
        return gaussian.from_rho(values["rho"], values.get("convention", "paper"))
    if "convention" in values:
        raise ValueError("convention goes with rho; with sigma2 give sensitivity")
    return gaussian(values["sigma2"], values.get("sensitivity", 1.0))


def _gaussian_values(mechanism) -> dict:
    """``rho`` (and ``convention``) when they rebuild ``mechanism`` exactly, else ``sigma2``."""
    from .noise.conventions import NoiseConvention

    for convention in NoiseConvention:
        if mechanism.sensitivity == convention.l2_sensitivity:
            rho = mechanism.zcdp_rho()
            if type(mechanism).from_rho(rho, convention) == mechanism:
                return {"rho": rho} | ({} if convention == "paper" else {"convention": "das"})
    values = {"sigma2": mechanism.sigma2}
    return values | ({} if mechanism.sensitivity == 1 else {"sensitivity": mechanism.sensitivity})


def _scale_or_epsilon(kind_name: str):
    """``build`` of a geometric noise given ``scale`` or ``epsilon`` (``b = Δ/ε``)."""

    def build(values: dict):
        cls = _class(kind_name)
        values = {"sensitivity": 1} | values
        if "epsilon" in values:
            rest = {k: v for k, v in values.items() if k != "epsilon"}
            return cls.from_epsilon(values["epsilon"], **rest)
        return cls(**values)

    return build


def _without_default_sensitivity(values: dict) -> dict:
    return {k: v for k, v in values.items() if not (k == "sensitivity" and v == 1)}


_SCALE = Parameter("scale", "the geometric's scale b: P[Z = z] ∝ exp(-|z|/b)", ALTERNATIVE, "> 0")
_EPSILON = Parameter("epsilon", "pure ε (scale = sensitivity/ε)", ALTERNATIVE, "> 0")
_BOUND = Parameter("bound", "largest |noise| E", REQUIRED, "integer >= 1")


#: The registry: spec name → :class:`MechanismKind`.
MECHANISMS: dict[str, MechanismKind] = {
    kind.name: kind
    for kind in (
        MechanismKind(
            "discrete_gaussian",
            "adversary.noise.mechanisms:DiscreteGaussianNoise",
            "the 2020 Census's discrete Gaussian DG(0, σ²)",
            (
                Parameter("rho", "zCDP ρ of the count", ALTERNATIVE, "> 0"),
                Parameter(
                    "convention",
                    "neighbours: paper σ² = 1/(2ρ), das σ² = 1/ρ (with rho)",
                    "paper",
                    "paper or das",
                    "name",
                ),
                Parameter("sigma2", "σ² of the noise", ALTERNATIVE, "> 0"),
                Parameter("sensitivity", "L2 sensitivity (with sigma2)", 1, "> 0"),
            ),
            _gaussian,
            _gaussian_values,
            (("rho", "sigma2"),),
        ),
        MechanismKind(
            "discrete_laplace",
            "adversary.noise.mechanisms:DiscreteLaplaceNoise",
            "two-sided geometric, pure ε-DP",
            (_SCALE, _EPSILON, _SENSITIVITY),
            _scale_or_epsilon("discrete_laplace"),
            lambda m: _without_default_sensitivity(
                {"scale": m.scale, "sensitivity": m.sensitivity}
            ),
            (("scale", "epsilon"),),
        ),
        MechanismKind(
            "truncated_geometric",
            "adversary.noise.mechanisms:TruncatedGeometricNoise",
            "two-sided geometric on {-E, …, E}, (ε, δ)-DP",
            (_SCALE, _EPSILON, _BOUND, _SENSITIVITY),
            _scale_or_epsilon("truncated_geometric"),
            lambda m: _without_default_sensitivity(
                {"scale": m.scale, "bound": m.bound, "sensitivity": m.sensitivity}
            ),
            (("scale", "epsilon"),),
        ),
        MechanismKind(
            "cell_key",
            "adversary.noise.mechanisms:CellKeyNoise",
            "the cell-key method's maximum-entropy p-table (Bach 2020)",
            (
                Parameter("variance", "variance V of the noise", REQUIRED, "(0, E(E+1)/3]"),
                _BOUND,
                _SENSITIVITY,
            ),
            lambda v: _class("cell_key")(v["variance"], v["bound"], v.get("sensitivity", 1)),
            lambda m: _without_default_sensitivity(
                {"variance": m.target_variance, "bound": m.bound, "sensitivity": m.sensitivity}
            ),
        ),
        MechanismKind(
            "finite_pmf",
            "adversary.noise.mechanisms:FinitePmfNoise",
            "any pmf on start, start + 1, …",
            (
                Parameter("start", "the lowest noise value", REQUIRED, "integer"),
                Parameter(
                    "probabilities",
                    "weights of start, start + 1, … (normalised)",
                    REQUIRED,
                    ">= 0, sum > 0",
                    "numbers",
                ),
                _SENSITIVITY,
            ),
        ),
        MechanismKind(
            "swapping",
            "adversary.swapping:HouseholdSwapping",
            "household swapping (US 1990-2010): households exchanged with ones of the same "
            "match key in another block",
            (
                Parameter("rate", "share of households swapped", REQUIRED, "[0, 1]"),
                Parameter(
                    "within",
                    "area the partner comes from",
                    FIELD_DEFAULT,
                    "block_group, tract, county or state",
                    "name",
                ),
                Parameter(
                    "match_key",
                    "household columns a partner shares",
                    FIELD_DEFAULT,
                    "columns of household_table",
                    "names",
                ),
            ),
        ),
        MechanismKind(
            "trs",
            "adversary.swapping:TargetedRecordSwapping",
            "targeted record swapping (EU 2021, after sdcMicro's recordSwap); similarity "
            "profiles stay at their default",
            (
                Parameter(
                    "rate",
                    "swap rate at the lowest level",
                    FIELD_DEFAULT,
                    "[0, 1]",
                ),
                Parameter(
                    "k_anonymity",
                    "households whose risk-variable counts are below k are swapped first",
                    FIELD_DEFAULT,
                    "integer >= 1",
                ),
                Parameter(
                    "risk_variables",
                    "person columns whose combination's counts give the risk",
                    FIELD_DEFAULT,
                    "columns of the persons",
                    "names",
                ),
                Parameter(
                    "hierarchy",
                    "geography levels, top first",
                    FIELD_DEFAULT,
                    "levels of the geography",
                    "names",
                ),
            ),
        ),
    )
}


# --- parsing and writing -------------------------------------------------------------------


def parse_mechanism(text, name: str = "mechanism"):
    """The mechanism a spec ``NAME:key=value,…`` describes; one ValueError line naming
    ``name``, the spec and the bad part (an unknown name lists the known ones, an unknown
    key the mechanism's keys)."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a spec 'NAME:key=value,...', got {text!r}")
    where = f"{name} {text!r}"
    kind_name, colon, rest = text.strip().partition(":")
    kind_name = kind_name.strip()
    if not kind_name:
        raise ValueError(f"{where}: no mechanism name before ':' (NAME:key=value,...)")
    if kind_name not in MECHANISMS:
        raise ValueError(
            f"{where}: unknown mechanism {kind_name!r}; known: {', '.join(MECHANISMS)}"
        )
    kind = MECHANISMS[kind_name]
    if colon and not rest.strip():
        raise ValueError(f"{where}: nothing after ':' (give key=value pairs or no ':')")
    values = {}
    for item in rest.split(",") if colon else ():
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key:
            raise ValueError(f"{where}: {item.strip()!r} is not key=value")
        if key not in kind.keys:
            raise ValueError(
                f"{where}: {kind.name} has no key {key!r}; keys: {', '.join(kind.keys)}"
            )
        if key in values:
            raise ValueError(f"{where}: key {key!r} given twice")
        parameter = next(p for p in kind.parameters if p.name == key)
        values[key] = _typed(_value(value, key, where), parameter, where)
    try:
        return kind.make(values)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{where}: {_first_line(error)}") from None


def mechanism_spec(mechanism) -> str:
    """The spec of a registered ``mechanism``: ``parse_mechanism(mechanism_spec(m)) == m``."""
    kind = next((k for k in MECHANISMS.values() if k.is_class_of(mechanism)), None)
    if kind is None:
        raise TypeError(
            f"mechanism must be one of the registered kinds ({', '.join(MECHANISMS)}), "
            f"got {mechanism!r}"
        )
    values = kind.spec_values(mechanism)
    if not values:
        return kind.name
    return kind.name + ":" + ",".join(f"{k}={_written(v)}" for k, v in values.items())


def _first_line(error: BaseException) -> str:
    message = str(error.args[0]) if error.args else type(error).__name__
    return message.strip().splitlines()[0] if message.strip() else type(error).__name__


def _value(text: str, key: str, where: str):
    """A number, a name or a ``+``-joined tuple of them."""
    if not text:
        raise ValueError(f"{where}: {key} has no value")
    if "+" in text.lstrip("+-") and not _NUMBER.fullmatch(text):
        parts = text.split("+")
        if any(not part.strip() for part in parts):
            raise ValueError(f"{where}: {key}={text!r} has an empty part between '+'")
        return tuple(_value(part.strip(), key, where) for part in parts)
    if _FRACTION.fullmatch(text):
        numerator, denominator = text.split("/")
        if int(denominator) == 0:
            raise ValueError(f"{where}: {key}={text} divides by zero")
        return float(Fraction(int(numerator), int(denominator)))
    if _NUMBER.fullmatch(text):
        return float(text) if re.search(r"[.eE]", text) else int(text)
    if _NAME.fullmatch(text):
        return text
    raise ValueError(f"{where}: {key}={text!r} is not a number, a fraction, a name or a+b")


def _typed(value, parameter: Parameter, where: str):
    """``value`` checked against the parameter's type (a single value for a tuple type is a
    1-tuple)."""
    scalar = parameter.type.rstrip("s")
    values = value if isinstance(value, tuple) else (value,)
    if parameter.type == scalar and isinstance(value, tuple):
        ok = False
    elif scalar == "number":
        ok = all(isinstance(v, int | float) for v in values)
    else:
        ok = all(isinstance(v, str) for v in values)
    if not ok:
        raise ValueError(
            f"{where}: {parameter.name} must be {_TYPES[parameter.type]}, got {_written(value)!r}"
        )
    return values if parameter.type != scalar else value


def _written(value) -> str:
    if isinstance(value, tuple | list):
        return "+".join(_written(v) for v in value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return str(value)


def mechanisms_table() -> str:
    """The registry as text: each name, its summary and its keys with meaning, default and
    range (``--help`` and the docs show it)."""
    lines = []
    for kind in MECHANISMS.values():
        lines.append(f"{kind.name}: {kind.summary}")
        for p in kind.parameters:
            shown = kind.default(p.name)
            default = "" if shown == ALTERNATIVE else f"; default {_written(shown)}"
            if p.default == REQUIRED:
                default = "; required"
            group = next((g for g in kind.alternatives if p.name in g), None)
            if group:
                default = f"; one of {' or '.join(group)}"
            span = f", {p.range}" if p.range else ""
            lines.append(f"  {p.name}: {p.meaning}{span}{default}")
    return "\n".join(lines)


# --- on a case -----------------------------------------------------------------------------

#: A case's ρ fields, set to ``None`` when the mechanism replaces them.
_RHO_FIELDS = ("rho", "rho1", "rho2", "rhos")
#: A case's choice of the approximation (3.7) of a sum of noises: ``{field: (approximate,
#: exact)}`` (block group, post-processing).
_APPROXIMATIONS = {"sum_noise": ("approximate", "exact"), "exact_sum": (False, True)}


def with_mechanism(case, mechanism, name: str = "mechanism"):
    """``case`` with ``mechanism`` as the noise of every released count, its ρ fields ``None``.

    A case whose noise is one mechanism per release (a tuple) gets a tuple of
    ``mechanism``. Kazan & Reiter's approximation (3.7) of a sum of noises holds
    for discrete Gaussians only: under other noise a block group's
    ``sum_noise="approximate"`` becomes ``"exact"`` and a post-processing
    case's ``exact_sum=False`` becomes ``True``. A case without a ``mechanism``
    parameter, or whose ``mechanism`` takes another kind (a noise mechanism on
    a swapping case), is refused in one line naming ``name`` and the case.
    """
    label = f"case {getattr(case, 'name', '?')!r} ({type(case).__name__})"
    parameters = _parameters(case)
    if "law" in parameters:
        return _with_swap_law(case, parameters["law"], mechanism, name, label)
    if "mechanism" not in parameters:
        raise ValueError(f"{name}: {label} has no mechanism parameter; its noise is fixed")
    accepted = _accepted_classes(case)
    if accepted and not isinstance(mechanism, accepted):
        fitting = [k.name for k in MECHANISMS.values() if issubclass(k.cls, accepted)]
        raise ValueError(
            f"{name}: {label} takes {', '.join(fitting) or 'another kind of mechanism'}, "
            f"not {getattr(mechanism, 'name', type(mechanism).__name__)}"
        )
    current = parameters["mechanism"]
    if current is None:
        current = parameters.get("rhos")
    value = (mechanism,) * len(current) if isinstance(current, tuple) else mechanism
    changes = {field: None for field in _RHO_FIELDS if field in parameters}
    if not isinstance(mechanism, _class("discrete_gaussian")):  # (3.7): discrete Gaussians only
        for field, (approximate, exact) in _APPROXIMATIONS.items():
            if field in parameters and parameters[field] is approximate:
                changes[field] = exact
    try:
        return case.replace(mechanism=value, **changes)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name}: {label}: {_first_line(error)}") from None


def _with_swap_law(case, law, mechanism, name: str, label: str):
    """A swapping case (its ``law`` field) under a swapping mechanism's law.

    A targeted record swapping keeps the donor rate of the case's own targeted
    law (the mechanism's spec has no donor rate; 0 otherwise).
    """
    if getattr(mechanism, "name", None) not in ("swapping", "trs"):
        raise ValueError(
            f"{name}: {label} takes swapping or trs, not "
            f"{getattr(mechanism, 'name', type(mechanism).__name__)}"
        )
    from .scenarios.swapping.laws import as_law

    donor_rate = getattr(law, "donor_rate", 0.0)
    try:
        return case.replace(law=as_law(mechanism, name, donor_rate=donor_rate))
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name}: {label}: {_first_line(error)}") from None


def _parameters(case) -> dict:
    """The case's parameters: ``parameters()`` of an attack, else a dataclass's fields."""
    if hasattr(case, "parameters"):
        return case.parameters()
    if dataclasses.is_dataclass(case):
        return {f.name: getattr(case, f.name) for f in dataclasses.fields(case) if f.init}
    return {}


def _accepted_classes(case) -> tuple[type, ...]:
    """The classes the case's ``mechanism`` field names (its annotation), or ``()`` when
    they cannot be read or tested (then the case checks the value itself)."""
    try:
        annotation = typing.get_type_hints(type(case))["mechanism"]
    except (NameError, TypeError, KeyError):
        return ()
    found, pending = [], [annotation]
    while pending:
        item = pending.pop()
        if isinstance(item, type) and item not in (type(None), tuple):
            try:  # a Protocol that is not runtime-checkable cannot be tested
                isinstance(None, item)
            except TypeError:
                return ()
            found.append(item)
        pending.extend(typing.get_args(item))
    return tuple(found)
