"""Fixtures of the swapping attack's tests: cell codes and a small composition."""

from types import SimpleNamespace

import numpy as np
import pytest

from adversary.scenarios.swapping.block import Composition

#: Reduced cell codes ((hhgq * 2 + voting_age) * 2 + hispanic) * 7 + race, households only.
CELLS = SimpleNamespace(
    adult_white=14, adult_black=15, adult_asian=17, child_white=0, child_black=1
)


def composition_of(adult: dict, child: dict) -> Composition:
    """A composition from ``{cell: share}`` for each kind of person."""
    pmfs = [np.zeros(56), np.zeros(56)]
    for pmf, shares in zip(pmfs, (adult, child), strict=True):
        for cell, share in shares.items():
            pmf[cell] = share
    return Composition(voting_age=pmfs[0], other=pmfs[1])


@pytest.fixture
def cells():
    """The cell codes the tests use, by name."""
    return CELLS


@pytest.fixture
def small_composition():
    """Three adult cells and two child cells: small enough to enumerate every incoming cell."""
    return composition_of(
        {CELLS.adult_white: 0.6, CELLS.adult_black: 0.3, CELLS.adult_asian: 0.1},
        {CELLS.child_white: 0.7, CELLS.child_black: 0.3},
    )


@pytest.fixture
def composition():
    """``composition(adult, child)``: a composition from ``{cell: share}`` of each kind."""
    return composition_of
