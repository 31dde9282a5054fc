"""A model's structure, compiled once: its float constants become shared variables.

The data holder's measures of a PyMC attack model compile several functions
of it (the release pmf, the release sampler, the latent grid's log-p, the
prior of the event …). A scan over ρ (:func:`~adversary.analyses.choose_rho.choose_rho`)
or a sweep calls the model factory again at every point, and each new model
differs from the last only in its float constants: σ² = Δ²/(2ρ), a prior's
probabilities. :func:`model_structure` keys a model by its structure — every
node's op and inputs, the variables' names, types, dims and transforms, the
values of its other constants — and keeps one copy per structure whose float
constants are shared variables. A model of a structure seen before sets
those shared values and reuses every function compiled on the copy
(:func:`memoized`); nothing is rebuilt or recompiled.

The copy computes exactly what the model does: the same graph with the same
values, read from shared variables instead of folded in as constants.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np
import pytensor
from pymc.model.fgraph import fgraph_from_model, model_from_fgraph
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import toposort
from pytensor.tensor.random.type import RandomType

__all__ = [
    "ModelStructure",
    "fixed_structure",
    "kwargs_key",
    "memoized",
    "memoized_like",
    "model_structure",
    "structured",
    "values_key",
]

# Structures kept (least recently used dropped first); each holds its compiled functions.
_KEPT = 16
_STRUCTURES: OrderedDict[Hashable, ModelStructure] = OrderedDict()
# Compiled functions of each structure's model, found from the model.
_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Models that never change (fixed_structure), with their keys.
_FIXED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ModelStructure:
    """One structure's model, its float constants ``shared`` variables (module docstring)."""

    def __init__(self, model, lifted: list[Constant]):
        fgraph, memo = fgraph_from_model(model)
        self.shared = []
        for k, constant in enumerate(lifted):
            clone = memo.get(constant, constant)
            variable = pytensor.shared(
                np.array(constant.data), name=f"constant_{k}", shape=constant.type.shape
            )
            for node, i in list(fgraph.clients.get(clone, ())):
                fgraph.change_node_input(node, i, variable, import_missing=True)
            self.shared.append(variable)
        self.model = model_from_fgraph(fgraph, mutate_fgraph=True)
        _MEMOS[self.model] = {}

    def set_values(self, values: list[np.ndarray]) -> None:
        for variable, value in zip(self.shared, values, strict=True):
            variable.set_value(value, borrow=True)


def fixed_structure(model) -> None:
    """Declare that ``model`` will not change, so that :func:`model_structure` keys it once:
    a model only this package holds, such as a factory's model with its float arguments
    shared (:mod:`~adversary.scenarios.parametric`), met again at every value of a scan."""
    _FIXED[model] = _key(model)


def model_structure(model) -> ModelStructure:
    """The structure of ``model``, its shared values set to ``model``'s float constants."""
    key, lifted = _FIXED[model] if model in _FIXED else _key(model)
    structure = _STRUCTURES.get(key)
    if structure is None:
        structure = ModelStructure(model, lifted)
        _STRUCTURES[key] = structure
        while len(_STRUCTURES) > _KEPT:
            _STRUCTURES.popitem(last=False)
    else:
        _STRUCTURES.move_to_end(key)
        structure.set_values([np.array(c.data) for c in lifted])
    return structure


def structured(model):
    """The model of ``model``'s structure (:func:`model_structure`), or ``model`` itself when
    PyMC cannot copy it (e.g. non-default initial values): the same numbers, compiled anew."""
    try:
        return model_structure(model).model
    except (NotImplementedError, ValueError, TypeError, KeyError):
        return model


def memoized(model, key: Hashable, build: Callable):
    """``build()``, kept with ``model`` under ``key`` when it is a structure's model.

    For any other model (one not made by :func:`model_structure`) it is
    ``build()`` every time.
    """
    memo = _MEMOS.get(model)
    if memo is None:
        return build()
    if key not in memo:
        memo[key] = build()
    return memo[key]


