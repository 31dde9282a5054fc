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
    it, every row is one person. The counts add up to at most
    :data:`MAX_PERSONS` (2⁵³: persons are summed in float64 when partitions
    are cut, exactly up to there).
``record_id``
    Optional: an integer identifier per row (a 64-bit integer), unique; default
    the 0-based row number. It is carried into the per-record output.

Other columns are ignored. Rows are numbered from 1 in error messages ("data
row 1" is the first row after a CSV header).

A folder is read as a Parquet dataset (the Parquet files in it, as one table).

**Errors.** :func:`read_table` raises :class:`PopulationInputError` (a
:class:`ValueError`) naming the file for one it cannot read: empty, not UTF-8
text (and the row of the first bad byte), not CSV or not Parquet, a folder
holding no Parquet files, a CSV header naming a column twice. :func:`validate`
raises it naming the first bad data row and its column (and the file, given
``file``): a column named twice, a missing column, an empty value or a list
in one, a negative, non-integer or too large count, counts adding up to more
than :data:`MAX_PERSONS`, a non-integer, out-of-range or duplicated
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
    "MAX_PERSONS",
    "RECORD_ID",
    "PopulationInputError",
    "read_table",
    "validate",
]

#: Geography columns, top-down.
GEOGRAPHY = ("state", "county", "tract", "block_group", "block")
COUNT = "count"
RECORD_ID = "record_id"
#: Most persons a table may count (2⁵³: every sum of counts is exact in float64).
MAX_PERSONS = 2**53
_INT64 = np.iinfo(np.int64)


