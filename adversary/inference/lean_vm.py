"""PyTensor's Python VM with elementwise nodes called directly, for the kernels' Python tier.

The tiered kernels (:mod:`.tiered`) run on PyTensor's Python VM until numba has compiled
them. There most of a call is :meth:`Elemwise.perform`'s bookkeeping, not numpy's
arithmetic: each call of a node checks its inputs' broadcasting dimension by dimension,
and a node whose ufunc lives on the node rather than the op (a cast, a sum of more than two
terms: a count of persons per cell is one) builds its scalar node afresh at every call.
On the 12-person block (twelve persons over 8 cells, their counts released with discrete
Gaussian noise) 200 sweeps took 17.4 and 13.1 CPU s; with the nodes below, 5.7 and 5.5 s,
the same draws.

:class:`LeanVMLinker` is PyTensor's :class:`~pytensor.link.vm.VMLinker` whose Elemwise
thunks are :func:`lean_elemwise_thunk`: the ufunc ``perform`` would choose, chosen once; the
broadcasting check made only for the dimensions an input does not declare broadcastable;
the outputs stored as ``perform`` stores them (dtype, in-place pattern, copies of views).
Other nodes keep PyTensor's thunks.
"""

from __future__ import annotations

import numpy as np
from pytensor.compile.mode import Mode
from pytensor.link.vm import VMLinker
from pytensor.tensor.elemwise import Elemwise

__all__ = ["LeanVMLinker", "lean_elemwise_thunk", "lean_mode"]

#: NumPy's limit on a ufunc's operands; ``Elemwise.perform`` refuses more, and so is left
#: to refuse them.
MAX_OPERANDS = 32


class LeanVMLinker(VMLinker):
    """:class:`~pytensor.link.vm.VMLinker` with :func:`lean_elemwise_thunk` for every
    Python-implemented Elemwise node (module docstring)."""

    def make_vm(self, nodes, thunks, *storage_and_maps):
        thunks = [
            lean_elemwise_thunk(node, thunk) if _lean(node, thunk) else thunk
            for node, thunk in zip(nodes, thunks, strict=True)
        ]
        return super().make_vm(nodes, thunks, *storage_and_maps)


def lean_mode(optimizer: str) -> Mode:
    """PyTensor's Python VM with the lean Elemwise thunks, after ``optimizer``'s rewrites
    (``"fast_compile"``, ``"fast_run"``)."""
    return Mode(linker=LeanVMLinker(use_cloop=False, c_thunks=False), optimizer=optimizer)


def _lean(node, thunk) -> bool:
    """Whether ``thunk`` is PyTensor's Python thunk of an Elemwise ``node`` it can stand for."""
    return (
        type(node.op) is Elemwise
        and getattr(thunk, "perform", None) == node.op.perform
        and len(node.inputs) + len(node.outputs) <= MAX_OPERANDS
    )


def lean_elemwise_thunk(node, thunk):
    """A thunk computing Elemwise ``node`` as ``node.op.perform`` does, without its per-call
    bookkeeping (module docstring). ``thunk`` is PyTensor's, already prepared; its storage
    cells are reused. (The VMs mark the outputs computed themselves.)"""
    op = node.op
    if op.nfunc and len(node.inputs) == op.nfunc_spec[1]:
        ufunc, nout = op.nfunc, op.nfunc_spec[2]
        options = {"sig": node.tag.sig} if hasattr(node.tag, "sig") else {}
    else:
        ufunc = op.ufunc or node.tag.ufunc
        nout, options = ufunc.nout, {}
    inputs, outputs = thunk.inputs, thunk.outputs
    dtypes = [out.dtype for out in node.outputs]
    inplace = dict(op.inplace_pattern)
    # (input, dimension) pairs the input's type says are not broadcastable: a length of 1
    # there, beside another input's longer one, is the runtime broadcasting PyTensor refuses
    strict = [
        (i, d)
        for i, var in enumerate(node.inputs)
        for d, broadcastable in enumerate(var.type.broadcastable)
        if not broadcastable
    ]

    def lean():
        args = [cell[0] for cell in inputs]
        for i, d in strict:
            if args[i].shape[d] == 1 and any(arg.shape[d] != 1 for arg in args):
                op._check_runtime_broadcast(node, args)  # raises PyTensor's own error
        with np.errstate(all="ignore"):
            values = ufunc(*args, **options)
        if nout == 1:
            values = (values,)
        for k, (value, cell, dtype) in enumerate(zip(values, outputs, dtypes, strict=True)):
            cell[0] = value = np.asarray(value, dtype=dtype)
            if k in inplace:
                destroyed = args[inplace[k]]
                destroyed[...] = value
                cell[0] = destroyed
            if not value.flags.owndata:
                cell[0] = value.copy()

    lean.inputs, lean.outputs, lean.lazy = inputs, outputs, False
    return lean
