"""The swapping study's run: every assessed person's measures under each mechanism, on Dask.

For ``adversary population --synthetic PERSONS --model MODEL_FILE`` where the
model file declares ``SWAPPING`` (:class:`~.swapping.SwappingStudy`).
:func:`survey`:

1. **Households and cells.** The persons get their households
   (:func:`~adversary.swapping.assign_households`, the study's seed) and their
   ``REDUCED`` cells; the persons assessed are those in households alone (or
   with at most ``small_cell_max - 1`` others) in their block cell, sampled
   per block-size bin when the study caps them (``per_bin``; seeded by the
   bin's index, in ``record_id`` order).
2. **Mechanisms, once each.** Each mechanism swaps the population (the
   study's seed): the ``swapped`` column is each assessed person's realised
   protection, the swapped population's tables give the composition of every
   area, and the law is the mechanism's
   (:func:`~.swapping.law_and_swap`).
3. **Measures.** The assessed persons' blocks are cut into chunks (whole
   blocks, balanced by persons); one Dask task per chunk computes, for each
   person and mechanism, the two hypotheses' release pmfs once
   (:func:`adversary.scenarios.swapping.single_block.hypotheses`) and, for
   each prior, the marginal posterior (3.3), the marginal risk (3.4) and the
   probability of a correct decision (3.6) from them
   (:meth:`~adversary.scenarios.swapping.hypotheses.SwapHypotheses.marginal_measures`,
   the truth being the target's cell: the numbers of
   :func:`~adversary.scenarios.swapping.single_block.marginal_measures`).
   Nothing in a task is random, so the records do not depend on the number
   of workers or chunks.
4. **Summary** (:mod:`.swapping_summary`): by mechanism, prior and block-size bin.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._output import checked_folder, staged
from ..analyses.reconstruction_study import block_cells
from ..scenarios.reconstruction import REDUCED
from ..scenarios.swapping.block import VOTING_AGE, Composition
from ..scenarios.swapping.single_block import hypotheses
from ..swapping import assign_households, target_blocks
from .cluster import cluster_client, scatter, worker_count
from .progress import wait_for
from .schema import GEOGRAPHY
from .swapping import SwappingStudy, law_and_swap
from .swapping_summary import summary_by_bin, write_survey
from .synthetic import BLOCK_SIZE_BINS, block_size_bin

__all__ = ["SwappingSurvey", "measure_columns", "survey"]

_HOUSEHOLD_CELLS = np.flatnonzero(REDUCED.levels()[:, REDUCED.names.index("hhgq")] == 0)
# Chunks per worker: small enough to balance the blocks' unequal costs.
_CHUNKS_PER_WORKER = 4


def measure_columns(study: SwappingStudy) -> list[tuple[str, str, str]]:
    """``(mechanism, prior, measure)`` of each measure column ``MECHANISM:PRIOR:MEASURE``."""
    return [
        (mechanism, prior, measure)
        for mechanism in study.mechanisms
        for prior in study.priors
        for measure in ("marginal_risk", "p_correct")
    ]


@dataclass
class SwappingSurvey:
    """What :func:`survey` found: one row per assessed person (``records``), the
    ``summary``, ``stats``, ``timings`` (seconds per phase) and the ``files`` written."""

    records: pd.DataFrame
    summary: pd.DataFrame
    stats: dict
    timings: dict
    files: dict = field(default_factory=dict)


def _alternative(others: np.ndarray, cell: int, fallback: np.ndarray) -> int:
    """The alternative cell (:data:`~.swapping.ALTERNATIVE_RULE`): ``others`` are the
    block's other household persons' cell counts, ``fallback`` the composition area's."""
    same_age = _HOUSEHOLD_CELLS[VOTING_AGE[_HOUSEHOLD_CELLS] == VOTING_AGE[cell]]
    candidates = same_age[same_age != cell]
    for counts in (others, fallback):
        if counts[candidates].max() > 0:
            return int(candidates[np.argmax(counts[candidates])])
    return int(candidates[0])


def _assessed(persons: pd.DataFrame, study: SwappingStudy) -> pd.DataFrame:
    """The persons assessed (before sampling), in ``record_id`` order, with their block size."""
    in_cell = persons.groupby(["block", "cell"])["cell"].transform("size")
    sizes = persons.groupby("block")["cell"].transform("size")
    chosen = (persons["hhgq"].to_numpy() == 0) & (in_cell.to_numpy() <= study.small_cell_max)
    out = persons.loc[chosen].assign(block_size=sizes[chosen], cell_block=in_cell[chosen])
    out["block_size_bin"] = block_size_bin(out["block_size"].to_numpy())
    return out.sort_values("record_id", kind="stable").reset_index(drop=True)


