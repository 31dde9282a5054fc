"""Input checks: the first bad row and column, before anything runs or is written."""

import json

import numpy as np
import pandas as pd
import pytest

from adversary.cli import main
from adversary.population.schema import PopulationInputError, read_table, validate

CHARS = ["hhgq", "voting_age", "hispanic", "race"]


def table(rows=6) -> pd.DataFrame:
    """Two blocks of one block group, then a third block in another group."""
    frame = pd.DataFrame(
        {
            "state": 1,
            "county": 1001,
            "tract": 1001000001,
            "block_group": [1001000001001] * 4 + [1001000001002] * (rows - 4),
            "block": [10010000010010001] * 2
            + [10010000010010002] * 2
            + [10010000010020001] * (rows - 4),
            "hhgq": 0,
            "voting_age": 1,
            "hispanic": [0, 1] * (rows // 2),
            "race": np.arange(rows) % 3,
        }
    )
    return frame


def test_a_good_table_passes_and_gets_count_and_record_id():
    checked = validate(table(), CHARS)
    assert (checked["count"] == 1).all()
    assert list(checked["record_id"]) == list(range(6))


def test_missing_column_is_named():
    with pytest.raises(PopulationInputError, match="column 'block_group': missing") as error:
        validate(table().drop(columns="block_group"), CHARS)
    assert error.value.column == "block_group" and error.value.row is None


def test_missing_characteristic_is_named():
    with pytest.raises(PopulationInputError, match="column 'race': missing"):
        validate(table().drop(columns="race"), CHARS)


def test_negative_count_names_the_first_bad_row():
    frame = table().assign(count=[3, 1, 2, -1, 5, -2])
    with pytest.raises(PopulationInputError, match=r"data row 4, column 'count': -1 is negative"):
        validate(frame, CHARS)


def test_non_integer_count_and_empty_value():
    with pytest.raises(PopulationInputError, match=r"data row 2, column 'count': 1.5 is not"):
        validate(table().assign(count=[1, 1.5, 1, 1, 1, 1]), CHARS)
    frame = table()
    frame.loc[4, "race"] = None
    frame.loc[3, "county"] = None  # the earlier row is reported
    with pytest.raises(PopulationInputError, match=r"data row 4, column 'county': empty value"):
        validate(frame, CHARS)


def test_duplicated_record_id():
    with pytest.raises(PopulationInputError, match=r"data row 3, column 'record_id': 7 repeats"):
        validate(table().assign(record_id=[5, 7, 7, 8, 9, 10]), CHARS)


def test_block_in_two_block_groups_names_the_row_of_the_second():
    frame = table()
    frame.loc[3, "block_group"] = 1001000001002  # block ...0002 now in two groups
    with pytest.raises(PopulationInputError) as error:
        validate(frame, CHARS)
    assert error.value.row == 4 and error.value.column == "block_group"
    assert "block 10010000010010002 is in block_group 1001000001002 here" in str(error.value)
    assert "at data row 3" in str(error.value)


def test_tract_in_two_counties():
    frame = table()
    frame.loc[5, "county"] = 1002
    with pytest.raises(PopulationInputError, match="data row 6, column 'county': tract"):
        validate(frame, CHARS)


def test_row_problems_come_before_hierarchy_problems():
    frame = table().assign(count=[1, 1, 1, 1, 1, -4])
    frame.loc[3, "block_group"] = 1001000001002
    with pytest.raises(PopulationInputError, match="data row 6, column 'count'"):
        validate(frame, CHARS)


def test_read_table_csv_and_parquet(tmp_path):
    frame = table()
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.parquet"):
        read = read_table(tmp_path / name, ["block", "race", "count"])
        assert list(read.columns) == ["block", "race"]
    with pytest.raises(ValueError, match=r"expected a \.parquet or \.csv"):
        read_table(tmp_path / "t.csv").pipe(lambda _: read_table(_write(tmp_path / "t.txt")))
    with pytest.raises(FileNotFoundError):
        read_table(tmp_path / "missing.csv")


def _write(path):
    path.write_text("x")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns="tract"), "column 'tract': missing"),
        (lambda f: f.assign(count=[1, 2, 1, 1, -3, 1]), "data row 5, column 'count': -3"),
        (
            lambda f: f.assign(block_group=[1001000001001] * 3 + [1001000001002] * 3),
            "data row 4, column 'block_group': block",
        ),
        (lambda f: f.iloc[:0], "people.csv': nothing to assess: the table has no rows"),
        (lambda f: f.assign(count=0), "nothing to assess: the table counts no one"),
    ],
)
def test_cli_malformed_input_is_an_error_and_writes_nothing(
    tmp_path, model_file, capsys, change, message
):
    data = tmp_path / "people.csv"
    change(table()).to_csv(data, index=False)
    out = tmp_path / "out"
    before = set(tmp_path.iterdir())
    status = main(
        ["population", str(data), "--model", str(model_file), "--out", str(out), "--json"]
    )
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err.startswith("adversary population: error: ")
    assert message in captured.err
    assert set(tmp_path.iterdir()) == before  # no output folder, no staging folder


