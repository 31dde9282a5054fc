"""The forking kernel (tests/forking_kernel.py) is a kernel in a process of its own.

The notebook tests and the docs build trust it to be as faithful as a normal kernel:
a notebook that forgets an import still fails, though the server imported the module;
the kernel runs in the notebook's folder with the launcher's environment; an interrupt
reaches it; and once it is shut down, or its launcher killed, no process is left. A
kernel whose environment the server's imports do not match is a normal kernel instead.
"""

import os
import signal
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

KERNEL = "forking-test"


@pytest.fixture
def forking_kernel(fork_server, tmp_path, monkeypatch):
    """The fork server, its kernel spec :data:`KERNEL` first on JUPYTER_PATH and its
    environment set, as the notebook tests have them."""
    for name, value in fork_server.kernel_variables(tmp_path / "jupyter", KERNEL).items():
        monkeypatch.setenv(name, value)
    return fork_server


@pytest.fixture
def kernel(forking_kernel, tmp_path):
    """``(manager, client)`` of a started forking kernel; shut down at the end."""
    manager = KernelManager(kernel_name=KERNEL)
    manager.start_kernel(cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield manager, client
    finally:
        client.stop_channels()
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)


def _reply(client, msg_id: str, timeout: float = 60) -> dict:
    """The content of the reply to request ``msg_id`` (not, e.g., a second reply to the
    kernel-info requests that ``wait_for_ready`` repeats while a kernel is slow to start)."""
    while True:
        reply = client.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def _run(client, code: str, **expressions: str) -> dict:
    """Execute ``code``; the execute reply's content, with ``expressions`` evaluated after."""
    return _reply(client, client.execute(code, user_expressions=expressions))


def _value(client, expression: str):
    content = _run(client, "", value=expression)
    assert content["status"] == "ok", content
    return eval(content["user_expressions"]["value"]["data"]["text/plain"])


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether process ``pid`` ends within ``timeout`` seconds (the server reaps its kernels)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _notebook(*cells: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def test_a_notebook_that_forgets_an_import_fails(forking_kernel, tmp_path):
    notebook = _notebook(
        "import sys\nassert 'numpy' in sys.modules  # the server imported it",
        "np.zeros(3)",
    )
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=60,
        resources={"metadata": {"path": str(tmp_path)}},
        shutdown_kernel="immediate",
    )
    with pytest.raises(CellExecutionError) as failed:
        client.execute()
    assert (failed.value.ename, failed.value.evalue) == ("NameError", "name 'np' is not defined")


def test_the_kernel_is_forked_in_the_notebooks_folder_with_the_launchers_environment(
    forking_kernel, tmp_path, monkeypatch
):
    monkeypatch.setenv("FORKING_KERNEL_TEST", "from the launcher")
    # As Dask's multiprocessing scheduler leaves it in a test process that used it: a kernel
    # is forked all the same (it keeps the server's hash seed).
    monkeypatch.setenv("PYTHONHASHSEED", "6640")
    notebook = _notebook(
        "import os, sys",
        f"assert os.getppid() == {forking_kernel.pid}, 'not forked from the server'",
        f"assert os.getcwd() == {str(tmp_path)!r}",
        "assert os.environ['FORKING_KERNEL_TEST'] == 'from the launcher'",
        "assert 'JE_ARROW_MALLOC_CONF' not in os.environ  # the server's own",
        f"assert {str(Path(__file__).parent)!r} not in sys.path  # the server's folder",
        "assert {name for name in get_ipython().user_ns if not name.startswith('_')}"
        " == {'In', 'Out', 'exit', 'get_ipython', 'open', 'os', 'quit', 'sys'}",
    )
    NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=60,
        resources={"metadata": {"path": str(tmp_path)}},
        shutdown_kernel="immediate",
    ).execute()


def test_an_interrupt_reaches_the_forked_kernel(kernel):
    manager, client = kernel
    # (not stop_on_error: the kernel would abort the next request if it came in too soon)
    msg_id = client.execute("import time; time.sleep(30)", stop_on_error=False)
    while True:  # until the cell has started
        message = client.get_iopub_msg(timeout=30)
        if message["msg_type"] == "execute_input" and message["parent_header"]["msg_id"] == msg_id:
            break
    time.sleep(0.2)
    started = time.monotonic()
    manager.interrupt_kernel()
    reply = _reply(client, msg_id, timeout=10)
    assert (reply["status"], reply["ename"]) == ("error", "KeyboardInterrupt")
    assert time.monotonic() - started < 5
    assert _value(client, "1 + 1") == 2  # and the kernel goes on


@pytest.mark.parametrize("now", [False, True], ids=["graceful", "immediate"])
def test_a_shut_down_kernel_leaves_no_process(kernel, now):
    manager, client = kernel
    _run(client, "import os")
    pid = _value(client, "os.getpid()")
    launcher = manager.provisioner.process.pid
    assert pid != launcher
    manager.shutdown_kernel(now=now)
    assert _gone(launcher) and _gone(pid)


def test_a_killed_launchers_kernel_is_killed(kernel):
    manager, client = kernel
    _run(client, "import os")
    pid = _value(client, "os.getpid()")
    os.kill(manager.provisioner.process.pid, signal.SIGKILL)
    assert _gone(pid)


def test_a_kernel_that_needs_other_imports_is_a_normal_kernel(forking_kernel, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "svg")  # matplotlib reads it when imported
    manager = KernelManager(kernel_name=KERNEL)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        _run(client, "import os, sys")
        assert _value(client, "os.getpid()") == manager.provisioner.process.pid
        assert not _value(client, "'pymc' in sys.modules")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