def _sample(assessed: pd.DataFrame, study: SwappingStudy) -> pd.DataFrame:
    """At most ``per_bin`` persons per bin, seeded by the bin's index; ``weight`` = N_h / n_h."""
    parts = []
    for index, label in enumerate(BLOCK_SIZE_BINS):
        part = assessed[assessed["block_size_bin"] == label]
        if study.per_bin is not None and len(part) > study.per_bin:
            rng = np.random.default_rng([study.seed, 5, index])
            rows = np.sort(rng.choice(len(part), size=study.per_bin, replace=False))
            part = part.iloc[rows].assign(weight=len(part) / study.per_bin)
        else:
            part = part.assign(weight=1.0)
        parts.append(part)
    return pd.concat(parts).sort_values("record_id", kind="stable").reset_index(drop=True)


def _targets(persons: pd.DataFrame, sample: pd.DataFrame, area: str):
    """Each sampled person's block (tuple of households of cells), target and alternative."""
    household = persons[persons["hhgq"] == 0]
    cells = household["cell"].to_numpy()
    area_counts = {
        a: np.bincount(cells[rows], minlength=REDUCED.n_cells)
        for a, rows in household.groupby(area, sort=False).indices.items()
    }
    found = target_blocks(persons, persons["cell"].to_numpy(), sample["record_id"], REDUCED.n_cells)
    items = []
    for row, (block, households, target, counts) in zip(
        sample.itertuples(index=False), found, strict=True
    ):
        others = counts.copy()
        others[row.cell] -= 1
        alternative = _alternative(others, int(row.cell), area_counts[getattr(row, area)])
        items.append((block, households, target, int(row.cell), alternative))
    return items


def _chunks(items, sizes: np.ndarray, n_chunks: int) -> list[list[int]]:
    """Indices of ``items`` cut into at most ``n_chunks`` runs of whole blocks, balanced by
    ``sizes`` (the persons of each item's block)."""
    order = sorted(range(len(items)), key=lambda i: (items[i][0], i))
    cumulative = np.cumsum(sizes[order])
    bounds = np.searchsorted(cumulative, cumulative[-1] * np.arange(1, n_chunks) / n_chunks)
    out, start = [], 0
    for bound in [*bounds.tolist(), len(order)]:
        while 0 < bound < len(order) and items[order[bound]][0] == items[order[bound - 1]][0]:
            bound += 1  # keep a block's persons in one chunk
        if bound > start:
            out.append(order[start:bound])
            start = bound
    return out


def _measure_chunk(items, areas, mechanisms, priors, tie_rule) -> np.ndarray:
    """Measures of each item: array (items, mechanisms, priors, 2): marginal risk (3.4) and
    P[correct] (3.6); ``mechanisms``: ``(laws, compositions by area)``."""
    laws, compositions = mechanisms
    priors = np.asarray(priors, dtype=np.float64)
    out = np.empty((len(items), len(laws), priors.size, 2))
    for i, ((_, households, target, cell, alternative), area) in enumerate(
        zip(items, areas, strict=True)
    ):
        for j, (law, composition) in enumerate(zip(laws, compositions, strict=True)):
            attack = hypotheses(households, target, cell, alternative, law, composition[area])
            for k, p in enumerate(priors):
                measures = attack.marginal_measures(np.array([1.0 - p, p]), 1, tie_rule)
                out[i, j, k] = measures.marginal_risk, measures.correct_decision_probability
    return out


def _compositions(swapped: pd.DataFrame, persons: pd.DataFrame, level: str, areas) -> dict:
    """``{area: Composition}`` of ``areas`` (identifiers at ``level``) from the swapped
    population's published 56-cell table of household persons (rows as ``persons``)."""
    household = persons["hhgq"].to_numpy() == 0
    cells = persons["cell"].to_numpy()[household]
    where = swapped[level].to_numpy()[household]
    return {
        area: Composition.from_counts(np.bincount(cells[where == area], minlength=REDUCED.n_cells))
        for area in sorted(set(areas))
    }


