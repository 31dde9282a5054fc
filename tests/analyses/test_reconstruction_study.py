"""The reconstruction study by block size: cells, sampling, the no-noise limit, the summary."""

import math

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import (
    ReconstructionStudy,
    block_cells,
    block_sizes,
    noiseless_share,
    reconstruction_by_block_size,
    sampled_blocks,
    summary_by_bin,
)
from adversary.population.synthetic import BLOCK_SIZE_BINS, synthetic_population
from adversary.scenarios.reconstruction import (
    DETAILED,
    REDUCED,
    ReconstructionCase,
    pl94_queries,
    prior_measures,
)


def test_block_cells_map_the_synthetic_codes_onto_both_classifications():
    persons = pd.DataFrame(
        {
            "hhgq": [0, 3, 7],
            "voting_age": [1, 0, 1],
            "hispanic": [0, 1, 1],
            # OMB masks 1 (White), 4 (AIAN), 3 (White and Black): codes mask - 1
            "race": [0, 3, 2],
        }
    )
    # REDUCED: hhgq 0/1, race 0-5 single (bit index), 6 two or more
    reduced = [
        ((0 * 2 + 1) * 2 + 0) * 7 + 0,
        ((1 * 2 + 0) * 2 + 1) * 7 + 2,
        ((1 * 2 + 1) * 2 + 1) * 7 + 6,
    ]
    np.testing.assert_array_equal(block_cells(persons, REDUCED), reduced)
    np.testing.assert_array_equal(
        block_cells(persons, DETAILED),
        [
            ((0 * 2 + 1) * 2 + 0) * 63 + 0,
            ((3 * 2 + 0) * 2 + 1) * 63 + 3,
            ((7 * 2 + 1) * 2 + 1) * 63 + 2,
        ],
    )
    with pytest.raises(ValueError, match=r"persons: columns \['race'\] are missing"):
        block_cells(persons.drop(columns="race"))
    with pytest.raises(ValueError, match=r"persons: hhgq outside 0\.\.7"):
        block_cells(persons.assign(hhgq=[0, 8, 1]), DETAILED)


@pytest.fixture(scope="module")
def persons():
    return synthetic_population(6_000, seed=2)


def test_sampled_blocks_take_per_bin_blocks_from_every_bin(persons):
    blocks = sampled_blocks(block_sizes(persons), 3, seed=1)
    sizes = persons.groupby("block").size()
    assert (blocks["n"].to_numpy() == sizes.loc[blocks["block"]].to_numpy()).all()
    for name in BLOCK_SIZE_BINS:
        mine = blocks[blocks["bin"] == name]
        assert len(mine) == min(3, int(mine["in_bin"].iloc[0]))
    assert blocks["block"].is_unique
    with pytest.raises(ValueError, match="per_bin must be an integer >= 2"):
        sampled_blocks(block_sizes(persons), 1, seed=1)


def test_the_no_noise_limit_needs_a_query_per_cell():
    queries, rhos, _ = pl94_queries(REDUCED)
    case = ReconstructionCase(
        name="b", n=2, cells=REDUCED.cell_labels(), prior=(1 / 56,) * 56, queries=queries, rhos=rhos
    )
    assert noiseless_share(case) == 1.0
    without = [q for q in queries if len(q) > 1]
    with pytest.raises(ValueError, match="every cell is its own query"):
        noiseless_share(case.replace(queries=without, rhos=0.1, query_labels=None))


