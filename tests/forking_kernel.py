"""Jupyter kernels forked from a process that has already imported the scientific stack.

Why: the notebook tests and the docs build start 29 kernels. A fresh ``python -m
ipykernel_launcher`` spends about 3 CPU seconds before it runs a cell: 0.6 s to start
ipykernel and 2 s to import pymc, arviz (its ``scipy.stats`` most of all), pandas and
matplotlib, which every notebook does. On a 2-core machine that is 1.5 minutes of an
8-minute suite. Here those imports are paid once per test session and each kernel is
a ``fork()`` of the process that made them.

How: one script, two roles.

``python forking_kernel.py serve SOCKET`` — the fork server, started once per test
session (per xdist worker) by the ``fork_server`` fixture (tests/conftest.py). It
imports :data:`PRELOAD`, listens on the Unix socket ``SOCKET`` and prints ``ready``.
For each launcher that connects it forks a child that becomes an IPython kernel
(``IPKernelApp``) with the launcher's command-line arguments, environment variables,
working directory and standard streams (passed over the socket). It stops, killing
its kernels, when its standard input closes: when the fixture closes it, or when the
test process dies.

``python forking_kernel.py launch SOCKET -f CONNECTION_FILE ...`` — the launcher, the
``argv`` of the kernel spec (the fixture writes it): the process the KernelManager
starts and takes for the kernel. It asks the server for a kernel and lives exactly as
long as that kernel: it forwards SIGINT and SIGTERM to it (so interrupts work) and
exits with its exit status. If the launcher is killed, the server kills its kernel;
if the server dies, the launcher kills its kernel (and later launchers fail: there is
no falling back to a normal kernel that would hide it); if the KernelManager's process
dies, the launcher exits (as ipykernel's parent poller would end a kernel).

Fidelity: each kernel is still a fresh process with an empty user namespace (IPython
makes a new ``__main__``), so a notebook that forgets an import fails as before. The
preloaded modules are in ``sys.modules`` already, imported with the server's values
of the variables they read at import time (:data:`IMPORT_TIME`): a launcher whose
values differ execs a normal kernel instead. The child reseeds numpy's global random
state (``random`` reseeds itself after a fork), which would otherwise be the same in
every kernel. Differences remain: a notebook may use a preloaded submodule it never
imported (``scipy.stats`` after only ``import scipy``), which in a fresh process works
only if some module it did import had imported it; the kernels share the server's
string hash seed, whatever ``PYTHONHASHSEED`` the launcher has (Dask's multiprocessing
scheduler sets it in the test process that used it, and a notebook's numbers must not
depend on it); and jemalloc (pyarrow's allocator, which pandas loads) runs without
its background thread (:data:`FORK_SAFE`).

The server must not fork while it has threads, an asyncio loop or a zmq context
(their state would be copied into the child half-made): it imports modules and does
nothing else, and it checks it has one thread before each fork. Unix only
(``fork``, ``AF_UNIX``, descriptor passing).
"""

import atexit
import gc
import importlib
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import threading
import traceback

#: What the server imports before it forks: what a kernel's start-up and a notebook's
#: first cell would otherwise import in every kernel. ``dask.array`` too: xarray imports it
#: when it makes its first array (to ask whether the data are a dask array), 0.5-1.3 CPU
#: seconds in every kernel that computes anything; and PyTensor's numba backend, which a
#: kernel's first compiled function imports (0.5 s).
PRELOAD = (
    "ipykernel.kernelapp",
    "numpy",
    "scipy.stats",
    "pandas",
    "matplotlib.pyplot",
    "pymc",
    "arviz",
    "adversary",
    "dask.array",
    "pytensor.link.numba.linker",
)

#: Variables that the interpreter or a module of :data:`PRELOAD` reads once, at start-up
#: or import: a launcher whose values differ from the server's gets a normal kernel.
IMPORT_TIME = (
    "PYTHONPATH",
    "PYTENSOR_FLAGS",
    "MPLBACKEND",
    "MPLCONFIGDIR",
    "NUMBA_CACHE_DIR",
    "OPENBLAS_NUM_THREADS",
)