class PopulationInputError(ValueError):
    """Malformed input: ``file``, ``row`` (1-based data row, or None) and ``column`` say where."""

    def __init__(
        self,
        message: str,
        *,
        row: int | None = None,
        column: str | None = None,
        file: str | None = None,
    ):
        where = [] if file is None else [f"data file {str(file)!r}"]
        if row is not None:
            where.append(f"data row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.row = row
        self.column = column
        self.file = file


def read_table(path, columns: list[str] | None = None) -> pd.DataFrame:
    """The table at ``path`` (Parquet file or folder, or CSV), only ``columns`` when given and
    present; a file it cannot read is a :class:`PopulationInputError` naming it."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if path.is_dir():
        if not any(path.rglob("*.parquet")) and not any(path.rglob("*.pq")):
            raise PopulationInputError(
                "a folder holding no Parquet files (expected a .parquet or .csv file, or a "
                "folder of Parquet files)",
                file=path,
            )
        return _read_parquet(path, columns)
    if suffix in (".parquet", ".pq"):
        return _read_parquet(path, columns)
    if suffix == ".csv":
        return _read_csv(path, columns)
    raise PopulationInputError("expected a .parquet or .csv file", file=path)


def _read_parquet(path: Path, columns) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        available = pq.read_schema(path).names if path.is_file() else None
        wanted = None
        if columns is not None and available is not None:
            wanted = [c for c in columns if c in available]
        return pd.read_parquet(path, columns=wanted)
    except (pa.ArrowException, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PopulationInputError(f"not a readable Parquet file ({reason})", file=path) from None


def _read_csv(path: Path, columns) -> pd.DataFrame:
    try:
        header = pd.read_csv(path, nrows=0).columns
        # pandas renames a repeated name ("count" → "count.1"): read the header as written
        written = pd.read_csv(path, nrows=1, header=None, dtype=str).iloc[0]
        repeated = written[written.duplicated()]
        if repeated.size:
            raise PopulationInputError(
                "named twice in the header (each column once)", column=repeated.iloc[0], file=path
            )
        wanted = None if columns is None else [c for c in columns if c in header]
        # index_col=False: data rows with a field more than the header (a trailing comma) are
        # read as written, not shifted one column left behind an index made of the first field
        return pd.read_csv(path, usecols=wanted, index_col=False)
    except pd.errors.EmptyDataError:
        raise PopulationInputError(
            "empty (a CSV file starts with a header row naming its columns)", file=path
        ) from None
    except UnicodeDecodeError as error:
        found = _first_undecodable(path)
        where = f"byte 0x{error.object[error.start]:02x}"
        if found is not None:
            line, byte = found
            where = f"byte 0x{byte:02x} in " + ("the header" if line == 0 else f"data row {line}")
        raise PopulationInputError(
            f"not UTF-8 text: {where} (a CSV file is UTF-8 text)", file=path
        ) from None
    except pd.errors.ParserError as error:
        reason = str(error).strip().splitlines()[0]
        raise PopulationInputError(f"not a readable CSV file ({reason})", file=path) from None


def _first_undecodable(path: Path) -> tuple[int, int] | None:
    """``(line, byte)``: the first line (0 = the header) that is not UTF-8, and its bad byte."""
    with open(path, "rb") as handle:
        for line, raw in enumerate(handle):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                return line, raw[error.start]
    return None


def _show(value) -> str:
    """A value as a user wrote it: ``-1``, ``1.5``, ``'A7'`` (no numpy type names)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def validate(frame: pd.DataFrame, characteristics, *, file=None) -> pd.DataFrame:
    """``frame`` checked against the schema; returns it with ``count`` and ``record_id``.

    Raises :class:`PopulationInputError` for the first bad row and column
    (module docstring), naming ``file`` (the path ``frame`` was read from)
    when given. The returned frame has the geography and
    characteristic columns, ``count`` (int64; 1 per row for records) and
    ``record_id`` (int64), in the input's row order.
    """
    characteristics = list(characteristics)
    required = [*GEOGRAPHY, *characteristics]
    repeated = frame.columns[frame.columns.duplicated()]
    if repeated.size:
        raise PopulationInputError("two columns of this name", column=repeated[0], file=file)
    for column in required:
        if column not in frame.columns:
            raise PopulationInputError(
                f"missing (required columns: {', '.join(required)})", column=column, file=file
            )
    n = len(frame)
    problems: list[tuple[int, int, str, str]] = []  # (row, column order, column, message)
    order = {name: k for k, name in enumerate([*required, COUNT, RECORD_ID])}
    for column in required:
        values = frame[column]
        row = _first(values.isna().to_numpy())
        if row is not None:
            problems.append((row, order[column], column, "empty value"))
        if values.dtype == object:  # a Parquet list column: one value per row is the schema
            row = _first(values.map(pd.api.types.is_list_like).to_numpy(dtype=bool))
            if row is not None:
                problems.append((row, order[column], column, "a list, not one value"))

    counts = np.ones(n, dtype=np.int64)
    if COUNT in frame.columns:
        counts, problem = _integers(frame[COUNT], minimum=0, maximum=MAX_PERSONS)
        if problem is None:
            problem = _too_many(counts)
        if problem:
            problems.append((problem[0], order[COUNT], COUNT, problem[1]))
    record_ids = np.arange(n, dtype=np.int64)
    if RECORD_ID in frame.columns:
        record_ids, problem = _integers(frame[RECORD_ID], minimum=_INT64.min, maximum=_INT64.max)
        if problem:
            problems.append((problem[0], order[RECORD_ID], RECORD_ID, problem[1]))
        else:
            duplicated = _first(pd.Series(record_ids).duplicated().to_numpy())
            if duplicated is not None:
                message = f"{_show(record_ids[duplicated])} repeats"
                problems.append((duplicated, order[RECORD_ID], RECORD_ID, message))
    if problems:
        row, _, column, message = min(problems)
        raise PopulationInputError(message, row=row + 1, column=column, file=file)

    for child, parent in zip(GEOGRAPHY[:0:-1], GEOGRAPHY[-2::-1], strict=True):
        _check_nesting(frame, child, parent, file)

    out = frame[required].reset_index(drop=True).copy()
    out[COUNT] = counts
    out[RECORD_ID] = record_ids
    return out


def _integers(series: pd.Series, minimum: int, maximum: int):
    """``(int64 values, None)`` or ``(None, (first bad row, message))``: each value an integer
    from ``minimum`` to ``maximum``, compared exactly (integer columns are never rounded)."""
    values = series.to_numpy()
    if values.dtype == bool:
        numeric = np.full(values.shape, np.nan)
    elif values.dtype.kind in "iu":
        numeric = values
    elif values.dtype == object or pd.api.types.is_string_dtype(series):
        numeric = pd.to_numeric(series, errors="coerce").to_numpy()
        if numeric.dtype.kind not in "iuf":  # nullable integers with missing values
            numeric = numeric.astype(np.float64)
    else:
        numeric = series.to_numpy(dtype=np.float64, na_value=np.nan)
    if numeric.dtype.kind == "f":
        row = _first(~np.isfinite(numeric) | (numeric != np.round(numeric)))
        if row is not None:
            return None, (row, f"{_show(values[row])} is not an integer")
    row = _first(numeric < minimum)
    if row is not None:
        if minimum == 0:
            return None, (row, f"{_show(values[row])} is negative (a count must be >= 0)")
        return None, (row, f"{_show(values[row])} is below the least 64-bit integer {minimum}")
    above = numeric > maximum
    if numeric.dtype.kind == "f":  # float(maximum) may round up to a value int64 cannot hold
        above |= numeric >= 2.0**63
    row = _first(above)
    if row is not None:
        return None, (row, f"{_show(values[row])} is too large (at most {maximum})")
    return numeric.astype(np.int64), None


def _too_many(counts: np.ndarray):
    """``None``, or ``(row, message)`` for the row where the counts' sum passes MAX_PERSONS."""
    # exact in int64: each count is at most 2^53, so the sum first passes 2^53 below 2^54
    row = _first(np.cumsum(counts) > MAX_PERSONS)
    if row is None:
        return None
    return row, f"the counts up to this row add up to more than {MAX_PERSONS} persons"


def _check_nesting(frame: pd.DataFrame, child: str, parent: str, file) -> None:
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
        file=file,
    )
