"""Reconstruction by block size: sampled blocks, their PL 94-171 tables, the Bayesian adversary.

The 2018 reconstruction of the 2010 Census (JASON 2022, Sec. 4.2) matched
46.48 % of records exactly, with no noise; JASON's Table 8-11 bins blocks by
size (< 10, 10–49, 50–99, 100–249, ≥ 250 persons). This study asks the same of
the 2020 release. Blocks are sampled in each bin (a stratified sample without
replacement); each block's ten PL 94-171 tables are released with discrete
Gaussian noise at the budget's block-level ρ of each query times a scale (×1
the 2020 budget, ×4, ×16), and the adversary — who knows the block's size and
takes as prior the cell shares of the block's tract — reconstructs the
block's histogram (:mod:`adversary.scenarios.reconstruction`).

Per block and setting, one release drawn from the truth, and:

- ``overlap`` — the expected number of the block's records, in a
  reconstruction drawn from the posterior, that are true records
  (``E[Σ_k min(h_k, t_k)]``); over the block's ``n``, the *reconstruction
  share*, comparable with the 46 % of 2010;
- ``p_true_histogram`` — the posterior probability of the exact histogram
  (the whole block rebuilt);

each beside the prior alone (``baseline_*``, exact, closed form). The
posterior is sampled (:func:`~adversary.scenarios.reconstruction.sampled_posterior`,
the persons' exact Gibbs chain). **No noise** (scale ``inf``): the detailed
query gives every cell's count, so the only histogram consistent with exact
tables is the truth — both measures are exact (:func:`noiseless_share`;
refused for queries that do not identify every cell).

:func:`summary_by_bin` estimates, per bin and for all blocks, the share of
*records* reconstructed (a ratio estimator, blocks weighted by how many
blocks of the bin each sampled one stands for) and the mean exact-block rate,
with standard errors from the stratified sample (finite-population corrected;
they include each block's release and Monte Carlo error) and 95 % intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import scalar_integer
from ..budget import BudgetAllocation
from ..budget_files import budget_json, stored_budget
from ..population.synthetic import BLOCK_SIZE_BINS, block_size_bin
from ..scenarios.reconstruction import (
    DETAILED,
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
    "CLASSIFICATIONS",
    "JASON_2010_EXACT_SHARE",
    "ReconstructionStudy",
    "assess_block",
    "block_cells",
    "block_sizes",
    "noiseless_share",
    "reconstruction_by_block_size",
    "sampled_blocks",
    "summary_by_bin",
    "truths_and_priors",
]

#: JASON (2022) Sec. 4.2: share of 2010 records the 2018 reconstruction matched exactly.
JASON_2010_EXACT_SHARE = 0.4648
#: Cross-classifications by name.
CLASSIFICATIONS = {"reduced": REDUCED, "detailed": DETAILED}
#: Normal quantile of the two-sided 95 % intervals.
_Z95 = 1.959963984540054
#: The 7-race code of each OMB race code 0…62 (mask - 1): a single race its bit, else 6.
_REDUCED_RACE = np.array([(m.bit_length() - 1) if m & (m - 1) == 0 else 6 for m in range(1, 64)])


@dataclass(frozen=True)
class ReconstructionStudy:
    """What the study runs: the sample, the release settings and the chains.

    ``per_bin`` blocks per size bin (at least 2, for a standard error);
    ``classification`` ``"reduced"`` (56 cells) or ``"detailed"`` (2 016);
    ``budget`` a preset's name, a :class:`~adversary.budget.BudgetAllocation` or a
    budget file (stored as the preset's name or the allocation) whose block-level
    ρ per PL 94-171 query each scale of
    ``scales`` multiplies (``inf``: no noise), in each of ``conventions``;
    ``draws``, ``tune``, ``chains`` per posterior; ``seed`` for the sample and
    every release and chain. In a population model file, declare
    ``RECONSTRUCTION = ReconstructionStudy(...)`` (``models/population_reconstruction.py``).
    """

    name: str = "reconstruction by block size"
    per_bin: int = 20
    classification: str = "reduced"
    budget: str | BudgetAllocation = "pl94-2020-persons"
    scales: tuple[float, ...] = (1.0, 4.0, 16.0, math.inf)
    conventions: tuple[str, ...] = ("paper", "das")
    draws: int = 1000
    tune: int = 200
    chains: int = 2
    seed: int = 0
    description: str = ""

    def __post_init__(self):
        fields = (("per_bin", 2), ("draws", 1), ("tune", 0), ("chains", 1), ("seed", 0))
        for field_name, low in fields:
            object.__setattr__(
                self, field_name, scalar_integer(getattr(self, field_name), field_name, low)
            )
        if self.classification not in CLASSIFICATIONS:
            raise ValueError(
                f"classification must be one of {', '.join(CLASSIFICATIONS)}, "
                f"got {self.classification!r}"
            )
        try:
            scales = tuple(float(s) for s in np.atleast_1d(self.scales))
        except (TypeError, ValueError):
            scales = ()
        if not scales or any(not s > 0 for s in scales):
            raise ValueError(f"scales must be numbers > 0 (inf: no noise), got {self.scales!r}")
        object.__setattr__(self, "scales", scales)
        conventions = tuple(self.conventions)
        bad = [c for c in conventions if c not in ("paper", "das")]
        if not conventions or bad:
            raise ValueError(f"conventions must be among paper, das, got {self.conventions!r}")
        object.__setattr__(self, "conventions", conventions)
        object.__setattr__(self, "budget", stored_budget(self.budget))
        try:
            pl94_queries(self.cells, budget=self.budget)  # the budget names every query
        except ValueError as error:
            raise ValueError(f"budget: {error}") from None

    @property
    def cells(self) -> Classification:
        return CLASSIFICATIONS[self.classification]

    def describe(self) -> dict:
        """The study as plain data (JSON: ``inf`` written as ``"inf"``)."""
        return {
            "name": self.name,
            "per_bin": self.per_bin,
            "classification": self.classification,
            "cells": self.cells.n_cells,
            "budget": budget_json(self.budget),
            "scales": [s if math.isfinite(s) else "inf" for s in self.scales],
            "conventions": list(self.conventions),
            "draws": self.draws,
            "tune": self.tune,
            "chains": self.chains,
            "seed": self.seed,
        }


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
        try:
            values = persons[name].to_numpy().astype(np.int64)
        except (TypeError, ValueError):
            raise ValueError(f"persons: {name} must hold integer codes") from None
        if name == "race" and sizes[name] == 7:
            if values.size and (values.min() < 0 or values.max() >= _REDUCED_RACE.size):
                raise ValueError(f"persons: race outside 0..{_REDUCED_RACE.size - 1}")
            values = _REDUCED_RACE[values]
        elif name == "hhgq" and sizes[name] == 2:
            values = (values > 0).astype(np.int64)
        if values.size and (values.min() < 0 or values.max() >= sizes[name]):
            raise ValueError(f"persons: {name} outside 0..{sizes[name] - 1}")
        columns.append(values)
    return np.ravel_multi_index(tuple(columns), classification.sizes)


def _weights(persons: pd.DataFrame) -> np.ndarray:
    """Persons per row: the ``count`` column of a population table, else 1."""
    if "count" in persons.columns:
        return persons["count"].to_numpy(np.int64)
    return np.ones(len(persons), dtype=np.int64)


def block_sizes(persons: pd.DataFrame) -> pd.DataFrame:
    """``block``, ``tract`` and ``n`` (persons) of every block with someone in it."""
    frame = persons[["block", "tract"]].assign(n=_weights(persons))
    blocks = frame.groupby("block", sort=True).agg(tract=("tract", "first"), n=("n", "sum"))
    return blocks[blocks["n"] > 0].reset_index()


def sampled_blocks(blocks: pd.DataFrame, per_bin: int, seed) -> pd.DataFrame:
    """``per_bin`` blocks drawn without replacement from each size bin (all if fewer).

    ``blocks`` has columns ``block``, ``tract`` and ``n`` (:func:`block_sizes`,
    or a synthetic geography's blocks). Adds ``bin`` (Table 8-11's),
    ``in_bin`` (the bin's number of blocks) and ``draw`` (the position in the
    sample, which seeds the block's releases and chains).
    """
    per_bin = scalar_integer(per_bin, "per_bin", 2)  # a standard error needs two
    blocks = blocks[["block", "tract", "n"]].sort_values("block").reset_index(drop=True)
    blocks["bin"] = block_size_bin(blocks["n"])
    rng = np.random.default_rng(seed)
    chosen = []
    for name in BLOCK_SIZE_BINS:
        members = blocks[blocks["bin"] == name]
        take = rng.choice(len(members), size=min(per_bin, len(members)), replace=False)
        chosen.append(members.iloc[np.sort(take)].assign(in_bin=len(members)))
    out = pd.concat(chosen, ignore_index=True)
    out["draw"] = np.arange(len(out))
    return out


def truths_and_priors(
    persons: pd.DataFrame, blocks, classification: Classification = REDUCED
) -> dict:
    """``{block: (true histogram, tract's cell shares)}`` for ``blocks`` among ``persons``.

    ``persons`` must hold every person of the blocks' tracts: the prior is the
    tract's shares, the block included (as the tract's published tables are).
    """
    cells = block_cells(persons, classification)
    weights = _weights(persons)
    k = classification.n_cells
    out = {}
    tracts = persons.groupby("tract").indices
    rows = persons.groupby("block").indices
    for block in blocks:
        mine = rows[block]
        tract = tracts[persons["tract"].iloc[mine[0]]]
        shares = np.bincount(cells[tract], weights=weights[tract], minlength=k)
        truth = np.bincount(cells[mine], weights=weights[mine], minlength=k)
        out[block] = (truth.astype(np.int64), shares / shares.sum())
    return out


def noiseless_share(case: ReconstructionCase) -> float:
    """The no-noise limit: 1 when exact tables identify every cell (a query per cell)."""
    singletons = {q[0] for q in case.queries if len(q) == 1}
    if len(singletons) != case.n_cells:
        raise ValueError(
            "queries: the no-noise limit is computed only when every cell is its own query"
        )
    return 1.0


def assess_block(block: dict, truth, prior, study: ReconstructionStudy) -> list[dict]:
    """The rows of one block (``block``: a row of :func:`sampled_blocks`).

    One row per convention and scale: ``overlap``, ``p_true_histogram``, their
    Monte Carlo standard errors (``*_mcse``: 0 where exact or every draw
    alike) and ``baseline_*`` (the prior alone). The release and chains of
    each setting are seeded by ``(study.seed, draw, convention, scale)``
    (positions), so a block's rows do not depend on where they are computed.
    """
    truth = np.asarray(truth, dtype=np.int64)
    queries, rhos, labels = pl94_queries(study.cells, budget=study.budget)
    base = ReconstructionCase(
        name=f"block {block['block']}",
        n=int(truth.sum()),
        cells=study.cells.cell_labels(),
        prior=tuple(prior),
        queries=queries,
        rhos=rhos,
        query_labels=labels,
        truth=tuple(int(x) for x in truth),
    )
    baseline = prior_measures(base)
    keys = {name: block[name] for name in ("block", "bin", "n", "in_bin")}
    out = []
    for c, convention in enumerate(study.conventions):
        for s, scale in enumerate(study.scales):
            row = keys | {"convention": convention, "scale": scale}
            if math.isinf(scale):
                share = noiseless_share(base)
                row |= {"overlap": share * base.n, "p_true_histogram": share}
                row |= {"overlap_mcse": 0.0, "p_true_histogram_mcse": 0.0}
            else:
                rng = np.random.default_rng([study.seed, int(block["draw"]), c, s])
                scaled = pl94_queries(study.cells, budget=study.budget, scale=scale)[1]
                case = base.replace(rhos=scaled, convention=convention)
                posterior = sampled_posterior(
                    case,
                    drawn_releases(case, truth, rng),
                    draws=study.draws,
                    tune=study.tune,
                    chains=study.chains,
                    random_seed=int(rng.integers(2**31)),
                )
                measured = posterior_measures(posterior, truth)
                errors = measured.standard_errors
                row |= {
                    "overlap": measured.expected_overlap,
                    "p_true_histogram": measured.p_true_histogram,
                    "overlap_mcse": errors["expected_overlap"] or 0.0,
                    "p_true_histogram_mcse": errors["p_true_histogram"] or 0.0,
                }
            row["baseline_overlap"] = baseline.expected_overlap
            row["baseline_p_true_histogram"] = baseline.p_true_histogram
            out.append(row)
    return out


def reconstruction_by_block_size(persons: pd.DataFrame, **study) -> pd.DataFrame:
    """The study's rows for blocks sampled from ``persons``, in this process.

    ``study``: the fields of :class:`ReconstructionStudy` (or ``study=`` one).
    For a population on Dask, ``adversary population`` with a model file
    declaring ``RECONSTRUCTION`` runs the same blocks in parallel.
    """
    study = study.pop("study") if "study" in study else ReconstructionStudy(**study)
    blocks = sampled_blocks(block_sizes(persons), study.per_bin, study.seed)
    inputs = truths_and_priors(persons, blocks["block"], study.cells)
    rows = []
    for block in blocks.to_dict("records"):
        rows.extend(assess_block(block, *inputs[block["block"]], study))
    return study_frame(rows)


def study_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows as a table, ``bin`` an ordered categorical, ``overlap_share`` added."""
    out = pd.DataFrame(rows)
    out["bin"] = pd.Categorical(out["bin"], categories=list(BLOCK_SIZE_BINS), ordered=True)
    out["overlap_share"] = out["overlap"] / out["n"]
    out["baseline_overlap_share"] = out["baseline_overlap"] / out["n"]
    return out


def summary_by_bin(rows: pd.DataFrame) -> pd.DataFrame:
    """Estimates per bin and for all blocks, for each convention and scale.

    ``overlap_share``: the share of the bin's *records* reconstructed,
    ``Σ w·overlap / Σ w·n`` with ``w`` the bin's blocks over its sampled ones;
    ``p_true_histogram``: the mean over the bin's blocks. The same for the
    baseline. Each with ``_se`` (linearised, stratified, finite-population
    corrected) and ``_low``/``_high`` (95 %). Also ``blocks`` (sampled),
    ``in_bin`` (blocks in the bin), ``persons`` (persons in the sampled
    blocks) and ``census``: every block of the bin (for ``"all"``: of every
    bin) sampled, so the estimate has no sampling error — its ``_se`` is 0 and
    its interval the estimate (whatever the number of blocks, one included).
    A bin of which one block of several is sampled has no standard error:
    ``_se``, ``_low`` and ``_high`` are NaN (empty in CSV, null in JSON).
    Index ``(convention, scale, bin)`` in the rows' order of conventions and
    scales, ``bin`` ending with ``"all"``.
    """
    measures = {
        "overlap_share": ("overlap", "n"),
        "p_true_histogram": ("p_true_histogram", None),
        "baseline_overlap_share": ("baseline_overlap", "n"),
        "baseline_p_true_histogram": ("baseline_p_true_histogram", None),
    }
    records = []
    # conventions and scales in the study's order, bins in Table 8-11's
    for (convention, scale), setting in rows.groupby(["convention", "scale"], sort=False):
        bins = [(str(b), part) for b, part in setting.groupby("bin", observed=True, sort=True)]
        for label, part in [*bins, ("all", setting)]:
            record = {"convention": convention, "scale": scale, "bin": label}
            for name, (numerator, denominator) in measures.items():
                estimate, error = _ratio(part, numerator, denominator)
                record |= {name: estimate, f"{name}_se": error}
                record[f"{name}_low"] = estimate - _Z95 * error
                record[f"{name}_high"] = estimate + _Z95 * error
            record["blocks"] = len(part)
            record["in_bin"] = int(part.groupby("bin", observed=True)["in_bin"].first().sum())
            record["census"] = record["blocks"] == record["in_bin"]
            record["persons"] = int(part["n"].sum())
            records.append(record)
    return pd.DataFrame(records).set_index(["convention", "scale", "bin"])


def _ratio(part: pd.DataFrame, numerator: str, denominator: str | None) -> tuple[float, float]:
    """Stratified ratio estimate ``Σ w y / Σ w x`` (``x`` = 1 if ``None``) and its SE.

    Strata are the bins; ``w = in_bin / sampled``. The variance is the
    linearised one, ``Σ_h M_h² (1 - m_h/M_h) s²_h(u) / m_h / X²`` with
    ``u = y - R x`` (Cochran 1977, Sec. 6.11).
    """
    y = part[numerator].to_numpy(np.float64)
    x = np.ones_like(y) if denominator is None else part[denominator].to_numpy(np.float64)
    _, strata, sampled = np.unique(
        part["bin"].cat.codes.to_numpy(), return_inverse=True, return_counts=True
    )
    in_bin = part["in_bin"].to_numpy(np.float64)
    w = in_bin / sampled[strata]
    total = float(np.sum(w * x))
    ratio = float(np.sum(w * y)) / total
    u = y - ratio * x
    variance = 0.0
    for stratum, m in enumerate(sampled):
        mine = strata == stratum
        big = float(in_bin[mine][0])
        if m == big:
            continue  # a census of the stratum: no sampling error
        if m < 2:
            return ratio, math.nan  # one block of several: no standard error
        variance += big**2 * (1 - m / big) * np.var(u[mine], ddof=1) / m
    return ratio, math.sqrt(variance) / total
