"""Reconstruction of a block's 56-cell histogram by block size: DP (2020) beside swapping.

The measures are those of :mod:`adversary.analyses.reconstruction_study`:
the *reconstruction share* (of a bin's records, those a reconstruction gets
right: ``Σ_cells min(true, reconstructed) / n``, summed over the bin's
blocks) and the *exact-block rate* (the share of blocks whose whole
histogram is rebuilt), by JASON's Table 8-11 block-size bins
(:data:`adversary.topdown.bias.BLOCK_SIZE_BINS`).

- **DP** (:func:`dp_reconstruction`): the existing study (the Bayesian
  adversary's posterior given the block's noisy PL 94-171 tables at the 2020
  budget, sampled blocks, stratified standard errors), its
  ``overlap_share`` and ``p_true_histogram`` in the DAS convention.
- **Swapping** (:func:`release_reconstruction`): a swapped release publishes
  the exact counts of the swapped block, and its detailed table gives every
  cell, so an adversary who reconstructs the block's 56-cell histogram from
  it — as the DP study does from the noisy tables — gets the swapped block:
  the share of the true block's records reconstructed is
  ``Σ_cells min(true, swapped) / n`` and the block is exact when the swapped
  histogram is the true one. With the cell key method on top the
  reconstruction is the perturbed counts. Every block of the population is
  measured (no sampling error); the standard errors are over the swap seeds
  (each seed's bin estimate an independent replicate).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import scalar_integer
from ...topdown.bias import BLOCK_SIZE_BINS, block_size_bin
from ..reconstruction_study import reconstruction_by_block_size, summary_by_bin
from .errors import mean_and_se
from .swap_accuracy import released_tables, with_rate

__all__ = ["dp_reconstruction", "release_reconstruction", "swap_reconstruction"]

#: The bins of the summaries, every block last.
BINS = (*BLOCK_SIZE_BINS, "all")


def release_reconstruction(true, released) -> pd.DataFrame:
    """Per bin (and ``"all"``): ``overlap_share`` (``Σ min(true, released) / Σ n`` over the
    bin's blocks) and ``exact_block`` (share of blocks with ``released == true``), ``blocks``
    and ``persons``. ``true`` and ``released`` are blocks × cells counts; empty blocks are
    left out."""
    true = np.asarray(true)
    released = np.asarray(released)
    if true.shape != released.shape or true.ndim != 2:
        raise ValueError(f"released must be blocks × cells like true {true.shape}")
    n = true.sum(axis=1)
    keep = n > 0
    true, released, n = true[keep], released[keep], n[keep]
    overlap = np.minimum(true, released).sum(axis=1)
    exact = np.all(true == released, axis=1)
    bins = np.asarray(block_size_bin(n)).astype(object)
    rows = []
    for name in BINS:
        mine = np.ones(n.size, bool) if name == "all" else bins == name
        rows.append(
            {
                "bin": name,
                "overlap_share": overlap[mine].sum() / n[mine].sum() if mine.any() else np.nan,
                "exact_block": exact[mine].mean() if mine.any() else np.nan,
                "blocks": int(mine.sum()),
                "persons": int(n[mine].sum()),
            }
        )
    return pd.DataFrame(rows).set_index("bin")


def swap_reconstruction(
    persons: pd.DataFrame, mechanism, rate: float, *, seeds: int = 4, seed: int = 0
) -> pd.DataFrame:
    """Per bin: :func:`release_reconstruction` of the released block tables of ``mechanism``
    at ``rate`` (:func:`~.swap_accuracy.released_tables`), the mean over ``seeds`` releases
    (``seed``, ``seed + 1``, …) and its standard error (``_se``)."""
    seeds = scalar_integer(seeds, "seeds", 2)
    seed = scalar_integer(seed, "seed", 0)
    at_rate = with_rate(mechanism, rate)
    replicates = []
    for s in range(seed, seed + seeds):
        truth, released, _ = released_tables(persons, at_rate, seed=s)
        replicates.append(
            release_reconstruction(
                truth["block"]["counts"].values, released["block"]["counts"].values
            )
        )
    first = replicates[0]
    out = first[["blocks", "persons"]].copy()
    for name in ("overlap_share", "exact_block"):
        stats = [mean_and_se([r.loc[b, name] for r in replicates]) for b in first.index]
        out[name] = [m for m, _ in stats]
        out[f"{name}_se"] = [e for _, e in stats]
    return out


def dp_reconstruction(persons: pd.DataFrame, *, scale: float = 1.0, **study) -> pd.DataFrame:
    """Per bin: the DP study's ``overlap_share`` and ``p_true_histogram`` (as
    ``exact_block``) with their standard errors, ``blocks`` and ``persons`` (sampled), at
    every ρ of the study's budget times ``scale``, DAS convention; ``study``: the other fields of
    :class:`~adversary.analyses.reconstruction_study.ReconstructionStudy`."""
    rows = reconstruction_by_block_size(persons, scales=(scale,), conventions=("das",), **study)
    summary = summary_by_bin(rows).loc[("das", float(scale))]
    out = summary[["overlap_share", "overlap_share_se", "p_true_histogram"]].copy()
    out["exact_block"] = out.pop("p_true_histogram")
    out["exact_block_se"] = summary["p_true_histogram_se"]
    out["blocks"] = summary["blocks"]
    out["persons"] = summary["persons"]
    return out
