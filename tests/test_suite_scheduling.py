"""The suite's order of work under xdist (tests/conftest.py): shared fixtures computed once.

A module whose tests share a module-scoped fixture is one unit of work for
``--dist loadgroup``, so the fixture (the docs build is one) runs on one worker
only. pytest 9.2 silently broke those groups (pytest-xdist#1386); this runs a
small suite with the project's conftest and options on two workers and counts
how often its shared fixture was computed.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SHARED = """
import os, time
from pathlib import Path
import pytest

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    marker = Path(os.environ["COMPUTED"]) / os.environ.get("PYTEST_XDIST_WORKER", "main")
    with marker.open("a") as file:
        file.write("built\\n")
    time.sleep(0.5)

@pytest.mark.parametrize("page", range(4))
def test_page(built, page):
    time.sleep(0.2)
"""

INDEPENDENT = """
import time
import pytest

@pytest.mark.parametrize("case", range(4))
def test_case(case):
    time.sleep(0.2)
"""


def test_a_module_fixture_is_computed_once_on_two_workers(tmp_path):
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    shutil.copy(TESTS / "conftest.py", suite / "tests" / "conftest.py")
    shutil.copy(TESTS.parent / "pyproject.toml", suite / "pyproject.toml")
    (suite / "tests" / "test_shared.py").write_text(SHARED)
    (suite / "tests" / "test_independent.py").write_text(INDEPENDENT)
    computed = tmp_path / "computed"
    computed.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q"],
        cwd=suite,
        capture_output=True,
        text=True,
        # not this run's xdist worker or options (PYTEST_XDIST_WORKER, PYTEST_ADDOPTS, ...)
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        | {"COMPUTED": str(computed)},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "8 passed" in result.stdout
    builds = [line for path in computed.iterdir() for line in path.read_text().splitlines()]
    assert len(builds) == 1, (
        f"the module fixture ran on {sorted(p.name for p in computed.iterdir())}"
    )
