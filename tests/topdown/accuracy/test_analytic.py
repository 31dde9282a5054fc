"""The linear TopDown estimator's exact variance: closed forms, a reference estimator written
out with numpy (Monte Carlo, and its exact linear map on random trees), and bad input."""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_geography
from adversary.scenarios.reconstruction import DETAILED, PL94_QUERIES, REDUCED
from adversary.scenarios.reconstruction.classification import Classification
from adversary.topdown.accuracy import (
    analytic_accuracy,
    level_forms,
    metric_vectors,
    simulated_accuracy,
    unit_variances,
)
from adversary.topdown.queries import query_matrix

SMALL = Classification((("hhgq", 2), ("voting_age", 2), ("hispanic", 2), ("race", 2)))
TREE_LEVELS = ("state", "county", "tract", "block_group", "block")


def reference_estimates(matrix, variances, parents, measurements, totals):
    """The linear TopDown estimator written out (per level, units × cells × draws).

    ``measurements[d]`` is level d's noisy counts (units × rows × draws); each unit's cells are
    the weighted least-squares fit of its measured rows; the state's is then refitted to its
    total ``totals`` (the KKT system of min (x − x̂)ᵀM(x − x̂) s.t. 1ᵀx = T); the children of
    each parent move by an equal share of the parent's published cells minus their sum.
    """
    n_cells = matrix.shape[1]
    out = []
    for depth, (v, parent, y) in enumerate(zip(variances, parents, measurements, strict=True)):
        measured = np.isfinite(v)
        scale = 1.0 / np.sqrt(v[measured])
        weighted = matrix[measured] * scale[:, None]
        units, _, draws = y.shape
        rhs = (
            (y[:, measured, :] * scale[None, :, None]).transpose(1, 0, 2).reshape(-1, units * draws)
        )
        fit = np.linalg.lstsq(weighted, rhs, rcond=None)[0]
        fit = fit.reshape(n_cells, units, draws).transpose(1, 0, 2)
        if depth == 0:
            information = weighted.T @ weighted
            kkt = np.block([[information, np.ones((n_cells, 1))], [np.ones((1, n_cells)), 0]])
            for u in range(units):
                right = np.vstack([information @ fit[u], np.broadcast_to(totals, (1, draws))])
                fit[u] = np.linalg.solve(kkt, right)[:n_cells]
        else:
            parent = np.asarray(parent)
            sums = np.zeros_like(out[-1])
            np.add.at(sums, parent, fit)
            n = np.bincount(parent, minlength=out[-1].shape[0])
            fit = fit + ((out[-1] - sums) / np.maximum(n, 1)[:, None, None])[parent]
        out.append(fit)
    return out


def sherman_morrison_forms(vector, sigma2_total, sigma2_detailed):
    """aᵀΣa for Σ = (11ᵀ/σ_t² + I/σ_d²)⁻¹ = σ_d² I − σ_d⁴ 11ᵀ/(σ_t² + nσ_d²)."""
    n, k = vector.size, vector.sum()
    return k * sigma2_detailed - k**2 * sigma2_detailed**2 / (sigma2_total + n * sigma2_detailed)


def test_one_level_one_unit_is_the_gls_covariance_closed_form(make_allocation, make_tables):
    allocation = make_allocation({"state": {"total": 1, "detailed": 3}}, rho_total=2)
    sigma2_total, sigma2_detailed = 1 / 0.5, 1 / 1.5  # das: σ² = 1/ρ
    metrics = metric_vectors(REDUCED)
    forms = level_forms(allocation, "state", metrics.matrix, query_matrix(REDUCED), "das")
    expected = [sherman_morrison_forms(a, sigma2_total, sigma2_detailed) for a in metrics.matrix]
    np.testing.assert_allclose(forms, expected, rtol=1e-12)
    assert forms[0] == pytest.approx(56 * 2 / 3 * 2 / (2 + 56 * 2 / 3))  # the harmonic mean
    # the state is held to its total: aᵀΣa − (aᵀΣ1)²/(1ᵀΣ1)
    variances = unit_variances(allocation, make_tables([[-1]]), levels=("state",))
    sigma = sigma2_detailed * np.eye(56) - sigma2_detailed**2 / (
        sigma2_total + 56 * sigma2_detailed
    )
    cross = metrics.matrix @ sigma @ np.ones(56)
    constrained = np.array(expected) - cross**2 / sigma.sum()
    np.testing.assert_allclose(variances["state"]["variance"].values[:, 0], constrained, atol=1e-12)
    assert variances["state"]["variance"].values[0, 0] == pytest.approx(0.0, abs=1e-12)
    # (one level, paper convention: σ² = 1/(2ρ))
    paper = level_forms(allocation, "state", metrics.matrix, query_matrix(REDUCED), "paper")
    np.testing.assert_allclose(paper, np.array(expected) / 2, rtol=1e-12)


