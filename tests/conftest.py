"""Test-wide set-up: caches in the build tree, plots without a display, the order of work.

With ``-n`` (pytest-xdist, ``--dist loadgroup`` from pyproject.toml) each test is a unit
of work handed to the next free worker, except that the tests of a module sharing a
module- or class-scoped fixture form one unit (so the fixture is computed once, on one
worker). The longest tests — the documentation build and the notebooks — come first, so
that they run beside the rest of the suite instead of after it.

Their Jupyter kernels are forked from a server that has imported the scientific stack
once (the ``fork_server`` fixture, tests/forking_kernel.py), instead of each importing it.
"""

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Test files whose tests run first, longest first: each is minutes of work.
FIRST = ("test_docs.py", "test_notebooks.py", "test_every_shipped_case.py")
_SHARED_SCOPES = {"module", "class", "package"}

_BUILD = Path(__file__).resolve().parent.parent / "build"
_FORKING_KERNEL = Path(__file__).resolve().parent / "forking_kernel.py"
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={_BUILD / 'pytensor'}")
os.environ.setdefault("MPLCONFIGDIR", str(_BUILD / "matplotlib"))
os.environ.setdefault("MPLBACKEND", "Agg")
# Kernels (notebook tests, executed docs pages), Jupyter and numba keep their files here too.
for _name, _folder in (
    ("NUMBA_CACHE_DIR", "numba"),
    ("IPYTHONDIR", "ipython"),
    ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"),
    ("JUPYTER_DATA_DIR", "jupyter/data"),
    ("JUPYTER_CONFIG_DIR", "jupyter/config"),
):
    os.environ.setdefault(_name, str(_BUILD / _folder))
# Subprocesses (kernels, docs pages, the command line) cache their bytecode there as make's
# do, instead of compiling from source all they import where the environment forbids it.
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(_BUILD / "pycache"))
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# One OpenBLAS thread per process, as make's (see the Makefile): for the kernels and
# subprocesses started from here.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items):
    """The longest files first (:data:`FIRST`); one xdist group per module whose tests share
    a module-, class- or package-scoped fixture."""
    items.sort(key=lambda item: FIRST.index(item.path.name) if item.path.name in FIRST else 99)
    for item in items:
        definitions = getattr(item, "_fixtureinfo", None)
        scopes = {
            fixture.scope
            for fixtures in (definitions.name2fixturedefs.values() if definitions else ())
            for fixture in fixtures
        }
        if scopes & _SHARED_SCOPES:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@dataclass(frozen=True)
class ForkServer:
    """A running fork server of tests/forking_kernel.py: its kernels start in a fraction of
    a second, their imports made."""

    pid: int
    socket: str
    #: The variables its modules were imported with. A kernel must get the same, or it
    #: falls back to a normal, slow, kernel.
    environment: dict[str, str]

    def kernel_variables(self, folder: Path, name: str, *arguments: str) -> dict[str, str]:
        """Write kernel spec ``name`` (a kernel forked from this server, with IPKernelApp's
        ``arguments``) into ``folder/kernels``; return the variables a process needs to start
        it: :attr:`environment`, and JUPYTER_PATH with ``folder`` first."""
        spec = folder / "kernels" / name
        spec.mkdir(parents=True, exist_ok=True)
        launcher = [sys.executable, str(_FORKING_KERNEL), "launch", self.socket]
        kernel = {
            "argv": [*launcher, "-f", "{connection_file}", *arguments],
            "display_name": f"{name} (forked)",
            "language": "python",
        }
        (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
        path = os.pathsep.join(filter(None, [str(folder), os.environ.get("JUPYTER_PATH")]))
        return {**self.environment, "JUPYTER_PATH": path}


@pytest.fixture(scope="session")  # one per xdist worker, started by its first kernel test
def fork_server():
    """A fork server for the session's Jupyter kernels, stopped with its kernels at the end.

    It is a process of its own (not a fork of pytest's) and it stops by itself if pytest's
    process dies: it watches its standard input, a pipe from this process.
    """
    environment = {
        "PYTENSOR_FLAGS": f"base_compiledir={_BUILD / 'pytensor'}",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(_BUILD / "matplotlib"),
    }
    with tempfile.TemporaryDirectory(prefix="fork-server-") as folder:  # a short socket path
        path = os.path.join(folder, "socket")
        server = subprocess.Popen(
            [sys.executable, str(_FORKING_KERNEL), "serve", path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=os.environ | environment,
            start_new_session=True,  # a Ctrl-C is pytest's to handle, not the server's
        )
        try:
            if server.stdout.readline() != b"ready\n":
                pytest.fail(f"the fork server did not start (exit status {server.wait()})")
            yield ForkServer(server.pid, path, environment)
        finally:
            server.stdin.close()  # it kills its kernels and exits
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                raise


@pytest.fixture(scope="session")
def assert_within_mcse():
    """Check a sampled posterior probability against its exact value.

    ``check(tree, event, exact, n_se=4)``: the Monte Carlo estimate of
    ``P[event]`` from a sampled DataTree lies within ``n_se`` standard errors of
    ``exact``, the standard error being ``sqrt(exact (1 - exact) / ESS)`` with
    the ESS of the event's indicator from ArviZ. Returns ``(estimate, ess)``.
    """
    import arviz as az
    import numpy as np

    from adversary.inference import event_indicator

    def check(tree, event, exact, n_se=4.0, min_ess=200):
        indicator = event_indicator(tree, event)
        estimate = float(indicator.mean())
        if exact in (0.0, 1.0):
            assert estimate == exact
            return estimate, float("nan")
        ess = float(az.ess(indicator))
        assert ess >= min_ess, f"ESS {ess:.0f} too small to test against"
        mcse = np.sqrt(exact * (1 - exact) / ess)
        assert abs(estimate - exact) <= n_se * mcse, (estimate, exact, mcse, ess)
        return estimate, ess

    return check
