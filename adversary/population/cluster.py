"""The Dask cluster of a population run: a local one started for it, or an existing one.

:func:`local_cluster` starts one worker process of one thread per core,
bound to 127.0.0.1, with no dashboard and its scratch space in the build tree
(:func:`default_local_directory`); :func:`cluster_client` gives the client a run
uses: the caller's, one connected to a scheduler address, or a new local
cluster's; :func:`scatter` sends data to its workers under keys of their own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path

__all__ = [
    "QUIET_CLUSTER",
    "SCHEDULER_TIMEOUT",
    "cluster_client",
    "default_local_directory",
    "local_cluster",
    "scatter",
    "worker_count",
]

#: Seconds to wait for an existing Dask scheduler (``scheduler``) to answer.
SCHEDULER_TIMEOUT = 10

#: Dask settings of a local cluster that feed only its dashboard, which it does not run: the
#: workers' statistical profiler (a stack sample every 10 ms), the event loops' health tick
#: (every 20 ms; at 1 s it still warns of a loop blocked for 3 s) and the system monitor
#: (every 500 ms). An idle two-worker cluster used 2.2 CPU s in 20 s with Dask's defaults,
#: 0.55 s with these.
QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def default_local_directory() -> Path:
    """Scratch space of local clusters: ``$ADVERSARY_DASK_DIR``, else ``build/dask``.

    ``build`` is the source checkout's build tree when the package runs from
    one, else ``./build``; never the home directory.
    """
    if os.environ.get("ADVERSARY_DASK_DIR"):
        return Path(os.environ["ADVERSARY_DASK_DIR"])
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / "build" / "dask"
    return Path.cwd() / "build" / "dask"


@contextlib.contextmanager
def local_cluster(n_workers: int | None = None, local_directory: Path | None = None):
    """A Dask client on a new local cluster: ``n_workers`` processes of one thread each.

    Binds scheduler and workers to 127.0.0.1, runs no dashboard (nor what only feeds it,
    :data:`QUIET_CLUSTER`), and keeps its scratch space in a new folder under
    ``local_directory`` (default :func:`default_local_directory`), removed on exit.
    """
    import dask
    from distributed import Client, LocalCluster

    n_workers = os.cpu_count() or 1 if n_workers is None else int(n_workers)
    if n_workers < 1:
        raise ValueError(f"workers must be >= 1, got {n_workers}")
    base = Path(local_directory or default_local_directory())
    base.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="cluster-", dir=base)
    # Dask's default MALLOC_TRIM_THRESHOLD_ (64 KiB) turns off glibc's adaptive mmap
    # threshold: every large temporary array of the release grids is then mapped and unmapped
    # afresh (page faults cost a third of the run). Keep the one-thread BLAS settings only.
    environ = {
        key: value
        for key, value in dask.config.get("distributed.nanny.pre-spawn-environ").items()
        if not key.startswith("MALLOC_")
    }
    try:
        settings = {
            "temporary-directory": scratch,
            "distributed.nanny.pre-spawn-environ": environ,
            **QUIET_CLUSTER,
        }
        with dask.config.set(settings):
            with (
                LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # no dashboard; the scheduler's plain HTTP routes on 127.0.0.1, any free port
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    local_directory=scratch,
                    # a failed task reaches the caller as its exception, in one line:
                    # the workers' own "Compute Failed" tracebacks would bury it
                    silence_logs=logging.CRITICAL,
                ) as cluster,
                Client(cluster) as client,
            ):
                yield client
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def cluster_client(client, scheduler, n_workers, local_directory):
    """The Dask client of a run: ``client`` if given, else one connected to the
    ``scheduler`` address, else one on a new :func:`local_cluster` of ``n_workers``."""
    if client is not None:
        yield client
    elif scheduler is not None:
        from distributed import Client

        _probe(scheduler)
        try:
            connected = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError) as error:
            raise ValueError(
                f"scheduler: could not reach a Dask scheduler at {scheduler!r} within "
                f"{SCHEDULER_TIMEOUT} s ({type(error).__name__})"
            ) from None
        with connected:
            yield connected
    else:
        with local_cluster(n_workers, local_directory) as started:
            yield started


def worker_count(client) -> int:
    """How many workers ``client``'s cluster has now, asked of the scheduler (at least 1).

    Not ``client.scheduler_info()["workers"]``: before distributed 2026.11 that returned the
    client's cached copy of the scheduler's identity, which the client's own periodic update
    (every 2 s, without the workers) may overwrite between the fetch and the return; under
    load a run saw no workers on a two-worker cluster that way.
    """
    workers = len(client.nthreads())
    if workers < 1:
        raise ValueError("client: the Dask cluster has no workers")
    return workers


def scatter(client, data, broadcast: bool = False):
    """``client.scatter(data, broadcast=broadcast)`` under fresh keys, not hashed from ``data``.

    Dask keys scattered data by a hash of its content by default. A run that
    scatters the same data again on the same client (a benchmark's warm-up
    call, then its timed one) gets the same key while the first call's
    futures are being released; the release can reach the scheduler after the
    new scatter and drop its data, and the tasks fail with "lost dependencies"
    (dask/distributed#4612, #8576). Fresh keys cannot collide. A mapping
    comes back as a mapping of the same names to futures; Dask itself would
    use its names as keys, which collide the same way.
    """
    if isinstance(data, dict):
        futures = client.scatter(list(data.values()), broadcast=broadcast, hash=False)
        return dict(zip(data, futures, strict=True))
    return client.scatter(data, broadcast=broadcast, hash=False)


def _probe(scheduler: str) -> None:
    """Refuse at once a ``scheduler`` address that is malformed or where nothing listens.

    Dask's client retries a refused connection until its timeout; a plain TCP
    connection says "refused" or "unknown host" at once (and waits at most
    :data:`SCHEDULER_TIMEOUT` for a host that does not answer).
    """
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location)
            socket.create_connection((host, port), timeout=SCHEDULER_TIMEOUT).close()
    except TimeoutError:
        reason = f"no answer within {SCHEDULER_TIMEOUT} s"
    except (OSError, ValueError, TypeError, OverflowError) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    else:
        return
    raise ValueError(f"scheduler: could not reach a Dask scheduler at {scheduler!r} ({reason})")
