"""The adversary who sees TopDown's published tables instead of the noisy measurements.

The 2020 PL 94-171 tables are TopDown's output (:mod:`adversary.topdown`):
non-negative integers, blocks summing to their block group. Kazan &
Reiter's S6 treats a simplified version for one block
(:mod:`adversary.scenarios.post_processing`); here the published tables of a
whole block group are the release, and the likelihood of a table given the
truth is summed over every noise vector of the hierarchy (:mod:`.grid`).

- :class:`PublishedTablesCase` — the single-block attack in a block group;
- :class:`PublishedAttributeCase` — the unknown-attribute attack there
  (:mod:`.attribute`);
- :func:`three_adversaries` — the noisy-measurement, published-table and
  both adversaries side by side (:mod:`.adversaries`).
"""

from __future__ import annotations

from ...measures.product_grid import NoiseGrid
from .adversaries import ADVERSARIES, AdversaryMeasures, three_adversaries
from .attribute_case import PublishedAttributeCase
from .case import PublishedTablesCase
from .grid import noise_grid
from .setting import POST_PROCESSING, BlockGroupTables

__all__ = [
    "ADVERSARIES",
    "POST_PROCESSING",
    "AdversaryMeasures",
    "BlockGroupTables",
    "NoiseGrid",
    "PublishedAttributeCase",
    "PublishedTablesCase",
    "noise_grid",
    "three_adversaries",
]
