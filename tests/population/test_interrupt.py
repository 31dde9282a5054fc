"""Ctrl-C during ``adversary population``: one line, exit status 130, the cluster shut down
and nothing left in ``--out`` (issue 23, point 9)."""

import os
import select
import signal
import subprocess
import sys
import time

import psutil


def _read_until(process, marker: bytes, seconds: float) -> bytes:
    """The process's stderr up to ``marker`` (read from the pipe, unbuffered)."""
    seen, deadline = b"", time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 1.0)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def _popen_answering_ctrl_c(command, **options) -> subprocess.Popen:
    """``subprocess.Popen`` whose child starts with SIGINT's default disposition, as from a
    terminal. A child inherits an ignored SIGINT, and Python then raises no KeyboardInterrupt:
    a pytest worker ignores SIGINT once an earlier test's code has set it so (seen after the
    docs tests in an xdist worker), and the command ran to the end, exit status 0."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # reset at exec
    try:
        return subprocess.Popen(command, **options)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigint_while_computing_is_one_line_and_exit_130(tmp_path):
    out = tmp_path / "out"
    scratch = tmp_path / "dask"
    command = [sys.executable, "-m", "adversary", "population", "--synthetic", "20000"]
    command += ["--model", "population_gvhr", "--workers", "1", "--out", str(out)]
    env = os.environ | {"ADVERSARY_DASK_DIR": str(scratch)}
    process = _popen_answering_ctrl_c(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        # the progress line of the first phase: the cluster runs and the workers compute
        started = _read_until(process, b"counting cells", 300)
        assert b"counting cells" in started, started.decode()
        cluster = psutil.Process(process.pid).children(recursive=True)
        assert cluster  # the local cluster's worker processes
        process.send_signal(signal.SIGINT)
        stdout, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = (started + rest).decode()
    assert process.returncode == 130, stderr
    assert stdout == b""
    assert "Traceback" not in stderr
    # the phase's own progress line, ended; then one line saying what happened
    lines = stderr.splitlines()
    assert lines[-1] == "adversary population: interrupted"
    assert all(line.startswith("counting cells") for line in lines[:-1]), stderr
    assert not out.exists()  # no partial output
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder
    assert list(scratch.iterdir()) == []  # the local cluster's scratch space is removed
    _, alive = psutil.wait_procs(cluster, timeout=10)
    assert alive == []  # the cluster's processes are gone


def test_every_command_turns_ctrl_c_into_one_line(monkeypatch, capsys):
    """The command line's main: KeyboardInterrupt from any command is one line and 130."""
    from adversary.cli import main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("adversary.cli.budget.run", interrupted)
    assert main(["budget"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "adversary budget: interrupted\n" and captured.out == ""
