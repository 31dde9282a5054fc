"""Bad input to the reconstruction surface, releases far outside a block, the chain's memory."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import ReconstructionStudy, summary_by_bin
from adversary.cli import main
from adversary.memory import MemoryBudgetError, memory_budget
from adversary.population.synthetic import BLOCK_SIZE_BINS
from adversary.scenarios.reconstruction import (
    ReconstructionCase,
    exact_posterior,
    holder_measures,
    reconstruct,
    sampled_posterior,
)
from adversary.scenarios.reconstruction.kernel import PersonsKernel
from adversary.scenarios.reconstruction.posterior import chain_bytes

FIELDS = dict(
    name="small",
    n=3,
    cells=("a", "b", "c", "d"),
    prior=(0.1, 0.2, 0.3, 0.4),
    queries=[(0, 1, 2, 3), (0, 1), (2, 3)],
    rhos=0.5,
    releases=(3, 2, 1),
    truth=(1, 0, 1, 1),
)
CASE = ReconstructionCase(**FIELDS)


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


BAD_CASE_FIELDS = [
    ("n", 0), ("n", -1), ("n", 2.5), ("n", math.nan), ("n", math.inf), ("n", "3"),
    ("n", 2**70), ("n", (3,)),
    ("cells", "abcd"), ("cells", []), ("cells", ("a", "a", "b", "c")), ("cells", 5),
    ("prior", (0.5, 0.5)), ("prior", (math.nan, 0.2, 0.3, 0.5)), ("prior", (math.inf, 0, 0, 0)),
    ("prior", (-0.1, 0.4, 0.3, 0.4)), ("prior", (0.3, 0.3, 0.3, 0.3)),
    ("prior", ("a", "b", "c", "d")), ("prior", [[0.25] * 4]), ("prior", None),
    ("queries", []), ("queries", [(0, 9)]), ("queries", [(-1,)]), ("queries", [(0.5,)]),
    ("queries", [(math.nan,)]), ("queries", [(0, 0)]), ("queries", "abc"), ("queries", [("a",)]),
    ("queries", [[]]), ("queries", [(2**64,)]),
    ("rhos", math.nan), ("rhos", math.inf), ("rhos", -1), ("rhos", 0), ("rhos", (0.5, 0.5)),
    ("rhos", [[0.5] * 3]), ("rhos", (0.5, "x", 0.5)),
    ("releases", (1, 2)), ("releases", (math.nan, 2, 1)), ("releases", (math.inf, 2, 1)),
    ("releases", (2**63, 2, 1)), ("releases", (2.5, 2, 1)), ("releases", (10**12, 2, 1)),
    ("releases", (-(10**12), 2, 1)), ("releases", ("a", "b", "c")), ("releases", [[3, 2, 1]]),
    ("releases", 3),
    ("truth", (1, 1, 1)), ("truth", (-1, 2, 1, 1)), ("truth", (math.nan, 1, 1, 1)),
    ("truth", (2**63, 0, 0, 0)), ("truth", (1.5, 0.5, 1, 0)), ("truth", "abcd"),
    ("truth", [[1, 0, 1, 1]]), ("truth", (10**30, 0, 0, 0)),
    ("concentration", 0), ("concentration", -1), ("concentration", math.nan),
    ("concentration", math.inf), ("concentration", "a"), ("concentration", (1, 2)),
    ("tie_rule", "first"), ("tie_rule", 1), ("tie_rule", None),
    ("convention", "nope"),
    ("query_labels", ("a",)), ("query_labels", 5),
]  # fmt: skip


@pytest.mark.parametrize("field, value", BAD_CASE_FIELDS)
def test_a_bad_case_field_is_one_line_naming_it(field, value):
    with pytest.raises((ValueError, TypeError)) as error:
        ReconstructionCase(**{**FIELDS, field: value})
    assert one_line(error).startswith(field), one_line(error)


BAD_CALLS = [
    (sampled_posterior, {"draws": 0}, "draws"),
    (sampled_posterior, {"draws": math.nan}, "draws"),
    (sampled_posterior, {"draws": math.inf}, "draws"),
    (sampled_posterior, {"draws": 2.5}, "draws"),
    (sampled_posterior, {"tune": -1}, "tune"),
    (sampled_posterior, {"chains": 0}, "chains"),
    (sampled_posterior, {"chains": "2"}, "chains"),
    (sampled_posterior, {"sampler": "stan"}, "sampler"),
    (sampled_posterior, {"latent": "cells"}, "latent"),
    (sampled_posterior, {"random_seed": math.nan}, "random_seed"),
    (sampled_posterior, {"random_seed": "s"}, "random_seed"),
    (sampled_posterior, {"random_seed": -1}, "random_seed"),
    (sampled_posterior, {"releases": (10**12, 2, 1)}, "releases[0]"),
    (sampled_posterior, {"releases": (2**63, 2, 1)}, "releases"),
    (exact_posterior, {"releases": (3, 2, math.nan)}, "releases"),
    (exact_posterior, {"releases": (3, 2, -50)}, "releases[2]"),
    (reconstruct, {"method": "gibbs"}, "method"),
    (reconstruct, {"method": None}, "method"),
    (holder_measures, {"replications": 1}, "replications"),
    (holder_measures, {"replications": math.nan}, "replications"),
    (holder_measures, {"replications": "a"}, "replications"),
    (holder_measures, {"tail_mass": 0}, "tail_mass"),
    (holder_measures, {"tail_mass": math.nan}, "tail_mass"),
    (holder_measures, {"tail_mass": 2}, "tail_mass"),
    (holder_measures, {"releases": "all"}, "releases"),
    (holder_measures, {"method": "gibbs"}, "method"),
    (holder_measures, {"seed": math.nan}, "seed"),
    (holder_measures, {"seed": "x"}, "seed"),
]


@pytest.mark.parametrize("function, arguments, name", BAD_CALLS)
def test_a_bad_argument_is_one_line_naming_it(function, arguments, name):
    with pytest.raises((ValueError, TypeError)) as error:
        function(CASE, **arguments)
    assert one_line(error).startswith(name), one_line(error)


BAD_STUDY_FIELDS = [
    ("per_bin", 1), ("per_bin", math.nan), ("per_bin", "a"), ("per_bin", 2.5),
    ("classification", "fine"), ("scales", ()), ("scales", (0,)), ("scales", (math.nan,)),
    ("scales", (-1,)), ("scales", "ab"), ("conventions", ("x",)), ("conventions", ()),
    ("conventions", "paper"), ("draws", 0), ("draws", math.inf), ("tune", -1), ("chains", 0),
    ("budget", "nope"), ("seed", math.nan), ("seed", "x"), ("seed", -1),
]  # fmt: skip


@pytest.mark.parametrize("field, value", BAD_STUDY_FIELDS)
def test_a_bad_study_field_is_one_line_naming_it(field, value):
    with pytest.raises((ValueError, TypeError)) as error:
        ReconstructionStudy(**{field: value})
    assert one_line(error).startswith(field), one_line(error)


def test_a_release_is_refused_beyond_the_noises_cut_off_and_accepted_within():
    # σ² = 1 (ρ = 0.5, paper): the cut-off at 1e-15 is 8, so a 3-person block's total
    # may be released from -8 to 11.
    reach = CASE.noise()[0].cutoff(1e-15)
    assert reach == 8
    for total in (-reach, 3 + reach):
        posterior = exact_posterior(CASE, (total, 2, 1))
        assert np.isclose(posterior.probabilities.sum(), 1.0)
    for total in (-reach - 1, 3 + reach + 1, 10**12):
        with pytest.raises(ValueError, match=r"releases\[0\] = .* is far outside the block's"):
            exact_posterior(CASE, (total, 2, 1))
        with pytest.raises(ValueError, match=r"releases\[0\] = .* is far outside the block's"):
            PersonsKernel(CASE, (total, 2, 1))


def test_the_command_line_refuses_a_huge_release_in_one_line(case_file, capsys):
    fields = {"n": "3", "cells": "('a', 'b')", "prior": "(0.5, 0.5)", "queries": "[(0, 1)]"}
    model = case_file("b", **fields, rhos="0.5", releases="(10**12,)", truth="(1, 2)")
    assert main(["reconstruct", model]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "releases[0] = 1000000000000 is far outside" in err


def test_the_chain_is_sized_before_it_runs_and_refused_beyond_the_budget():
    needed = chain_bytes(CASE, 1000, 2, "direct")
    # the trace: 2 chains × 1 000 draws × 4 cells of int64, held 6 times
    assert needed == 8 * 2 * 1000 * 4 * 6 + 8 * (3 * 4 + 3 * 4 + 4 * 3)
    with memory_budget(needed - 1), pytest.raises(MemoryBudgetError) as error:
        sampled_posterior(CASE, draws=1000, chains=2, random_seed=1)
    message = one_line(error)
    assert "the MCMC trace (2 chains × 1,000 draws × 4 cells)" in message
    assert "--memory-budget or ADVERSARY_MEMORY_BUDGET" in message
    with memory_budget(needed):
        posterior = sampled_posterior(CASE, draws=1000, chains=2, random_seed=1)
    assert posterior.draws.shape == (2, 1000, 4)


def test_a_chain_over_100_000_cells_is_refused_at_once(case_file, capsys):
    # 2 chains × 2 000 draws × 10^5 cells of int64 is 3.2 GB before any copy: refused
    # (in one line, naming the estimate and how to raise it) before anything is allocated.
    k = 100_000
    model = case_file(
        "wide",
        n="3",
        cells=f"[str(i) for i in range({k})]",
        prior=f"[1 / {k}] * {k}",
        queries=f"[tuple(range({k}))]",
        rhos="0.5",
        releases="(3,)",
        truth=f"(1, 1, 1) + (0,) * {k - 3}",
    )
    assert main(["reconstruct", model, "--method", "mcmc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "the MCMC trace (2 chains × 2,000 draws × 100,000 cells)" in err
    assert "would need 17.9 GiB" in err and "--memory-budget" in err


def test_the_command_line_shows_the_chains_progress_on_stderr_only(case_file, capsys):
    model = case_file("b", **{key: repr(value) for key, value in FIELDS.items() if key != "name"})
    argv = ["reconstruct", model, "--method", "mcmc", "--draws", "200", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["method"] == "mcmc"
    assert "sweeps" in captured.err and "2 chains" in captured.err
    assert main([*argv, "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("chains", ["1", "2"])
def test_one_draw_per_chain_says_no_error_can_be_estimated(case_file, capsys, chains):
    """One draw was reported as "(all draws alike)" (or ± nan with two chains)."""
    model = case_file("b", **{key: repr(value) for key, value in FIELDS.items() if key != "name"})
    argv = ["reconstruct", model, "--method", "mcmc", "--draws", "1", "--chains", chains]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.count("(one draw per chain: no error)") == 3
    assert "alike" not in out and "nan" not in out
    assert main([*argv, "--no-progress", "--json"]) == 0
    errors = json.loads(capsys.readouterr().out)["standard_errors"]
    assert errors == dict.fromkeys(("p_true_histogram", "expected_overlap", "overlap_share"))


def census_rows(in_bin: int) -> pd.DataFrame:
    """One sampled block of ``in_bin`` in bin "<10"."""
    return pd.DataFrame(
        {
            "convention": ["paper"],
            "scale": [1.0],
            "bin": pd.Categorical(["<10"], categories=list(BLOCK_SIZE_BINS)),
            "n": [4],
            "in_bin": [in_bin],
            "overlap": [3.0],
            "p_true_histogram": [0.25],
            "baseline_overlap": [2.0],
            "baseline_p_true_histogram": [0.1],
        }
    )


def test_a_bin_sampled_whole_has_no_sampling_error_even_with_one_block():
    census = summary_by_bin(census_rows(1)).loc[("paper", 1.0, "<10")]
    assert census["census"] and census["overlap_share"] == 0.75
    assert census["overlap_share_se"] == 0 and census["overlap_share_low"] == 0.75
    # one block of two: no standard error can be estimated
    sampled = summary_by_bin(census_rows(2)).loc[("paper", 1.0, "<10")]
    assert not sampled["census"] and math.isnan(sampled["overlap_share_se"])