def test_the_study_rows_hold_the_tract_prior_baseline_and_the_limit(persons):
    rows = reconstruction_by_block_size(
        persons, per_bin=2, scales=(16.0, math.inf), conventions=("das",), draws=300, tune=50
    )
    assert len(rows) == 2 * len(sampled_blocks(block_sizes(persons), 2, seed=0))
    limit = rows[rows["scale"] == math.inf]
    assert (limit["overlap_share"] == 1.0).all() and (limit["p_true_histogram"] == 1.0).all()
    # the baseline of one block, rebuilt by hand: the tract's cell shares as the prior
    row = rows.iloc[0]
    cells = block_cells(persons)
    tract = persons.loc[persons["block"] == row["block"], "tract"].iloc[0]
    prior = np.bincount(cells[persons["tract"] == tract], minlength=56)
    truth = np.bincount(cells[persons["block"] == row["block"]], minlength=56)
    queries, rhos, _ = pl94_queries(REDUCED)
    case = ReconstructionCase(
        name="b",
        n=int(truth.sum()),
        cells=REDUCED.cell_labels(),
        prior=prior / prior.sum(),
        queries=queries,
        rhos=rhos,
        truth=truth,
    )
    expected = prior_measures(case)
    assert row["baseline_overlap_share"] == pytest.approx(expected.overlap_share, rel=1e-12)
    assert row["baseline_p_true_histogram"] == pytest.approx(expected.p_true_histogram, rel=1e-12)
    # at 16 times the budget the tables nearly pin the block down: far above the prior
    noisy = rows[rows["scale"] == 16.0]
    assert (noisy["overlap_share"] > noisy["baseline_overlap_share"]).mean() >= 0.8


def test_the_summary_is_the_stratified_ratio_estimate_with_its_standard_error():
    # Bin "<10": 3 of 6 blocks sampled; bin ">=250": 2 of 2 (sampled whole: no error).
    rows = pd.DataFrame(
        {
            "convention": ["paper"] * 5,
            "scale": [1.0] * 5,
            "bin": pd.Categorical(
                ["<10", "<10", "<10", ">=250", ">=250"], categories=list(BLOCK_SIZE_BINS)
            ),
            "n": [2, 4, 6, 300, 500],
            "in_bin": [6, 6, 6, 2, 2],
            "overlap": [1.0, 3.0, 3.0, 240.0, 450.0],
            "p_true_histogram": [0.5, 0.1, 0.0, 0.0, 0.0],
            "baseline_overlap": [0.5, 1.0, 2.0, 200.0, 400.0],
            "baseline_p_true_histogram": [0.1, 0.0, 0.0, 0.0, 0.0],
        }
    )
    summary = summary_by_bin(rows)
    small = summary.loc[("paper", 1.0, "<10")]
    assert small["overlap_share"] == pytest.approx(7 / 12)  # records: 7 of 12
    u = np.array([1.0, 3.0, 3.0]) - 7 / 12 * np.array([2, 4, 6])
    se = math.sqrt(6**2 * (1 - 3 / 6) * np.var(u, ddof=1) / 3) / (6 / 3 * 12)
    assert small["overlap_share_se"] == pytest.approx(se)
    assert small["overlap_share_high"] - small["overlap_share"] == pytest.approx(1.96 * se, 1e-3)
    assert small["p_true_histogram"] == pytest.approx(0.2)
    assert (small["blocks"], small["in_bin"], small["persons"]) == (3, 6, 12)
    large = summary.loc[("paper", 1.0, ">=250")]
    assert large["overlap_share"] == pytest.approx(690 / 800) and large["overlap_share_se"] == 0
    every = summary.loc[("paper", 1.0, "all")]
    # each sampled small block stands for 2, the large ones for themselves
    assert every["overlap_share"] == pytest.approx((2 * 7 + 690) / (2 * 12 + 800))
    ratio = (2 * 7 + 690) / (2 * 12 + 800)
    u = np.array([1.0, 3.0, 3.0]) - ratio * np.array([2, 4, 6])
    se = math.sqrt(6**2 * (1 - 3 / 6) * np.var(u, ddof=1) / 3) / (2 * 12 + 800)
    assert every["overlap_share_se"] == pytest.approx(se)
    assert every["in_bin"] == 8


def test_study_fields_are_checked():
    with pytest.raises(ValueError, match="per_bin must be an integer >= 2"):
        ReconstructionStudy(per_bin=1)
    with pytest.raises(ValueError, match="classification must be one of reduced, detailed"):
        ReconstructionStudy(classification="fine")
    with pytest.raises(ValueError, match="scales must be numbers > 0"):
        ReconstructionStudy(scales=(1.0, 0.0))
    with pytest.raises(ValueError, match="conventions must be among paper, das"):
        ReconstructionStudy(conventions=("dp",))
