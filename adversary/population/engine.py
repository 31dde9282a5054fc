"""The population assessment on Dask: partitions of whole counties (or tracts).

:func:`assess` runs four phases on a Dask cluster — a local one started for
the run (no set-up: one worker process per core, bound to 127.0.0.1, its
scratch space in the build tree), or an existing one given its scheduler
address:

1. **Partitions.** The units of the partition level (county by default, or
   tract) are sorted and cut into contiguous groups of about equal persons.
   A data table is checked (:func:`~adversary.population.schema.validate`)
   on the client *before anything runs or is written* and its partitions are
   scattered to the workers; a synthetic population is generated on the
   workers, county by county, from the seeded skeleton.
2. **Counts.** Each partition counts the persons of every cell at the levels
   it holds whole; the counts at the levels above it (the state, for county
   partitions) are summed over partitions on the client and sent back. Each
   partition then keeps its records in small cells with their counts and
   parameter tuples (:mod:`.partition`).
3. **Measures.** The distinct parameter tuples of all partitions are merged
   and each is computed once, for every budget and prior, in tasks spread
   over the workers (:mod:`.measures`).
4. **Join and summary.** Each partition joins the measures to its records
   and counts the persons above each threshold; the client writes the
   per-record table partition by partition in ``(county, record_id)`` order
   and adds up the summaries.

Each number depends only on its record's own data and the parameters, never
on the grouping of units or the number of workers: counts are integers,
every measure comes from one call per tuple and prior with BLAS on one thread
(:mod:`.measures`), and the outputs are written in a fixed order. A progress
bar (Dask's text bar, on stderr) shows each phase.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._output import checked_folder, progress_bar, staged
from ..memory import current_budget, within_budget
from .measures import (
    BLOCK_GROUP_KEY,
    block_group_batch,
    block_group_by_d,
    multi_level_measures,
    single_block_measures,
)
from .model import LEVELS, PopulationModel
from .partition import assessed_records, cell_counts, finish, parameter_tuples
from .schema import COUNT, GEOGRAPHY, RECORD_ID, PopulationInputError, read_table, validate
from .synthetic import BLOCK_SIZE_BINS, Geography, synthetic_persons

__all__ = [
    "PARTITION_LEVELS",
    "PopulationResult",
    "assess",
    "default_local_directory",
    "local_cluster",
]

PARTITION_LEVELS = ("county", "tract")
#: Persons per partition aimed at when the number of partitions is not given.
PERSONS_PER_PARTITION = 250_000
#: Block-group parameter tuples per measure task.
TUPLES_PER_TASK = 16
#: Joins submitted ahead of the client's writing, per worker.
JOIN_WINDOW_PER_WORKER = 2
#: Seconds to wait for an existing Dask scheduler (``scheduler``) to answer.
SCHEDULER_TIMEOUT = 10


# --- sources ---------------------------------------------------------------------------


class _TableSource:
    """A validated table held by the client; partitions are scattered and kept on the workers."""

    regenerated = False

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def units(self, level: str) -> pd.DataFrame:
        keys = ["county"] if level == "county" else ["county", "tract"]
        return self.frame.groupby(keys, sort=True)[COUNT].sum().rename("persons").reset_index()

    def futures(self, client, level: str, assignment: pd.DataFrame) -> list:
        index = self.frame[[level]].merge(assignment[[level, "partition"]], on=level, how="left")
        groups = self.frame.groupby(index["partition"].to_numpy(), sort=True)
        frames = [part.reset_index(drop=True) for _, part in groups]
        return client.scatter(frames)

    @property
    def persons(self) -> int:
        return int(self.frame[COUNT].sum())

    def unit_counts(self) -> dict[str, int]:
        return {level: int(self.frame[level].nunique()) for level in GEOGRAPHY}

    @property
    def rows(self) -> int:
        return len(self.frame)


class _SyntheticSource:
    """A synthetic geography; each partition's persons are generated on a worker.

    ``regenerated``: a partition's persons are generated afresh in each phase
    that needs them (counts, small cells, join) and never kept, so a worker
    holds only the partitions it is working on.
    """

    regenerated = True

    def __init__(self, geography: Geography, characteristics):
        self.geography = geography
        self.characteristics = list(characteristics)
        missing = [c for c in self.characteristics if c not in _SYNTHETIC_CHARACTERISTICS]
        if missing:
            raise ValueError(
                "characteristics: a synthetic population has "
                f"{', '.join(_SYNTHETIC_CHARACTERISTICS)}; the model asks for {', '.join(missing)}"
            )

    def units(self, level: str) -> pd.DataFrame:
        keys = ["county"] if level == "county" else ["county", "tract"]
        return (
            self.geography.blocks.groupby(keys, sort=True)["size"]
            .sum()
            .rename("persons")
            .reset_index()
        )

    def recipes(self, level: str, assignment: pd.DataFrame) -> list[tuple]:
        """The arguments of :func:`_synthetic_partition` for each partition, in order."""
        every = self.geography.blocks
        blocks = every.merge(assignment[[level, "partition"]], on=level)
        first = self.geography.counties().set_index("county_index")["first_record"]
        out = []
        for _, part in blocks.groupby("partition", sort=True):
            counties = np.unique(part["county_index"])
            # Whole counties are generated (a county's persons do not depend on how it is
            # partitioned); with tracts, the partition keeps its own.
            out.append(
                (
                    every[every["county_index"].isin(counties)],
                    first.reindex(counties).to_dict(),
                    self.geography.seed,
                    self.characteristics,
                    None if level == "county" else np.unique(part["tract"]),
                )
            )
        return out

    @property
    def persons(self) -> int:
        return self.geography.persons

    def unit_counts(self) -> dict[str, int]:
        return self.geography.units()

    @property
    def rows(self) -> int:
        return self.geography.persons


_SYNTHETIC_CHARACTERISTICS = ("age", "sex", "voting_age", "hispanic", "race", "hhgq")


def _synthetic_partition(blocks, first_records, seed, characteristics, tracts):
    """The persons of a partition: its counties' (``blocks`` holds all their blocks), or of
    its ``tracts`` among them when partitioned by tract."""
    frames = []
    for county_index, first in sorted(first_records.items()):
        persons = synthetic_persons(blocks, county_index, seed, first)
        if tracts is not None:
            persons = persons[persons["tract"].isin(tracts)]
        frames.append(persons)
    frame = pd.concat(frames, ignore_index=True)
    frame[COUNT] = np.ones(len(frame), dtype=np.int64)
    return frame[[*GEOGRAPHY, *characteristics, COUNT, RECORD_ID]]


class _Phases:
    """The per-partition tasks of each phase, for a table's scattered partitions or synthetic ones.

    A table's partitions and their prepared records stay on the workers from
    the counts to the join. A synthetic partition is generated afresh in each
    phase and its prepared records are never kept.
    """

    def __init__(self, client, source, level, assignment, model):
        self.client, self.model, self.regenerated = client, model, source.regenerated
        if self.regenerated:
            recipes = source.recipes(level, assignment)
            # each partition's blocks sent to the workers once, not with every phase's tasks
            blocks = client.scatter([recipe[0] for recipe in recipes])
            self.recipes = [(b, *recipe[1:]) for b, recipe in zip(blocks, recipes, strict=True)]
        else:
            self.parts = source.futures(client, level, assignment)

    def upper(self, characteristics, levels) -> list:
        if self.regenerated:
            return self.client.map(
                _generated_upper,
                self.recipes,
                characteristics=characteristics,
                levels=levels,
                pure=False,
            )
        return self.client.map(
            _upper_counts, self.parts, characteristics=characteristics, levels=levels
        )

    def tuples(self, upper) -> list:
        if self.regenerated:
            return self.client.map(
                _generated_tuples, self.recipes, model=self.model, upper=upper, pure=False
            )
        self.prepared = self.client.map(_prepare, self.parts, model=self.model, upper=upper)
        del self.parts
        return self.client.map(_tuples, self.prepared)

    def finish(self, upper, tables):
        """A function submitting partition ``i``'s join (submitted as the client needs it)."""
        if self.regenerated:
            return lambda i: self.client.submit(
                _generated_finish, self.recipes[i], self.model, upper, tables, pure=False
            )
        return lambda i: self.client.submit(
            _finish, self.prepared[i], model=self.model, tables=tables, pure=False
        )