def test_detailed_only_with_equal_shares_is_the_per_cell_closed_form(make_allocation, make_tables):
    levels = ("state", "county", "tract")
    allocation = make_allocation({level: {"detailed": 1} for level in levels}, rho_total=3)
    sigma2 = 1.0  # each level ρ = 1, das
    # state 1 unit; 3 counties; tracts: 1, 2 and 3 in the counties
    geography = make_tables([[-1], [0, 0, 0], [0, 1, 1, 2, 2, 2]])
    cells = unit_variances(allocation, geography, np.eye(56), levels=levels)
    state = sigma2 * (1 - 1 / 56)
    county = (1 - 1 / 3) * sigma2 + state / 9
    tract_n = {1: (1 - 1) * sigma2 + county, 2: sigma2 / 2 + county / 4}
    tract_n[3] = (1 - 1 / 3) * sigma2 + county / 9
    np.testing.assert_allclose(cells["state"]["variance"].values, state, rtol=1e-12)
    np.testing.assert_allclose(cells["county"]["variance"].values, county, rtol=1e-12)
    expected = np.array([tract_n[1], tract_n[2], tract_n[2], tract_n[3], tract_n[3], tract_n[3]])
    np.testing.assert_allclose(
        cells["tract"]["variance"].values, np.broadcast_to(expected, (56, 6)), rtol=1e-12
    )
    # the metrics, and their means over units: total, voting age (28 cells), hispanic × race (4)
    accuracy = analytic_accuracy(allocation, geography, levels=levels)
    total = {"state": 0.0, "county": (2 / 3) * 56 * sigma2}
    tract_total = {n: (1 - 1 / n) * 56 * sigma2 + total["county"] / n**2 for n in (1, 2, 3)}
    tract_families = np.array([1, 2, 2, 3, 3, 3])
    total["tract"] = np.mean([tract_total[n] for n in tract_families])
    for level in levels:
        assert accuracy["variance"].sel(metric="total", level=level) == pytest.approx(
            total[level], abs=1e-9
        )
    voting_state = 28 * sigma2 - 28**2 * sigma2 / 56
    assert accuracy["variance"].sel(metric="voting_age", level="state") == pytest.approx(
        voting_state
    )
    hispanic_race_county = (2 / 3) * 4 * sigma2 + (4 - 16 / 56) * sigma2 / 9
    assert accuracy["variance"].sel(metric="hispanic_race", level="county") == pytest.approx(
        hispanic_race_county
    )
    np.testing.assert_allclose(accuracy["rmse"], np.sqrt(accuracy["variance"]))
    tract_sd = np.sqrt([tract_total[n] for n in tract_families])
    assert accuracy["mae"].sel(metric="total", level="tract") == pytest.approx(
        np.sqrt(2 / np.pi) * tract_sd.mean()
    )


def test_detailed_classification_total_closed_form(make_allocation, make_tables):
    allocation = make_allocation({"state": {"detailed": 1}, "county": {"detailed": 1}})
    accuracy = analytic_accuracy(
        allocation, make_tables([[-1], [0, 0]]), classification=DETAILED, levels=("county",)
    )
    # ρ = 1/2 per level: σ² = 2 per cell; two counties split the state's exact total
    assert accuracy["variance"].sel(metric="total", level="county") == pytest.approx(0.5 * 2016 * 2)


