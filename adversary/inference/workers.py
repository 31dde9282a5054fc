"""Where :func:`~adversary.inference.sample`'s chains on several cores start: a fork server.

PyMC forks its workers where the platform's default start method is ``fork``
(Linux). A process that has imported numpy, SciPy and ArviZ already runs
helper threads (their BLAS pools), so every fork is unsafe and Python warns
(``DeprecationWarning``: "This process is multi-threaded, use of fork() may
lead to deadlocks in the child"). The chains' workers therefore start from a
fork server instead: a separate process, started once, that forks each worker.
It imports the sampler's modules when it starts (:data:`FORKSERVER_PRELOAD`),
so that a worker need not import PyMC, PyTensor and numba afresh to unpickle
its step, and it starts with one BLAS thread (:data:`ONE_THREAD`), so that it
is itself single-threaded when it forks. As with ``spawn``, a script that
samples on several cores must guard its top level with
``if __name__ == "__main__":``.

Each worker runs the main script again (as ``__mp_main__``, its guarded part
skipped): CPython 3.12's fork server never preloads ``__main__``, whatever its
preload list says (it looks for the key ``main_path`` in the preparation data,
which names it ``init_main_from_path``). What the script imports is therefore
preloaded by name (:func:`main_imports`): a script that imported ArviZ spent
2.5 s of every two-core run importing it again in each worker.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import types
from collections.abc import Sequence
from multiprocessing import forkserver

#: Imported once by the fork server. Without them every worker imported PyMC, PyTensor and
#: numba afresh to unpickle its step: a 20-draw, two-chain run took 49 s on a loaded 2-core
#: machine against 13 s, and the next run 62 s against 3 s. ``__main__`` is its default.
FORKSERVER_PRELOAD = ("__main__", "adversary.inference", "pytensor.link.numba.dispatch")

#: The environment the fork server starts with, so that importing its modules leaves it
#: single-threaded: one thread in numpy's and SciPy's BLAS pools (OpenBLAS, MKL, OpenMP;
#: PyMC sets each worker's own with ``pm.sample(blas_cores=...)``), and no background
#: thread in the jemalloc of pyarrow (which pandas imports).
ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
}


def start_fork_server(modules: Sequence[str] = ()) -> None:
    """Start this process's fork server, if it has none yet, with its modules and one thread.

    It imports :data:`FORKSERVER_PRELOAD` and ``modules`` (what else its workers run,
    e.g. a Dask worker's tasks) in the environment :data:`ONE_THREAD`. A server already
    running is left as it is.
    """
    multiprocessing.set_forkserver_preload([*FORKSERVER_PRELOAD, *main_imports(), *modules])
    saved = {name: os.environ.get(name) for name in ONE_THREAD}
    os.environ.update(ONE_THREAD)
    try:
        forkserver.ensure_running()
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def main_imports() -> list[str]:
    """The modules the main script holds by name: each module it imported (``import arviz as
    az``) and the module of each object it imported from one (``from scipy import stats``),
    those already imported in this process."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__file__", None) is None:  # an interpreter, a notebook
        return []
    names = set()
    for value in list(vars(main).values()):
        if isinstance(value, types.ModuleType):
            name = value.__name__
        else:
            try:  # a function's or class's module, or an instance's class's
                name = value.__module__
            except Exception:  # no module, or an object that raises on lookup
                continue
        if isinstance(name, str) and name in sys.modules and name != "__main__":
            names.add(name)
    return sorted(names)


def worker_context(kwargs: dict, chains: int, cores: int) -> dict:
    """``kwargs`` for :func:`pymc.sample` with the fork server's context as ``mp_ctx``.

    Only for several chains on several cores where the default start method is
    ``fork`` and ``kwargs`` gives no ``mp_ctx``; the server is started here
    (:func:`start_fork_server`) if this process has none yet.
    """
    if chains < 2 or cores < 2 or kwargs.get("mp_ctx") is not None:
        return kwargs
    if multiprocessing.get_context().get_start_method() != "fork":
        return kwargs
    start_fork_server()
    return {**kwargs, "mp_ctx": multiprocessing.get_context("forkserver")}