# --- partitions ---------------------------------------------------------------------------


def _assign(units: pd.DataFrame, partitions: int) -> pd.DataFrame:
    """Cut sorted units into ``partitions`` contiguous groups of about equal persons."""
    persons = units["persons"].to_numpy(dtype=np.float64)
    before = np.concatenate([[0.0], np.cumsum(persons)[:-1]])
    total = max(float(persons.sum()), 1.0)
    index = np.minimum((before * partitions / total).astype(np.int64), partitions - 1)
    out = units.copy()
    out["partition"] = pd.factorize(index)[0]  # renumber, dropping empty groups
    return out


def _upper_counts(frame, characteristics, levels):
    return {level: cell_counts(frame, characteristics, level) for level in levels}


def _prepare(frame, model, upper):
    records, bins = assessed_records(frame, model, upper)
    return {"records": records, "bins": bins}


def _tuples(prepared):
    return {"tuples": parameter_tuples(prepared["records"]), "bins": prepared["bins"]}


def _finish(prepared, model, tables):
    records, by_bin, by_county = finish(prepared["records"], model, tables)
    persons = int(prepared["bins"]["persons"].sum())
    return {"records": records, "by_bin": by_bin, "by_county": by_county, "persons": persons}


def _generated_upper(recipe, characteristics, levels):
    return _upper_counts(_synthetic_partition(*recipe), characteristics, levels)