def test_two_level_tree_matches_a_monte_carlo_of_the_reference_estimator(make_tables):
    allocation = get_preset()
    queries = query_matrix(REDUCED)
    rng = np.random.default_rng(24)
    draws, counties = 10_000, 3
    truth = rng.integers(0, 6, size=(counties, 56)).astype(np.float64)
    state_truth = truth.sum(axis=0, keepdims=True)
    variances = [queries.variances(allocation, level, "das") for level in ("state", "county")]
    measurements = [
        (queries.matrix @ x.T).T[:, :, None]
        + rng.normal(size=(x.shape[0], v.size, draws)) * np.sqrt(v)[None, :, None]
        for x, v in zip((state_truth, truth), variances, strict=True)
    ]
    estimates = reference_estimates(
        queries.matrix, variances, [[-1], [0] * counties], measurements, state_truth.sum()
    )
    metrics = metric_vectors(REDUCED).matrix
    geography = make_tables([[-1], [0] * counties])
    analytic = unit_variances(allocation, geography, levels=("state", "county"))
    for level, estimate, x in zip(
        ("state", "county"), estimates, (state_truth, truth), strict=True
    ):
        errors = np.einsum("kc,ucr->kur", metrics, estimate - x[:, :, None])
        simulated = (errors**2).mean(axis=2)
        exact = analytic[level]["variance"].values
        standard_error = np.sqrt(2 / draws) * exact  # of a Gaussian's mean square
        assert np.all(np.abs(simulated - exact) <= 4.5 * standard_error + 1e-9)
    # the state's invariant: its total is exact in every draw, and its variance 0
    assert np.abs(estimates[0].sum(axis=1) - state_truth.sum()).max() < 1e-8
    assert analytic["state"]["variance"].values[0, 0] == pytest.approx(0.0, abs=1e-9)
    # the same runs as published tables: the simulated mean squared error is the variance
    published = make_tables(
        [[-1], [0] * counties],
        {"state": estimates[0].transpose(2, 0, 1), "county": estimates[1].transpose(2, 0, 1)},
    )
    truth = make_tables([[-1], [0] * counties], {"state": state_truth, "county": truth})
    simulated = simulated_accuracy(published, truth)
    expected = analytic_accuracy(allocation, geography, levels=("state", "county"))
    gap = np.abs(simulated["mse"] - expected["variance"])
    assert bool((gap <= 4.5 * simulated["mse_se"] + 1e-9).all())


@st.composite
def trees_and_weights(draw):
    depth = draw(st.integers(2, 3))
    parents, above = [[-1]], 1
    for _ in range(depth - 1):
        sizes = draw(st.lists(st.integers(1, 3), min_size=above, max_size=above))
        parents.append([p for p, size in enumerate(sizes) for _ in range(size)])
        above = len(parents[-1])
    weights = {}
    for level in TREE_LEVELS[:depth]:
        shares = {q: draw(st.integers(0, 3)) for q in PL94_QUERIES}
        shares["detailed"] = draw(st.integers(1, 3))
        weights[level] = shares
    return parents, weights


@settings(max_examples=25, deadline=None)
@given(trees_and_weights())
def test_random_trees_match_the_reference_estimators_exact_linear_map(
    make_allocation, make_tables, case
):
    parents, weights = case
    allocation = make_allocation(weights, rho_total=3)
    queries = query_matrix(SMALL)
    levels = TREE_LEVELS[: len(parents)]
    variances = [queries.variances(allocation, level, "das") for level in levels]
    # the noise as a basis: column j is noise j alone, scaled by its sd
    sds = [np.where(np.isfinite(v), np.sqrt(v), 0.0) for v in variances]
    total = sum(len(p) * v.size for p, v in zip(parents, variances, strict=True))
    measurements, offset = [], 0
    for parent, sd in zip(parents, sds, strict=True):
        block = np.zeros((len(parent), sd.size, total))
        for u in range(len(parent)):
            block[u, np.arange(sd.size), offset + np.arange(sd.size)] = sd
            offset += sd.size
        measurements.append(block)
    estimates = reference_estimates(queries.matrix, variances, parents, measurements, 0.0)
    vectors = np.vstack([metric_vectors(SMALL).matrix, np.eye(16)[[3, 10]].sum(axis=0)])
    analytic = unit_variances(
        allocation, make_tables(parents), vectors, classification=SMALL, levels=levels
    )
    for level, estimate in zip(levels, estimates, strict=True):
        exact = (np.einsum("kc,ucj->kuj", vectors, estimate) ** 2).sum(axis=2)
        np.testing.assert_allclose(analytic[level]["variance"].values, exact, rtol=1e-8, atol=1e-10)


