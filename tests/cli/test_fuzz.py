"""Hostile arguments to every command: a clean exit (0, or 2 with one error line), within budgets.

Each example runs ``adversary.cli.main`` in this process with arguments drawn
from valid values and hostile ones (zero, negative, huge, non-finite, not a
number, empty), under a memory budget and a time budget (``FUZZ_EXAMPLES``
examples per command, 12 by default): whatever it is given,
a command exits 0 or 2, prints no traceback and, on 2, ends with one line
``adversary <command>: error: …`` (argparse's own errors too, without its usage block).
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversary.cli import main

HOSTILE = [
    "0", "-1", "1e-300", "1e308", "inf", "-inf", "nan", "abc", "", " ", "1e", "10**30",
    "(1, 2)", "[]", "None", "True", "99999999999999999999", "0.5", "1", "2", "-0", "0x10",
]  # fmt: skip
BUDGETS = ["--memory-budget", "256MiB", "--time-budget", "20s"]
SMALL = st.sampled_from(["1", "2", "5"])


def hostile(*valid: str):
    """A valid value or a hostile one."""
    return st.sampled_from([*valid, *HOSTILE])


def option(name: str, values):
    """``[name, value]`` or nothing."""
    return st.one_of(st.just([]), values.map(lambda value: [f"{name}={value}"]))


def command(head: list, *options) -> st.SearchStrategy:
    """``head`` followed by the options, each present or not, in the order given."""
    return st.tuples(*options).map(lambda parts: head + [a for part in parts for a in part])


SWEPT = {
    "published_tables": ["rho_block", "rho_parent", "true_count", "draws", "tail_mass"],
    "differencing": ["rho", "repeats", "true_count", "replications"],
    "every_query": ["rho_total", "cell", "replications"],
}
RISK = st.sampled_from(sorted(SWEPT)).flatmap(
    lambda case: command(
        ["risk", case],
        option("--sweep", st.sampled_from(SWEPT[case] + ["nope"]).flatmap(
            lambda name: hostile("0.05", "0.5").map(lambda value: f"{name}={value}")
        )),
        option("--prior", hostile("1/2", "1/864")),
        option("--queries", hostile("detailed", "race,detailed")),
        option("--post-processing", hostile("none", "topdown", "both")),
        option("--tie-rule", hostile("split", "wrong")),
        st.sampled_from([[], ["--json"]]),
    )
)  # fmt: skip
MECHANISM = st.sampled_from(
    ["discrete_laplace:scale=", "cell_key:bound=5,variance=", "discrete_gaussian:rho=", "x:a="]
).flatmap(lambda head: hostile("2", "1/50").map(lambda value: head + value))
RUN = command(
    ["run"],
    st.sampled_from([["dare_county"], ["granville_county"], ["differencing"], ["nope.py"]]),
    option("--prior", hostile("1/2", "1/10")),
    st.sampled_from([[], ["--method", "mcmc"], ["--method", "exact"]]),
    option("--draws", hostile("5")),
    option("--chains", SMALL),
    option("--seed", hostile("1")),
    option("--mechanism", MECHANISM),
    st.sampled_from([[], ["--json"]]),
)
CHOOSE_RHO = command(
    ["choose-rho", "dare_county"],
    st.sampled_from(["--max-risk", "--max-correct-decision"]).flatmap(
        lambda bound: hostile("1.5", "0.9").map(lambda value: [f"{bound}={value}"])
    ),
    option("--rho-min", hostile("1e-3")),
    option("--rho-max", hostile("10")),
    option("--tolerance", hostile("0.1")),
    option("--points-per-decade", hostile("3")),
    option("--refine", hostile("2")),
    option("--delta", hostile("1e-10")),
    option("--field", hostile("rho", "rhos[0]")),
    st.sampled_from([[], ["--json"]]),
)
BUDGET = command(
    ["budget"],
    option("--preset", hostile("pl94-2020-persons")),
    option("--convention", hostile("paper", "das")),
    option("--delta", hostile("1e-10")),
    st.sampled_from([[], ["--json"]]),
)
DEMO = command(
    ["demo"],
    option("--model", hostile("dare_county", "nope.py", "/dev/null")),
    option("--tie-rule", hostile("split")),
    st.sampled_from([[], ["--json"]]),
)
RECONSTRUCT = command(
    ["reconstruct"],
    st.sampled_from([["reconstruction_block"], ["dare_county"], ["nope.py"]]),
    option("--method", hostile("auto", "exact", "mcmc")),
    option("--draws", hostile("5")),
    option("--chains", SMALL),
    option("--seed", hostile("1")),
    st.sampled_from([[], ["--json"]]),
)
BUDGET_OPTIONS = command(
    [],
    option("--time-budget", hostile("10s", "1e-300")),
    option("--memory-budget", hostile("64MiB", "1")),
)
COMMANDS = {
    "risk": RISK,
    "run": RUN,
    "choose-rho": CHOOSE_RHO,
    "budget": BUDGET,
    "demo": DEMO,
    "reconstruct": RECONSTRUCT,
}


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exit:  # argparse's own errors
        return exit.code


@pytest.mark.parametrize("name", COMMANDS)
def test_fuzz_every_command_exits_cleanly(name, tmp_path_factory, capsys):
    @settings(
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", 12)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(argv=COMMANDS[name], budgets=BUDGET_OPTIONS)
    def exits_cleanly(argv, budgets):
        if name != "budget":  # the budgets, then hostile ones (which cannot raise them)
            argv = [*argv, *BUDGETS, *budgets]
        if name in ("risk", "demo"):
            argv += ["--out", str(tmp_path_factory.mktemp("out"))]
        code = _exit_code(argv)
        captured = capsys.readouterr()
        assert code in (0, 2), (argv, captured.err)
        assert "Traceback" not in captured.out + captured.err, argv
        if code == 2:
            last = captured.err.rstrip("\n").splitlines()[-1]
            assert last.startswith(f"adversary {name}: error: "), (argv, captured.err)
            assert "usage:" not in captured.err, (argv, captured.err)
            assert captured.out == "", argv

    exits_cleanly()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["choose-rho", "dare_county", "--max-risk", "abc"],
            "adversary choose-rho: error: argument --max-risk: invalid float value: 'abc' "
            "(see adversary choose-rho --help)",
        ),
        (
            ["risk", "dare_county", "--foo"],
            "adversary risk: error: unrecognized arguments: --foo (see adversary risk --help)",
        ),
        (
            [],
            "adversary: error: the following arguments are required: COMMAND "
            "(see adversary --help)",
        ),
    ],
)
def test_argparses_errors_are_one_line_naming_the_command(argv, line, capsys):
    """argparse printed its usage block (9-13 lines) first, and an unknown option of a
    sub-command as the top-level command's ("adversary: error: unrecognized arguments")."""
    assert _exit_code(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == line + "\n" and captured.out == ""


@pytest.mark.parametrize("case", ["differencing", "dare_county"])
def test_the_largest_rho_is_computed_not_overflowed(case, capsys):
    """Found by the fuzz test: rho = 1e308 overflowed 2ρ (and then z²/σ²) with a warning."""
    assert main(["risk", case, "--prior", "1/2", "--sweep", "rho=1e308", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["marginal_risk"] == 1 / 0.5  # noise-free: the release is the truth
