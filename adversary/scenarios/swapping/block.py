"""A block of households as the adversary sees it, and the partner area's composition.

A **block** is a tuple of households, each a tuple of its members' cell codes
in the reduced classification
(:data:`~adversary.scenarios.reconstruction.REDUCED`: household or group
quarters × voting age × Hispanic × race, 56 cells, C order). The **target**
is one member: ``(household index, member index)``. A hypothesis about the
target is the block with the target's code replaced (:func:`with_target_cell`).

The **composition** is what a swapped-in household's persons look like: the
partner area's published shares of the 56 cells, one pmf for voting-age
persons and one for the others (:class:`Composition`). A household swapped in
has the match key of the one it replaces (its size and number of voting-age
persons), and its persons' cells are independent draws from these pmfs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_counts, as_integers
from ..reconstruction import REDUCED

__all__ = [
    "N_CELLS",
    "VOTING_AGE",
    "Composition",
    "check_block",
    "check_cell",
    "check_target",
    "members_by_kind",
    "with_target_cell",
]

#: Cells of the reduced classification.
N_CELLS = REDUCED.n_cells
#: Whether each cell is of voting age.
VOTING_AGE = REDUCED.levels()[:, REDUCED.names.index("voting_age")] == 1
_IN_HOUSEHOLD = REDUCED.levels()[:, REDUCED.names.index("hhgq")] == 0
# Tolerance of a pmf's sum.
_SUM_TOLERANCE = 1e-9


def check_cell(cell, name: str) -> int:
    """``cell`` as a cell code from 0 to 55, else one line naming ``name``."""
    if isinstance(cell, bool) or not isinstance(cell, int | np.integer) or not 0 <= cell < N_CELLS:
        raise ValueError(f"{name} must be a cell code from 0 to {N_CELLS - 1}, got {cell!r}")
    return int(cell)


def check_block(households, name: str = "households") -> tuple[tuple[int, ...], ...]:
    """The block as a tuple of non-empty tuples of cell codes (0..55)."""
    if isinstance(households, str | bytes) or not hasattr(households, "__len__"):
        raise ValueError(f"{name} must be a sequence of households, got {households!r}")
    if len(households) == 0:
        raise ValueError(f"{name} must hold at least one household")
    block = []
    for h, members in enumerate(households):
        if isinstance(members, str | bytes) or not hasattr(members, "__len__") or not members:
            raise ValueError(
                f"{name}[{h}] must be a non-empty sequence of cell codes, got {members!r}"
            )
        block.append(tuple(check_cell(code, f"{name}[{h}] member") for code in members))
    return tuple(block)


def check_target(target, block, name: str = "target") -> tuple[int, int]:
    """``(household, member)`` indexing a member of ``block``, else one line naming ``name``."""
    try:
        household, member = (int(i) for i in target)
        valid = all(float(i) == int(i) and not isinstance(i, bool) for i in target)
    except (TypeError, ValueError):
        valid = False
    if not valid or not 0 <= household < len(block) or not 0 <= member < len(block[household]):
        raise ValueError(
            f"{name} must be (household index, member index) of a member of the block "
            f"({len(block)} households), got {target!r}"
        )
    return household, member


def with_target_cell(block, target, cell: int) -> tuple[tuple[int, ...], ...]:
    """The block with the target's cell code replaced by ``cell`` (a hypothesis)."""
    household, member = target
    members = list(block[household])
    members[member] = cell
    return (*block[:household], tuple(members), *block[household + 1 :])


def _pmf(values, name: str, allowed: np.ndarray, kind: str) -> tuple[float, ...]:
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (N_CELLS,) or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(
            f"{name} must be {N_CELLS} non-negative shares, one per cell, got {values!r}"
        )
    if np.any(array[~allowed] > 0):
        raise ValueError(f"{name} must put no mass on cells that are not {kind}")
    total = array.sum()
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (within {_SUM_TOLERANCE:g}), got sum {total!r}")
    return tuple(float(x) for x in array / total)


@dataclass(frozen=True)
class Composition:
    """The partner area's published composition: where swapped-in persons' cells come from.

    ``voting_age``: a pmf over the 56 cells for a voting-age person (mass on
    voting-age cells only); ``other``: for a person under voting age (mass on
    the other cells only). Cells encode voting age, so an incoming person's
    count lands in cells of their own voting age: the counts of the two kinds
    are independent multinomials in the numbers of incoming persons of each kind.
    """

    voting_age: tuple[float, ...]
    other: tuple[float, ...]

    def __post_init__(self):
        object.__setattr__(
            self, "voting_age", _pmf(self.voting_age, "voting_age", VOTING_AGE, "of voting age")
        )
        object.__setattr__(
            self, "other", _pmf(self.other, "other", ~VOTING_AGE, "under voting age")
        )

    @classmethod
    def from_counts(cls, counts) -> Composition:
        """The composition of an area from its 56-cell counts (persons in households only).

        Only households are swapped, so group-quarters cells are left out;
        each kind of person needs at least one household person in the area.
        """
        array = as_counts(counts, "counts")
        if array.shape != (N_CELLS,):
            raise ValueError(f"counts must hold {N_CELLS} cell counts, got shape {array.shape}")
        shares = {}
        for kind, mask in (("voting_age", VOTING_AGE), ("other", ~VOTING_AGE)):
            kept = np.where(mask & _IN_HOUSEHOLD, array, 0).astype(np.float64)
            if kept.sum() == 0:
                raise ValueError(f"counts: no {kind.replace('_', '-')} persons in households")
            shares[kind] = kept / kept.sum()
        return cls(**shares)

    def pmf(self, voting_age: bool) -> np.ndarray:
        """The pmf over the 56 cells of a person of voting age or not."""
        return np.array(self.voting_age if voting_age else self.other)


def members_by_kind(members) -> tuple[int, int]:
    """``(voting-age persons, others)`` of a household: its match key's two counts."""
    codes = as_integers(list(members), "members")
    adults = int(VOTING_AGE[codes].sum())
    return adults, codes.size - adults