def _generated_tuples(recipe, model, upper):
    return _tuples(_prepare(_synthetic_partition(*recipe), model, upper))


def _generated_finish(recipe, model, upper, tables):
    return _finish(_prepare(_synthetic_partition(*recipe), model, upper), model, tables)


# --- cluster ------------------------------------------------------------------------------


def default_local_directory() -> Path:
    """Scratch space of local clusters: ``$ADVERSARY_DASK_DIR``, else ``build/dask``.

    ``build`` is the source checkout's build tree when the package runs from
    one, else ``./build``; never the home directory.
    """
    if os.environ.get("ADVERSARY_DASK_DIR"):
        return Path(os.environ["ADVERSARY_DASK_DIR"])
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / "build" / "dask"
    return Path.cwd() / "build" / "dask"


@contextlib.contextmanager
def local_cluster(n_workers: int | None = None, local_directory: Path | None = None):
    """A Dask client on a new local cluster: ``n_workers`` processes of one thread each.

    Binds scheduler and workers to 127.0.0.1, runs no dashboard, and keeps
    its scratch space in a new folder under ``local_directory`` (default
    :func:`default_local_directory`), removed on exit.
    """
    import dask
    from distributed import Client, LocalCluster

    n_workers = os.cpu_count() or 1 if n_workers is None else int(n_workers)
    if n_workers < 1:
        raise ValueError(f"workers must be >= 1, got {n_workers}")
    base = Path(local_directory or default_local_directory())
    base.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="cluster-", dir=base)
    # Dask's default MALLOC_TRIM_THRESHOLD_ (64 KiB) turns off glibc's adaptive mmap
    # threshold: every large temporary array of the release grids is then mapped and unmapped
    # afresh (page faults cost a third of the run). Keep the one-thread BLAS settings only.
    environ = {
        key: value
        for key, value in dask.config.get("distributed.nanny.pre-spawn-environ").items()
        if not key.startswith("MALLOC_")
    }
    try:
        settings = {"temporary-directory": scratch, "distributed.nanny.pre-spawn-environ": environ}
        with dask.config.set(settings):
            with (
                LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # no dashboard; the scheduler's plain HTTP routes on 127.0.0.1, any free port
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    local_directory=scratch,
                    # a failed task reaches the caller as its exception, in one line:
                    # the workers' own "Compute Failed" tracebacks would bury it
                    silence_logs=logging.CRITICAL,
                ) as cluster,
                Client(cluster) as client,
            ):
                yield client
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _client(client, scheduler, n_workers, local_directory):
    if client is not None:
        yield client
    elif scheduler is not None:
        from distributed import Client

        try:
            connected = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError) as error:
            raise ValueError(
                f"scheduler: could not reach a Dask scheduler at {scheduler!r} within "
                f"{SCHEDULER_TIMEOUT} s ({type(error).__name__})"
            ) from None
        with connected:
            yield connected
    else:
        with local_cluster(n_workers, local_directory) as started:
            yield started


