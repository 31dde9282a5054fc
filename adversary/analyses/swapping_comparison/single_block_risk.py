"""The single-block attack (Kazan & Reiter 2023, Sec. 3.1), DP and swapping side by side.

The measures, for the truth "the target is in cell c": the marginal risk
(3.4) at priors ``p`` = 1/10 and 1/50, and the probability of a correct
Bayes decision (3.6) at ``p`` = 1/2.

- **DP** (:func:`dp_single_block`): the target is unique in its block
  (``m = 0``); the release is the block's detailed-query count of c with
  discrete Gaussian noise at the block's detailed ρ of the allocation (DAS
  convention ``σ² = 1/ρ``): :mod:`adversary.scenarios.single_block`, exact,
  the same for every unique target.
- **Swapping** (:func:`swap_single_block`): the exact measures of
  :mod:`adversary.scenarios.swapping.single_block` for a sample of unique
  targets of a population (:func:`unique_targets`), each with its real
  block: the block's households (each a tuple of its members' cells; group
  quarters persons are in no household, never swapped, and in cells no
  household person has, so they leave the count of c alone), the target's
  cell c, the alternative a (the commonest cell of the target's tract among
  household persons of the target's voting age, other than c: the cell an
  adversary would otherwise assign, with the same match key), and the swap
  area's composition (its household persons' cells,
  :class:`~adversary.scenarios.swapping.block.Composition`). The mean over
  targets and its Monte Carlo standard error ``sd/√n`` over the sampled targets.
- **Swapping, then the cell key method** (``cell_key=`` a p-table): the
  count of c is released as the swapped count plus the cell key noise of
  :class:`adversary.swapping.cell_key.CellKeyMethod` — 0 for a count of 0,
  the p-table conditioned on ``z ≥ −n`` for a count ``0 < n < E``, the
  p-table itself from ``E`` on — drawn at a cell key the adversary does not
  know (uniform, independent of the swaps): each hypothesis's release pmf is
  the swapped count's (C's convolution) times that transition matrix
  (:func:`cell_key_transition`), and the measures (3.3)–(3.6) are the same
  exact sums over the longer release grid.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._validation import scalar_integer
from ...budget import as_allocation
from ...measures.decision import DEFAULT_TIE_RULE
from ...noise import CellKeyNoise
from ...scenarios import single_block
from ...scenarios.reconstruction import REDUCED
from ...scenarios.swapping import single_block as swapping
from ...scenarios.swapping.block import Composition
from ...swapping import target_blocks
from ..reconstruction_study import block_cells
from .errors import mean_and_se

__all__ = [
    "MEASURES",
    "cell_key_transition",
    "dp_single_block",
    "swap_single_block",
    "unique_targets",
]

#: The measures reported: name → (what, prior).
MEASURES = {
    "risk_p10": ("marginal_risk", 0.1),
    "risk_p50": ("marginal_risk", 0.02),
    "correct_p2": ("correct_decision_probability", 0.5),
}


def dp_single_block(budget="pl94-2020-persons", *, scale: float = 1.0) -> dict:
    """``{measure: value}`` (:data:`MEASURES`) at the block's detailed ρ of ``budget``
    times ``scale`` (DAS convention), exact."""
    rho = float(as_allocation(budget, "budget").rho("block", "detailed")) * float(scale)
    out = {}
    for name, (what, prior) in MEASURES.items():
        if what == "marginal_risk":
            value = single_block.marginal_risk(prior, rho=rho, convention="das")
        else:
            value = single_block.correct_decision_probability(prior, rho=rho, convention="das")
        out[name] = float(value)
    return out


def unique_targets(
    persons: pd.DataFrame, n: int, *, within: str = "county", seed: int = 0
) -> list[dict]:
    """``n`` targets drawn without replacement (all if fewer) among the household persons
    unique in their block on the 56 cells: per target ``block``, ``households`` (tuple of
    tuples of cells), ``target`` ``(household, member)``, ``cell``, ``alternative`` and
    ``area_counts`` (the 56-cell counts of the ``within`` area), module docstring."""
    n = scalar_integer(n, "n", 1)
    missing = [c for c in ("block", "tract", within, "household") if c not in persons.columns]
    if missing:
        raise ValueError(f"persons: columns {missing} are missing (within={within!r})")
    cells = block_cells(persons, REDUCED)
    frame = pd.DataFrame(
        {
            "block": persons["block"].to_numpy(),
            "tract": persons["tract"].to_numpy(),
            "area": persons[within].to_numpy(),
            "household": persons["household"].to_numpy(),
            "voting_age": persons["voting_age"].to_numpy(),
            "cell": cells,
        }
    )
    members = frame[frame["household"] >= 0]
    in_block = members.groupby(["block", "cell"])["cell"].transform("size")
    unique = np.flatnonzero((in_block == 1).to_numpy())
    rng = np.random.default_rng([seed, 5])
    chosen = np.sort(rng.choice(unique.size, size=min(n, unique.size), replace=False))
    picked = members.iloc[unique[chosen]]
    record_ids = persons["record_id"].to_numpy()[picked.index]
    found = target_blocks(persons, cells, record_ids, REDUCED.n_cells)
    targets = []
    for row, (block, households, target, _) in zip(picked.itertuples(), found, strict=True):
        same_age = members[
            (members["tract"] == row.tract) & (members["voting_age"] == row.voting_age)
        ]
        counts = np.bincount(same_age["cell"], minlength=REDUCED.n_cells)
        counts[row.cell] = -1
        area = members[members["area"] == row.area]
        targets.append(
            {
                "block": int(block),
                "households": households,
                "target": target,
                "cell": int(row.cell),
                "alternative": int(np.argmax(counts)),
                "area_counts": np.bincount(area["cell"], minlength=REDUCED.n_cells),
            }
        )
    return targets


def cell_key_transition(max_count: int, noise: CellKeyNoise) -> np.ndarray:
    """``T[n, y] = P[released y | count n]`` of the cell key method for counts ``0..max_count``
    and releases ``0..max_count + E`` (module docstring): row 0 is ``δ_0``, row ``n`` the
    p-table ``noise`` conditioned on ``z ≥ −n``."""
    if not isinstance(noise, CellKeyNoise):
        raise TypeError(f"cell_key must be a CellKeyNoise (the p-table), got {noise!r}")
    max_count = scalar_integer(max_count, "max_count", 0)
    bound = noise.bound
    z = np.arange(-bound, bound + 1)
    pmf = noise.pmf(z)
    out = np.zeros((max_count + 1, max_count + bound + 1))
    out[0, 0] = 1.0
    for n in range(1, max_count + 1):
        kept = np.where(z >= -n, pmf, 0.0)
        out[n, n + z[z >= -n]] = kept[z >= -n] / kept.sum()
    return out


def _target_measures(target: dict, law, composition, cell_key) -> dict:
    """``{measure: value}`` of one target: C's hypotheses built once, the sums (3.3)/(3.6)
    for each prior (as :func:`adversary.scenarios.swapping.single_block.marginal_measures`)."""
    attack = swapping.hypotheses(
        target["households"],
        target["target"],
        target["cell"],
        target["alternative"],
        law,
        composition,
    )
    if cell_key is not None:
        grid = attack.likelihoods.shape[1]
        attack = dataclasses.replace(
            attack, likelihoods=attack.likelihoods @ cell_key_transition(grid - 1, cell_key)
        )
    out = {}
    for name, (what, prior) in MEASURES.items():
        # hypotheses (alternative, c); the truth is c
        measures = attack.marginal_measures(np.array([1.0 - prior, prior]), 1, DEFAULT_TIE_RULE)
        out[name] = getattr(measures, what)
    return out


def swap_single_block(targets: list[dict], law, *, cell_key: CellKeyNoise | None = None) -> dict:
    """``{measure: mean, measure_se: SE}`` over ``targets`` (:func:`unique_targets`) of the
    exact measures under the swap ``law`` (:mod:`adversary.scenarios.swapping.laws`), with
    the cell key method's p-table ``cell_key`` on the swapped count if given."""
    if not targets:
        raise ValueError("targets: no unique target to measure")
    values = {name: [] for name in MEASURES}
    for t in targets:
        composition = Composition.from_counts(t["area_counts"])
        for name, value in _target_measures(t, law, composition, cell_key).items():
            values[name].append(value)
    out = {}
    for name, sample in values.items():
        out[name], out[f"{name}_se"] = mean_and_se(sample)
    return out