def survey(
    persons: pd.DataFrame,
    study: SwappingStudy,
    out=None,
    *,
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
    local_directory=None,
    plots: bool = True,
) -> SwappingSurvey:
    """Assess ``persons`` (a synthetic population: module docstring) under ``study``.

    ``out``: folder for ``records.parquet`` (one row per assessed person:
    ``record_id``, geography, ``household``, ``cell``, ``alternative_cell``,
    ``cell_block``, ``block_size``, ``block_size_bin``, ``weight`` (assessed
    persons it stands for), ``MECHANISM:swapped`` and one column
    ``MECHANISM:PRIOR:MEASURE`` per mechanism, prior and measure
    (``marginal_risk``, ``p_correct``)), ``summary.csv``, ``summary.json`` and
    ``plots/``, written only when the run succeeds. ``client`` / ``scheduler`` /
    ``workers``: as for :func:`~adversary.population.engine.assess`.
    """
    timings: dict[str, float] = {}
    start = time.perf_counter()
    out = None if out is None else checked_folder(out, "out")
    persons = assign_households(persons, seed=study.seed)
    persons["cell"] = block_cells(persons, REDUCED)
    sample = _sample(_assessed(persons, study), study)
    if sample.empty:
        raise ValueError(
            f"persons: none of the {len(persons):,} lives in a household in a block cell of "
            f"at most {study.small_cell_max} (small_cell_max): nothing to assess"
        )
    items = _targets(persons, sample, study.composition)
    timings["households_and_sample"] = time.perf_counter() - start

    t = time.perf_counter()
    laws, compositions = [], []
    for label, mechanism in study.mechanisms.items():
        law, swapped = law_and_swap(mechanism, persons, study.seed)
        laws.append(law)
        compositions.append(
            _compositions(swapped, persons, study.composition, sample[study.composition])
        )
        flags = pd.Series(swapped["swapped"].to_numpy(), index=persons["record_id"])
        sample[f"{label}:swapped"] = flags.loc[sample["record_id"]].to_numpy()
    timings["mechanisms"] = time.perf_counter() - t

    t = time.perf_counter()
    areas = sample[study.composition].to_numpy()
    measures = np.empty((len(items), len(laws), len(study.priors), 2))
    with cluster_client(client, scheduler, workers, local_directory) as dask_client:
        n_workers = worker_count(dask_client)
        chunks = _chunks(items, sample["block_size"].to_numpy(), _CHUNKS_PER_WORKER * n_workers)
        [shared] = scatter(dask_client, [(laws, compositions)], broadcast=True)
        futures = [
            dask_client.submit(
                _measure_chunk,
                [items[i] for i in chunk],
                areas[chunk].tolist(),
                shared,
                list(study.priors.values()),
                study.tie_rule,
                pure=False,
            )
            for chunk in chunks
        ]
        wait_for(futures, "swapping measures", progress, [len(c) for c in chunks], "persons")
        for chunk, future in zip(chunks, futures, strict=True):
            measures[chunk] = future.result()
    timings["measures"] = time.perf_counter() - t

    for (mechanism, prior, measure), values in zip(
        measure_columns(study), measures.reshape(len(items), -1).T, strict=True
    ):
        sample[f"{mechanism}:{prior}:{measure}"] = values
    sample["alternative_cell"] = [item[4] for item in items]
    records = sample[_record_columns(sample, study)]
    sizes = persons.groupby("block")["cell"].size()
    persons_per_bin = sizes.groupby(block_size_bin(sizes.to_numpy()), observed=False).sum()
    summary = summary_by_bin(records, study, persons_per_bin)
    timings["total"] = time.perf_counter() - start
    stats = {
        "persons": len(persons),
        "households": int(persons.loc[persons["household"] >= 0, "household"].nunique()),
        "persons_assessed": round(float(sample["weight"].sum())),
        "persons_sampled": len(sample),
        "chunks": len(chunks),
        "workers": n_workers,
    }
    result = SwappingSurvey(records=records, summary=summary, stats=stats, timings=timings)
    if out is not None:
        with staged(out, "out", ("plots",)) as staging:
            result.files = write_survey(staging, out, result, study, plots)
    return result


def _record_columns(sample: pd.DataFrame, study: SwappingStudy) -> list[str]:
    head = ["record_id", *GEOGRAPHY, "household", "cell", "alternative_cell", "cell_block"]
    head += ["block_size", "block_size_bin", "weight"]
    swapped = [f"{label}:swapped" for label in study.mechanisms]
    return head + swapped + [":".join(c) for c in measure_columns(study)]
