"""The memory budget: how much memory a computation's grids may take.

Every computation that sizes a grid from its parameters (a noise table from
ρ, the release grid of a block group, a sum over releases) states what the
grid would need with :func:`check_memory` *before* it allocates. Over the
budget it refuses with a :class:`MemoryBudgetError` (a ``ValueError``: one
line on the command line) naming the grid and the memory it would need;
computations that can work in blocks size their blocks with
:func:`affordable_rows` instead, so their memory stays bounded whatever the
parameters.

The budget is :data:`DEFAULT_BUDGET` (2 GiB) unless the environment variable
``ADVERSARY_MEMORY_BUDGET`` says otherwise, and :func:`memory_budget` (or
the command line's ``--memory-budget``) overrides both for a block of code.
A size is a number of bytes or a number with a unit: ``8GiB``, ``500MB``,
``1.5e9``. The estimate counts the arrays a computation holds at once, not
the interpreter and the libraries (a few hundred MB), nor other processes.
"""

from __future__ import annotations

from ._limits import Limit, parse_quantity

__all__ = [
    "BLOCK_ELEMENTS",
    "DEFAULT_BUDGET",
    "ENVIRONMENT_VARIABLE",
    "GRID_ARRAYS",
    "TABLE_ARRAYS",
    "MemoryBudgetError",
    "affordable_rows",
    "check_memory",
    "check_noise_table",
    "current_budget",
    "format_bytes",
    "grid_points",
    "memory_budget",
    "parse_size",
    "rows_per_block",
]

#: Memory a computation's grids may take unless told otherwise: 2 GiB.
DEFAULT_BUDGET = 2 * 2**30
#: Arrays of a noise table's length a sum over it holds at once: the table, its
#: support and the values derived from them.
TABLE_ARRAYS = 6
#: Arrays of a grid's length a grid method holds at once (distribution, values, sums and
#: their temporaries).
GRID_ARRAYS = 8
#: Values a blocked sum (rows × columns of float64 temporaries) evaluates at once.
BLOCK_ELEMENTS = 2_000_000
#: The environment variable that sets the budget for a whole process.
ENVIRONMENT_VARIABLE = "ADVERSARY_MEMORY_BUDGET"

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


class MemoryBudgetError(ValueError):
    """A grid would need more memory than the budget allows."""


def parse_size(text, name: str = "memory budget") -> int:
    """Bytes in ``text``: an integer, or a number with a unit (``8GiB``, ``500MB``, ``1.5e9``)."""
    size = parse_quantity(text, name, _UNITS, "a size such as 8GiB or 500MB")
    if not 1 <= size < 2**63:
        raise ValueError(f"{name} must be at least 1 byte and below 8 EiB, got {text!r}")
    return int(size)


def current_budget() -> int:
    """The budget in bytes: :func:`memory_budget`'s, else the environment's, else the default."""
    return _LIMIT.current()


def memory_budget(size, name: str = "memory budget"):
    """Within the block (a context manager) the budget is ``size`` (bytes, or text such as
    ``8GiB``). ``None`` keeps the budget as it is."""
    return _LIMIT.within(size, name)


def within_budget(size: int, function, *args):
    """``function(*args)`` under the budget ``size``: carries a caller's budget into a task.

    A task runs in another process (a Dask worker, perhaps on another
    machine), where neither the caller's :func:`memory_budget` nor its
    environment applies; submitting ``within_budget(current_budget(), f, ...)``
    computes under the caller's budget there.
    """
    with memory_budget(size):
        return function(*args)


def format_bytes(size: float) -> str:
    """``size`` bytes in binary units, three significant digits: ``8.46 GiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"


_LIMIT = Limit(ENVIRONMENT_VARIABLE, DEFAULT_BUDGET, parse_size, format_bytes, "--memory-budget")


def check_memory(needed: float, what: str) -> None:
    """Refuse, naming ``what``, when ``needed`` bytes exceed the budget."""
    _LIMIT.check(needed, what, "need {} of memory", "budget", MemoryBudgetError)


def affordable_rows(bytes_per_row: float, rows: int, what: str, held: float = 0.0) -> int:
    """How many of ``rows`` rows of ``bytes_per_row`` bytes fit the budget at once (at least one).

    ``held`` bytes are taken already (arrays kept while the rows are processed).
    Refuses, naming ``what``, when not even one row fits beside them.
    """
    check_memory(held + bytes_per_row, f"one row of {what}")
    return int(max(1, min(rows, (current_budget() - held) // max(1.0, bytes_per_row))))


def grid_points(most: int, what: str, arrays: int = GRID_ARRAYS) -> int:
    """Points of a grid of ``arrays`` float64 arrays: ``most``, or fewer to fit the budget.

    A grid method given fewer points uses a coarser grid (and states a larger bound).
    """
    return max(1024, affordable_rows(8.0 * arrays, most, what))


def rows_per_block(row_elements: int) -> int:
    """Rows of ``row_elements`` values a blocked sum evaluates at once (at least one).

    A block holds :data:`BLOCK_ELEMENTS` values, or fewer under a small budget.
    """
    return max(1, grid_points(BLOCK_ELEMENTS, "a block of a sum") // max(1, row_elements))


def check_noise_table(reach: int, noise: str, arrays: int = TABLE_ARRAYS) -> None:
    """Refuse a table of ``noise`` on ``[-reach, reach]`` (``arrays`` arrays of 8-byte values)."""
    check_memory(
        (2.0 * reach + 1.0) * 8.0 * arrays, f"the table of {noise} on [-{reach:,}, {reach:,}]"
    )
