"""A real Dask cluster: `dask scheduler` and two `dask worker` processes, as on a cluster.

`adversary population --scheduler ADDRESS` on it writes the same bytes as a
local one-worker run: every number depends only on its record's data, never
on where it was computed.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from adversary.cli import main

DASK = Path(sys.executable).with_name("dask")
MODEL_FILE = """
from adversary.population.model import PopulationModel
POPULATION = PopulationModel(
    name="real cluster test",
    characteristics=("hhgq", "voting_age", "hispanic", "race"),
    priors={"1/2": 0.5, "1/10": 0.1},
    budgets={"x4": 4.0},
)
"""
SAME_BYTES = ("records.parquet", "parameters.parquet", "summary.csv", "summary_by_county.csv")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """``tcp://127.0.0.1:PORT`` of a scheduler with two one-thread workers, stopped after."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_TEMPORARY_DIRECTORY": str(tmp_path / "dask")}
    scheduler = [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
    processes = [
        subprocess.Popen([*scheduler, "--no-dashboard"], env=env, stderr=subprocess.DEVNULL)
    ]
    for k in range(2):
        worker = [str(DASK), "worker", address, "--nthreads", "1", "--no-dashboard"]
        worker += ["--host", "127.0.0.1", "--local-directory", str(tmp_path / f"worker{k}")]
        processes.append(subprocess.Popen(worker, env=env, stderr=subprocess.DEVNULL))
    try:
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:  # killed, not terminated: a worker's graceful close waited 8 s on the scheduler
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def test_a_real_cluster_writes_the_bytes_of_a_local_one_worker_run(cluster, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(MODEL_FILE)
    argv = ["population", "--synthetic", "10000", "--seed", "4", "--model", str(model)]
    argv += ["--no-progress", "--json"]
    assert main([*argv, "--scheduler", cluster, "--out", str(tmp_path / "cluster")]) == 0
    assert '"workers": 2' in capsys.readouterr().out
    assert main([*argv, "--workers", "1", "--out", str(tmp_path / "local")]) == 0
    assert '"workers": 1' in capsys.readouterr().out
    for name in SAME_BYTES:
        cluster_bytes = (tmp_path / "cluster" / name).read_bytes()
        assert cluster_bytes == (tmp_path / "local" / name).read_bytes(), name