#: Set in the server before it imports: pyarrow's jemalloc would otherwise start a
#: background thread, and a process with threads must not fork. (adversary's own fork
#: server sets it too, in ``adversary.inference.workers.ONE_THREAD``; not imported from
#: there, as importing that module imports pandas, and pyarrow with it, first.)
FORK_SAFE = {"JE_ARROW_MALLOC_CONF": "background_thread:false"}

#: Signals the launcher passes on to its kernel (the KernelManager's interrupt and
#: terminate); SIGKILL cannot be caught, and the server answers it instead.
FORWARDED = (signal.SIGINT, signal.SIGTERM)


class _Messages:
    """JSON messages, one a line, read from a socket."""

    def __init__(self, connection: socket.socket, data: bytes = b""):
        self.connection = connection
        self.data = data

    def next(self) -> dict | None:
        """The next message, or None if the other end closed first."""
        while b"\n" not in self.data:
            chunk = self.connection.recv(1 << 16)
            if not chunk:
                return None
            self.data += chunk
        line, _, self.data = self.data.partition(b"\n")
        return json.loads(line)


def _send(connection: socket.socket, message: dict) -> None:
    connection.sendall(json.dumps(message).encode() + b"\n")


def _tell(connection: socket.socket, message: dict) -> None:
    """The server's :func:`_send`: a launcher that has gone is noticed by its closed socket."""
    try:
        _send(connection, message)
    except OSError:
        pass


def _os_threads() -> int:
    """This process's threads as the OS counts them (C libraries' too), where /proc says."""
    try:
        return len(os.listdir("/proc/self/task"))
    except FileNotFoundError:
        return threading.active_count()


def _kill(pid: int, signum: int) -> None:
    """Signal a kernel and the processes it started: its process group, once it leads one."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signum)
            return
        except ProcessLookupError:
            pass


# -- The server -------------------------------------------------------------------------------


def serve(socket_path: str) -> None:
    """Import :data:`PRELOAD`, then fork a kernel for each launcher until stdin closes."""
    if not sys.flags.safe_path:
        del sys.path[0]  # this script's folder, which is no kernel's
    os.environ.update(FORK_SAFE)
    imported_with = {name: os.environ.get(name) for name in IMPORT_TIME}
    for name in PRELOAD:
        importlib.import_module(name)
    # The preloaded modules' objects live as long as a kernel: out of the cycle collector's
    # reach (gc.freeze, as Python's documentation advises before a fork), a kernel's full
    # collections no longer walk them. The docs build's 13 kernels spent 2.4 CPU s in
    # collections, 0.9 s since.
    gc.freeze()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    # SIGCHLD (a kernel exited) wakes select() through this pipe.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    kernels: dict[int, socket.socket | None] = {}  # pid: its launcher's connection, while open
    server_files = [listener.fileno(), wake_read, wake_write]
    print("ready", flush=True)
    try:
        while True:
            launchers = {c.fileno(): (pid, c) for pid, c in kernels.items() if c is not None}
            ready, _, _ = select.select([0, listener, wake_read, *launchers], [], [])
            if 0 in ready and not os.read(0, 1024):
                return
            if wake_read in ready:
                os.read(wake_read, 1024)
                _reap(kernels)
            for fd in set(ready) & launchers.keys():
                pid, connection = launchers[fd]
                if kernels.get(pid) is connection and not connection.recv(1024):
                    connection.close()  # the launcher is gone: so goes its kernel
                    kernels[pid] = None
                    _kill(pid, signal.SIGKILL)
            if listener in ready:
                connection, _ = listener.accept()
                others = [c.fileno() for c in kernels.values() if c is not None]
                pid = _start(connection, imported_with, [*server_files, *others])
                if pid is not None:
                    kernels[pid] = connection
    finally:
        for pid in kernels:
            _kill(pid, signal.SIGKILL)
        _reap(kernels, wait=True)
        os.unlink(socket_path)


def _reap(kernels: dict[int, socket.socket | None], wait: bool = False) -> None:
    """Collect exited kernels (all of them if ``wait``) and tell their launchers how each ended."""
    while kernels:
        pid, status = os.waitpid(-1, 0 if wait else os.WNOHANG)
        if pid == 0:
            return
        connection = kernels.pop(pid)
        if connection is not None:
            _tell(connection, {"exit": os.waitstatus_to_exitcode(status)})
            connection.close()


def _start(connection: socket.socket, imported_with: dict, server_files: list) -> int | None:
    """Read a launcher's request and fork its kernel (its pid), or tell it to start its own."""
    streams = []
    try:
        connection.settimeout(10)  # a launcher sends its request at once
        data, streams, _, _ = socket.recv_fds(connection, 1 << 16, 3)
        request = _Messages(connection, data).next()
        connection.settimeout(None)
    except OSError:
        request = None
    if request is not None:
        differing = [n for n in IMPORT_TIME if request["env"].get(n) != imported_with[n]]
        if not differing:
            return _fork(connection, request, streams, server_files)
        _tell(connection, {"fallback": f"{', '.join(differing)} not as the server's"})
    connection.close()
    for fd in streams:
        os.close(fd)
    return None


