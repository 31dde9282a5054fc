"""The reproduction report: every printed number's status, and every difference explained."""

import pytest

from adversary.reproduction import REASONS, ROWS, report


def _id(row):
    return f"{row.location}: {row.quantity}"


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_status_is_as_recorded(row):
    ours = row.ours()
    assert row.agrees(ours) == (row.expected == "matches"), (row.paper, ours)


@pytest.mark.parametrize("row", [r for r in ROWS if r.expected == "differs"], ids=_id)
def test_each_difference_is_explained_by_computation(row):
    """The paper's apparent method, computed, gives the printed number."""
    assert row.reason in REASONS
    assert row.paper_method is not None
    assert row.agrees(row.paper_method())


def test_matching_rows_carry_no_explanation():
    for row in ROWS:
        if row.expected == "matches":
            assert row.reason is None and row.paper_method is None, _id(row)


def test_report_table_has_a_row_per_number():
    table = report()
    assert len(table) == len(ROWS)
    assert set(table.status) <= {"matches", "differs"}
    assert (table.status == [row.expected for row in ROWS]).all()
