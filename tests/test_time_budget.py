"""The time budget: durations, the budget's sources, projections from timed blocks, progress."""

from __future__ import annotations

import re
import time

import pytest

from adversary import time_budget as tb
from adversary.time_budget import (
    DEFAULT_BUDGET,
    ENVIRONMENT_VARIABLE,
    TimeBudgetError,
    check_time,
    current_budget,
    format_duration,
    parse_duration,
    time_budget,
    timed_blocks,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("10min", 600.0),
        ("2h", 7200.0),
        (" 1.5e3 ", 1500.0),
        (30, 30.0),
        ("1d", 86400),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "min", "-1s", "0", "10 years", True, "nan", "1e12"])
def test_bad_durations_name_the_argument(text):
    with pytest.raises(ValueError, match=r"^--time-budget must be"):
        parse_duration(text, "--time-budget")


def test_the_budget_comes_from_the_block_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert current_budget() == DEFAULT_BUDGET == 600.0
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1h")
    assert current_budget() == 3600.0
    with time_budget("2s") as inside:
        assert inside == current_budget() == 2.0
        with time_budget(None):
            assert current_budget() == 2.0
    assert current_budget() == 3600.0
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "soon")
    with pytest.raises(ValueError, match=ENVIRONMENT_VARIABLE):
        current_budget()


def test_check_time_refuses_over_the_budget_naming_the_estimate_and_how_to_raise_it():
    with time_budget("10min"):
        check_time(599.0, "the grid")
        with pytest.raises(TimeBudgetError) as error:
            check_time(4200.0, "the grid")
    assert str(error.value) == (
        "the grid would take about 70 min, more than the time budget of 10 min "
        "(raise it with --time-budget or ADVERSARY_TIME_BUDGET)"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.5, "0.5 s"),
        (45, "45 s"),
        (119, "119 s"),
        (840, "14 min"),
        (6600, "110 min"),
        (11520, "3.2 h"),
    ],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def _work(blocks, seconds_per_row, done):
    """Rows of ``seconds_per_row`` each, recorded in ``done``."""
    for block in blocks:
        rows = range(*block.indices(1_000_000))
        time.sleep(seconds_per_row * len(rows))
        done.extend(rows)


def test_blocks_cover_every_row_once_within_the_budget():
    done = []
    _work(timed_blocks(10, 3, 5, "the grid"), 0.0, done)
    assert done == list(range(10))


def test_a_projection_over_the_budget_is_refused_after_two_timed_blocks():
    """1,000 rows of 20 ms: 20 s projected from the blocks timed, against a budget of 2 s."""
    done = []
    with time_budget("2s"), pytest.raises(TimeBudgetError) as error:
        _work(timed_blocks(1000, 2, 50, "the grid"), 0.02, done)
    assert done == [0, 1, 2, 3]  # two blocks of two rows, then refused
    message = str(error.value)
    assert message.startswith("the grid (50,000 cells at ")
    seconds = float(message.split("would take about ")[1].split(" s,")[0])
    assert 20 <= seconds < 40  # sleeps last at least as long as asked
    assert "more than the time budget of 2 s" in message


def test_a_unit_of_its_own_names_the_cells_and_their_time():
    """One release set a row at 20 ms: the refusal names them and their time in ms."""
    with time_budget("0.1s"), pytest.raises(TimeBudgetError) as error:
        _work(timed_blocks(100, 1, 1, "the releases", unit="release sets"), 0.02, [])
    found = re.match(
        r"the releases \(100 release sets at ([\d.]+) ms each, measured\)", str(error.value)
    )
    assert found, error.value
    assert 20 <= float(found.group(1)) < 40


def test_the_last_block_is_never_refused():
    done = []
    with time_budget("0.01s"):
        _work(timed_blocks(4, 4, 1, "the grid"), 0.01, done)  # one block: the whole
        with pytest.raises(TimeBudgetError):  # of two blocks, refused after the first
            _work(timed_blocks(4, 2, 1, "the grid"), 0.01, [])
    assert done == [0, 1, 2, 3]


def test_long_work_shows_its_progress_and_time_remaining_on_stderr(monkeypatch, capsys):
    monkeypatch.setattr(tb, "PROGRESS_SECONDS", 0.05)
    done = []
    _work(timed_blocks(12, 2, 1, "the grid"), 0.01, done)
    assert done == list(range(12))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "the grid" in captured.err and "12/12" in captured.err and "rows" in captured.err
