"""Grids sized from ρ stay within the memory budget: refused in one line, or computed in blocks.

The fuzz test runs ``adversary risk --sweep`` in this process under
``tracemalloc`` (numpy's buffers are traced): whatever the swept values, the
command exits 0 or 2, prints no traceback, and its arrays never take more than
the budget it was given.
"""

from __future__ import annotations

import math
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversary.cli import main
from adversary.memory import memory_budget
from adversary.model_files import load_case
from adversary.scenarios.block_group.releases import decision_map, release_measures

BUDGET = 64 * 2**20


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["risk", "dare_county", "--prior", "1/2", "--sweep", "rho=1e-16", "--json"],
            "--sweep rho=1e-16: the table of the discrete Gaussian noise DG(0, σ² = 5e+15) on "
            "[-567,584,635, 567,584,635] would need 50.7 GiB of memory, more than the budget of "
            "2 GiB (raise it with --memory-budget or ADVERSARY_MEMORY_BUDGET)",
        ),
        (
            ["risk", "dare_county", "--sweep", "rho=1e-15,1e-20", "--json"],
            "--sweep rho=1e-15: the table of the discrete Gaussian noise",
        ),
        (
            ["choose-rho", "dare_county", "--max-risk", "2", "--rho-min", "1e-20"],
            "rho_min: the search reached rho = 1e-20, where the table of the discrete Gaussian",
        ),
        (
            ["risk", "granville_county", "--sweep", "rho1=1e-6", "--memory-budget", "64MiB"],
            "--sweep rho1=1e-06: the sums over X2 on 23 x 59,969 releases (x2*, y1*) would need "
            "189 MiB",
        ),
        (
            ["risk", "unknown_ethnicity", "--sweep", "rho=1e-14", "--json"],
            "--sweep rho=1e-14: the table of the discrete Gaussian noise DG(0, σ² = 5e+13)",
        ),
        (
            ["risk", "post_processed", "--sweep", "rho=1e-14", "--json"],
            "--sweep rho=1e-14: the table of the discrete Gaussian noise",
        ),
        (["risk", "dare_county", "--memory-budget", "10XB"], "--memory-budget must be a size"),
        (  # within the budget, but hours of work: refused too
            ["risk", "post_processed", "--sweep", "rho=2e-9"],
            "--sweep rho=2e-09: the noise of d x1* - y1* is a direct convolution of 6,925,771 x "
            "1,332,857 values (9.2e+12 multiply-adds, more than 2e+10)",
        ),
    ],
)
def test_a_grid_over_the_budget_is_refused_in_one_line(argv, message, capsys, tmp_path):
    code, out, err = _run([*argv, "--out", str(tmp_path)] if argv[0] == "risk" else argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"adversary {argv[0]}: error: ")
    assert message in err
    assert not list(tmp_path.iterdir())


def test_the_budget_can_be_raised(capsys, tmp_path):
    argv = ["risk", "dare_county", "--prior", "1/2", "--sweep", "rho=1e-12", "--json"]
    code, _, err = _run([*argv, "--memory-budget", "256MiB", "--out", str(tmp_path)], capsys)
    assert code == 2 and "would need 520 MiB" in err
    code, out, _ = _run([*argv, "--memory-budget", "1GiB", "--out", str(tmp_path)], capsys)
    assert code == 0 and '"marginal_risk"' in out


def test_block_group_measures_in_blocks_equal_the_whole_decision_map():
    case = load_case("granville_county").replace(rho1=0.02)
    arguments = case._arguments(None)
    whole = decision_map(case.truth, tie_rule=case.tie_rule, **arguments)
    n1, n2, ny = whole["release_probability"].shape
    with memory_budget(3 * n2 * ny * 80):  # three x1* releases a block
        blocks = release_measures(case.truth, tie_rule=case.tie_rule, **arguments)
        with pytest.raises(ValueError, match="decision map over"):
            decision_map(case.truth, tie_rule=case.tie_rule, **arguments)
    assert math.ceil(n1 / 3) > 10
    for key, value in whole.attrs.items():
        if isinstance(value, float):
            assert blocks[key] == pytest.approx(value, rel=1e-13, abs=1e-16), key
        else:
            assert blocks[key] == value, key


SWEPT = [
    ("dare_county", "rho"),
    ("post_processed", "rho"),
    ("unknown_ethnicity", "rho"),
    ("granville_county", "rho2"),
    ("unique_many_levels", "rhos"),
]


def _risk_sweep(case, field, values, out) -> list[str]:
    if field == "rhos":  # six levels, one rho each
        values = [f"({', '.join([value] * 6)})" for value in values]
    listed = ";".join(values) if field == "rhos" else ",".join(values)
    argv = ["risk", case, "--sweep", f"{field}={listed}"]
    return argv if out is None else [*argv, "--out", str(out)]


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """Each swept case run once, so that the fuzz test traces computations, not imports."""
    out = tmp_path_factory.mktemp("warm")
    for case, field in SWEPT:
        assert main(_risk_sweep(case, field, ["0.5"], out)) == 0


RHO = st.floats(min_value=1e-24, max_value=1e4, allow_nan=False).map(lambda v: f"{v:.3g}")


@settings(
    # each example is a full `adversary risk --sweep` run (about 0.6 s under tracemalloc in
    # the suite, most of it drawing the PNG that --out writes, so --out is drawn, as --json
    # is): 12 of them, each of the five cases about twice
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    swept=st.sampled_from(SWEPT),
    values=st.lists(RHO, min_size=1, max_size=3, unique=True),
    json=st.booleans(),
    out=st.booleans(),
)
def test_fuzz_risk_sweep_exits_cleanly_within_the_budget(
    warmed, swept, values, json, out, capsys, tmp_path
):
    argv = _risk_sweep(*swept, values, tmp_path if out else None)
    argv += ["--json"] if json else []
    argv += ["--memory-budget", str(BUDGET)]
    tracemalloc.start()
    try:
        code, out, err = _run(argv, capsys)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code in (0, 2), err
    assert "Traceback" not in err + out
    if code == 2:
        # one error line; before it only the sweep's progress bar, which appears once a
        # sweep has run for a second (timing-dependent: tracemalloc slows the run)
        *before, last = err.splitlines()
        assert last.startswith("adversary risk: error: "), err
        assert all(line.startswith("sweep ") for line in before), err
    assert peak <= BUDGET, f"{argv}: {peak / 2**20:.0f} MiB traced"
