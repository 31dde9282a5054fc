"""Reconstruction by block size: synthetic blocks, their PL 94-171 tables, the Bayesian adversary.

The 2018 reconstruction of the 2010 Census (JASON 2022, Sec. 4.2) matched
46.48 % of records exactly, with no noise; JASON's Table 8-11 bins blocks by
size (< 10, 10–49, 50–99, 100–249, ≥ 250 persons). This study asks the same of
the 2020 release: for blocks sampled in each bin from a synthetic population
(:mod:`adversary.population.synthetic`), the ten PL 94-171 tables of the block
are released with discrete Gaussian noise at the budget's block-level ρ (times
a scale: ×1 the 2020 budget, ×4, ×16), and the adversary — who knows the
block's size and takes as prior the cell shares of the block's tract —
reconstructs the block's histogram (:mod:`adversary.scenarios.reconstruction`).

Per block and setting, one release drawn from the truth, and:

- ``overlap_share`` — the expected share of the block's records in a
  reconstruction drawn from the posterior that are true records
  (``E[Σ_k min(h_k, t_k)] / n``, comparable with the 46 % of 2010);
- ``p_true_histogram`` — the posterior probability of the exact histogram
  (the whole block rebuilt);

each beside the prior alone (``baseline_*``, exact, closed form). The
posterior is sampled (:func:`~adversary.scenarios.reconstruction.sampled_posterior`,
the persons' exact Gibbs chain). **No noise**: the detailed query gives every
cell's count, so the only histogram consistent with exact tables is the
truth — both measures are 1 (:func:`noiseless_share`; refused for queries that
do not identify every cell). The averages over a bin's blocks are averages
over blocks *and* releases (the data holder's view), with standard errors
over blocks that include each block's Monte Carlo error.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..population.synthetic import BLOCK_SIZE_BINS, block_size_bin
from ..scenarios.reconstruction import (
    REDUCED,
    Classification,
    ReconstructionCase,
    pl94_queries,
    posterior_measures,
    prior_measures,
    sampled_posterior,
)
from ..scenarios.reconstruction.simulate import drawn_releases

__all__ = [
    "JASON_2010_EXACT_SHARE",
    "block_cells",
    "noiseless_share",
    "reconstruction_by_block_size",
    "sampled_blocks",
    "summary_by_bin",
]

#: JASON (2022) Sec. 4.2: share of 2010 records the 2018 reconstruction matched exactly.
JASON_2010_EXACT_SHARE = 0.4648
_MEASURES = ("overlap_share", "p_true_histogram")
_SINGLE_RACE_MASKS = {1 << b: b for b in range(6)}


def block_cells(persons: pd.DataFrame, classification: Classification = REDUCED) -> np.ndarray:
    """Each person's cell on ``classification`` (``REDUCED`` or ``DETAILED``).

    The synthetic ``race`` code is the OMB bit mask minus one; on a
    classification with 7 races the six single races keep their bit's index
    and every combination is "two or more" (6). ``hhgq`` with 2 levels is
    household (0) or any group quarters (1).
    """
    sizes = dict(classification.attributes)
    missing = [a for a in classification.names if a not in persons.columns]
    if missing:
        raise ValueError(f"persons: columns {missing} are missing")
    columns = []
    for name in classification.names:
        values = persons[name].to_numpy().astype(np.int64)
        if name == "race" and sizes[name] == 7:
            values = np.array([_SINGLE_RACE_MASKS.get(int(c) + 1, 6) for c in values])
        elif name == "hhgq" and sizes[name] == 2:
            values = (values > 0).astype(np.int64)
        if values.min() < 0 or values.max() >= sizes[name]:
            raise ValueError(f"persons: {name} outside 0..{sizes[name] - 1}")
        columns.append(values)
    return np.ravel_multi_index(tuple(columns), classification.sizes)


def sampled_blocks(persons: pd.DataFrame, per_bin: int, seed) -> pd.DataFrame:
    """``per_bin`` blocks drawn without replacement from each size bin (all if fewer).

    Columns ``block``, ``tract``, ``n`` (persons) and ``bin`` (Table 8-11's),
    and ``in_bin`` (the bin's number of blocks, for the sampling fraction).
    """
    if isinstance(per_bin, bool) or not isinstance(per_bin, int) or per_bin < 2:
        raise ValueError(
            f"per_bin must be an integer >= 2 (a standard error needs two), got {per_bin!r}"
        )
    blocks = persons.groupby("block").agg(tract=("tract", "first"), n=("block", "size"))
    blocks = blocks.reset_index()
    blocks["bin"] = block_size_bin(blocks["n"])
    rng = np.random.default_rng(seed)
    chosen = []
    for name in BLOCK_SIZE_BINS:
        members = blocks[blocks["bin"] == name]
        take = rng.choice(len(members), size=min(per_bin, len(members)), replace=False)
        chosen.append(members.iloc[np.sort(take)].assign(in_bin=len(members)))
    return pd.concat(chosen, ignore_index=True)


def noiseless_share(case: ReconstructionCase) -> float:
    """The no-noise limit: 1 when exact tables identify every cell (a query per cell)."""
    singletons = {q[0] for q in case.queries if len(q) == 1}
    if len(singletons) != case.n_cells:
        raise ValueError(
            "queries: the no-noise limit is computed only when every cell is its own query"
        )
    return 1.0


def reconstruction_by_block_size(
    persons: pd.DataFrame,
    *,
    per_bin: int = 8,
    scales=(1.0, 4.0, 16.0, math.inf),
    conventions=("paper", "das"),
    budget: str = "pl94-2020-persons",
    classification: Classification = REDUCED,
    draws: int = 1000,
    tune: int = 200,
    chains: int = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per sampled block, convention and scale (module docstring).

    ``scales`` multiply every query's ρ; ``math.inf`` is the no-noise limit.
    Columns: ``block``, ``bin``, ``n``, ``convention``, ``scale``, the measures,
    their Monte Carlo standard errors (``*_mcse``, 0 where exact or every draw
    alike) and ``baseline_*``.
    """
    blocks = sampled_blocks(persons, per_bin, seed)
    cells = block_cells(persons, classification)
    k = classification.n_cells
    tract_shares = {
        tract: np.bincount(cells[index], minlength=k) / len(index)
        for tract, index in persons.groupby("tract").indices.items()
    }
    block_of = persons.groupby("block").indices
    rows = []
    for b, block in enumerate(blocks.itertuples()):
        truth = np.bincount(cells[block_of[block.block]], minlength=k)
        base = _case(classification, block, truth, tract_shares[block.tract], budget, 1.0, "paper")
        baseline = prior_measures(base)
        for c, convention in enumerate(conventions):
            for s, scale in enumerate(scales):
                rng = np.random.default_rng([seed, b, c, s])
                row = {"block": block.block, "bin": block.bin, "n": block.n}
                row |= {"convention": convention, "scale": scale}
                if math.isinf(scale):
                    share = noiseless_share(base)
                    row |= {m: share for m in _MEASURES} | {f"{m}_mcse": 0.0 for m in _MEASURES}
                else:
                    case = base.replace(
                        rhos=_rhos(classification, budget, scale), convention=convention
                    )
                    releases = drawn_releases(case, truth, rng)
                    posterior = sampled_posterior(
                        case,
                        releases,
                        draws=draws,
                        tune=tune,
                        chains=chains,
                        random_seed=int(rng.integers(2**31)),
                    )
                    measured = posterior_measures(posterior, truth)
                    for m in _MEASURES:
                        row[m] = getattr(measured, m)
                        row[f"{m}_mcse"] = measured.standard_errors[m] or 0.0
                row |= {f"baseline_{m}": getattr(baseline, m) for m in _MEASURES}
                rows.append(row)
    out = pd.DataFrame(rows)
    out["bin"] = pd.Categorical(out["bin"], categories=list(BLOCK_SIZE_BINS), ordered=True)
    return out


def _rhos(classification, budget, scale):
    return pl94_queries(classification, budget=budget, scale=scale)[1]


def _case(classification, block, truth, prior, budget, scale, convention) -> ReconstructionCase:
    queries, rhos, labels = pl94_queries(classification, budget=budget, scale=scale)
    return ReconstructionCase(
        name=f"block {block.block}",
        n=int(block.n),
        cells=classification.cell_labels(),
        prior=tuple(prior),
        queries=queries,
        rhos=rhos,
        query_labels=labels,
        convention=convention,
        truth=tuple(int(x) for x in truth),
    )


def summary_by_bin(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over each bin's blocks, per convention and scale.

    The standard error is the blocks' standard deviation over √(blocks): it
    includes the spread of blocks and releases and each block's Monte Carlo
    error. Columns ``<measure>``, ``<measure>_se`` and the same for
    ``baseline_<measure>``; index ``(convention, scale, bin)``.
    """
    keys = ["convention", "scale", "bin"]
    values = [*_MEASURES, *(f"baseline_{m}" for m in _MEASURES)]
    grouped = rows.groupby(keys, observed=True)[values]
    mean = grouped.mean()
    error = grouped.std(ddof=1) / np.sqrt(grouped.count())
    out = mean.join(error.add_suffix("_se"))
    out["blocks"] = grouped.size()
    return out[[c for v in values for c in (v, f"{v}_se")] + ["blocks"]]