class _Progress:
    """What a phase has done, on stderr: a bar on a terminal, one line in a log.

    ``total`` ``unit`` (records, tuples) over ``tasks`` tasks. On a terminal the
    bar shows the time elapsed and an estimate of the time remaining; in a log
    the line gives the totals and, at the end, the seconds taken.
    """

    def __init__(self, label: str, enabled: bool, total: int, unit: str, tasks: int):
        self.label, self.enabled, self.total, self.unit = label, enabled, total, unit
        self.what = f"{label} ({total:,} {unit}, {tasks} tasks)"
        self.bar = self.task = None

    def __enter__(self):
        self.start = time.perf_counter()
        if not self.enabled:
            return self
        if not sys.stderr.isatty():
            print(f"{self.what} ...", end="", file=sys.stderr, flush=True)
            return self
        self.bar = progress_bar(self.unit)
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=self.total)
        return self

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, done)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.enabled and exc[0] is None:
            print(f" {time.perf_counter() - self.start:.1f} s", file=sys.stderr, flush=True)


def _wait(futures, label: str, progress: bool, sizes=None, unit: str = "tasks") -> None:
    """Wait for ``futures``, each covering ``sizes`` ``unit`` (default 1 task each)."""
    from distributed import as_completed

    sizes = [1] * len(futures) if sizes is None else [int(n) for n in sizes]
    size_of = {future.key: n for future, n in zip(futures, sizes, strict=True)}
    with _Progress(label, progress and bool(futures), sum(sizes), unit, len(futures)) as bar:
        for future in as_completed(futures):
            bar.advance(size_of[future.key])


