"""The time budget: how long a computation may be expected to run.

A computation whose work grows with its parameters (the release grid of a
block group has a number of releases growing as 1/ρ, its cut-offs as
1/√ρ each) runs in blocks through :func:`timed_blocks`: the first block is
timed, and the whole is projected as the number of cells times the seconds
per cell that block took on this machine. A projection over the budget is
refused with a :class:`TimeBudgetError` (a ``ValueError``: one line on the
command line) naming the estimate, the grid and how to raise the budget,
before the bulk of the work; a projection over :data:`PROGRESS_SECONDS`
shows a progress bar with the time remaining on stderr.

The budget is :data:`DEFAULT_BUDGET` (10 minutes) unless the environment
variable ``ADVERSARY_TIME_BUDGET`` says otherwise, and :func:`time_budget`
(or the command line's ``--time-budget``) overrides both for a block of
code. A duration is a number of seconds or a number with a unit: ``90s``,
``10min``, ``2h``, ``1.5e3``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from ._limits import Limit, parse_quantity
from ._output import progress_task

__all__ = [
    "DEFAULT_BUDGET",
    "ENVIRONMENT_VARIABLE",
    "PROGRESS_SECONDS",
    "TimeBudgetError",
    "check_time",
    "current_budget",
    "format_duration",
    "parse_duration",
    "time_budget",
    "timed_blocks",
]

#: Seconds a computation may be expected to take unless told otherwise: 10 minutes.
DEFAULT_BUDGET = 600.0
#: The environment variable that sets the budget for a whole process.
ENVIRONMENT_VARIABLE = "ADVERSARY_TIME_BUDGET"
#: Work projected to take longer than this shows a progress bar with its time remaining.
PROGRESS_SECONDS = 5.0

_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class TimeBudgetError(ValueError):
    """A computation would take longer than the time budget allows."""


def parse_duration(text, name: str = "time budget") -> float:
    """Seconds in ``text``: a number, or a number with a unit (``90s``, ``10min``, ``2h``)."""
    seconds = parse_quantity(text, name, _UNITS, "a duration such as 10min or 90s")
    if not 0 < seconds < 1e9:  # also refuses NaN
        raise ValueError(f"{name} must be more than 0 s and below 30 years, got {text!r}")
    return seconds


def current_budget() -> float:
    """The budget in seconds: :func:`time_budget`'s, else the environment's, else the default."""
    return _LIMIT.current()


def time_budget(duration, name: str = "time budget"):
    """Within the block (a context manager) the budget is ``duration`` (seconds, or text such
    as ``10min``). ``None`` keeps the budget as it is."""
    return _LIMIT.within(duration, name)


def format_duration(seconds: float) -> str:
    """``seconds`` as text: ``0.5 s``, ``45 s``, ``14 min``, ``110 min``, ``3.2 h``."""
    units = (("d", 86400.0), ("h", 3600.0), ("min", 60.0))
    unit, scale = next(((u, s) for u, s in units if seconds >= 2 * s), ("s", 1.0))
    value = seconds / scale
    return f"{value:.0f} {unit}" if value >= 10 else f"{value:.2g} {unit}"


_LIMIT = Limit(
    ENVIRONMENT_VARIABLE, DEFAULT_BUDGET, parse_duration, format_duration, "--time-budget"
)


def check_time(seconds: float, what: str) -> None:
    """Refuse, naming ``what``, when ``seconds`` (an estimate) exceed the budget."""
    _LIMIT.check(seconds, what, "take about {}", "time budget", TimeBudgetError)


def timed_blocks(
    total: int, rows: int, cells_per_row: int, what: str, unit: str = "cells"
) -> Iterator[slice]:
    """Slices of ``rows`` of ``range(total)``, the first timed to project and check the whole.

    The caller does one block of work per slice. After the first, the whole
    is projected as its seconds per cell times ``total * cells_per_row`` cells
    (``unit`` names them in the messages; a caller naming its own has one cell per row);
    a projection over the budget is checked again on the second block (the
    faster of the two counts: the first may carry one-off costs) and refused
    (:func:`check_time`, naming ``what`` and its cells). When the projection
    exceeds :data:`PROGRESS_SECONDS`, the blocks after advance a progress bar
    with the time remaining (stderr).
    """
    rows = max(1, int(rows))
    starts = range(0, total, rows)
    cells, per_cell, timed = total * cells_per_row, float("inf"), 0
    while timed < min(2, len(starts) - 1):  # the last block is never refused: nothing is left
        start = starts[timed]
        began = time.perf_counter()
        yield slice(start, start + rows)  # a full block: the last is not timed
        per_cell = min(per_cell, (time.perf_counter() - began) / (rows * cells_per_row))
        timed += 1
        if per_cell * cells <= current_budget():
            break
        if timed == 2 or len(starts) == 2:
            what = f"{what} ({cells:,} {unit} at {_per_item(per_cell)} each, measured)"
            check_time(per_cell * cells, what)
    rest = starts[timed:]
    if per_cell * cells <= PROGRESS_SECONDS or len(rest) < 2:
        yield from (slice(i, min(i + rows, total)) for i in rest)
        return
    with progress_task(what, total, "rows" if unit == "cells" else unit) as advance:
        advance(rest[0])
        for i in rest:
            yield slice(i, min(i + rows, total))
            advance(min(i + rows, total))


def _per_item(seconds: float) -> str:
    """A time per item in the unit that keeps it above 1: ``35 ns``, ``1.2 ms``, ``2.5 s``."""
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if seconds < 1000 * scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"
