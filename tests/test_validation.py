"""The shared argument checks: one-line errors naming the argument, values never clipped."""

import numpy as np
import pytest

from adversary._validation import as_index, last_axis


@pytest.mark.parametrize("value", [0, 2, np.int64(1)])
def test_an_index_in_range_comes_back_as_int(value):
    index = as_index(value, 3, "true_category")
    assert index == int(value) and type(index) is int


@pytest.mark.parametrize("value", [3, -1, True, 1.0, "1", None])
def test_an_index_out_of_range_or_not_an_integer_is_refused_by_name(value):
    with pytest.raises(ValueError, match=r"^true_category must be a category index from 0 to 2"):
        as_index(value, 3, "true_category", "a category index")


def test_last_axis_checks_the_length_of_the_last_axis_only():
    array = np.zeros((4, 3))
    assert last_axis(array, 3, "releases", "one count per cell") is array
    for bad in (np.zeros((3, 4)), np.float64(0.0)):
        with pytest.raises(ValueError, match=r"^releases must have one count per cell on its"):
            last_axis(bad, 3, "releases", "one count per cell")
