"""The input of a population assessment: a table of records or cell counts, checked.

**Schema.** One row per person (a *record*) or per cell of people sharing
their geography and characteristics (a *cell count*), in a Parquet file
(``.parquet``/``.pq``) or a CSV file with a header (``.csv``):

``state``, ``county``, ``tract``, ``block_group``, ``block``
    Required. Identifiers of the row's unit at each level (integers or
    strings, never empty). Identifiers are global at their level: a block
    identifier names one block wherever it appears, so use full GEOIDs
    (``block`` 15 digits, ``block_group`` 12, …), not numbers within the
    parent. Each block must lie in one block group, each block group in one
    tract, each tract in one county and each county in one state.
characteristics
    Required: the columns the population model names
    (:class:`~adversary.population.model.PopulationModel.characteristics`),
    e.g. ``hhgq``, ``voting_age``, ``hispanic``, ``race`` for the 2020
    detailed (GVHR) query. Any values (integer codes or strings), never empty.
    A person's *cell* is their values on these columns.
``count``
    Optional: the number of people in the row's cell, an integer ≥ 0. Without
    it, every row is one person.
``record_id``
    Optional: an integer identifier per row, unique; default the 0-based row
    number. It is carried into the per-record output.

Other columns are ignored. Rows are numbered from 1 in error messages ("data
row 1" is the first row after a CSV header).

**Errors.** :func:`validate` raises :class:`PopulationInputError` (a
:class:`ValueError`) naming the first bad data row and its column: a missing
column, an empty value, a negative or non-integer count, a duplicated
``record_id``, or a unit inside two parents (the row where the second parent
first appears). Row-level problems are reported before hierarchy problems.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "COUNT",
    "GEOGRAPHY",
    "RECORD_ID",
    "PopulationInputError",
    "read_table",
    "validate",
]

#: Geography columns, top-down.
GEOGRAPHY = ("state", "county", "tract", "block_group", "block")
COUNT = "count"
RECORD_ID = "record_id"


class PopulationInputError(ValueError):
    """Malformed input: ``row`` (1-based data row, or None) and ``column`` say where."""

    def __init__(self, message: str, *, row: int | None = None, column: str | None = None):
        where = []
        if row is not None:
            where.append(f"data row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.row = row
        self.column = column


def read_table(path, columns: list[str] | None = None) -> pd.DataFrame:
    """The table at ``path`` (Parquet or CSV), only ``columns`` when given and present."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq") or path.is_dir():
        import pyarrow.parquet as pq

        available = pq.read_schema(path).names if path.is_file() else None
        wanted = None
        if columns is not None and available is not None:
            wanted = [c for c in columns if c in available]
        return pd.read_parquet(path, columns=wanted)
    if suffix == ".csv":
        header = pd.read_csv(path, nrows=0).columns
        wanted = None if columns is None else [c for c in columns if c in header]
        return pd.read_csv(path, usecols=wanted)
    raise ValueError(f"data file {str(path)!r}: expected a .parquet or .csv file")


def _show(value) -> str:
    """A value as a user wrote it: ``-1``, ``1.5``, ``'A7'`` (no numpy type names)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def validate(frame: pd.DataFrame, characteristics) -> pd.DataFrame:
    """``frame`` checked against the schema; returns it with ``count`` and ``record_id``.

    Raises :class:`PopulationInputError` for the first bad row and column
    (module docstring). The returned frame has the geography and
    characteristic columns, ``count`` (int64; 1 per row for records) and
    ``record_id`` (int64), in the input's row order.
    """
    characteristics = list(characteristics)
    required = [*GEOGRAPHY, *characteristics]
    for column in required:
        if column not in frame.columns:
            raise PopulationInputError(
                f"missing (required columns: {', '.join(required)})", column=column
            )
    n = len(frame)
    problems: list[tuple[int, int, str, str]] = []  # (row, column order, column, message)
    order = {name: k for k, name in enumerate([*required, COUNT, RECORD_ID])}
    for column in required:
        row = _first(frame[column].isna().to_numpy())
        if row is not None:
            problems.append((row, order[column], column, "empty value"))

    counts = np.ones(n, dtype=np.int64)
    if COUNT in frame.columns:
        counts, problem = _integers(frame[COUNT], COUNT, minimum=0)
        if problem:
            problems.append((problem[0], order[COUNT], COUNT, problem[1]))
    record_ids = np.arange(n, dtype=np.int64)
    if RECORD_ID in frame.columns:
        record_ids, problem = _integers(frame[RECORD_ID], RECORD_ID, minimum=None)
        if problem:
            problems.append((problem[0], order[RECORD_ID], RECORD_ID, problem[1]))
        else:
            duplicated = _first(pd.Series(record_ids).duplicated().to_numpy())
            if duplicated is not None:
                message = f"{_show(record_ids[duplicated])} repeats"
                problems.append((duplicated, order[RECORD_ID], RECORD_ID, message))
    if problems:
        row, _, column, message = min(problems)
        raise PopulationInputError(message, row=row + 1, column=column)

    for child, parent in zip(GEOGRAPHY[:0:-1], GEOGRAPHY[-2::-1], strict=True):
        _check_nesting(frame, child, parent)

    out = frame[required].reset_index(drop=True).copy()
    out[COUNT] = counts
    out[RECORD_ID] = record_ids
    return out


def _integers(series: pd.Series, column: str, minimum: int | None):
    """``(int64 values, None)`` or ``(values, (first bad row, message))``."""
    values = series.to_numpy()
    if values.dtype == object or pd.api.types.is_string_dtype(series):
        numeric = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    elif values.dtype == bool:
        numeric = np.full(values.shape, np.nan)
    else:
        numeric = series.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(numeric) | (numeric != np.round(numeric))
    row = _first(bad)
    if row is not None:
        return None, (row, f"{_show(values[row])} is not an integer")
    if minimum is not None:
        row = _first(numeric < minimum)
        if row is not None:
            return None, (row, f"{_show(values[row])} is negative (a count must be >= 0)")
    return numeric.astype(np.int64), None


def _check_nesting(frame: pd.DataFrame, child: str, parent: str) -> None:
    """Each ``child`` unit in one ``parent``; else name the row where a second parent appears."""
    parents = frame[parent]
    first_parent = parents.groupby(frame[child], sort=False).transform("first")
    row = _first((parents != first_parent).to_numpy())
    if row is None:
        return
    unit = frame[child].iloc[row]
    first_row = _first((frame[child] == unit).to_numpy())
    raise PopulationInputError(
        f"{child} {_show(unit)} is in {parent} {_show(parents.iloc[row])} here but in "
        f"{parent} {_show(parents.iloc[first_row])} at data row {first_row + 1}: each {child} "
        f"must lie in one {parent}",
        row=row + 1,
        column=parent,
    )
