"""The population assessment on Dask: partitions of whole counties (or tracts).

:func:`assess` runs four phases on a Dask cluster — a local one started for
the run (no set-up: one worker process per core, bound to 127.0.0.1, its
scratch space in the build tree), or an existing one given its scheduler
address (:mod:`.cluster`):

1. **Partitions.** The units of the partition level (county by default, or
   tract) are sorted and cut into contiguous groups of about equal persons.
   A data table is checked (:func:`~adversary.population.schema.validate`)
   on the client *before anything runs or is written* and its partitions are
   scattered to the workers; a synthetic population is generated on the
   workers, county by county, from the seeded skeleton (:mod:`.sources`).
2. **Counts.** Each partition counts the persons of every cell at the levels
   it holds whole; the counts at the levels above it (the state, for county
   partitions) are summed over partitions on the client and sent back. Each
   partition then keeps its records in small cells with their counts and
   parameter tuples (:mod:`.phases`, :mod:`.partition`).
3. **Measures.** The distinct parameter tuples of all partitions are merged
   and each is computed once, for every budget and prior, in tasks spread
   over the workers (:mod:`.measure_tasks`, :mod:`.measures`).
4. **Join and summary.** Each partition joins the measures to its records
   and counts the persons above each threshold; the client writes the
   per-record table partition by partition in ``(county, record_id)`` order
   and adds up the summaries (:mod:`.summaries`, :mod:`.output`).

Each number depends only on its record's own data and the parameters, never
on the grouping of units or the number of workers: counts are integers,
every measure comes from one call per tuple and prior with BLAS on one thread
(:mod:`.measures`), and the outputs are written in a fixed order. A progress
bar on stderr shows each phase (:mod:`.progress`).
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import pandas as pd

from .._output import checked_folder, staged
from .cluster import cluster_client, scatter, worker_count
from .measure_tasks import gathered_tables, merge_tuples, submit_measures
from .model import LEVELS, PopulationModel
from .phases import Phases, assign_partitions, sum_upper
from .progress import PhaseProgress, wait_for
from .sources import described, source_of
from .summaries import collect, parameter_table, summary_table

__all__ = ["PARTITION_LEVELS", "PopulationResult", "assess"]

PARTITION_LEVELS = ("county", "tract")
#: Persons per partition aimed at when the number of partitions is not given.
PERSONS_PER_PARTITION = 250_000
#: Joins submitted ahead of the client's writing, per worker.
JOIN_WINDOW_PER_WORKER = 2


@dataclass
class PopulationResult:
    """What :func:`assess` found.

    ``records``: the per-record table (only when no ``out`` folder is
    written; else ``None``, read ``out/records.parquet``); ``summary``:
    persons above each threshold by attack, budget, prior and block size
    (``block_size_bin`` ``"all"`` for the total); ``by_county``: the same by
    county (counties with someone above only); ``parameters``: every
    distinct parameter tuple with its measures and the persons who have it;
    ``stats``: sizes and counts of the run; ``timings``: seconds per phase;
    ``files``: paths written; ``data``: what was assessed, to run it again (the
    synthetic population's persons, states and seed, or the table's path).
    """

    summary: pd.DataFrame
    by_county: pd.DataFrame
    parameters: pd.DataFrame
    stats: dict
    timings: dict
    records: pd.DataFrame | None = None
    files: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)


def assess(
    data,
    model: PopulationModel,
    out=None,
    *,
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    partitions: int | None = None,
    partition_level: str = "county",
    progress: bool = False,
    local_directory=None,
    plots: bool = True,
) -> PopulationResult:
    """Assess every small-cell record of ``data`` under ``model`` (module docstring).

    ``data``: a path to a Parquet or CSV table, a DataFrame (schema in
    :mod:`.schema`), or a :class:`~adversary.population.synthetic.Geography`
    (persons generated on the workers). ``out``: folder for ``records.parquet``
    (one row per assessed record or cell), ``parameters.parquet``,
    ``summary.csv``, ``summary_by_county.csv``, ``summary.json`` and
    ``plots/`` (an old ``plots/`` is removed when ``plots`` is false); ``out`` is
    checked before any work, and all is written to a staging folder beside it
    and moved in only when the run has succeeded. ``client`` / ``scheduler``: an
    existing Dask client or scheduler address; otherwise a local cluster of ``workers``
    processes (default one per core). ``partitions``: number of partitions
    (default ``max(2 × workers, persons / 250 000)``, at most one per unit).
    """
    if partition_level not in PARTITION_LEVELS:
        raise ValueError(
            f"partition_level must be one of {PARTITION_LEVELS}, got {partition_level!r}"
        )
    if partitions is not None and (isinstance(partitions, bool) or int(partitions) < 1):
        raise ValueError(f"partitions must be an integer >= 1, got {partitions!r}")
    timings: dict[str, float] = {}
    start = time.perf_counter()
    out = None if out is None else checked_folder(out, "out")
    source = source_of(data, model)
    timings["load_and_validate"] = time.perf_counter() - start

    with cluster_client(client, scheduler, workers, local_directory) as dask_client:
        n_workers = worker_count(dask_client)
        units = source.units(partition_level)
        if partitions is None:
            partitions = max(2 * n_workers, math.ceil(source.persons / PERSONS_PER_PARTITION))
        assignment = assign_partitions(units, min(int(partitions), len(units)))
        n_partitions = int(assignment["partition"].max()) + 1

        t = time.perf_counter()
        upper_levels = [lv for lv in LEVELS if LEVELS.index(lv) > LEVELS.index(partition_level)]
        chars = list(model.characteristics)
        persons = assignment.groupby("partition", sort=True)["persons"].sum().to_numpy()
        phases = Phases(dask_client, source, partition_level, assignment, model)
        upper_f = phases.upper(chars, upper_levels)
        wait_for(upper_f, "counting cells", progress, persons, "records")
        upper = sum_upper(dask_client.gather(upper_f), chars, upper_levels)
        del upper_f
        [upper_shared] = scatter(dask_client, [upper], broadcast=True)
        tuples_f = phases.tuples(upper_shared)
        wait_for(tuples_f, "finding small cells", progress, persons, "records")
        counted = dask_client.gather(tuples_f)
        del tuples_f
        timings["counts"] = time.perf_counter() - t

        t = time.perf_counter()
        tuples = {
            name: merge_tuples([c["tuples"][name] for c in counted], name)
            for name in ("block_group", "multi_level")
        }
        bins = (
            pd.concat([c["bins"] for c in counted])
            .groupby("block_size_bin", observed=False, sort=True)[["persons", "persons_assessed"]]
            .sum()
        )
        measure_f = submit_measures(dask_client, model, tuples)
        measure_tasks = [task for tasks in measure_f.values() for task in tasks]
        wait_for(
            [future for future, _ in measure_tasks],
            "computing distinct tuples",
            progress,
            [size for _, size in measure_tasks],
            "tuples",
        )
        tables = gathered_tables(dask_client, measure_f, model)
        del measure_f
        timings["measures"] = time.perf_counter() - t

        t = time.perf_counter()
        [tables_shared] = scatter(dask_client, [tables], broadcast=True)
        finishing = phases.finish(upper_shared, tables_shared)
        joining = PhaseProgress(
            "joining and summarising", progress, int(persons.sum()), "records", n_partitions
        )
        with (
            nullcontext() if out is None else staged(out, "out", ("plots",)) as staging,
            joining as bar,
        ):
            window = JOIN_WINDOW_PER_WORKER * n_workers
            records, by_bin, by_county = collect(finishing, n_partitions, window, staging, bar)
            del phases, finishing
            timings["join_and_write"] = time.perf_counter() - t
            summary = summary_table(by_bin, bins, model)
            by_county = (
                pd.concat(by_county, ignore_index=True)
                .groupby(
                    ["county", "attack", "budget", "prior", "measure", "threshold"], sort=True
                )["persons_above"]
                .sum()
                .reset_index()
            )
            parameters = parameter_table(tables, tuples, model, int(bins["persons_assessed"].sum()))
            timings["total"] = time.perf_counter() - start
            stats = {
                "persons": source.persons,
                "rows": source.rows,
                "persons_assessed": int(bins["persons_assessed"].sum()),
                "records_assessed": int(records if isinstance(records, int) else len(records)),
                "distinct_tuples": {
                    attack: int(len(tables[attack]) // (len(model.budgets) * len(model.priors)))
                    for attack in model.attacks
                },
                "partitions": n_partitions,
                "partition_level": partition_level,
                "workers": n_workers,
                "units": source.unit_counts(),
            }
            result = PopulationResult(
                summary=summary,
                by_county=by_county,
                parameters=parameters,
                stats=stats,
                timings=timings,
                records=None if staging is not None else records,
                data=described(data),
            )
            if staging is not None:
                from .output import write_outputs

                result.files = write_outputs(staging, out, result, model, plots)
    return result
