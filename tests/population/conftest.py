"""Shared set-up of the population tests: a small model and local Dask clusters."""

from pathlib import Path

import pytest

from adversary.population.model import PopulationModel

BUILD = Path(__file__).resolve().parents[2] / "build"


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


@pytest.fixture(scope="session")
def model():
    return small_model()


def _cluster(n_workers):
    from adversary.population.engine import local_cluster

    return local_cluster(n_workers, BUILD / "dask")


@pytest.fixture(scope="session")
def client_two():
    with _cluster(2) as client:
        yield client


@pytest.fixture(scope="session")
def client_one():
    with _cluster(1) as client:
        yield client
