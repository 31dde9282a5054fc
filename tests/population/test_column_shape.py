"""A column named twice, or holding lists, is refused in one line naming it."""

import pandas as pd
import pytest

from adversary.cli import main
from adversary.population.schema import GEOGRAPHY, PopulationInputError, read_table, validate

CHARACTERISTICS = ("hhgq", "voting_age", "hispanic", "race")
HEADER = ",".join([*GEOGRAPHY, *CHARACTERISTICS])


def test_a_csv_header_naming_count_twice_is_refused(tmp_path):
    # pandas would read the second 'count' as 'count.1' and drop it: -5 would pass unseen
    path = tmp_path / "twice.csv"
    path.write_text(f"{HEADER},count,count\n1,1,1,1,1,0,1,0,1,3,-5\n")
    with pytest.raises(PopulationInputError, match=r"column 'count': named twice in the header"):
        read_table(path)


def test_a_csv_header_naming_a_characteristic_twice_is_refused_on_the_command_line(
    tmp_path, capsys
):
    path = tmp_path / "twice.csv"
    path.write_text(f"{HEADER},race\n1,1,1,1,1,0,1,0,1,3\n")
    status = main(
        ["population", str(path), "--model", "population_gvhr", "--out", str(tmp_path / "o")]
    )
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "column 'race': named twice in the header" in err[0]
    assert not (tmp_path / "o").exists()


def test_a_frame_with_two_columns_of_one_name_is_refused():
    frame = pd.DataFrame([[1] * 10], columns=[*GEOGRAPHY, *CHARACTERISTICS, "state"])
    with pytest.raises(PopulationInputError, match=r"column 'state': two columns of this name"):
        validate(frame, CHARACTERISTICS)


def test_a_list_in_a_parquet_column_names_its_row_and_column(tmp_path, capsys):
    # was "error: unhashable type: 'numpy.ndarray'", naming neither file, row nor column
    frame = pd.DataFrame({name: [1, 1] for name in [*GEOGRAPHY, *CHARACTERISTICS]})
    frame["race"] = [[1], [1, 2]]
    path = tmp_path / "lists.parquet"
    frame.to_parquet(path)
    status = main(
        ["population", str(path), "--model", "population_gvhr", "--out", str(tmp_path / "o")]
    )
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data row 1, column 'race': a list, not one value" in err[0]
