"""Exact sums over the release grid (adversary.measures.exact): brute force, closed forms."""

import itertools

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary.distributions import DiscreteGaussian, FinitePmf
from adversary.measures.decision import TIE_RULES
from adversary.measures.exact import exact_measures, release_grid
from adversary.measures.monte_carlo import monte_carlo_measures
from adversary.model_files import load_case
from adversary.noise import discrete_gaussian

RHO = 0.25
SIGMA2 = 1 / (2 * RHO)


def cell_attack(prior, releases=(1, 0, 0), known=(0, 0, 0), rho=RHO):
    """The target's cell among K: latent C, counts known + e_C, each released with DG noise."""
    known = np.asarray(known, dtype=np.int64)
    k = len(known)
    with pm.Model() as model:
        cell = FinitePmf("C", support=list(range(k)), probs=prior)
        counts = pt.as_tensor(known) + pt.cast(pt.eq(pt.arange(k), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, observed=list(releases))
    return model


def brute_force(prior, truth, rule, known=(0, 0, 0), reach=16):
    """(3.3) and (3.6) by summing over every release vector within ±reach of the truth's counts."""
    prior, known = np.asarray(prior), np.asarray(known)
    k = len(known)
    counts = known + np.eye(k, dtype=np.int64)  # row c: the counts if C = c
    z = np.arange(-reach, reach + 1)
    noise = discrete_gaussian.pmf(z, SIGMA2)
    posterior_sum = credit_sum = 0.0
    for offsets in itertools.product(range(z.size), repeat=k):
        release = counts[truth] + z[list(offsets)]
        weight = np.prod(noise[list(offsets)])
        log_w = np.log(prior) - ((release - counts) ** 2).sum(axis=1) / (2 * SIGMA2)
        post = np.exp(log_w - np.logaddexp.reduce(log_w))
        best = log_w.max()
        tied = np.flatnonzero(log_w >= best - 1e-9)
        if rule == "split":
            credit = (truth in tied) / len(tied)
        else:
            credit = float((tied[-1] if rule == "largest" else tied[0]) == truth)
        posterior_sum += weight * post[truth]
        credit_sum += weight * credit
    return posterior_sum, credit_sum


@pytest.mark.parametrize("rule", TIE_RULES)
@pytest.mark.parametrize(
    ("prior", "truth"), [((1 / 3, 1 / 3, 1 / 3), 0), ((0.5, 0.3, 0.2), 2), ((0.2, 0.2, 0.6), 1)]
)
def test_exact_measures_equal_a_brute_force_sum(prior, truth, rule):
    measures = exact_measures(cell_attack(prior), {"C": truth}, tie_rule=rule)
    posterior, credit = brute_force(prior, truth, rule)
    assert measures.method == "exact" and measures.tie_rule == rule
    # the brute force omits |z| > 16 in each cell: P ~ 1e-58
    assert measures.marginal_posterior == pytest.approx(posterior, abs=measures.error_bound + 1e-15)
    assert measures.correct_decision_probability == pytest.approx(
        credit, abs=measures.error_bound + 1e-15
    )
    assert measures.marginal_risk == pytest.approx(posterior / prior[truth], rel=1e-9)
    assert measures.prior_of_truth == pytest.approx(prior[truth], rel=1e-15)
    assert 0 < measures.omitted_mass <= 1e-12


def test_uniform_prior_ties_carry_release_mass_and_the_rules_differ():
    """Three categories under a uniform prior: 1/6 or more of the release mass is tied."""
    values = {
        rule: exact_measures(
            cell_attack((1 / 3,) * 3), {"C": 0}, tie_rule=rule
        ).correct_decision_probability
        for rule in TIE_RULES
    }
    assert values["smallest"] > values["split"] > values["largest"]
    assert values["smallest"] - values["largest"] > 0.1


def test_exact_agrees_with_monte_carlo_within_its_standard_error():
    model = cell_attack((0.5, 0.3, 0.2))
    exact = exact_measures(model, {"C": 1})
    mc = monte_carlo_measures(model, {"C": 1}, releases=4000, random_seed=12)
    se = mc.details["standard_errors"]
    assert abs(mc.marginal_posterior - exact.marginal_posterior) <= 4 * se["marginal_posterior"]
    assert abs(mc.correct_decision_probability - exact.correct_decision_probability) <= (
        4 * se["correct_decision_probability"]
    )


@pytest.mark.parametrize("name", ["dare_county", "granville_county"])
def test_exact_measures_equal_the_closed_forms_of_shipped_cases(name):
    case = load_case(name)
    for label in list(case.priors)[:2]:
        closed = case.marginal_measures(label)
        exact = exact_measures(case.model(label), case.true_latents, tie_rule="largest")
        bound = exact.error_bound + closed.error_bound
        assert exact.marginal_posterior == pytest.approx(closed.marginal_posterior, abs=bound)
        assert exact.correct_decision_probability == pytest.approx(
            closed.correct_decision_probability, abs=bound
        )


def test_release_grid_leaves_out_at_most_the_tail_mass():
    grid = release_grid(cell_attack((0.5, 0.3, 0.2)), {"C": 0}, tail_mass=1e-9)
    assert grid.omitted_mass <= 1e-9
    assert grid.probability.sum() == pytest.approx(1 - grid.omitted_mass, abs=1e-15)
    assert set(grid.windows) == {"releases[0]", "releases[1]", "releases[2]"}
    # every release set kept is on the grid and has its product-of-DG probability
    first = {name: array[:5] for name, array in grid.releases.items()}
    counts = np.array([1, 0, 0])
    expected = discrete_gaussian.pmf(first["releases"] - counts, SIGMA2).prod(axis=1)
    np.testing.assert_allclose(grid.probability[:5], expected, rtol=1e-12)


def test_a_grid_too_large_is_refused_before_it_is_built():
    case = load_case("unique_many_levels")
    with pytest.raises(ValueError, match=r"^max_releases: the release grid needs \d+ release sets"):
        exact_measures(case.model(), case.true_latents, max_releases=10_000)


def test_continuous_releases_have_no_grid():
    with pm.Model() as model:
        x = FinitePmf("X", support=[0, 1], probs=[0.5, 0.5])
        pm.Normal("release", mu=x, sigma=1.0, observed=0.3)
    with pytest.raises(TypeError, match="not integers, so there is no release grid"):
        exact_measures(model, {"X": 1})


def test_the_smallest_releases_dropped_by_exponent_are_those_a_full_sort_drops():
    """``drop_count`` (only the exponent where the total reaches the budget sorted) against
    sorting every value: the same count and cut on continuous values, zeros first, and on
    ties a count whose total is within the budget while one more would not be (to rounding)."""
    from adversary.measures._dropping import drop_count as _drop_count

    rng = np.random.default_rng(26)
    budget = 5e-13
    for size in (0, 1, 7, 300, 5000):
        values = np.exp(-rng.uniform(27.0, 60.0, size))
        values[: size // 10] = 0.0
        ordered = np.sort(values)
        n = int(np.searchsorted(np.cumsum(ordered), budget, side="right"))
        count, cut = _drop_count(values, budget)
        assert count == n
        if n:
            assert cut == ordered[n - 1]
    tied = rng.choice([0.0, 3e-15, 1e-14, 2e-14, 4e-13], 400)
    count, cut = _drop_count(tied, budget)
    ordered = np.sort(tied)
    assert ordered[:count].sum() <= budget * (1 + 1e-12)
    assert ordered[: count + 1].sum() > budget * (1 - 1e-12)
    assert cut == ordered[count - 1]