def memoized_like(source, copy) -> None:
    """Keep :func:`memoized` results with ``copy`` (a copy of ``source`` made once per
    structure) when ``source`` is a structure's model."""
    if source in _MEMOS and copy not in _MEMOS:
        _MEMOS[copy] = {}


def values_key(values) -> tuple:
    """A hashable key of ``{name: array}`` (a truth, a centre) or ``None``."""
    if values is None:
        return ()
    return tuple(
        (str(name), np.asarray(v).dtype.str, np.shape(v), np.asarray(v).tobytes())
        for name, v in values.items()
    )


def kwargs_key(kwargs) -> str:
    """A key of compile options (``None`` or a mapping)."""
    return repr(sorted((kwargs or {}).items()))


def _is_lifted(variable) -> bool:
    dtype = getattr(variable.type, "dtype", None)
    return isinstance(variable, Constant) and dtype is not None and dtype.startswith("float")


def _root(variable, lifted: list) -> tuple:
    """The key of a variable without an owner; float constants are added to ``lifted``.

    A factory's argument made shared (tagged ``shared_argument``,
    :mod:`~adversary.scenarios.parametric`) counts by identity: the model is
    the same at every value and the structure's copy reads that same
    variable. Any other shared variable counts by its value.
    """
    if _is_lifted(variable):
        lifted.append(variable)
        return ("lifted", str(variable.type))
    if isinstance(variable, Constant):
        data = variable.data
        if isinstance(data, np.ndarray):
            return ("constant", str(variable.type), data.dtype.str, data.shape, data.tobytes())
        return ("constant", str(variable.type), repr(data))
    if isinstance(variable, SharedVariable):
        if isinstance(variable.type, RandomType):
            return ("rng", str(variable.type))
        if getattr(variable.tag, "shared_argument", False):
            return ("shared argument", str(variable.type), id(variable))
        value = np.asarray(variable.get_value(borrow=True))
        return ("shared", str(variable.type), variable.name, value.dtype.str, value.tobytes())
    return ("input", str(variable.type), variable.name)


def _transform_key(transform) -> tuple:
    """A transform by its class and settings (a setting that is an object counts by identity)."""
    if transform is None:
        return ()
    settings = tuple(sorted((k, repr(v)) for k, v in vars(transform).items()))
    return (type(transform).__module__, type(transform).__qualname__, settings)


def _key(model) -> tuple[tuple, list[Constant]]:
    """The structure's key and the float constants in the order the key meets them."""
    named = [*model.basic_RVs, *model.potentials, *model.deterministics]
    data = [model.rvs_to_values[rv] for rv in model.observed_RVs]
    ids: dict[int, int] = {}
    lifted: list[Constant] = []
    entries: list[tuple] = []

    def ref(variable) -> int:
        if id(variable) not in ids:
            ids[id(variable)] = len(ids)
            if variable.owner is None:
                entries.append(_root(variable, lifted))
        return ids[id(variable)]

    for node in toposort([*named, *data]):
        inputs = tuple(ref(v) for v in node.inputs)
        outputs = tuple((ref(v), str(v.type), v.name) for v in node.outputs)
        entries.append((node.op, inputs, outputs))
    roles = tuple(
        tuple(ref(v) for v in group)
        for group in (model.free_RVs, model.observed_RVs, model.potentials, model.deterministics)
    )
    data_refs = tuple(ref(v) for v in data)
    transforms = tuple(_transform_key(model.rvs_to_transforms.get(rv)) for rv in model.free_RVs)
    dims = tuple(sorted((k, tuple(v or ())) for k, v in model.named_vars_to_dims.items()))
    coords = tuple(
        sorted((k, tuple(v) if v is not None else None) for k, v in model.coords.items())
    )
    names = tuple(model.named_vars)
    key = (tuple(entries), roles, data_refs, transforms, dims, coords, names)
    return key, lifted
