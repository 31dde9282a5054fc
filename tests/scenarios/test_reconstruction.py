"""Reconstructing a block's histogram: exact vs brute force, MCMC vs exact, the baselines."""

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from adversary.budget import get_preset
from adversary.cli import main
from adversary.noise import discrete_gaussian as dg
from adversary.noise.mechanisms import DiscreteLaplaceNoise
from adversary.scenarios.reconstruction import (
    DETAILED,
    REDUCED,
    Classification,
    ReconstructionCase,
    exact_posterior,
    holder_measures,
    pl94_queries,
    posterior_measures,
    prior_measures,
    prior_posterior,
    reconstruct,
    sampled_posterior,
)
from adversary.scenarios.reconstruction.posterior import compositions
from adversary.scenarios.reconstruction.simulate import simulated

SMALL = Classification((("voting_age", 2), ("race", 2)))
PRIOR = (0.1, 0.2, 0.3, 0.4)


def small_case(**changes) -> ReconstructionCase:
    queries = [*SMALL.table(()), *SMALL.table(("race",)), *SMALL.table(("voting_age", "race"))]
    fields = dict(
        name="small",
        n=3,
        cells=SMALL.cell_labels(),
        prior=PRIOR,
        queries=queries,
        rhos=0.5,
        releases=(3, 2, 0, 1, 0, 2, 1),
        truth=(1, 0, 1, 1),
    )
    return ReconstructionCase(**{**fields, **changes})


def brute_force(case, releases):
    """Posterior of every histogram from the generative model, term by term."""
    sigma2 = 1 / (2 * 0.5)
    table = {}
    for h in itertools.product(range(case.n + 1), repeat=case.n_cells):
        if sum(h) != case.n:
            continue
        log = stats.multinomial.logpmf(h, case.n, case.prior)
        for q, cells in enumerate(case.queries):
            log += dg.logpmf(releases[q] - sum(h[c] for c in cells), sigma2)
        table[h] = math.exp(log)
    total = sum(table.values())
    return {h: w / total for h, w in table.items()}


def test_exact_posterior_is_the_brute_force():
    case = small_case()
    posterior = exact_posterior(case)
    expected = brute_force(case, case.releases)
    assert len(posterior.histograms) == len(expected) == math.comb(3 + 3, 3)
    for h, p in zip(posterior.histograms, posterior.probabilities, strict=True):
        assert p == pytest.approx(expected[tuple(int(x) for x in h)], abs=1e-14)


def test_measures_follow_their_definitions():
    case = small_case()
    posterior = exact_posterior(case)
    result = posterior_measures(posterior, case.truth)
    truth = np.array(case.truth)
    h, p = posterior.histograms, posterior.probabilities
    assert result.p_true_histogram == pytest.approx(p[(h == truth).all(axis=1)].sum(), abs=1e-15)
    overlap = float(p @ np.minimum(h, truth).sum(axis=1))
    assert result.expected_overlap == pytest.approx(overlap, abs=1e-14)
    assert result.overlap_share == pytest.approx(overlap / 3, abs=1e-14)
    assert result.map_histogram == tuple(h[np.argmax(p)])
    # Ranked records: P(h_k >= j) for every (k, j), the top r's share of true ones.
    records = sorted(
        ((float(p @ (h[:, k] >= j)), k, j) for j in range(1, 4) for k in range(4)),
        key=lambda record: -record[0],
    )
    true = [case.truth[k] >= j for _, k, j in records[:3]]
    assert result.match_rate == pytest.approx(tuple(np.cumsum(true) / np.arange(1, 4)))