# --- the run ------------------------------------------------------------------------------


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
    source = _source(data, model)
    timings["load_and_validate"] = time.perf_counter() - start

    with _client(client, scheduler, workers, local_directory) as dask_client:
        n_workers = len(dask_client.scheduler_info(n_workers=-1)["workers"])
        units = source.units(partition_level)
        if partitions is None:
            partitions = max(2 * n_workers, math.ceil(source.persons / PERSONS_PER_PARTITION))
        assignment = _assign(units, min(int(partitions), len(units)))
        n_partitions = int(assignment["partition"].max()) + 1

        t = time.perf_counter()
        upper_levels = [lv for lv in LEVELS if LEVELS.index(lv) > LEVELS.index(partition_level)]
        chars = list(model.characteristics)
        persons = assignment.groupby("partition", sort=True)["persons"].sum().to_numpy()
        phases = _Phases(dask_client, source, partition_level, assignment, model)
        upper_f = phases.upper(chars, upper_levels)
        _wait(upper_f, "counting cells", progress, persons, "records")
        upper = _sum_upper(dask_client.gather(upper_f), chars, upper_levels)
        del upper_f
        [upper_shared] = dask_client.scatter([upper], broadcast=True)
        tuples_f = phases.tuples(upper_shared)
        _wait(tuples_f, "finding small cells", progress, persons, "records")
        counted = dask_client.gather(tuples_f)
        del tuples_f
        timings["counts"] = time.perf_counter() - t

        t = time.perf_counter()
        tuples = {
            name: _merge_tuples([c["tuples"][name] for c in counted], name)
            for name in ("block_group", "multi_level")
        }
        bins = (
            pd.concat([c["bins"] for c in counted])
            .groupby("block_size_bin", observed=False, sort=True)[["persons", "persons_assessed"]]
            .sum()
        )
        measure_f = _submit_measures(dask_client, model, tuples)
        measure_tasks = [task for tasks in measure_f.values() for task in tasks]
        _wait(
            [future for future, _ in measure_tasks],
            "computing distinct tuples",
            progress,
            [size for _, size in measure_tasks],
            "tuples",
        )
        tables = {
            attack: pd.concat(dask_client.gather([f for f, _ in tasks]), ignore_index=True)
            for attack, tasks in measure_f.items()
        }
        if "block_group" in tables:
            tables["block_group"] = _in_key_order(tables["block_group"], model)
        del measure_f
        timings["measures"] = time.perf_counter() - t

        t = time.perf_counter()
        [tables_shared] = dask_client.scatter([tables], broadcast=True)
        finishing = phases.finish(upper_shared, tables_shared)
        joining = _Progress(
            "joining and summarising", progress, int(persons.sum()), "records", n_partitions
        )
        with (
            nullcontext() if out is None else staged(out, "out", ("plots",)) as staging,
            joining as bar,
        ):
            window = JOIN_WINDOW_PER_WORKER * n_workers
            records, by_bin, by_county = _collect(finishing, n_partitions, window, staging, bar)
            del phases, finishing
            timings["join_and_write"] = time.perf_counter() - t
            summary = _summary(by_bin, bins, model)
            by_county = (
                pd.concat(by_county, ignore_index=True)
                .groupby(
                    ["county", "attack", "budget", "prior", "measure", "threshold"], sort=True
                )["persons_above"]
                .sum()
                .reset_index()
            )
            parameters = _parameters(tables, tuples, model, int(bins["persons_assessed"].sum()))
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
                data=_described(data),
            )
            if staging is not None:
                result.files = _write(staging, out, result, model, plots)
    return result


def _described(data) -> dict:
    """What was assessed, in JSON: enough to run it again."""
    if isinstance(data, Geography):
        states = int(data.blocks["state"].nunique())
        return {"synthetic": data.persons, "states": states, "seed": data.seed}
    if isinstance(data, pd.DataFrame):
        return {"table": "DataFrame", "rows": len(data)}
    return {"path": str(data)}


def _source(data, model):
    chars = list(model.characteristics)
    if isinstance(data, Geography):
        return _SyntheticSource(data, chars)
    if isinstance(data, pd.DataFrame):
        frame = data
    else:
        frame = read_table(data, [*GEOGRAPHY, *chars, COUNT, RECORD_ID])
    source = _TableSource(validate(frame, chars))
    if source.persons == 0:
        shape = "has no rows" if source.rows == 0 else "counts no one (every count is 0)"
        raise PopulationInputError(f"data: nothing to assess: the table {shape}")
    return source


def _sum_upper(parts, chars, levels):
    return {
        level: pd.concat([p[level] for p in parts], ignore_index=True)
        .groupby([level, *chars], sort=True, observed=True, dropna=False)[COUNT]
        .sum()
        .reset_index()
        for level in levels
    }


def _merge_tuples(frames, name):
    keys = list(BLOCK_GROUP_KEY) if name == "block_group" else ["levels"]
    return (
        pd.concat(frames, ignore_index=True).groupby(keys, sort=True)["persons"].sum().reset_index()
    )