def _fork(connection: socket.socket, request: dict, streams: list, server_files: list) -> int:
    """Fork the kernel a launcher asked for; its pid."""
    if threading.active_count() != 1 or _os_threads() != 1:
        raise RuntimeError(
            f"the fork server has {threading.active_count()} Python threads and "
            f"{_os_threads()} threads in all; it must have one to fork safely"
        )
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = _become_kernel(request, streams, [*server_files, connection.fileno()])
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)  # never back into the server's loop
    for fd in streams:
        os.close(fd)
    _tell(connection, {"pid": pid})
    return pid


def _become_kernel(request: dict, streams: list[int], server_files: list[int]) -> int:
    """In the forked child: take the launcher's place and run an IPython kernel."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in server_files:
        os.close(fd)
    os.setsid()  # its own process group, as a launched kernel has: signals reach its children
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["argv"]]
    import numpy

    numpy.random.seed()  # noqa: NPY002  (the legacy global state: fresh entropy, as a new process's)
    from ipykernel.kernelapp import IPKernelApp

    server = os.getppid()  # ipykernel's own poller ends the kernel if the server dies
    try:
        IPKernelApp.launch_instance(
            argv=[*request["argv"], f"--IPKernelApp.parent_handle={server}"]
        )
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    atexit._run_exitfuncs()  # what the interpreter would run at exit (IPython's among them)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    return code


# -- The launcher -----------------------------------------------------------------------------


def launch(socket_path: str, argv: list[str]) -> None:
    """Be the kernel process for the KernelManager: a forked kernel's stand-in."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
    except OSError as error:
        sys.exit(f"forking kernel: no fork server at {socket_path}: {error}")
    socket.send_fds(connection, [b" "], [0, 1, 2])  # a blank before the request's JSON
    _send(connection, {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()})
    messages = _Messages(connection)
    reply = messages.next()
    if reply is None:
        sys.exit("forking kernel: the fork server closed the connection (see its error)")
    if "fallback" in reply:
        print(f"forking kernel: a normal kernel: {reply['fallback']}", file=sys.stderr)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *argv])
    pid = reply["pid"]
    for signum in FORWARDED:
        signal.signal(signum, lambda signum, _: _kill(pid, signum))
    parent = os.getppid()
    connection.settimeout(1.0)
    while True:
        try:
            reply = messages.next()
            break
        except TimeoutError:
            if os.getppid() != parent:  # the KernelManager's process is gone
                sys.exit(1)  # and the server kills the kernel
    if reply is None:
        _kill(pid, signal.SIGKILL)
        sys.exit("forking kernel: the fork server died")
    code = reply["exit"]
    for signum in FORWARDED:
        signal.signal(signum, signal.SIG_DFL)
    if code < 0:  # killed by a signal: so is the launcher, for the KernelManager to see
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    role, path, *rest = sys.argv[1:]
    {"serve": lambda: serve(path), "launch": lambda: launch(path, rest)}[role]()
