"""What a command imports before it computes, read from ``python -X importtime``.

The command line's start-up is its imports: help, ``import adversary`` and the
accounting of ``adversary budget`` load none of the numerical stack they do not
use. The set of modules imported is asserted, not a time (timings are for the
benchmarks).
"""

import re
import subprocess
import sys
import textwrap

import pytest

from adversary.cli import SUBCOMMAND_MODULES

#: The heavy third-party packages: none of them is needed to parse a command line.
HEAVY = ("numpy", "scipy", "pandas", "pymc", "pytensor", "arviz", "matplotlib", "dask", "xarray")
#: ``python -X importtime``'s line for one module: self and cumulative microseconds, its name.
_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", re.MULTILINE)
COMMANDS = [name.replace("_", "-") for name in SUBCOMMAND_MODULES]


def imported(*arguments: str) -> set[str]:
    """Every module ``python -X importtime ARGUMENTS`` imports (importtime lists each once; a
    module imported by ``importlib.import_module`` is not listed, but what it imports is)."""
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


#: A factory model file: one latent count, two noisy releases of it.
COIN = textwrap.dedent(
    """
    import pymc as pm
    from adversary.distributions import BernoulliCount, DiscreteGaussian

    PRIORS = {"1/4": 0.25}
    TRUTH = {"X": 4}

    def model(prior=0.25):
        with pm.Model() as m:
            x = BernoulliCount("X", known=3, p=prior)
            DiscreteGaussian("first", mu=x, rho=0.5, observed=4)
            DiscreteGaussian("second", mu=x, rho=0.5, observed=5)
        return m
    """
)
#: What an exact run of a factory model does not need: plots, ArviZ's statistics, numba (it
#: compiles nothing with it; its measures do, :mod:`adversary.measures.product_sums`), the
#: mechanisms' solvers and long convolutions, the shipped scenarios' own modules.
NOT_FOR_A_FACTORY = (
    "matplotlib",
    "numba",
    "arviz",
    "scipy.signal",
    "scipy.optimize",
    "adversary.plots",
    "adversary.reports",
    "adversary.scenarios.single_block",
    "adversary.scenarios.reconstruction",
)


@pytest.mark.parametrize("command", ["run", "risk"])
def test_a_factory_models_exact_answer_loads_no_plots_nor_unused_scipy(command, tmp_path):
    """``risk`` sums the release grid with compiled kernels (numba, the only difference)."""
    path = tmp_path / "coin.py"
    path.write_text(COIN)
    modules = imported("-m", "adversary", command, str(path))
    assert {"pymc", "adversary.inference"} <= modules  # it computed
    unused = [name for name in NOT_FOR_A_FACTORY if not (command == "risk" and name == "numba")]
    assert not {name for name in unused if name in modules}
    assert ("adversary.measures._fused_kernel" in modules) == (command == "risk")


#: What sampling needs and a closed form does not: PyMC, its compiler and ArviZ's plots.
SAMPLING_STACK = ("pymc", "pytensor", "numba", "arviz", "matplotlib")
#: The shipped attack cases whose measures are closed forms, exact sums or simulations of the
#: releases: their ``risk`` starts computing without the sampling stack.
CLOSED_FORM_CASES = (
    "dare_county",
    "granville_county",
    "post_processed",
    "unique_many_levels",
    "unknown_ethnicity",
    "every_query",
    "published_tables",
    "differencing",
    "swapping_block",
    "trs_block",
)


def test_a_shipped_cases_risk_loads_no_sampling_stack():
    """Every closed-form case's ``adversary risk``, in one process (the union of what they
    import): the answer of a shipped case does not wait for PyMC to import."""
    runs = "; ".join(f"main(['risk', {case!r}])" for case in CLOSED_FORM_CASES)
    modules = imported("-c", f"from adversary.cli import main; {runs}")
    assert "adversary.scenarios.differencing.case" in modules  # the cases were loaded
    # numba may come: every_query's Monte Carlo releases (hundreds of thousands of exact
    # discrete Gaussian draws) load the compiled sampler, as they have paid for it.
    assert heavy(modules, tuple(m for m in SAMPLING_STACK if m != "numba")) == []


def test_a_population_worker_loads_no_sampling_stack():
    """What a Dask worker of ``adversary population`` imports to run its tasks."""
    modules = imported(
        "-c", "import adversary.population.phases, adversary.population.measure_tasks"
    )
    assert heavy(modules, SAMPLING_STACK) == []