def _submit_measures(client, model, tuples) -> dict[str, list]:
    """``(future, tuples it computes)`` per task: per budget (single block), per budget and ℓ,
    per budget and d (block group; blocks alone in their block group by 16).

    Each task computes under the caller's memory budget, wherever it runs.
    """
    memory = current_budget()

    def submit(function, *args):
        return client.submit(within_budget, memory, function, *args)

    futures: dict[str, list] = {}
    for attack in model.attacks:
        futures[attack] = []
        for budget in model.budgets:
            if attack == "single_block":
                futures[attack].append((submit(single_block_measures, model, budget), 1))
            elif attack == "multi_level":
                for levels in tuples["multi_level"]["levels"]:
                    task = submit(multi_level_measures, model, budget, int(levels))
                    futures[attack].append((task, 1))
            else:
                futures[attack] += _block_group_tasks(submit, model, budget, tuples["block_group"])
    return futures


def _block_group_tasks(submit, model, budget, tuples: pd.DataFrame) -> list:
    """Blocks alone in their block group (d = 0) in batches; every other d in one task.

    ``(future, tuples)`` per task.

    Each task's rows are in key order, and the tasks in order of their first
    key's d, so :func:`_in_key_order` restores the tuples' order.
    """
    keys = tuples[list(BLOCK_GROUP_KEY)].to_numpy(np.int64)
    alone = keys[keys[:, 2] == 0]
    tasks = []
    for first in range(0, len(alone), TUPLES_PER_TASK):
        batch = alone[first : first + TUPLES_PER_TASK]
        tasks.append((submit(block_group_batch, model, budget, batch), len(batch)))
    for d in np.unique(keys[keys[:, 2] > 0, 2]):
        mine = keys[keys[:, 2] == d, :2]
        tasks.append((submit(block_group_by_d, model, budget, int(d), mine), len(mine)))
    return tasks


def _in_key_order(table: pd.DataFrame, model) -> pd.DataFrame:
    """Block-group rows by budget, key ``(x2, m, d)`` and prior, in the model's orders."""
    order = {
        "budget": table["budget"].map({b: i for i, b in enumerate(model.budgets)}),
        "prior": table["prior"].map({p: i for i, p in enumerate(model.priors)}),
    }
    keys = ["_budget", *BLOCK_GROUP_KEY, "_prior"]
    ranked = table.assign(_budget=order["budget"], _prior=order["prior"])
    return (
        ranked.sort_values(keys, kind="stable")
        .drop(columns=["_budget", "_prior"])
        .reset_index(drop=True)
    )