@pytest.mark.parametrize("concentration", [None, 2.0, 30.0])
def test_prior_baseline_in_closed_form_equals_enumeration(concentration):
    case = small_case(concentration=concentration, n=4, truth=(1, 0, 1, 2))
    closed = prior_measures(case)
    enumerated = posterior_measures(prior_posterior(case), case.truth)
    assert closed.p_true_histogram == pytest.approx(enumerated.p_true_histogram, abs=1e-14)
    assert closed.expected_overlap == pytest.approx(enumerated.expected_overlap, abs=1e-12)
    assert closed.match_rate == pytest.approx(enumerated.match_rate, abs=1e-12)
    if concentration is not None and concentration * min(PRIOR) < 1:
        assert closed.map_histogram is None  # not concave: no greedy mode claimed
    else:
        assert closed.map_histogram == enumerated.map_histogram


def test_any_noise_mechanism_and_the_posterior_moves_towards_the_truth():
    case = small_case(rhos=None, mechanism=DiscreteLaplaceNoise(0.5))
    result = reconstruct(case, "exact")
    assert result["method"] == "exact" and result["standard_errors"] == {}
    assert result["expected_overlap"] > result["baseline"]["expected_overlap"]


def test_pl94_tables_partition_the_cells_with_their_budget_rho():
    queries, rhos, labels = pl94_queries(REDUCED)
    assert REDUCED.n_cells == 56 and len(queries) == 130
    assert DETAILED.n_cells == 2016
    budget = get_preset("pl94-2020-persons")
    for name in ("total", "race", "voting_age_hispanic_race", "detailed"):
        mine = [q for q, label in zip(queries, labels, strict=True) if label.startswith(name + "[")]
        assert sorted(c for q in mine for c in q) == list(range(56))
        at = labels.index(f"{name}[0]")
        assert rhos[at] == pytest.approx(float(budget.rho("block", name)))


def test_simulated_blocks_are_drawn_from_the_model():
    case = simulated(small_case(truth=None, releases=None), seed=3)
    assert sum(case.truth) == 3 and len(case.releases) == len(case.queries)
    assert simulated(small_case(truth=None, releases=None), seed=3) == case


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"truth": (1, 1, 1, 1)}, "truth must be 4 counts >= 0 summing to n = 3"),
        ({"queries": [(0, 7)]}, r"queries\[0\] names cells \[7\] that do not exist"),
        ({"prior": (0.5, 0.5, 0.5, -0.5)}, "prior must be a probability vector"),
        ({"prior": (0.5, 0.5)}, "prior must be 4 probabilities"),
        ({"releases": (1, 2)}, "releases must be 7 integers"),
        ({"rhos": (0.5, 0.5)}, "rhos must be one ρ or one per query"),
        ({"n": 0}, "n must be"),
    ],
)
def test_bad_input_is_one_clear_line(changes, message):
    with pytest.raises(ValueError, match=message):
        small_case(**changes)


def test_compositions_are_every_histogram_once():
    rows = compositions(3, 4)
    assert len(rows) == math.comb(6, 3) and (rows.sum(axis=1) == 3).all()
    assert len(np.unique(rows, axis=0)) == len(rows)


