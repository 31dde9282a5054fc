"""Bad input to ``adversary population``: one line naming the file, row and column, or the
option; exit status 2, no traceback, nothing written (issue 23, points 8 and 14)."""

import io
import socket

import pandas as pd
import pytest

from adversary.cli import main
from adversary.population.schema import read_table

HEADER = "state,county,tract,block_group,block,hhgq,voting_age,hispanic,race,count"


def _rows(*counts) -> str:
    return "".join(f"1,1,1,1,{k},0,1,0,1,{c}\n" for k, c in enumerate(counts, start=1))


def _csv(text: str):
    return _bytes("people.csv", text.encode())


def _bytes(name: str, data: bytes):
    def write(path):
        (path.parent / name).write_bytes(data)
        return path.parent / name

    return write


def _folder(path):
    (path.parent / "people.csv").mkdir()
    return path.parent / "people.csv"


def _parquet_count(value):
    def write(path):
        frame = pd.read_csv(io.StringIO(f"{HEADER}\n{_rows(1)}"))
        frame["count"] = pd.Series([value], dtype="uint64")
        frame.to_parquet(path.with_suffix(".parquet"))
        return path.with_suffix(".parquet")

    return write


# (what the file is, how to write it, what the error says after "data file '<path>'")
CASES = [
    (
        "count 10^20",
        _csv(f"{HEADER}\n{_rows(1, 10**20)}"),
        ", data row 2, column 'count': "
        "100000000000000000000 is too large (at most 9007199254740992)",
    ),
    (
        "count 2^53 + 1 (not rounded)",
        _csv(f"{HEADER}\n{_rows(2**53 + 1)}"),
        ", data row 1, column 'count': 9007199254740993 is too large",
    ),
    (
        "counts adding up past 2^53",
        _csv(f"{HEADER}\n{_rows(2**52, 2**52, 1)}"),
        ", data row 3, column 'count': the counts up to this row add up to more than "
        f"{2**53} persons",
    ),
    (
        "count nan",
        _csv(f"{HEADER}\n{_rows(1, 'nan')}"),
        ", data row 2, column 'count': nan is not an integer",
    ),
    (
        "count inf",
        _csv(f"{HEADER}\n{_rows('inf')}"),
        ", data row 1, column 'count': inf is not an integer",
    ),
    (
        "count -inf",
        _csv(f"{HEADER}\n{_rows('-inf')}"),
        ", data row 1, column 'count': -inf is not an integer",
    ),
    (
        "count -1",
        _csv(f"{HEADER}\n{_rows(1, 1, -1)}"),
        ", data row 3, column 'count': -1 is negative (a count must be >= 0)",
    ),
    (
        "count 1.5",
        _csv(f"{HEADER}\n{_rows(1.5)}"),
        ", data row 1, column 'count': 1.5 is not an integer",
    ),
    (
        "count abc",
        _csv(f"{HEADER}\n{_rows('abc')}"),
        ", data row 1, column 'count': 'abc' is not an integer",
    ),
    (
        "record_id 2^63",
        _csv(f"{HEADER},record_id\n1,1,1,1,1,0,1,0,1,1,{2**63}\n"),
        ", data row 1, column 'record_id': 9223372036854775808 is too large "
        "(at most 9223372036854775807)",
    ),
    (
        "missing column",
        _csv("state,county,tract,block_group,block,hhgq\n1,1,1,1,1,0\n"),
        ", column 'voting_age': missing (required columns: state, county, tract, block_group, "
        "block, hhgq, voting_age, hispanic, race)",
    ),
    (
        "a row short of fields",
        _csv(f"{HEADER}\n{_rows(1)}1,1,1,1,2,0,1\n"),
        ", data row 2, column 'hispanic': empty value",
    ),
    ("empty file", _csv(""), ": empty (a CSV file starts with a header row naming its columns)"),
    ("header only", _csv(f"{HEADER}\n"), ": nothing to assess: the table has no rows"),
    (
        "binary",
        _bytes("people.csv", HEADER.encode() + b"\n1,1,1,1,1,0,1,\xff\xfe,1,1\n"),
        ": not UTF-8 text: byte 0xff in data row 1 (a CSV file is UTF-8 text)",
    ),
    (
        "binary header",
        _bytes("people.csv", b"\x89PNG\r\n\x1a\n\x00\x00"),
        ": not UTF-8 text: byte 0x89 in the header (a CSV file is UTF-8 text)",
    ),
    (
        "not Parquet",
        _bytes("people.parquet", b"state,county\n1,2\n"),
        ": not a readable Parquet file (Parquet magic bytes not found in footer.",
    ),
    (
        "Parquet count 2^63",
        _parquet_count(2**63),
        ", data row 1, column 'count': 9223372036854775808 is too large",
    ),
    (
        "a folder",
        _folder,
        ": a folder holding no Parquet files (expected a .parquet or .csv "
        "file, or a folder of Parquet files)",
    ),
    ("another suffix", _bytes("people.txt", HEADER.encode()), ": expected a .parquet or .csv file"),
    ("no such file", lambda path: path.parent / "nowhere.csv", " does not exist"),
]


