"""A run's local Dask cluster runs quiet and its workers are counted by asking the scheduler;
data scattered to its workers gets fresh keys, so scattering the same data again is safe."""

import time

import numpy as np
import pytest

from adversary.population.cluster import QUIET_CLUSTER, scatter, worker_count


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as in_process:
        yield in_process


def _forgotten(client, key, timeout=10.0) -> bool:
    """Whether the scheduler has dropped ``key`` (a released future's data) within ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if key not in client.cluster.scheduler.tasks:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("broadcast", [False, True])
def test_the_same_data_scattered_twice_gets_two_keys(client, broadcast):
    data = [np.arange(5), np.arange(5)]
    first, second = scatter(client, data, broadcast=broadcast)
    again = scatter(client, data, broadcast=broadcast)
    keys = {first.key, second.key, *(future.key for future in again)}
    assert len(keys) == 4
    # Dask's default keys by content: the collision this helper avoids
    assert client.scatter(data[0]).key == client.scatter(data[1]).key


def test_releasing_the_first_scatter_leaves_the_second_computable(client):
    frame = np.arange(1_000)
    [first] = scatter(client, [frame])
    [second] = scatter(client, [frame])
    key = first.key
    del first
    assert _forgotten(client, key)
    assert client.submit(np.sum, second, pure=False).result() == frame.sum()


def test_a_mapping_keeps_its_names_with_fresh_keys(client):
    shared = scatter(client, {"a": 1, "b": 2})
    assert set(shared) == {"a", "b"}
    assert client.gather(shared) == {"a": 1, "b": 2}
    assert shared["a"].key != "a"


def test_a_local_clusters_workers_and_scheduler_run_quiet(client_two):
    """No profiler, slow ticks: QUIET_CLUSTER's values reach every worker and the scheduler."""
    import dask

    def settings():
        return {key: dask.config.get(key) for key in QUIET_CLUSTER}

    by_worker = client_two.run(settings)
    assert len(by_worker) == 2
    assert all(seen == QUIET_CLUSTER for seen in by_worker.values())
    assert client_two.run_on_scheduler(settings) == QUIET_CLUSTER
    assert QUIET_CLUSTER["distributed.worker.profile.enabled"] is False


def test_workers_are_counted_by_the_scheduler_not_from_the_clients_cache(client, monkeypatch):
    # Before distributed 2026.11, scheduler_info() returned the client's cached identity, which
    # its periodic update (without the workers) could overwrite between the fetch and the
    # return: a two-worker run once saw 0 workers that way under load. The count does not read
    # scheduler_info at all, whichever version is installed; it asks the scheduler.
    cached = {**client.scheduler_info(n_workers=-1), "workers": {}}  # what the race returned
    monkeypatch.setattr(client, "scheduler_info", lambda *args, **kwargs: cached)
    assert worker_count(client) == 1


def test_a_cluster_without_workers_is_refused():
    class NoWorkers:
        def nthreads(self):
            return {}

    with pytest.raises(ValueError, match=r"^client: the Dask cluster has no workers$"):
        worker_count(NoWorkers())
