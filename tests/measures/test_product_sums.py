"""The product release grid's sums in one compiled pass against brute force and the chunked route.

``grid_sums`` (adversary/measures/_fused_kernel.py) is checked against a numpy
enumeration of every release set that uses the package's own decision rule
(``truth_credit``) and tail estimate (``geometric_tail``), on random tables with
far-apart likeliest cells (the weights' underflow path) and exact ties; then
``exact_measures`` with and without it agree on models with finite and unbounded
latents, under every tie rule.
"""

import itertools
import math

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy.special import logsumexp

import adversary.measures.exact as exact
import adversary.measures.product_sums as product_sums
from adversary.distributions import BernoulliCount, DiscreteGaussian, FinitePmf, ImproperUniform
from adversary.inference.grid import geometric_tail
from adversary.measures._fused_kernel import IMPOSSIBLE, NAN, OK, RULES, grid_sums
from adversary.measures.decision import TIE_TOLERANCE, truth_credit

_RATIO = math.exp(-TIE_TOLERANCE)


def _brute(release_logp, tables, offsets, kept, prior, event, target, n_target, true, groups, rule):
    """Every kept release set's posterior from its log-p, summed as exact_measures does."""
    ranges = [range(offsets[k], offsets[k + 1]) for k in range(len(offsets) - 1)]
    sums = np.zeros(3)
    tails = np.zeros(len(groups) // 2)
    for position, rows in enumerate(itertools.product(*ranges)):
        if position not in kept:
            continue
        log_joint = prior + sum(tables[r] for r in rows)
        posterior = np.exp(log_joint - logsumexp(log_joint))
        pmf = np.bincount(target, weights=posterior, minlength=n_target)
        with np.errstate(divide="ignore"):
            credit = float(truth_credit(np.log(pmf), true, rule)) if true >= 0 else 0.0
        omitted = 0.0
        for s in range(len(tails)):
            edge, inner = (posterior[groups[2 * s + i]].sum() for i in (0, 1))
            tail = float(geometric_tail(edge, inner))
            tails[s] = max(tails[s], tail)
            omitted += tail
        weight = math.exp(sum(release_logp[r] for r in rows))
        sums += weight * np.array([posterior @ event, credit, min(omitted, 1.0)])
    return sums, tails


def _case(rng, widths, n_cells, spread):
    offsets = np.cumsum([0, *widths]).astype(np.int64)
    release_logp = np.log(rng.dirichlet(np.ones(offsets[-1])))
    tables = rng.normal(0.0, spread, (offsets[-1], n_cells))
    prior = np.log(rng.dirichlet(np.ones(n_cells)))
    return offsets, release_logp, tables, prior


def _each_cell(n_cells):
    return np.arange(n_cells, dtype=np.int64), n_cells


_NO_SIDES = (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64))


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("spread", [1.0, 400.0])  # 400: products of exponentials underflow
@pytest.mark.parametrize("grouped", [False, True])
def test_grid_sums_equal_the_brute_force_sums(rule, spread, grouped):
    """Cells a 2 × 3 grid; grouped: the last scalar's likelihood depends on the first latent
    alone, and the kernel is told so (two groups of three cells)."""
    rng = np.random.default_rng(26)
    offsets, release_logp, tables, prior = _case(rng, (3, 4, 5), 6, spread)
    if grouped:
        last = tables[offsets[2] :]
        last[:, :3], last[:, 3:] = last[:, :1].copy(), last[:, 3:4].copy()
    kept = np.flatnonzero(rng.random(60) < 0.8)
    event = (np.arange(6) % 2).astype(np.float64)
    target = np.array([0, 0, 1, 1, 2, 2])
    groups = [np.array([0, 1]), np.array([2, 3]), np.array([4]), np.array([], dtype=np.int64)]
    cells = np.concatenate(groups).astype(np.int64)
    starts = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    by_latent = (np.array([0, 0, 0, 1, 1, 1]), 2) if grouped else _each_cell(6)
    args = (release_logp, tables, offsets, kept, prior, event, target, 3, 1)
    status, sums, tails, summed = grid_sums(*args, cells, starts, RULES[rule], _RATIO, *by_latent)
    expected, expected_tails = _brute(*args, groups, rule)
    assert status == OK and summed == len(kept)
    np.testing.assert_allclose(sums, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(tails, expected_tails, rtol=1e-12)


@pytest.mark.parametrize("rule", list(RULES))
def test_grid_sums_split_exact_ties_by_the_rule(rule):
    """Two target values with the same posterior on every release set (a symmetric model)."""
    offsets = np.array([0, 3, 6], dtype=np.int64)
    release_logp = np.log(np.full(6, 1 / 3))
    tables = np.tile(np.array([[-1.0, -1.0, -3.0]]), (6, 1))
    prior = np.log(np.array([0.4, 0.4, 0.2]))
    args = (release_logp, tables, offsets, np.arange(9), prior, np.ones(3), np.arange(3), 3)
    for true in (0, 1, 2):
        _, sums, _, _ = grid_sums(*args, true, *_NO_SIDES, RULES[rule], _RATIO, *_each_cell(3))
        expected = {"split": [0.5, 0.5, 0.0], "smallest": [1, 0, 0], "largest": [0, 1, 0]}
        assert sums[1] == pytest.approx(expected[rule][true], abs=1e-15)


def test_grid_sums_report_an_impossible_release_set_and_a_nan():
    offsets, release_logp, tables, prior = _case(np.random.default_rng(1), (2, 2), 3, 1.0)
    rest = (np.ones(3), np.zeros(3, dtype=np.int64), 1, 0, *_NO_SIDES, 0, _RATIO, *_each_cell(3))
    impossible = tables.copy()
    impossible[3] = -np.inf  # the second scalar's second value rules every cell out
    status, *_, where = grid_sums(release_logp, impossible, offsets, np.arange(4), prior, *rest)
    assert (status, where) == (IMPOSSIBLE, 1)
    broken = tables.copy()
    broken[0, 1] = np.nan
    status, *_, where = grid_sums(release_logp, broken, offsets, np.arange(4), prior, *rest)
    assert (status, where) == (NAN, 0)


def _cells(prior=(0.5, 0.3, 0.2), rho=0.3, releases=(6, 2, 1), known=(5, 2, 0)):
    known = np.asarray(known, dtype=np.int64)
    with pm.Model() as model:
        cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.as_tensor(known) + pt.cast(pt.eq(pt.arange(3), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, convention="das", observed=releases)
    return model


def _block_group(rho=0.2):
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=0.5)
        x2 = ImproperUniform("X2", lower=x1)
        DiscreteGaussian("x1_release", mu=x1, rho=rho, observed=2)
        DiscreteGaussian("x2_release", mu=x2, rho=0.25, observed=1)
        DiscreteGaussian("y1_release", mu=x2 - x1, sigma2=27 / (2 * rho), observed=-1)
    return model


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize(
    "build, truth",
    [
        (_cells, {"C": 0}),
        (lambda: _cells(prior=(0.4, 0.4, 0.2), known=(3, 3, 0)), {"C": 1}),  # ties
        (_block_group, {"X1": 1, "X2": 1}),  # an unbounded latent: windows grow
    ],
)
def test_exact_measures_are_those_of_the_chunked_route(monkeypatch, build, truth, rule):
    model = build()
    fused = exact.exact_measures(model, truth, tie_rule=rule, random_seed=3)
    monkeypatch.setattr(product_sums, "product_sums_take", lambda *args: False)
    chunked = exact.exact_measures(model, truth, tie_rule=rule, random_seed=3)
    assert fused.details["releases"] == chunked.details["releases"]
    assert fused.omitted_mass == chunked.omitted_mass
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert getattr(fused, name) == pytest.approx(getattr(chunked, name), rel=1e-12)
    assert fused.details["latent_omitted_mass"] == pytest.approx(
        chunked.details["latent_omitted_mass"], rel=1e-9, abs=1e-300
    )