def test_a_zero_row_parquet_file_is_nothing_to_assess(tmp_path, model_file, capsys):
    data = tmp_path / "people.parquet"
    table().iloc[:0].to_parquet(data)
    argv = ["population", str(data), "--model", str(model_file), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"adversary population: error: data file '{data}': nothing to assess: the table has no "
        "rows\n"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--workers", "0"], "--workers must be >= 1, got 0"),
        (["--partitions", "0"], "--partitions must be >= 1, got 0"),
        (["--states", "0"], "--states must be >= 1, got 0"),
        (["--synthetic", "0"], "--synthetic must be >= 1, got 0"),
        (["--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "cannot be given with"),
        (
            ["--scheduler", "tcp://127.0.0.1:9"],
            "scheduler: could not reach a Dask scheduler at 'tcp://127.0.0.1:9' (Connection "
            "refused)",
        ),
    ],
)
def test_cli_bad_options_are_one_line(options, message, tmp_path, capsys):
    source = [] if "--synthetic" in options else ["--synthetic", "100"]
    argv = ["population", *source, *options, "--model", "population_gvhr"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adversary population: error: ") and err.count("\n") == 1
    assert message in err
    assert not (tmp_path / "out").exists()


def test_cli_runs_a_csv_on_an_existing_scheduler(tmp_path, model_file, capsys, client_two):
    data = tmp_path / "people.csv"
    table().to_csv(data, index=False)
    out = tmp_path / "out"
    address = client_two.scheduler.address
    argv = ["population", str(data), "--model", str(model_file), "--out", str(out), "--json"]
    assert main([*argv, "--scheduler", address, "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["data"] == {"path": str(data)}
    assert result["stats"]["persons"] == 6
    assert result["stats"]["workers"] == 2
    assert result["model"]["rho"]["x4"]["block"] == pytest.approx(4 * 0.0992, rel=1e-2)
    assert (out / "records.parquet").is_file() and (out / "summary.json").is_file()
    records = pd.read_parquet(out / "records.parquet")
    assert result["stats"]["records_assessed"] == len(records)


def test_cli_memory_budget_reaches_the_workers_of_a_scheduler(tmp_path, capsys, client_two):
    # The workers run in other processes: the caller's budget travels with each task.
    argv = ["population", "--synthetic", "300", "--model", "population_gvhr", "--no-progress"]
    address = client_two.scheduler.address
    options = ["--scheduler", address, "--memory-budget", "1KiB", "--out", str(tmp_path / "o")]
    assert main([*argv, *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adversary population: error: ") and err.count("\n") == 1
    assert "more than the budget of 1 KiB (raise it with --memory-budget" in err
    assert not (tmp_path / "o").exists()


def test_cli_a_refused_task_on_a_local_cluster_is_one_line(tmp_path, capfd):
    # The workers' own "Compute Failed" logs (on the inherited stderr) are silenced.
    argv = ["population", "--synthetic", "300", "--model", "population_gvhr", "--no-progress"]
    options = ["--workers", "1", "--memory-budget", "1KiB", "--out", str(tmp_path / "o")]
    assert main([*argv, *options]) == 2
    err = capfd.readouterr().err
    assert err.startswith("adversary population: error: ") and err.count("\n") == 1
    assert "more than the budget of 1 KiB" in err
