"""The memory budget: sizes, the budget's sources, refusals before allocation, blocks that fit."""

from __future__ import annotations

import numpy as np
import pytest

from adversary.memory import (
    DEFAULT_BUDGET,
    ENVIRONMENT_VARIABLE,
    MemoryBudgetError,
    affordable_rows,
    check_memory,
    current_budget,
    format_bytes,
    memory_budget,
    parse_size,
    within_budget,
)
from adversary.noise import discrete_gaussian


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8GiB", 8 * 2**30),
        ("500MB", 500 * 10**6),
        ("1.5e9", 1_500_000_000),
        (" 2 kib ", 2048),
        (4096, 4096),
        ("12", 12),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "GiB", "-1GB", "10XB", "0", "0.5", True, "1e30"])
def test_bad_sizes_name_the_argument(text):
    with pytest.raises(ValueError, match="--memory-budget"):
        parse_size(text, "--memory-budget")


def test_the_budget_comes_from_the_block_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert current_budget() == DEFAULT_BUDGET == 2 * 2**30
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "3GiB")
    assert current_budget() == 3 * 2**30
    with memory_budget("1MiB") as inside:
        assert inside == current_budget() == 2**20
        with memory_budget(None):
            assert current_budget() == 2**20
    assert current_budget() == 3 * 2**30
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "lots")
    with pytest.raises(ValueError, match=ENVIRONMENT_VARIABLE):
        current_budget()


def test_check_memory_refuses_over_the_budget_with_the_sizes():
    with memory_budget("1KiB"):
        check_memory(1024, "a grid")
        with pytest.raises(MemoryBudgetError, match=r"a grid would need 2 KiB .* budget of 1 KiB"):
            check_memory(2048, "a grid")


def test_affordable_rows_fit_the_budget_and_refuse_a_row_too_large():
    with memory_budget(1000):
        assert affordable_rows(100, 50, "a grid") == 10
        assert affordable_rows(100, 3, "a grid") == 3
        with pytest.raises(MemoryBudgetError, match="one row of a grid"):
            affordable_rows(2000, 5, "a grid")
        assert affordable_rows(100, 50, "a grid", held=500) == 5
        with pytest.raises(MemoryBudgetError, match="one row of a grid"):
            affordable_rows(600, 5, "a grid", held=500)


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(8.46 * 2**30) == "8.46 GiB"
    assert format_bytes(1.65 * 2**40) == "1.65 TiB"


def test_a_noise_table_over_the_budget_is_refused_before_allocation():
    sigma2 = 5e15  # rho = 1e-16: K ≈ 5.7e8, 50 GiB with the arrays a sum derives
    with pytest.raises(MemoryBudgetError, match=r"DG\(0, σ² = 5e\+15\) on \[-567,584,635"):
        discrete_gaussian.table(sigma2)


def test_a_noise_table_within_the_budget_is_the_pmf_in_blocks():
    sigma2 = 4e10  # more values than one block of the pmf
    table = discrete_gaussian.table(sigma2, 1e-6)
    reach = int(discrete_gaussian.cutoff(sigma2, 1e-6))
    assert table.start == -reach and table.probabilities.size == 2 * reach + 1 > 2**20
    picks = np.array([0, 2**20 - 1, 2**20, 2**20 + 1, reach, 2 * reach])
    np.testing.assert_array_equal(
        table.probabilities[picks], discrete_gaussian.pmf(picks - reach, sigma2)
    )
    assert table.omitted_mass == 2.0 * float(discrete_gaussian.tail_bound(reach + 1, sigma2))
    with memory_budget(table.probabilities.nbytes):
        with pytest.raises(MemoryBudgetError):
            discrete_gaussian.table(sigma2, 1e-6)


def test_within_budget_runs_a_function_under_the_given_budget():
    before = current_budget()
    assert within_budget(1024, current_budget) == 1024
    assert current_budget() == before