@pytest.mark.parametrize(("write", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_data_is_one_line_naming_file_row_and_column(
    tmp_path, model_file, capsys, write, message
):
    data = write(tmp_path / "people")
    out = tmp_path / "out"
    before = set(tmp_path.iterdir())
    status = main(["population", str(data), "--model", str(model_file), "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.startswith(f"adversary population: error: data file '{data}'{message}")
    assert captured.err.count("\n") == 1
    assert set(tmp_path.iterdir()) == before


def test_data_rows_with_a_field_more_than_the_header_are_not_shifted(tmp_path):
    """Each data row with a field more than the header (a column the header does not name),
    read without one of its columns: the columns are read as written, not shifted one column
    left behind an index that pandas would make of the first field."""
    path = tmp_path / "people.csv"
    rows = "".join(f"{line},40,99\n" for line in _rows(5, 7).split())  # age 40, then 99
    path.write_text(f"{HEADER},age\n{rows}")
    frame = read_table(path, HEADER.split(","))  # all but age
    assert frame["state"].tolist() == [1, 1] and frame["block"].tolist() == [1, 2]
    assert frame["count"].tolist() == [5, 7]


def test_a_folder_of_parquet_files_is_one_table(tmp_path):
    frame = pd.read_csv(io.StringIO(f"{HEADER}\n{_rows(3, 4, 5)}"))
    (tmp_path / "people").mkdir()
    frame.iloc[:2].to_parquet(tmp_path / "people" / "a.parquet")
    frame.iloc[2:].to_parquet(tmp_path / "people" / "b.parquet")
    read = read_table(tmp_path / "people", HEADER.split(","))
    assert sorted(read["count"]) == [3, 4, 5]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--synthetic", "0"], "--synthetic must be >= 1, got 0"),
        (["--synthetic", "-1"], "--synthetic must be >= 1, got -1"),
        (
            ["--synthetic", str(10**20)],
            f"persons: {10**20} synthetic people would need ",
        ),
        (["--synthetic", "1000", "--workers", "0"], "--workers must be >= 1, got 0"),
        (["--synthetic", "1000", "--partitions", "-3"], "--partitions must be >= 1, got -3"),
        (["--synthetic", "1000", "--model", "nonesuch"], "model must be a .py file or one of"),
        (
            ["--synthetic", "1000", "--scheduler", "tcp://127.0.0.1:{port}"],
            "scheduler: could not reach a Dask scheduler at 'tcp://127.0.0.1:{port}' "
            "(Connection refused)",
        ),
        (
            ["--synthetic", "1000", "--scheduler", "127.0.0.1"],
            "scheduler: could not reach a Dask scheduler at '127.0.0.1' (missing port number",
        ),
    ],
)
def test_bad_options_are_one_line_and_fast(tmp_path, capsys, options, message):
    """Refused before any cluster starts or any file is written; an address where nothing
    listens is refused at once, not after the client's timeout."""
    port = _closed_port()
    options = [option.format(port=port) for option in options]
    argv = ["population", *options, "--out", str(tmp_path / "out"), "--no-progress"]
    if "--model" not in options:
        argv += ["--model", "population_gvhr"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("adversary population: error: ") and err.count("\n") == 1
    assert message.format(port=port) in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--synthetic", "1e20"], "argument --synthetic: invalid int value: '1e20'"),
        (["--synthetic", "abc"], "argument --synthetic: invalid int value: 'abc'"),
        (["--synthetic", "10", "--partitions", "x"], "argument --partitions: invalid int value"),
        (["--synthetic", "10", "--workers", "2.5"], "argument --workers: invalid int value"),
        (["--synthetic", "10", "--partition-by", "state"], "argument --partition-by: invalid"),
    ],
)
def test_options_argparse_refuses_end_in_one_error_line(tmp_path, capsys, options, message):
    argv = ["population", *options, "--model", "population_gvhr", "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert err.splitlines()[-1].startswith(f"adversary population: error: {message}")
