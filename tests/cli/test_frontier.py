"""``adversary frontier``: its files, its summary, a budget file read back, and one-line errors."""

import json
import tomllib

import numpy as np
import pandas as pd
import pytest

from adversary.cli import main

SMALL = ["--attacks", "single_block,unknown_attribute", "--priors", "0.5,0.1", "--no-progress"]
FAMILY = ["--family", "totals:1.28,5.12", "--family", "query:block:detailed:0.5"]


def frontier(argv, capsys):
    status = main(["frontier", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def run_once(tmp_path_factory):
    out = tmp_path_factory.mktemp("frontier") / "out"
    argv = ["--synthetic", "20000", *SMALL, *FAMILY]
    argv += ["--risk-profile", "constant:3", "--search", "none", "--out", str(out), "--json"]
    return out, argv


def test_files_summary_and_the_best_allocation_read_back(run_once, capsys):
    out, argv = run_once
    status, printed, _ = frontier(argv, capsys)
    assert status == 0
    names = {"frontier.csv", "best_allocation.toml", "summary.json", "frontier.png"}
    assert names <= {p.name for p in out.iterdir()}
    summary = json.loads((out / "summary.json").read_text())
    assert json.loads(printed) == summary
    table = pd.read_csv(out / "frontier.csv")
    assert len(table) == 4  # the reference and the family's three
    scores = table[["risk_score:single_block", "risk_score:unknown_attribute"]].to_numpy()
    np.testing.assert_array_equal(table["within_limits"], (scores <= 1).all(axis=1))
    # the best: lowest mean error score among those within the limits (no search ran)
    errors = table[[c for c in table if c.startswith("error_score:")]].mean(axis=1)
    within = table[table["within_limits"]]
    assert summary["best"] == within.loc[errors[within.index].idxmin(), "allocation"]
    # best_allocation.toml is a budget file `adversary budget` reads; its shares are the row's
    assert tomllib.loads((out / "best_allocation.toml").read_text())
    status, printed, _ = main_budget(out / "best_allocation.toml", capsys)
    assert status == 0
    rows = json.loads(printed)["rows"]
    row = table.set_index("allocation").loc[summary["best"]]
    for level in ("us", "state", "county", "tract", "block_group", "block"):
        level_all = [r for r in rows if r["level"] == level and r["query"] == "all"]
        assert level_all[0]["share"] == pytest.approx(row[f"share:{level}"], rel=1e-12)
    assert json.loads(printed)["rho_total"] == pytest.approx(row["rho_total"], rel=1e-12)


def main_budget(path, capsys):
    status = main(["budget", "--budget", str(path), "--json"])
    return status, capsys.readouterr().out, None


def test_no_plots_writes_no_figure(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--synthetic", "20000", *SMALL, "--family", "totals:5.12", "--search", "none"]
    status, _, _ = frontier([*argv, "--no-plots", "--out", str(out)], capsys)
    assert status == 0
    assert not list(out.glob("*.png"))
    assert (out / "frontier.csv").is_file()


def test_true_tables_from_a_csv(tmp_path, capsys):
    from adversary.analyses.reconstruction_study import block_cells
    from adversary.population.synthetic import synthetic_population

    persons = synthetic_population(20_000, seed=2)
    columns = ["state", "county", "tract", "block_group", "block"]
    cells = persons.assign(cell=block_cells(persons))
    table = cells.groupby([*columns, "cell"]).size().rename("count").reset_index()
    data = tmp_path / "truth.csv"
    table.to_csv(data, index=False)
    out = tmp_path / "out"
    argv = [str(data), *SMALL, "--family", "totals:5.12", "--search", "none", "--no-plots"]
    status, printed, _ = frontier([*argv, "--json", "--out", str(out)], capsys)
    assert status == 0
    summary = json.loads(printed)
    assert summary["inputs"]["data"] == {"path": str(data)}
    frame = pd.read_csv(out / "frontier.csv").set_index("allocation")
    # doubling ρ halves every variance: the error score is 1/2 exactly, the reference's 1
    reference = summary["inputs"]["reference"]
    error_columns = [c for c in frame if c.startswith("error_score:")]
    np.testing.assert_allclose(frame.loc[reference, error_columns].to_numpy(float), 1.0)
    doubled = [name for name in frame.index if name != reference]
    np.testing.assert_allclose(frame.loc[doubled[0], error_columns].to_numpy(float), 0.5)


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--family", "nonsense"], "--family"),
        (["--family", "level:nowhere:0.1"], "--family"),
        (["--risk-profile", "constant:0.5"], "profile"),
        (["--priors", "2"], "--priors"),
        (["--attacks", "nope"], "--attacks"),
        (["--runs", "1"], "--runs"),
        (["--preset", "pl94-2020-persons", "--budget", "pl94-2020-persons"], "--preset"),
        (["--search", "nope"], "--search"),
        (["--convention", "nope"], "--convention"),
        (["--synthetic", "0"], "--synthetic"),
        (["--workers", "0"], "--workers"),
        (["--runs", "2", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "--workers"),
        (["--workers", "2"], "--workers"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(argv, option, tmp_path, capsys):
    base = [] if "--synthetic" in argv else ["--synthetic", "20000"]
    status, _, err = frontier([*base, *argv, "--out", str(tmp_path / "out")], capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("adversary frontier: error: ")
    assert option in lines[0]
    assert not (tmp_path / "out").exists()


def test_data_that_is_not_a_file(tmp_path, capsys):
    status, _, err = frontier([str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o")], capsys)
    assert status == 2
    assert err.strip().startswith("adversary frontier: error: DATA")
    assert len(err.strip().splitlines()) == 1
