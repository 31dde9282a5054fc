"""Reconstruction at population scale: a stratified sample of blocks per size bin, on Dask.

For ``adversary population (DATA | --synthetic PERSONS) --model MODEL_FILE``
where the model file declares ``RECONSTRUCTION``, a
:class:`~adversary.analyses.reconstruction_study.ReconstructionStudy` (the
shipped ``population_reconstruction``). :func:`survey`:

1. **Sample.** The blocks' sizes come from the synthetic skeleton or the
   table (checked first, like every population input); ``per_bin`` blocks
   are drawn without replacement in each of JASON Table 8-11's bins.
2. **Truths and priors.** For each county holding a sampled block, the
   block's true histogram and its tract's cell shares (the adversary's
   prior): a synthetic county's persons are generated on a worker; a
   table's are counted on the client.
3. **Reconstruction.** One task per sampled block (every convention and
   scale of the study), spread over the workers by Dask as they free up.
4. **Summary.** Per bin and overall: the share of records reconstructed and
   the exact-block rate, each with its standard error and 95 % interval
   from the stratified sample, beside the prior alone
   (:func:`~adversary.analyses.reconstruction_study.summary_by_bin`); a bin
   sampled whole is a census (``census``: no sampling error, said so in the
   printed table, never ``± nan``).

Each block's rows are seeded by its position in the sample, so the output
does not depend on the number of workers.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._output import checked_folder, staged, write_figures
from ..analyses.reconstruction_study import (
    ReconstructionStudy,
    assess_block,
    block_sizes,
    sampled_blocks,
    study_frame,
    summary_by_bin,
    truths_and_priors,
)
from ..model_files import load_declared
from .cluster import cluster_client, scatter, worker_count
from .progress import wait_for
from .schema import COUNT, GEOGRAPHY, read_table, validate
from .synthetic import Geography, synthetic_persons

__all__ = ["ReconstructionSurvey", "load_reconstruction_study", "survey"]


def load_reconstruction_study(model: str | Path) -> ReconstructionStudy | None:
    """The ``RECONSTRUCTION`` a model file declares, or ``None`` if it declares none."""
    return load_declared(model, "RECONSTRUCTION", ReconstructionStudy, "population_reconstruction")


@dataclass
class ReconstructionSurvey:
    """What :func:`survey` found: per-block ``rows``, the ``summary`` by bin, ``stats``,
    ``timings`` (seconds per phase) and the ``files`` written."""

    rows: pd.DataFrame
    summary: pd.DataFrame
    stats: dict
    timings: dict
    files: dict = field(default_factory=dict)


def _county_inputs(geography_blocks, county_index, seed, first_record, blocks, cells):
    """Truths and tract priors of ``blocks`` in one synthetic county, generated here."""
    persons = synthetic_persons(geography_blocks, county_index, seed, first_record)
    return truths_and_priors(persons, blocks, cells)


def _assess(inputs: dict, block: dict, study: ReconstructionStudy) -> list[dict]:
    return assess_block(block, *inputs[block["block"]], study)


def survey(
    data,
    study: ReconstructionStudy,
    out=None,
    *,
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
    local_directory=None,
    plots: bool = True,
) -> ReconstructionSurvey:
    """Reconstruct a stratified sample of ``data``'s blocks under ``study`` (module docstring).

    ``data``: a :class:`~adversary.population.synthetic.Geography`, or a path to
    a table or a DataFrame (schema in :mod:`.schema`; the characteristics of
    the study's classification: ``hhgq``, ``voting_age``, ``hispanic``,
    ``race``, as integer codes). ``out``: folder for ``blocks.csv`` (one row
    per sampled block, convention and scale), ``summary.csv``,
    ``summary.json`` and ``plots/``, written only when the run succeeds.
    ``client`` / ``scheduler`` / ``workers``: as for
    :func:`~adversary.population.engine.assess`.
    """
    timings: dict[str, float] = {}
    start = time.perf_counter()
    out = None if out is None else checked_folder(out, "out")
    chars = list(study.cells.names)
    if isinstance(data, Geography):
        frame = None
        sizes = data.blocks[["block", "tract", "county", "size"]].rename(columns={"size": "n"})
    else:
        if not isinstance(data, pd.DataFrame):
            data = read_table(data, [*GEOGRAPHY, *chars, COUNT])
        frame = validate(data, chars)
        sizes = block_sizes(frame).merge(
            frame.groupby("block", sort=False)["county"].first().reset_index(), on="block"
        )
    sample = sampled_blocks(sizes, study.per_bin, study.seed)
    sample = sample.merge(sizes[["block", "county"]], on="block", how="left")
    timings["load_and_sample"] = time.perf_counter() - start

    with cluster_client(client, scheduler, workers, local_directory) as dask_client:
        n_workers = worker_count(dask_client)
        t = time.perf_counter()
        inputs = _inputs(dask_client, data, frame, sample, study)
        [study_shared] = scatter(dask_client, [study], broadcast=True)
        futures = [
            dask_client.submit(_assess, inputs[county], block, study_shared, pure=False)
            for county, block in zip(
                sample["county"], sample.drop(columns="county").to_dict("records"), strict=True
            )
        ]
        wait_for(futures, "reconstructing sampled blocks", progress, sample["n"], "persons")
        rows = study_frame([row for future in futures for row in future.result()])
        timings["reconstruction"] = time.perf_counter() - t
    summary = summary_by_bin(rows)
    timings["total"] = time.perf_counter() - start
    per_bin = sample.groupby("bin", observed=True)
    stats = {
        "persons": int(sizes["n"].sum()),
        "blocks": len(sizes),
        "blocks_sampled": len(sample),
        "sampled_per_bin": {str(b): int(n) for b, n in per_bin.size().items()},
        "blocks_per_bin": {str(b): int(n) for b, n in per_bin["in_bin"].first().items()},
        "workers": n_workers,
    }
    result = ReconstructionSurvey(rows=rows, summary=summary, stats=stats, timings=timings)
    if out is not None:
        with staged(out, "out", ("plots",)) as staging:
            result.files = _write(staging, out, result, study, plots)
    return result


def _inputs(client, data, frame, sample, study) -> dict:
    """``{county: future of {block: (truth, prior)}}`` for the counties holding sampled blocks."""
    by_county = sample.groupby("county", sort=True)["block"].apply(list)
    if frame is not None:
        # a table is on the client already: count its sampled blocks' tracts here
        tracts = frame[frame["tract"].isin(sample["tract"])]
        every = truths_and_priors(tracts, sample["block"], study.cells)
        return {
            county: scatter(client, {block: every[block] for block in blocks})
            for county, blocks in by_county.items()
        }
    counties = data.counties().set_index("county")
    out = {}
    for county, blocks in by_county.items():
        index = int(counties.loc[county, "county_index"])
        mine = data.blocks[data.blocks["county_index"] == index]
        out[county] = client.submit(
            _county_inputs,
            mine,
            index,
            data.seed,
            int(counties.loc[county, "first_record"]),
            blocks,
            study.cells,
            pure=False,
        )
    return out


def _write(staging: Path, out: Path, result: ReconstructionSurvey, study, plots: bool) -> dict:
    from .reconstruction_output import reconstruction_by_block_size_figure, survey_json

    result.rows.to_csv(staging / "blocks.csv", index=False)
    result.summary.to_csv(staging / "summary.csv")
    names = ["blocks.csv", "summary.csv"]
    if plots:
        figures = {
            "reconstruction_by_block_size.png": reconstruction_by_block_size_figure(result.summary)
        }
        write_figures(figures, staging / "plots", dpi=120)
        names += [f"plots/{name}" for name in figures]
    files = {name: str(out / name) for name in [*names, "summary.json"]}
    result.files = files
    with open(staging / "summary.json", "w") as handle:
        json.dump(survey_json(result, study), handle, indent=2)
    return files
