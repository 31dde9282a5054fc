"""Shared set-up of the population tests: a small model and local Dask clusters."""

from pathlib import Path

import pytest

from adversary.population.model import PopulationModel

BUILD = Path(__file__).resolve().parents[2] / "build"
PERSONS = 20_000


def small_model(**changes) -> PopulationModel:
    """Every attack, two priors, one budget (4 × the 2020 ρ: small release grids, fast)."""
    fields = {
        "name": "test",
        "characteristics": ("hhgq", "voting_age", "hispanic", "race"),
        "priors": {"1/2": 0.5, "1/10": 0.1},
        "budgets": {"x4": 4.0},
        "risk_thresholds": (1.5, 2.0),
        "decision_thresholds": (0.5, 0.9),
    }
    fields.update(changes)
    return PopulationModel(**fields)


@pytest.fixture
def model_file(tmp_path) -> Path:
    """A population model file for the command line: one budget (x4), one prior (1/2)."""
    path = tmp_path / "model.py"
    path.write_text(
        "from adversary.population.model import PopulationModel\n"
        "POPULATION = PopulationModel(\n"
        '    name="cli test",\n'
        '    characteristics=("hhgq", "voting_age", "hispanic", "race"),\n'
        '    priors={"1/2": 0.5},\n'
        '    budgets={"x4": 4.0},\n'
        ")\n"
    )
    return path


@pytest.fixture(scope="session")
def model():
    return small_model()


#: What a worker imports for its tasks (counts, measures, synthetic persons, the surveys).
WORKER_MODULES = (
    "distributed",
    "dask.array",  # xarray imports it at its first array
    "adversary.population.phases",
    "adversary.population.sources",
    "adversary.population.measure_tasks",
    "adversary.population.reconstruction",
    "adversary.population.swapping_survey",
)


@pytest.fixture(scope="session", autouse=True)
def forked_workers():
    """Local clusters' workers forked from the fork server, which has imported the package.

    A spawned worker imports PyMC, ArviZ and the package for its first task (about 8 CPU
    seconds each, and the population tests start a dozen local clusters): forked from a
    server that imported them once, a two-worker cluster assesses 5,000 persons in 3 s
    instead of 18 s. The workers are separate processes running the same code either way.
    The server is the one the sampler's chains use (one BLAS thread, as Dask gives spawned
    workers); if one already runs in this process, its workers import for themselves.
    """
    import dask

    from adversary.inference.workers import start_fork_server

    start_fork_server(WORKER_MODULES)
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        yield


def _cluster(n_workers):
    from adversary.population.cluster import local_cluster

    return local_cluster(n_workers, BUILD / "dask")


@pytest.fixture(scope="session")
def client_two():
    with _cluster(2) as client:
        yield client


@pytest.fixture(scope="session")
def client_one():
    with _cluster(1) as client:
        yield client


@pytest.fixture(scope="session")
def population():
    """Three states, several counties and tracts: twenty thousand people."""
    from adversary.population.synthetic import synthetic_population

    return synthetic_population(PERSONS, states=3, seed=3)


@pytest.fixture(scope="session")
def reference(population, model, client_two):
    """The population assessed in one partition on two workers."""
    from adversary.population.engine import assess

    return assess(population, model, client=client_two, partitions=1)
