"""Compiled kernels that answer at once on a cold compile cache, and at numba's speed later.

PyTensor's default linker, numba, compiles a sampler's kernel (a role's conditional,
:mod:`.roles`) in 3–30 s the first time a model's structure is seen; PyTensor's disk cache
(``base_compiledir``) then serves it to any later process in well under a second.
:func:`compile_kernel` asks whether numba has compiled the kernel's structure before (a marker
beside PyTensor's cache, named by :func:`structure_key`, a digest of the graph as given):

- **compiled before**: the numba function, as before (its code loads from the disk cache);
- **not yet**: a :class:`TieredFunction`. Its first calls run the same graph, rewritten the
  same way, on PyTensor's Python VM (no C, no numba, no elementwise fusion: built at once,
  1–15 ms a call on the 12-person block, against numba's compile of 3–25 s); numba's
  version is not even built. A later call compiles it (which writes it to the disk cache
  and marks the structure compiled), and every call of a kernel of that structure after
  it uses numba, as soon as either

  - the run that calls it (a step method's chain, which tells the kernel at each sweep how
    many of its sweeps are done, :meth:`TieredFunction.plan`; or the trace, which reads
    each draw and was told how many it will read, :meth:`TieredFunction.expect`) is
    projected to spend more than :data:`COMPILE_SECONDS` (a compile's worth) more on the
    Python VM, or
  - kernels of its structure have spent :data:`COMPILE_SECONDS` on the Python VM, in this
    process or any other using the same cache (the seconds are kept in a file beside the
    marker): many short runs — a test suite, a notebook's kernels, a user's loop of short
    runs — or calls outside a planned run, pay at most twice what compiling at once would
    have cost, when the compile costs what :data:`COMPILE_SECONDS` says (the rent-or-buy
    rule; it is set below most compiles, as a compile also serves every later process).

  So twenty draws of the 12-person block stay on the Python VM (about 2.5 s against a
  compile of about 25 s), a thousand compile numba after their first
  :data:`PROJECTION_SECONDS` on the Python VM (four sweeps), and a long run waits for numba
  once, that much later than it would have. A kernel whose structure another process has
  compiled meanwhile (a chain on another core, a kernel sent to a worker) loads numba's code
  at its next call.

  Compiling in a background thread while the Python VM kept drawing was tried: numba's
  compiler needs the GIL for most of its work, so both slowed down, and a long cold run of
  Granville's block group took 30 s against 15.5 s compiling at once.

The tiers compute one graph with the same rewrites (fusion aside), made safe (:mod:`.safe`);
fusion and numba's fastmath may reorder a sum, so their log-ps agree to rounding, and an
exact draw (an inverse-CDF draw on those log-ps) differs between the tiers only if its
uniform falls within rounding of a boundary of the cumulative weights.

Only the default mode is tiered: a ``mode`` the caller names in ``compile_kwargs`` is
compiled as asked.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pymc as pm
import pytensor
from pymc.pytensorf import compile as pymc_compile
from pytensor.compile.io import In, Out
from pytensor.compile.mode import Mode, get_mode
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import io_toposort
from pytensor.link.numba.linker import NumbaLinker

from .lean_vm import lean_mode
from .safe import safe_compile_kwargs, safe_mode

__all__ = [
    "COMPILE_SECONDS",
    "PROJECTION_SECONDS",
    "TieredFunction",
    "compile_kernel",
    "structure_key",
    "tiered_kernels",
]

#: Seconds of Python-VM calls worth one numba compile of a sampler kernel (which costs 3–25 s
#: on a first process, and nothing in any later one): a structure compiles once the Python VM
#: has cost it that much, or a run is projected to spend more.
COMPILE_SECONDS = 5.0

#: Seconds a run spends on the Python VM before the rest of it is projected from them. A
#: run's first sweeps can cost far more than its later ones: a reconstruction histogram's
#: 3,200-sweep chain spent 9.9 ms in its first sweep and 0.1 s in all, so projected from its
#: first sweeps it compiled numba for 16-30 s instead of finishing in 1 s.
PROJECTION_SECONDS = 0.5

#: Seconds of Python-VM calls a process keeps before adding them to the file on disk.
FLUSH_SECONDS = 0.5

# Per kernel structure (its structure_key), in this process:
_seconds: dict[str, float] = {}  # seconds spent in its Python-VM calls, all processes
_unsaved: dict[str, float] = {}  # of those, this process's not yet added to the file
_state: dict[str, str] = {}  # "compiled" or "failed" once numba has compiled it (or failed to)


def compile_kernel(model, outputs, inputs, compile_kwargs=None):
    """``model.compile_fn(outputs, inputs)`` as a kernel (module docstring), ``trust_input`` set.

    Returns PyTensor's function when the mode is the caller's or numba has compiled the
    structure before (in any process using this compile cache), else a
    :class:`TieredFunction` whose numba version is only built if it is needed.
    """
    recipe = _Recipe(outputs, inputs, safe_compile_kwargs(compile_kwargs), model.check_bounds)
    tiered = (compile_kwargs or {}).get("mode") is None and isinstance(
        get_mode(None).linker, NumbaLinker
    )
    if not tiered:
        return recipe()
    key = structure_key(recipe)
    if _on_disk(key):  # numba's code is in the disk cache: it loads at the first call
        return recipe()
    return TieredFunction(recipe.python_vm(), recipe, key)


def tiered_kernels(functions) -> list:
    """The :class:`TieredFunction` among ``functions`` (None and other functions left out)."""
    return [fn for fn in functions if isinstance(fn, TieredFunction)]


def python_vm_mode() -> Mode:
    """The default mode's rewrites but elementwise fusion, on PyTensor's Python VM, made safe.

    Without fusion every elementwise node is one numpy call over its whole array, where a
    fused composite would be evaluated element by element in Python; the linker calls those
    nodes without ``Elemwise.perform``'s per-call bookkeeping (:mod:`.lean_vm`).
    """
    return safe_mode(lean_mode("fast_run").excluding("fusion"))


class _Recipe:
    """What :func:`compile_kernel` compiles: PyMC's ``compile`` of a graph, as
    ``Model.compile_fn`` calls it, without holding the model (a kernel pickles to workers)."""

    def __init__(self, outputs, inputs, kwargs: dict, check_bounds: bool):
        self.outputs, self.inputs = list(outputs), list(inputs)
        self.kwargs, self.check_bounds = kwargs, check_bounds

    def __call__(self, **overrides):
        kwargs = {"allow_input_downcast": True, "accept_inplace": True, **self.kwargs}
        # PyMC's compile reads check_bounds from the model on the context stack: a root model
        # (model=None), not a sub-model of the caller's (which a frozen model refuses).
        with pm.Model(check_bounds=self.check_bounds, model=None):
            fn = pymc_compile(
                self.inputs, self.outputs, on_unused_input="ignore", **kwargs | overrides
            )
        # Callers pass inputs of the exact dtypes, so PyTensor's checks can be skipped.
        fn.trust_input = True
        return fn

    def python_vm(self):
        """The same function on PyTensor's Python VM (:func:`python_vm_mode`)."""
        return self(mode=python_vm_mode())


