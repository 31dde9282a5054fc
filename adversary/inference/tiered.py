"""Compiled kernels that answer at once on a cold compile cache, and at numba's speed later.

PyTensor's default linker, numba, compiles a sampler's kernel (a role's conditional,
:mod:`.roles`) in 3–30 s the first time a model's structure is seen; PyTensor's disk cache
(``base_compiledir``) then serves it to any later process in well under a second.
:func:`compile_kernel` looks in that cache first:

- **cached**: the numba function, as before;
- **not cached**: a :class:`TieredFunction`. Its first calls run the same graph, rewritten the
  same way, on PyTensor's Python VM (no C, no numba, no elementwise fusion: built at once,
  1–15 ms a call on the 12-person block, against numba's compile of 3–25 s). Its next call
  compiles numba's version (which writes it to the disk cache), and every call of a kernel
  of that structure after it uses numba, as soon as either

  - the run that calls it (a step method's chain, which tells the kernel at each sweep how
    many of its sweeps are done, :meth:`TieredFunction.plan`) is projected to spend more
    than :data:`COMPILE_SECONDS` (a compile's worth) more on the Python VM, or
  - kernels of its structure (its numba cache entry) have spent :data:`COMPILE_SECONDS` on
    the Python VM, in this process or any other using the same cache (the seconds are kept
    beside numba's cache index): many short runs — a test suite, a notebook's kernels, a
    user's loop of short runs — or calls outside a planned run, pay at most twice what
    compiling at once would have cost, when the compile costs what :data:`COMPILE_SECONDS`
    says (the rent-or-buy rule; it is set below most compiles, as a compile also serves
    every later process).

  So twenty draws of the 12-person block stay on the Python VM (about 2.5 s against a
  compile of about 25 s), a thousand compile numba after the first sweep, and a long run
  waits for numba once, one sweep later than it would have. A kernel whose numba version
  another process has written to the disk cache meanwhile (a chain on another core, a
  kernel sent to a worker) loads it at its next call.

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

import os
import time
import warnings
from pathlib import Path

from pytensor.compile.mode import Mode, get_mode
from pytensor.link.numba.linker import NumbaLinker
from pytensor.link.vm import VMLinker

from .safe import safe_compile_kwargs, safe_mode

__all__ = [
    "COMPILE_SECONDS",
    "TieredFunction",
    "compile_kernel",
    "numba_is_cached",
    "tiered_kernels",
]

#: Seconds of Python-VM calls worth one numba compile of a sampler kernel (which costs 3–25 s
#: on a first process, and nothing in any later one): a structure compiles once the Python VM
#: has cost it that much, or a run is projected to spend more.
COMPILE_SECONDS = 5.0

#: Seconds of Python-VM calls a process keeps before adding them to the file on disk.
FLUSH_SECONDS = 0.5

# Per kernel structure (the path of its numba cache index), in this process:
_seconds: dict[str, float] = {}  # seconds spent in its Python-VM calls, all processes
_unsaved: dict[str, float] = {}  # of those, this process's not yet added to the file
_state: dict[str, str] = {}  # "compiled" or "failed" once numba has compiled it (or failed to)


def compile_kernel(model, outputs, inputs, compile_kwargs=None):
    """``model.compile_fn(outputs, inputs)`` as a kernel (module docstring), ``trust_input`` set.

    Returns PyTensor's function when the mode is the caller's or numba's is on disk, else a
    :class:`TieredFunction`.
    """
    kwargs = safe_compile_kwargs(compile_kwargs)
    fn = _compile(model, outputs, inputs, kwargs)
    tiered = (compile_kwargs or {}).get("mode") is None and isinstance(
        get_mode(None).linker, NumbaLinker
    )
    if not tiered or numba_is_cached(fn):
        return fn
    quick = _compile(model, outputs, inputs, {**kwargs, "mode": python_vm_mode()})
    return TieredFunction(quick, fn, _cache_index(fn))


def tiered_kernels(functions) -> list:
    """The :class:`TieredFunction` among ``functions`` (None and other functions left out)."""
    return [fn for fn in functions if isinstance(fn, TieredFunction)]


def python_vm_mode() -> Mode:
    """The default mode's rewrites but elementwise fusion, on PyTensor's Python VM, made safe.

    Without fusion every elementwise node is one numpy call over its whole array, where a
    fused composite would be evaluated element by element in Python.
    """
    mode = Mode(linker=VMLinker(use_cloop=False, c_thunks=False), optimizer="fast_run")
    return safe_mode(mode.excluding("fusion"))


def numba_is_cached(fn) -> bool:
    """True if numba's compiled code of PyTensor function ``fn`` is in the disk cache.

    A function that is not numba's, or whose cache cannot be located, counts as cached:
    it is used as it is.
    """
    key = _cache_index(fn)
    return key is None or _on_disk(key)


def _on_disk(index: str) -> bool:
    """True if numba's cache index ``index`` exists (some process compiled its function)."""
    return os.path.exists(index)


