"""The shared argument checks: one-line errors naming the argument, values never clipped."""

import numpy as np
import pytest

from adversary._validation import as_index, as_integers, as_positive, last_axis
from adversary.scenarios import single_block


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


@pytest.mark.parametrize(
    "value",
    [10**19, [1, 2**63], np.uint64(2**63), 2.0**62, -(2.0**63), 10**30, [0, -(10**30)], 2**64],
)
def test_an_integer_beyond_the_64_bit_range_is_refused_not_wrapped(value):
    with pytest.raises(ValueError, match=r"^release is too large to hold as a 64-bit integer"):
        as_integers(value, "release")


def test_the_largest_accepted_integers_come_back_unchanged():
    extremes = np.iinfo(np.int64)
    values = as_integers([extremes.max, extremes.min, 0], "release")
    assert values.tolist() == [extremes.max, extremes.min, 0]
    assert as_integers(np.uint64(extremes.max), "release") == extremes.max


def test_the_single_block_posterior_refuses_a_release_that_would_wrap():
    """Issue 11: single_block.posterior(10**19, ...) returned 0.0 (the release wrapped)."""
    for release in (10**19, 10**30):  # 10**30 was "must be numeric" (a NumPy object array)
        with pytest.raises(ValueError, match=r"^release is too large to hold as a 64-bit integer"):
            single_block.posterior(release, 0.1, 0.0992)


def test_a_python_integer_beyond_float_range_is_too_large_and_within_it_a_number():
    with pytest.raises(ValueError, match=r"^rho is too large to hold as a number, got 1000"):
        as_positive(10**400, "rho")
    assert as_positive(10**30, "rho") == 1e30