def structure_key(recipe: _Recipe) -> str:
    """A path naming the structure of ``recipe``'s graph, under PyTensor's compile directory.

    The digest covers every node's op and its properties, how the nodes connect, the output
    types, the constants' values and the compile options; a shared variable counts by its type
    and name, not its value, as numba's code does not depend on it. It is read from the graph
    as given, before any rewrite, so a kernel whose numba code is on disk is not rewritten
    twice. Two structures that collide only cost speed: the key decides when numba compiles,
    never what a kernel computes.
    """
    digest = hashlib.sha256()

    def feed(text: str) -> None:
        digest.update(text.encode())
        digest.update(b"\0")

    feed(f"pytensor {pytensor.__version__}; check_bounds {recipe.check_bounds}")
    feed(_unaddressed(repr(sorted((k, repr(v)) for k, v in recipe.kwargs.items() if k != "mode"))))
    outputs = [_variable(out) for out in recipe.outputs]
    names = {_variable(var): f"i{k}" for k, var in enumerate(recipe.inputs)}
    for node in io_toposort(list(names), outputs):
        for var in node.inputs:
            if var not in names:
                names[var] = _leaf(var, len(names))
        feed(_describe(node.op))
        feed(",".join(names[var] for var in node.inputs))
        for out in node.outputs:
            names[out] = f"v{len(names)}"
            feed(str(out.type))
    for out in outputs:
        if out not in names:
            names[out] = _leaf(out, len(names))
    feed(",".join(names[out] for out in outputs))
    folder = Path(pytensor.config.compiledir) / "adversary_kernels"
    return str(folder / digest.hexdigest()[:32])


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _unaddressed(text: str) -> str:
    return _ADDRESS.sub("", text)


def _variable(var):
    """The graph variable of ``var``, unwrapped from ``pytensor.In``/``pytensor.Out``."""
    return var.variable if isinstance(var, In | Out) else var


def _describe(op) -> str:
    props = getattr(op, "__props__", None)
    detail = repr(op._props()) if props else str(op)
    return f"{type(op).__module__}.{type(op).__qualname__}{_unaddressed(detail)}"


def _leaf(var, number: int) -> str:
    """A graph root other than an input: a constant by its value, else by its type and name."""
    if isinstance(var, Constant):
        data = np.asarray(var.data)
        if data.dtype.kind in "biufc":
            value = hashlib.sha256(data.tobytes()).hexdigest()
            return f"c{number}:{var.type}:{data.dtype}{data.shape}:{value}"
        return f"c{number}:{var.type}:{_unaddressed(repr(var.data))}"
    return f"r{number}:{var.type}:{var.name}"


