"""``adversary population``: every person at risk in a geography, on a Dask cluster.

Reads a table of records or cell counts (DATA, Parquet or CSV; schema in
``adversary.population.schema``) or generates a seeded synthetic state of
PERSONS people shaped like the 2020 Census (``--synthetic``), finds everyone
in a cell of at most ``small_cell_max`` people in their block (the unique,
by default), and computes each attack's marginal risk (3.4) and probability
of a correct decision (3.6) for every budget and prior of the population
model file (``--model``: a file declaring ``POPULATION``, e.g. the shipped
``population_gvhr``), each distinct parameter tuple once. Runs on a local
Dask cluster (one worker per core, or ``--workers``) unless ``--scheduler``
names an existing one; input is checked before anything runs, and nothing is
written unless the run succeeds. A progress bar goes to stderr.
``--budget FILE|PRESET`` replaces the model's budget (each budget scale
multiplies that allocation's ρ); ``model.preset`` in the JSON is then the
preset's name or the allocation itself (exact fraction strings).

Writes into ``--out`` (required: nothing is written anywhere else, and a
second run into the same folder is refused while the first runs): ``records.parquet``
(one row per assessed record or cell: ``record_id``, geography,
characteristics, ``persons``, ``block_size``, ``block_size_bin``, the cell's
count at each level ``cell_block`` … ``cell_state``, ``other_blocks`` (d),
``known_count`` (m), ``levels`` (ℓ), and one column
``ATTACK:BUDGET:PRIOR:MEASURE`` per attack, budget, prior and measure),
``parameters.parquet`` (each distinct tuple, its measures and persons),
``summary.csv`` (persons above each threshold by attack, budget, prior and
block size), ``summary_by_county.csv``, ``summary.json`` and ``plots/``.

**Reconstruction.** A model file declaring ``RECONSTRUCTION`` (a
``ReconstructionStudy``, e.g. the shipped ``population_reconstruction``)
reconstructs a stratified sample of blocks per size bin from their noisy
PL 94-171 tables instead (``adversary.population.reconstruction``) and
writes ``blocks.csv`` (one row per sampled block, convention and scale),
``summary.csv`` (per bin and overall: the share of records reconstructed
and the exact-block rate, standard errors and 95 % intervals, the prior
alone beside them), ``summary.json`` and ``plots/``. ``--partitions`` and
``--partition-by`` do not apply.

**Swapping.** A model file declaring ``SWAPPING`` (a ``SwappingStudy``, e.g.
the shipped ``population_swapping``) assesses every person in a household
alone in their block cell of the 56-cell reduced classification (or a seeded
sample per block-size bin) under household swapping and targeted record
swapping instead (``adversary.population.swapping_survey``): the exact
marginal risk (3.4) and probability of a correct decision (3.6) of the
single-block attack when the block's exact counts are released after swapping,
per mechanism and prior, and the share of them whose household one seeded run
of each mechanism swapped. It runs on ``--synthetic`` only and writes
``records.parquet`` (one row per assessed person: ``record_id``, geography,
``household``, ``cell``, ``alternative_cell``, ``block_size``,
``block_size_bin``, ``weight``, ``MECHANISM:swapped`` and
``MECHANISM:PRIOR:MEASURE`` for ``marginal_risk`` and ``p_correct``),
``summary.csv`` (by mechanism, prior and block-size bin: the means, the persons
above each threshold and the share swapped, with standard errors),
``summary.json`` and ``plots/``. ``--partitions``, ``--partition-by`` and
``--budget`` do not apply.

``--json`` prints one object with keys ``version`` (the package's), ``data``
(what was assessed: the synthetic persons, states and seed, or the table's
path), ``model`` (the population model, with ρ per budget and level),
``stats`` (persons, assessed persons and records, distinct tuples per attack,
partitions, workers), ``timings`` (seconds per phase), ``summary`` (the rows
of ``summary.csv``: ``attack``, ``budget``, ``budget_scale``, ``prior``,
``prior_value``, ``measure``, ``threshold``, ``block_size_bin`` (or
``"all"``), ``persons_above``, ``persons_assessed``, ``persons``) and
``files``; ``summary.json`` holds the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import add_budget_arguments, command_parser


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "population",
        "persons at risk in a whole geography under each attack, budget and prior (Dask)",
        __doc__,
        run,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("data", nargs="?", metavar="DATA", help="Parquet or CSV table")
    source.add_argument(
        "--synthetic", type=int, metavar="PERSONS", help="generate a synthetic state instead"
    )
    parser.add_argument(
        "--model", required=True, metavar="MODEL_FILE", help="population model file or name"
    )
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler")
    parser.add_argument("--workers", type=int, default=None, help="local workers (default: cores)")
    parser.add_argument("--partitions", type=int, default=None, help="number of partitions")
    parser.add_argument(
        "--partition-by", choices=("county", "tract"), default=None, help="partition unit (county)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --synthetic")
    parser.add_argument("--states", type=int, default=1, help="states of --synthetic")
    parser.add_argument(
        "--out", type=Path, required=True, help="output folder (locked while the run writes)"
    )
    parser.add_argument("--no-plots", action="store_true", help="write no figures")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    add_budget_arguments(parser, "the model's")


def run(args) -> int:
    from .._output import locked

    for option, least in (("synthetic", 1), ("seed", 0), ("states", 1), ("workers", 1)):
        value = getattr(args, option)
        if value is not None and value < least:
            raise ValueError(f"--{option} must be >= {least}, got {value}")
    if args.partitions is not None and args.partitions < 1:
        raise ValueError(f"--partitions must be >= 1, got {args.partitions}")
    if args.budget is not None:  # read once, before anything runs
        from ..budget import as_allocation

        args.budget = as_allocation(args.budget, "--budget")
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers starts a local cluster; it cannot be given with --scheduler")
    with locked(args.out, "--out"):
        return _population(args)


def _population(args) -> int:
    """The run of ``adversary population`` once its ``--out`` is held."""
    from ..population.engine import assess
    from ..population.model import load_population_model
    from ..population.output import summary_json, summary_text
    from ..population.reconstruction import load_reconstruction_study
    from ..population.swapping import load_swapping_study
    from ..population.synthetic import synthetic_geography

    swapping = load_swapping_study(args.model)
    if swapping is not None:
        return _swapping(args, swapping)
    study = load_reconstruction_study(args.model)
    if study is None:
        model = load_population_model(args.model).with_preset(args.budget)
    if args.synthetic is not None:
        data = synthetic_geography(args.synthetic, states=args.states, seed=args.seed)
        described = {"synthetic": args.synthetic, "states": args.states, "seed": args.seed}
    else:
        data = Path(args.data)
        described = {"path": str(data)}
    if study is not None:
        return _reconstruction(args, study, data, described)
    partitioning = {"partitions": args.partitions, "partition_level": args.partition_by or "county"}
    result = assess(data, model, args.out, **partitioning, **_cluster_options(args))
    return _report(args, summary_json(result, model), summary_text(result, model))


def _cluster_options(args) -> dict:
    """Where and how a run computes: the Dask cluster, the progress bar, the figures."""
    return {
        "scheduler": args.scheduler,
        "workers": args.workers,
        "progress": not args.no_progress,
        "plots": not args.no_plots,
    }


def _report(args, as_json: dict, as_text: str) -> int:
    """Print the run: one JSON object with ``--json``, else the text summary."""
    if args.json:
        json.dump(as_json, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(as_text)
    return 0


def _refuse(args, options: tuple[str, ...], kind: str) -> None:
    """One line for the first of ``options`` given that does not apply to a ``kind`` model."""
    for option in options:
        if getattr(args, option) is not None:
            flag = "--" + option.replace("_", "-")
            raise ValueError(f"{flag} does not apply to a {kind}")


def _reconstruction(args, study, data, described) -> int:
    """``adversary population`` for a model file declaring ``RECONSTRUCTION``."""
    from dataclasses import replace

    from ..population.reconstruction import survey
    from ..population.reconstruction_output import summary_text, survey_json

    _refuse(args, ("partitions", "partition_by"), "reconstruction model (RECONSTRUCTION)")
    if args.budget is not None:
        study = replace(study, budget=args.budget)
    result = survey(data, study, args.out, **_cluster_options(args))
    return _report(
        args, {"data": described, **survey_json(result, study)}, summary_text(result, study)
    )


def _swapping(args, study) -> int:
    """``adversary population`` for a model file declaring ``SWAPPING``."""
    from ..population.swapping_summary import summary_text, survey_json
    from ..population.swapping_survey import survey
    from ..population.synthetic import synthetic_population

    _refuse(args, ("partitions", "partition_by", "budget"), "swapping model (SWAPPING)")
    if args.synthetic is None:
        raise ValueError("DATA: a swapping model (SWAPPING) runs on --synthetic PERSONS only")
    persons = synthetic_population(args.synthetic, states=args.states, seed=args.seed)
    described = {"synthetic": args.synthetic, "states": args.states, "seed": args.seed}
    result = survey(persons, study, args.out, **_cluster_options(args))
    return _report(
        args, {"data": described, **survey_json(result, study)}, summary_text(result, study)
    )
