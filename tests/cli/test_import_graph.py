"""What a command imports before it computes, read from ``python -X importtime``.

The command line's start-up is its imports: help, ``import adversary`` and the
accounting of ``adversary budget`` load none of the numerical stack they do not
use. The set of modules imported is asserted, not a time (timings are for the
benchmarks).
"""

import re
import subprocess
import sys

import pytest

from adversary.cli import SUBCOMMAND_MODULES

#: The heavy third-party packages: none of them is needed to parse a command line.
HEAVY = ("numpy", "scipy", "pandas", "pymc", "pytensor", "arviz", "matplotlib", "dask", "xarray")
#: ``python -X importtime``'s line for one module: self and cumulative microseconds, its name.
_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", re.MULTILINE)
COMMANDS = [name.replace("_", "-") for name in SUBCOMMAND_MODULES]


def imported(*arguments: str) -> set[str]:
    """Every module ``python -X importtime ARGUMENTS`` imports (importtime lists each once)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    modules = set(_IMPORT_LINE.findall(result.stderr))
    assert "adversary" in modules  # the lines were read
    return modules


def heavy(modules: set[str], packages=HEAVY) -> list[str]:
    """The ``packages`` among ``modules``' top-level names."""
    return sorted({name.split(".")[0] for name in modules} & set(packages))


def test_importing_the_package_loads_no_numerical_library():
    assert heavy(imported("-c", "import adversary")) == []


def test_the_command_list_loads_no_numerical_library():
    assert heavy(imported("-m", "adversary", "--help")) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_loads_no_numerical_library(command):
    assert heavy(imported("-m", "adversary", command, "--help")) == []


def test_budget_is_accounting_without_pymc_or_scipy():
    """``adversary budget`` is exact fractions and numpy: no PyMC, SciPy or pandas."""
    for arguments in ((), ("--json", "--convention", "das")):
        assert heavy(imported("-m", "adversary", "budget", *arguments), HEAVY[1:]) == []