def _seconds_file(index: str) -> Path:
    """The file beside numba's cache index ``index`` holding its structure's Python-VM seconds."""
    return Path(index + ".vm-seconds")


def _read_seconds(index: str) -> float:
    try:
        return float(_seconds_file(index).read_text(encoding="ascii"))
    except (OSError, ValueError):  # none yet, or being replaced: start from none
        return 0.0


def _add_seconds(index: str, seconds: float) -> float:
    """Add ``seconds`` to the structure's file (an approximate, lock-free total); the total."""
    total = _read_seconds(index) + seconds
    path = _seconds_file(index)
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        temporary.write_text(repr(total), encoding="ascii")
        os.replace(temporary, path)
    except OSError:  # a read-only cache: the seconds stay this process's
        pass
    return total


def _cache_index(fn) -> str | None:
    """The path of numba's cache index of PyTensor function ``fn`` (None: not numba's)."""
    try:
        return str(fn.vm.jit_fn._cache._cache_file._index_path)
    except AttributeError:
        return None


def _compile(model, outputs, inputs, kwargs):
    fn = model.compile_fn(
        outputs, inputs=inputs, point_fn=False, on_unused_input="ignore", **kwargs
    )
    # Callers pass inputs of the exact dtypes, so PyTensor's checks can be skipped.
    fn.trust_input = True
    return fn


class TieredFunction:
    """A PyTensor function's Python-VM twin until its numba version is compiled (module doc).

    Called like the PyTensor function. ``key`` names its structure (numba's cache index);
    ``tier`` is ``"python"`` or ``"numba"``.
    """

    def __init__(self, quick, compiled, key: str):
        self._quick = quick
        self._numba = compiled
        self.key = key
        if key not in _seconds:  # what earlier processes spent on the Python VM
            _seconds[key] = _read_seconds(key)
        self._call = quick
        self._run_seconds = 0.0  # on the Python VM in the current run (plan)
        self._compile_next = False

    @property
    def tier(self) -> str:
        return "numba" if self._call is self._numba else "python"

    @property
    def maker(self):
        """The numba function's maker (its rewritten graph), as a PyTensor function has."""
        return self._numba.maker

    def __call__(self, *args):
        if self._call is self._numba:
            return self._numba(*args)
        state = _state.get(self.key)
        if state == "compiled":  # here or by another kernel of this structure: on disk now
            self._call = self._numba
            return self._numba(*args)
        hot = self._compile_next or _seconds.get(self.key, 0.0) >= COMPILE_SECONDS
        if state is None and (hot or _on_disk(self.key)):  # or compiled by another process
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
        return out

    def plan(self, done: int, total: int) -> None:
        """Told by the run calling this kernel after ``done`` of its ``total`` sweeps (0: a
        run starts): numba compiles at the next call if the rest of the run is projected to
        spend more than :data:`COMPILE_SECONDS` on the Python VM."""
        if done <= 0:
            self._run_seconds = 0.0
        elif self._run_seconds * (total - done) > COMPILE_SECONDS * done:
            self._compile_next = True

    def _compile_numba(self, args):
        """Numba's outputs for ``args``, compiled now; the Python VM's (and a warning) if
        numba fails."""
        try:
            out = self._numba(*args)
        except Exception as error:
            _state[self.key] = "failed"
            warnings.warn(
                f"numba could not compile a sampler kernel ({error!r}); "
                "PyTensor's Python VM keeps computing it, more slowly",
                RuntimeWarning,
                stacklevel=3,
            )
            return self._quick(*args)
        _state[self.key] = "compiled"
        self._call = self._numba
        return out

    def __getstate__(self):
        return {"quick": self._quick, "numba": self._numba, "key": self.key}

    def __setstate__(self, state):
        self.__init__(state["quick"], state["numba"], state["key"])