def test_command_line_prints_the_measures_and_the_baseline(tmp_path, capsys):
    model = tmp_path / "block.py"
    model.write_text(
        "from adversary.scenarios.reconstruction import ReconstructionCase\n"
        f"CASE = ReconstructionCase(name='tiny', n=3, cells=('a', 'b', 'c', 'd'), prior={PRIOR},\n"
        "    queries=[(0, 1, 2, 3), (0, 1), (2, 3), (0,), (1,), (2,), (3,)], rhos=0.5,\n"
        "    releases=(3, 2, 0, 1, 0, 2, 1), truth=(1, 0, 1, 1))\n"
    )
    assert main(["reconstruct", str(model), "--method", "exact", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["case"] == "tiny" and result["method"] == "exact"
    for key in ("p_true_histogram", "expected_overlap", "map_exact", "match_rate"):
        assert key in result and key in result["baseline"]
    assert main(["reconstruct", str(model), "--method", "exact"]) == 0
    assert "prior alone" in capsys.readouterr().out
    assert main(["reconstruct", "dare_county"]) == 2
    assert "CASE must be a ReconstructionCase" in capsys.readouterr().err


@pytest.mark.parametrize("concentration", [None, 3.0])
def test_both_latents_and_both_samplers_sample_the_exact_posterior(concentration):
    # Persons (one cell each; a Pólya potential under a Dirichlet prior) or the histogram;
    # the persons' chain run directly or as a PyMC step.
    case = small_case(concentration=concentration)
    exact = posterior_measures(exact_posterior(case), case.truth)
    run = dict(draws=3000, tune=200, chains=2, random_seed=9)
    for latent, sampler in (("persons", "direct"), ("persons", "pymc"), ("histogram", "pymc")):
        sampled = posterior_measures(
            sampled_posterior(case, **run, latent=latent, sampler=sampler), case.truth
        )
        for key in ("p_true_histogram", "expected_overlap"):
            error = sampled.standard_errors[key]
            assert abs(getattr(sampled, key) - getattr(exact, key)) <= 4 * error, (latent, sampler)


def test_data_holder_measures_average_over_releases_from_the_truth():
    # Two persons, two cells, each cell released: the release grid is small enough to sum.
    case = ReconstructionCase(
        name="pair",
        n=2,
        cells=("a", "b"),
        prior=(0.3, 0.7),
        queries=[(0,), (1,)],
        rhos=0.3,
        truth=(1, 1),
    )
    sigma2 = 1 / (2 * 0.3)
    # every release the case accepts: noise beyond its cut-off at 1e-15 is refused (and omitted)
    reach = case.noise()[0].cutoff(1e-15)
    window = np.arange(-reach, 2 + reach + 1)
    expected = 0.0
    for x0, x1 in itertools.product(window, window):
        weight = math.exp(dg.logpmf(x0 - 1, sigma2) + dg.logpmf(x1 - 1, sigma2))
        expected += (
            weight
            * posterior_measures(exact_posterior(case, (x0, x1)), case.truth).p_true_histogram
        )
    result = holder_measures(case, replications=400, seed=5)
    mean, error = result["p_true_histogram"]["mean"], result["p_true_histogram"]["standard_error"]
    assert abs(mean - expected) <= 4 * error
    assert result["baseline"]["p_true_histogram"] == pytest.approx(2 * 0.3 * 0.7)
    # the exact sum over the release grid: the same expectation within its stated bound
    grid = holder_measures(case, releases="auto", tail_mass=1e-12)
    assert grid["releases"] == "grid" and grid["omitted_mass"] <= 1e-12
    cell = grid["p_true_histogram"]
    assert cell["standard_error"] == 0 and cell["bound"] == grid["omitted_mass"]
    assert abs(cell["mean"] - expected) <= cell["bound"] + 1e-12
    with pytest.raises(ValueError, match="releases must be one of auto, grid, sampled"):
        holder_measures(case, releases="all")
    with pytest.raises(ValueError, match="use method='exact'"):
        holder_measures(case, releases="grid", method="mcmc")


def test_risk_on_a_reconstruction_case_gives_the_data_holders_view(tmp_path, capsys):
    model = tmp_path / "block.py"
    model.write_text(
        "from adversary.scenarios.reconstruction import ReconstructionCase\n"
        "CASE = ReconstructionCase(name='pair', n=2, cells=('a', 'b'), prior=(0.3, 0.7),\n"
        "    queries=[(0,), (1,)], rhos=0.3, truth=(1, 1))\n"
    )
    assert main(["risk", str(model), "--replications", "5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # two persons in two cells: the release grid is small, so summed exactly
    assert result["releases"] == "grid" and result["replications"] is None
    assert set(result["p_true_histogram"]) == {"mean", "standard_error", "bound"}
    assert main(["risk", str(model)]) == 0
    assert "summed over all" in capsys.readouterr().out
    assert main(["risk", str(model), "--replications", "1"]) == 2
    assert "replications must be an integer >= 2" in capsys.readouterr().err


@pytest.mark.parametrize("concentration", [None, 3.0])
def test_the_persons_step_draws_the_generic_exact_steps_chain(concentration):
    # PersonsGibbs keeps the tables up to date instead of evaluating the model per
    # candidate: the same conditionals and the same inverse-CDF draws, so the same chain.
    from adversary.inference import BoundedGibbs, sample
    from adversary.scenarios.reconstruction.step import PersonsGibbs

    case = small_case(concentration=concentration)
    model = case.model()
    kwargs = dict(draws=300, tune=0, chains=1, cores=1, random_seed=4, progressbar=False)
    ours = sample(model, step=[PersonsGibbs(case, model=model)], **kwargs)
    generic = sample(model, step=[BoundedGibbs([model["persons"]], model=model)], **kwargs)
    np.testing.assert_array_equal(ours.posterior["persons"], generic.posterior["persons"])


def test_the_persons_step_handles_bounded_noise():
    # A release outside a bounded mechanism's reach rules cells out (-inf), not the draw.
    from adversary.noise.mechanisms import CellKeyNoise

    case = small_case(rhos=None, mechanism=CellKeyNoise(1.0, 2))
    exact = posterior_measures(exact_posterior(case), case.truth)
    sampled = posterior_measures(
        sampled_posterior(case, draws=3000, tune=200, chains=2, random_seed=2), case.truth
    )
    error = sampled.standard_errors["expected_overlap"]
    assert abs(sampled.expected_overlap - exact.expected_overlap) <= 4 * error


def test_the_direct_chain_starts_where_the_releases_allow():
    # The prior puts every person in cell 0, which bounded noise rules out: the chain
    # starts from the greedy placement instead, and still samples the exact posterior.
    from adversary.noise.mechanisms import CellKeyNoise
    from adversary.scenarios.reconstruction.kernel import PersonsKernel, persons_chains

    case = small_case(
        prior=(0.97, 0.01, 0.01, 0.01),
        rhos=None,
        mechanism=CellKeyNoise(0.5, 1),
        releases=(3, 0, 3, 0, 0, 0, 3),
        truth=(0, 0, 0, 3),
    )
    kernel = PersonsKernel(case)
    assert not np.isfinite(kernel.log_likelihood(np.zeros(3, dtype=np.int64)))
    assert np.isfinite(kernel.log_likelihood(kernel.start(np.random.default_rng(0))))
    exact = posterior_measures(exact_posterior(case), case.truth)
    draws = persons_chains(case, draws=2000, tune=50, chains=2, random_seed=1)
    assert draws.shape == (2, 2000, 4) and (draws.sum(axis=-1) == 3).all()
    sampled = posterior_measures(
        sampled_posterior(case, draws=2000, tune=50, random_seed=1), case.truth
    )
    error = sampled.standard_errors["expected_overlap"] or 1e-12
    assert abs(sampled.expected_overlap - exact.expected_overlap) <= 4 * error
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        persons_chains(case, draws=0, tune=0, chains=1, random_seed=0)
    with pytest.raises(ValueError, match="sampler must be one of direct, pymc"):
        sampled_posterior(case, sampler="stan")


def test_rhos_can_name_a_budget_preset():
    # Each count gets the block-level ρ of the query its label names.
    queries, rhos, labels = pl94_queries(REDUCED)
    fields = dict(name="b", n=2, cells=REDUCED.cell_labels(), prior=(1 / 56,) * 56)
    named = ReconstructionCase(
        **fields, queries=queries, rhos="pl94-2020-persons", query_labels=labels
    )
    assert named.rhos == rhos
    assert named.noise() == ReconstructionCase(**fields, queries=queries, rhos=rhos).noise()
    with pytest.raises(ValueError, match="rhos: budget 'pl94-2020-persons' needs query_labels"):
        ReconstructionCase(**fields, queries=queries, rhos="pl94-2020-persons")
    with pytest.raises(
        ValueError, match="rhos: a string names a budget preset or file; rhos must be a preset"
    ):
        ReconstructionCase(**fields, queries=queries, rhos="2030", query_labels=labels)
