"""The population package keeps to the project's module size: one job per module."""

from pathlib import Path

import pytest

import adversary.population

PACKAGE = Path(adversary.population.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))
#: The project's limit on a module's length, in lines.
MAX_LINES = 600


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_each_module_is_at_most_600_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name}: {lines} lines"