def _collect(submit, n_partitions: int, window: int, staging, bar):
    """Each partition's join in order: write its records (or keep them); collect summaries.

    At most ``window`` joins are submitted ahead of the one collected, so the
    workers hold a few partitions' finished records, not all of them.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, schema, kept, n_records = None, None, [], 0
    by_bin, by_county = [], []
    pending = {}
    try:
        for i in range(n_partitions):
            for ahead in range(len(pending) + i, min(n_partitions, i + window)):
                pending[ahead] = submit(ahead)
            future = pending.pop(i)
            part = future.result()
            future.release()
            bar.advance(int(part["persons"]))
            by_bin.append(part["by_bin"])
            by_county.append(part["by_county"])
            records = part["records"]
            n_records += len(records)
            if staging is None:
                kept.append(records)
                continue
            table = pa.Table.from_pandas(records, schema=schema, preserve_index=False)
            if writer is None:
                schema = table.schema
                writer = pq.ParquetWriter(staging / "records.parquet", schema)
            writer.write_table(table)
    finally:
        for future in pending.values():
            future.cancel()
        if writer is not None:
            writer.close()
    by_bin = pd.concat(by_bin, ignore_index=True)
    if staging is None:
        return pd.concat(kept, ignore_index=True), by_bin, by_county
    return n_records, by_bin, by_county


def _summary(by_bin: pd.DataFrame, bins: pd.DataFrame, model: PopulationModel) -> pd.DataFrame:
    labels = ["attack", "budget", "prior", "measure", "threshold"]
    summed = by_bin.groupby([*labels, "block_size_bin"], sort=False)["persons_above"].sum()
    summed = summed.reset_index()
    total = summed.groupby(labels, sort=False)["persons_above"].sum().reset_index()
    total["block_size_bin"] = "all"
    out = pd.concat([summed, total], ignore_index=True)
    persons = bins["persons"].to_dict()
    assessed = bins["persons_assessed"].to_dict()
    persons["all"], assessed["all"] = (
        int(bins["persons"].sum()),
        int(bins["persons_assessed"].sum()),
    )
    out["block_size_bin"] = out["block_size_bin"].astype(str)
    out["persons_assessed"] = out["block_size_bin"].map(assessed).astype(np.int64)
    out["persons"] = out["block_size_bin"].map(persons).astype(np.int64)
    out["budget_scale"] = out["budget"].map(model.budgets).astype(float)
    out["prior_value"] = out["prior"].map(model.priors).astype(float)
    order = {
        "attack": {a: i for i, a in enumerate(model.attacks)},
        "budget": {b: i for i, b in enumerate(model.budgets)},
        "prior": {p: i for i, p in enumerate(model.priors)},
        "block_size_bin": {b: i for i, b in enumerate([*BLOCK_SIZE_BINS, "all"])},
        "measure": {"marginal_risk": 0, "correct_decision_probability": 1},
    }
    sort_keys = [out[k].map(v) for k, v in order.items()]
    out = out.assign(**{f"_{k}": s for k, s in zip(order, sort_keys, strict=True)})
    out = out.sort_values(
        ["_attack", "_budget", "_prior", "_measure", "threshold", "_block_size_bin"]
    )
    columns = [
        "attack",
        "budget",
        "budget_scale",
        "prior",
        "prior_value",
        "measure",
        "threshold",
        "block_size_bin",
        "persons_above",
        "persons_assessed",
        "persons",
    ]
    out = out[columns].reset_index(drop=True)
    out["persons_above"] = out["persons_above"].astype(np.int64)
    return out


def _parameters(tables, tuples, model, assessed) -> pd.DataFrame:
    frames = []
    for attack in model.attacks:
        table = tables[attack].copy()
        if attack == "block_group":
            table = table.merge(tuples["block_group"], on=list(BLOCK_GROUP_KEY), how="left")
        elif attack == "multi_level":
            table = table.merge(tuples["multi_level"], on=["levels"], how="left")
        else:
            table["persons"] = assessed
        table.insert(0, "attack", attack)
        frames.append(table)
    out = pd.concat(frames, ignore_index=True)
    for column in (*BLOCK_GROUP_KEY, "levels"):
        if column in out:
            out[column] = out[column].astype("Int64")
    out["prior_value"] = out["prior"].map(model.priors).astype(float)
    return out


def _write(staging: Path, out: Path, result: PopulationResult, model, plots: bool) -> dict:
    import json

    from .output import save_plots, summary_json

    result.parameters.to_parquet(staging / "parameters.parquet", index=False)
    result.summary.to_csv(staging / "summary.csv", index=False)
    result.by_county.to_csv(staging / "summary_by_county.csv", index=False)
    names = ["records.parquet", "parameters.parquet", "summary.csv", "summary_by_county.csv"]
    if plots:
        (staging / "plots").mkdir()
        names += [f"plots/{p.name}" for p in save_plots(result.summary, model, staging / "plots")]
    files = {name: str(out / name) for name in [*names, "summary.json"]}
    with open(staging / "summary.json", "w") as handle:
        json.dump(summary_json(result, model, files), handle, indent=2)
    return files
