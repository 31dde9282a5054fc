"""Loading the benchmark scripts of ``benchmarks/`` as modules, for their smoke tests."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="session")
def load_benchmark():
    """``load_benchmark(stem)``: the script ``benchmarks/<stem>.py`` imported as a module."""
    names = []

    def load(stem: str):
        name = f"{stem}_benchmark"
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up here
        spec.loader.exec_module(module)
        names.append(name)
        return module

    yield load
    for name in names:
        sys.modules.pop(name, None)
