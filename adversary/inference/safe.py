"""Working around a PyTensor 3.3 rewrite that counts booleans as a logical or.

``local_add_canonizer`` rewrites ``(int8(0) + b1) + b2``, with ``b1``, ``b2``
booleans, into ``Cast{int8}(b1 + b2)``: an add of booleans, which PyTensor's
Python and C linkers (``FAST_COMPILE``) compute as a logical *or*. So
``sum(pt.eq(cell, k) for cell in cells)`` — the natural way to count the persons
of a block in cell ``k`` — counts two persons (or three…) as one, and an
enumerated posterior, a simulated release or an exact measure is silently
wrong (numba's fused add happens to count right). PyMC's log-p derivation
applies the rewrite too, so a model's log-p graph may already hold such a node.

Every function this package compiles uses :func:`safe_mode` (the rewrite left
out), and every log-p graph it compiles goes through
:func:`counted_as_integers` first (a ``Cast{int}`` of a boolean add becomes the
add of the inputs cast to that integer type, which is what the graph meant).
"""

from __future__ import annotations

import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.compile.mode import Mode, get_mode
from pytensor.graph.replace import graph_replace
from pytensor.graph.traversal import ancestors
from pytensor.tensor.elemwise import Elemwise

__all__ = ["UNSAFE_REWRITES", "counted_as_integers", "safe_compile_kwargs", "safe_mode"]

#: Rewrites that change the value of a valid graph in PyTensor 3.3.
UNSAFE_REWRITES = ("local_add_canonizer",)


def safe_mode(mode: str | Mode | None = None) -> Mode:
    """``mode`` (a name, a ``Mode``, or ``None`` for the configured default) without
    :data:`UNSAFE_REWRITES`."""
    return get_mode(mode).excluding(*UNSAFE_REWRITES)


def safe_compile_kwargs(compile_kwargs: dict | None = None, default_mode: str | None = None):
    """``compile_kwargs`` with its ``mode`` (default ``default_mode``) made safe."""
    kwargs = dict(compile_kwargs or {})
    kwargs["mode"] = safe_mode(kwargs.get("mode", default_mode))
    return kwargs


def _is_elemwise(node, scalar_type) -> bool:
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar_type)


def counted_as_integers(graphs: list) -> list:
    """``graphs`` with every integer add of booleans made an add of integers.

    Two patterns occur: ``Cast{int}(b1 + b2 + …)`` (the canonizer's) and an
    integer ``Add`` with several boolean inputs (``(b1 + b2) + n`` flattened
    into ``Add(b1, b2, n)``, which the Python linker evaluates left to right,
    ``b1 + b2`` first, as booleans). Both become the add of the inputs cast to
    the integer type.
    """
    replacements = {}
    for variable in ancestors(graphs):
        node = variable.owner
        if node is None or not variable.dtype.startswith(("int", "uint")):
            continue
        if _is_elemwise(node, ps.Cast):
            (inner,) = node.inputs
            if inner.dtype == "bool" and inner.owner is not None:
                if _is_elemwise(inner.owner, ps.Add):
                    replacements[variable] = _integer_add(inner.owner.inputs, variable.dtype)
        elif _is_elemwise(node, ps.Add) and sum(x.dtype == "bool" for x in node.inputs) > 1:
            replacements[variable] = _integer_add(node.inputs, variable.dtype)
    if not replacements:
        return list(graphs)
    return list(graph_replace(list(graphs), replacements, strict=False))


def _integer_add(inputs, dtype: str):
    return pt.add(*[pt.cast(x, dtype) for x in inputs])