def _on_disk(key: str) -> bool:
    """True if numba has compiled structure ``key`` in some process (its marker exists)."""
    return os.path.exists(key + ".numba")


def _mark_compiled(key: str) -> None:
    try:
        Path(key).parent.mkdir(parents=True, exist_ok=True)
        Path(key + ".numba").touch()
    except OSError:  # a read-only cache: later processes recompile
        pass


def _seconds_file(key: str) -> Path:
    """The file holding structure ``key``'s Python-VM seconds, all processes together."""
    return Path(key + ".vm-seconds")


def _read_seconds(key: str) -> float:
    try:
        return float(_seconds_file(key).read_text(encoding="ascii"))
    except (OSError, ValueError):  # none yet, or being replaced: start from none
        return 0.0


def _add_seconds(key: str, seconds: float) -> float:
    """Add ``seconds`` to the structure's file (an approximate, lock-free total); the total."""
    total = _read_seconds(key) + seconds
    path = _seconds_file(key)
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(repr(total), encoding="ascii")
        os.replace(temporary, path)
    except OSError:  # a read-only cache: the seconds stay this process's
        pass
    return total


class TieredFunction:
    """A kernel on PyTensor's Python VM until its numba version is compiled (module doc).

    Called like a PyTensor function. ``recipe`` compiles the numba version when it is
    needed; ``key`` names its structure (:func:`structure_key`); ``tier`` is ``"python"``
    or ``"numba"``.
    """

    def __init__(self, quick, recipe, key: str):
        self._quick = quick
        self._recipe = recipe
        self.key = key
        if key not in _seconds:  # what earlier processes spent on the Python VM
            _seconds[key] = _read_seconds(key)
        self._call = quick
        self._run_seconds = 0.0  # on the Python VM in the current run (plan)
        self._compile_next = False
        self._calls = self._expected = 0  # calls of a run the kernel plans itself (expect)

    @property
    def tier(self) -> str:
        return "python" if self._call is self._quick else "numba"

    def __call__(self, *args):
        if self._call is not self._quick:
            return self._call(*args)
        state = _state.get(self.key)
        hot = self._compile_next or _seconds.get(self.key, 0.0) >= COMPILE_SECONDS
        # "compiled": by another kernel of this structure, here; on disk: by another process.
        if state == "compiled" or (state is None and (hot or _on_disk(self.key))):
            return self._compile_numba(args)
        start = time.perf_counter()
        out = self._quick(*args)
        seconds = time.perf_counter() - start
        self._run_seconds += seconds
        key = self.key
        _seconds[key] = _seconds.get(key, 0.0) + seconds
        _unsaved[key] = _unsaved.get(key, 0.0) + seconds
        if _unsaved[key] >= FLUSH_SECONDS:
            _seconds[key] = max(_seconds[key], _add_seconds(key, _unsaved.pop(key)))
        if self._expected:
            self._calls += 1
            self.plan(self._calls, self._expected)
        return out

    def plan(self, done: int, total: int) -> None:
        """Told by the run calling this kernel after ``done`` of its ``total`` sweeps (0: a
        run starts): numba compiles at the next call if the rest of the run is projected to
        spend more than :data:`COMPILE_SECONDS` on the Python VM, the projection made once
        the run has spent :data:`PROJECTION_SECONDS` there."""
        if done <= 0:
            self._run_seconds = 0.0
        elif (
            self._run_seconds >= PROJECTION_SECONDS
            and self._run_seconds * (total - done) > COMPILE_SECONDS * done
        ):
            self._compile_next = True

    def expect(self, calls: int) -> None:
        """A run of ``calls`` calls starts, which the kernel plans itself (:meth:`plan`
        after each call), for a caller that calls it once per draw and cannot tell it."""
        self._calls, self._expected = 0, calls
        self.plan(0, calls)

    def _compile_numba(self, args):
        """Numba's outputs for ``args``, compiled now; the Python VM's (and a warning) if
        numba fails."""
        try:
            compiled = self._recipe()
            out = compiled(*args)
        except Exception as error:
            _state[self.key] = "failed"
            warnings.warn(
                f"numba could not compile a sampler kernel ({error!r}); "
                "PyTensor's Python VM keeps computing it, more slowly",
                RuntimeWarning,
                stacklevel=3,
            )
            return self._quick(*args)
        if _state.get(self.key) != "compiled":
            _state[self.key] = "compiled"
            _mark_compiled(self.key)
        self._call = compiled
        return out

    def __getstate__(self):
        return {"quick": self._quick, "recipe": self._recipe, "key": self.key}

    def __setstate__(self, state):
        self.__init__(state["quick"], state["recipe"], state["key"])
