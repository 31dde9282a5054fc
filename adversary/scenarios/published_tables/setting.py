"""What the published-table attacks share: the block group, its noise, what the adversary sees."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..._validation import (
    MAX_EXACT_COUNT,
    as_counts,
    as_generator,
    check_count_noise,
    scalar_positive,
)
from ...budget import detailed_rho
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.noise import resolve
from ...measures.product_grid import NoiseGrid
from ...noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism
from .grid import noise_grid

__all__ = ["POST_PROCESSING", "BlockGroupTables", "block_counts"]

#: What the adversary sees, by ``post_processing``: the noisy measurements (``"none"``), TopDown's
#: published tables (``"topdown"``) or both; the values are the adversaries' names.
POST_PROCESSING = {"none": "noisy", "topdown": "published", "both": "both"}


def block_counts(value, name: str) -> np.ndarray:
    """``value`` as int64 counts (blocks on the last axis) whose block group, their sum, stays
    below 2**53 with the target added: TopDown computes in float64
    (:data:`~adversary._validation.MAX_EXACT_COUNT`)."""
    counts = as_counts(value, name)
    if counts.size and np.max(counts.sum(axis=-1)) >= MAX_EXACT_COUNT:
        raise ValueError(
            f"{name}: the block group's count (their sum) must be below 2**53, "
            f"got {int(np.max(counts.sum(axis=-1)))}"
        )
    return counts


@dataclass(frozen=True, kw_only=True)
class BlockGroupTables:
    """A block group (the root, ``rho_parent``) and its blocks (``rho_block`` each), the target
    in block ``target_block``: the discrete Gaussian of ``convention`` (``"paper"``: σ² = 1/(2ρ);
    ``"das"``: σ² = 1/ρ) on every unit's count, the noise grid that leaves out at most
    ``tail_mass`` of each unit's noise, and ``post_processing`` — what the adversary of the
    measures sees (:data:`POST_PROCESSING`)."""

    target_block: int = 0
    rho_block: float | None = detailed_rho("block")
    rho_parent: float | None = detailed_rho("block_group")
    convention: str = "paper"
    post_processing: str = "topdown"
    tail_mass: float = 1e-9
    seed: int = 0
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    def _check_setting(self, blocks: int, mechanism: NoiseMechanism | None = None) -> None:
        """Refuse a bad shared field, naming it (``blocks``: how many blocks there are)."""
        check_tie_rule(self.tie_rule)
        if (
            isinstance(self.target_block, bool)
            or not isinstance(self.target_block, int | np.integer)
            or not 0 <= self.target_block < blocks
        ):
            raise ValueError(
                f"target_block must be a block index from 0 to {blocks - 1}, "
                f"got {self.target_block!r}"
            )
        if mechanism is None:
            for name in ("rho_block", "rho_parent"):
                scalar_positive(getattr(self, name), name)
                resolve(getattr(self, name), self.convention, None, name)
            noises = zip(("rho_parent", "rho_block"), self._unit_noise(1), strict=True)
        elif not isinstance(mechanism, NoiseMechanism):
            raise ValueError(f"mechanism must be a NoiseMechanism, got {mechanism!r}")
        else:
            noises = [("mechanism", mechanism)]
        for name, noise in noises:
            check_count_noise(noise.variance, name)
        if self.post_processing not in POST_PROCESSING:
            raise ValueError(
                f"post_processing must be one of {', '.join(POST_PROCESSING)}, "
                f"got {self.post_processing!r}"
            )
        if not scalar_positive(self.tail_mass, "tail_mass") < 1:
            raise ValueError(f"tail_mass must be below 1, got {self.tail_mass!r}")
        as_generator(self.seed, "seed")

    def _unit_noise(self, blocks: int, mechanism: NoiseMechanism | None = None) -> tuple:
        """The noise of each unit, the block group first (``mechanism`` for all, if given)."""
        if mechanism is not None:
            return (mechanism,) * (blocks + 1)
        parent = DiscreteGaussianNoise.from_rho(self.rho_parent, self.convention)
        block = DiscreteGaussianNoise.from_rho(self.rho_block, self.convention)
        return (parent,) + (block,) * blocks

    def _hierarchy(self, blocks: int) -> tuple[np.ndarray, np.ndarray]:
        """``(parents, path)``: the tree (root first) and the target's block and its root."""
        path = np.zeros(blocks + 1)
        path[[0, 1 + self.target_block]] = 1.0
        return np.array([-1] + [0] * blocks), path

    @cached_property
    def grid(self) -> NoiseGrid:
        """Every noise vector of the hierarchy within the cut-offs (:func:`.grid.noise_grid`)."""
        return noise_grid(self.mechanisms(), self.tail_mass)