def test_share_off_is_the_normal_tail_and_zero_for_the_invariant(make_allocation, make_tables):
    allocation = make_allocation({"state": {"detailed": 1}, "county": {"detailed": 1}})
    geography = make_tables([[-1], [0, 0]])
    truth_counts = np.zeros((2, 56), dtype=np.int64)
    truth_counts[0, :] = 3  # county 0: 168 persons, 84 of voting age
    truth = make_tables(
        [[-1], [0, 0]], {"state": truth_counts.sum(axis=0)[None, :], "county": truth_counts}
    )
    accuracy = analytic_accuracy(allocation, geography, levels=("state", "county"), truth=truth)
    sd = np.sqrt(0.5 * 56 * 2)  # county total: (1 − 1/2)·56·σ², σ² = 2
    expected_5 = (2 * stats.norm.sf(0.05 * 168 / sd) + 1.0) / 2  # county 1 is empty: always off
    assert accuracy["share_off_5"].sel(metric="total", level="county") == pytest.approx(expected_5)
    expected_10 = (2 * stats.norm.sf(0.10 * 168 / sd) + 1.0) / 2
    assert accuracy["share_off_10"].sel(metric="total", level="county") == pytest.approx(
        expected_10
    )
    assert accuracy["share_off_5"].sel(metric="total", level="state") == 0.0
    assert "share_off_5" not in analytic_accuracy(allocation, geography, levels=("county",))


def test_a_synthetic_geography_is_read_as_its_table_format(make_allocation):
    geography = synthetic_geography(3_000, seed=2)
    blocks = geography.blocks
    nodes = {}
    for upper, level in zip((None, *TREE_LEVELS), TREE_LEVELS, strict=False):
        pairs = blocks[[level] + ([upper] if upper else [])].drop_duplicates()
        parent = pairs[upper].to_numpy() if upper else np.full(len(pairs), -1)
        nodes[level] = xr.Dataset(
            coords={"unit": pairs[level].to_numpy(), "parent": ("unit", parent)}
        )
    allocation = get_preset()
    from_blocks = unit_variances(allocation, geography)
    from_tables = unit_variances(allocation, xr.DataTree.from_dict(nodes))
    for level in TREE_LEVELS:
        xr.testing.assert_allclose(from_blocks[level].dataset, from_tables[level].dataset)
    assert from_blocks["block"].sizes["unit"] == blocks.shape[0]


def test_a_level_the_queries_do_not_identify_is_refused_naming_budget(make_allocation, make_tables):
    allocation = make_allocation({"state": {"detailed": 1}, "county": {"total": 1, "race": 1}})
    with pytest.raises(ValueError, match=r"^budget: .*level 'county' \(race, total\) do not"):
        analytic_accuracy(allocation, make_tables([[-1], [0, 0]]), levels=("county",))


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"levels": ("county", "nation")}, ValueError, "^levels must be distinct names"),
        ({"levels": ()}, ValueError, "^levels must be"),
        ({"vectors": np.ones((2, 5))}, ValueError, r"^vectors must be \(vectors × 56 cells\)"),
        ({"geography": "a state"}, TypeError, "^geography must be"),
        ({"allocation": "pl94"}, TypeError, "^budget must be a BudgetAllocation"),
        ({"convention": "loose"}, ValueError, "^convention"),
    ],
)
def test_bad_arguments_are_named(make_tables, arguments, error, match):
    call = {
        "allocation": get_preset(),
        "geography": make_tables([[-1], [0, 0]]),
        "vectors": None,
        "levels": ("state", "county"),
        "convention": "das",
    } | arguments
    with pytest.raises(error, match=match):
        unit_variances(call.pop("allocation"), call.pop("geography"), call.pop("vectors"), **call)


def test_a_truth_without_the_geographys_units_is_refused(make_tables):
    geography = make_tables([[-1], [0, 0]])
    truth = make_tables([[-1], [0]], {"state": np.ones((1, 56)), "county": np.ones((1, 56))})
    with pytest.raises(ValueError, match=r"^truth\['county'\] must hold the same units"):
        analytic_accuracy(get_preset(), geography, truth=truth, levels=("county",))
    negative = make_tables([[-1], [0, 0]], {"state": -np.ones((1, 56)), "county": np.ones((2, 56))})
    with pytest.raises(ValueError, match=r"^truth\['state'\] counts must be a count >= 0"):
        analytic_accuracy(get_preset(), geography, truth=negative, levels=("state",))


def test_unit_variances_default_to_every_level_of_the_geography(make_tables):
    variances = unit_variances(get_preset(), make_tables([[-1], [0, 0], [0, 1, 1]]))
    assert tuple(variances.children) == ("state", "county", "tract")
    np.testing.assert_array_equal(variances["tract"]["parent"], [200, 201, 201])
