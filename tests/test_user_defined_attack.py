"""A user-defined attack, written with the public API only: the target's cell among K.

The adversary knows every record of a block except the target's attribute, which
puts the target in exactly one of K cells (say, K race categories): the known
counts of the cells without the target are ``m_1..m_K`` and the target adds 1
to cell ``C``, with prior ``P[C = k] = π_k``. Each cell's count is released with
discrete Gaussian noise, ``x_k* = m_k + 1[C = k] + Z_k``, ``Z_k ~ DG(σ²)``,
``σ² = 1/(2ρ)`` (Kazan & Reiter's convention). The posterior has a closed form
(the multi-cell analogue of (3.1)):

    P[C = k | x*] ∝ π_k exp(-(x_k* - m_k - 1)²/(2σ²)) Π_{j≠k} exp(-(x_j* - m_j)²/(2σ²)).

The model below is what a user writes: a latent cell index, the counts it
implies, and the releases observed. Exact enumeration must equal the closed
form; MCMC must agree with it within 4 Monte Carlo standard errors. The rest
of a user's path — the factory as an attack (``adversary.attack``), its data
holder's measures, priors, sweeps and the command line — is tested on the same
attack in ``tests/scenarios/test_user_attack.py`` and ``tests/test_model_files.py``,
and shown to users in the tutorial ``notebooks/tutorial_write_your_own_attack.ipynb``
and the docs page ``docs/attack-models.md``.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from adversary import inference
from adversary.distributions import DiscreteGaussian, FinitePmf

# (known counts m, prior π, releases x*, ρ): K = 3 and K = 4, block- and
# block-group-level 2020 budgets (paper Table 2) and a weaker privacy setting.
CASES = {
    "K3-block-rho": ([5, 2, 0], [0.5, 0.3, 0.2], [6, 2, 1], 0.0992),
    "K3-uniform": ([3, 3, 0], [1 / 3, 1 / 3, 1 / 3], [4, 5, -1], 0.2465),
    "K4-skewed": ([10, 0, 3, 1], [0.1, 0.2, 0.3, 0.4], [10, 2, 3, 0], 0.5),
    "K4-low-noise": ([0, 7, 1, 2], [0.05, 0.05, 0.45, 0.45], [1, 7, 1, 2], 2.0),
}


def cell_attack(known, prior, releases, rho):
    """The attack as a PyMC model: latent cell ``C``, counts ``m + e_C``, releases observed."""
    known = np.asarray(known, dtype=np.int64)
    k = len(known)
    with pm.Model() as model:
        cell = FinitePmf("C", support=list(range(k)), probs=prior)
        in_cell = pt.cast(pt.eq(pt.arange(k), cell), "int64")
        counts = pm.Deterministic("counts", pt.as_tensor_variable(known) + in_cell)
        DiscreteGaussian("releases", mu=counts, rho=rho, convention="paper", observed=releases)
    return model


def closed_form(known, prior, releases, rho):
    """P[C = k | x*] by the formula in the module docstring, with σ² = 1/(2ρ)."""
    known, releases = np.asarray(known), np.asarray(releases)
    sigma2 = 1 / (2 * rho)
    target = np.eye(len(known), dtype=np.int64)  # row k: the counts' increments if C = k
    log_w = np.log(prior) - ((releases - known - target) ** 2).sum(axis=1) / (2 * sigma2)
    return np.exp(log_w - np.logaddexp.reduce(log_w))


def log_evidence(known, prior, releases, rho):
    """``log P[x*]`` with the discrete Gaussian normaliser summed directly over |z| ≤ 200."""
    sigma2 = 1 / (2 * rho)
    z = np.arange(-200, 201)
    log_norm = np.log(np.exp(-(z**2) / (2 * sigma2)).sum())
    known, releases = np.asarray(known), np.asarray(releases)
    target = np.eye(len(known), dtype=np.int64)
    log_lik = -((releases - known - target) ** 2).sum(axis=1) / (2 * sigma2)
    return float(np.logaddexp.reduce(np.log(prior) + log_lik) - len(known) * log_norm)


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    known, prior, releases, rho = CASES[request.param]
    return {
        "known": known,
        "prior": np.asarray(prior),
        "releases": releases,
        "rho": rho,
        "model": cell_attack(known, prior, releases, rho),
        "exact": closed_form(known, prior, releases, rho),
    }


def test_enumeration_equals_closed_form(case):
    table = inference.enumerate_posterior(case["model"])
    k = len(case["known"])
    assert table.joint.dims == ("C",)
    np.testing.assert_array_equal(table.joint["C"].values, np.arange(k))
    np.testing.assert_allclose(table.joint.values, case["exact"], rtol=1e-12, atol=1e-300)
    assert table.omitted_mass == 0.0
    for cell in range(k):
        assert inference.posterior_probability(table, {"C": cell}) == pytest.approx(
            case["exact"][cell], rel=1e-12
        )
    # The normaliser is the marginal likelihood of the releases: every prior is proper.
    expected = log_evidence(case["known"], case["prior"], case["releases"], case["rho"])
    assert table.log_normaliser == pytest.approx(expected, rel=1e-12)


def test_mcmc_agrees_with_closed_form_within_4_mcse(case):
    tree = inference.sample(
        case["model"], draws=1500, chains=2, cores=1, random_seed=11, progressbar=False
    )
    assert tree["sample_stats"].attrs["start_repaired"] == [0, 0]
    for cell, exact in enumerate(case["exact"]):
        indicator = inference.event_indicator(tree, {"C": cell})
        ess = float(az.ess(indicator))
        mcse = np.sqrt(exact * (1 - exact) / ess)
        estimate = float(indicator.mean())
        assert abs(estimate - exact) <= 4 * mcse, (cell, estimate, exact, mcse, ess)
    # Each draw's counts are the known counts plus the target in the drawn cell.
    draws = tree["posterior"]
    expected = np.asarray(case["known"]) + np.eye(len(case["known"]), dtype=np.int64)[draws["C"]]
    np.testing.assert_array_equal(draws["counts"].values, expected)
    pmf = inference.marginal_pmf(tree, "C", support=range(len(case["known"])))
    assert pmf.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("offset", [-2, 0, 3])
def test_equidistant_releases_leave_the_prior_unchanged(offset):
    """If every x_k* - m_k is the same, no cell is favoured: the posterior is the prior."""
    known, prior = [4, 0, 9], [0.6, 0.3, 0.1]
    releases = [m + offset for m in known]
    table = inference.enumerate_posterior(cell_attack(known, prior, releases, 0.25))
    np.testing.assert_allclose(table.joint.values, prior, rtol=1e-12)


def test_posterior_depends_on_rho_through_the_paper_convention():
    """σ² = 1/(2ρ): the same model written with sigma2 gives the same posterior."""
    known, prior, releases, rho = CASES["K3-block-rho"]
    with pm.Model() as by_sigma2:
        cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.as_tensor_variable(np.asarray(known)) + pt.cast(
            pt.eq(pt.arange(3), cell), "int64"
        )
        DiscreteGaussian("releases", mu=counts, sigma2=1 / (2 * rho), observed=releases)
    np.testing.assert_allclose(
        inference.enumerate_posterior(by_sigma2).joint.values,
        inference.enumerate_posterior(cell_attack(known, prior, releases, rho)).joint.values,
        rtol=1e-12,
    )


def test_releases_drawn_from_the_model_are_the_counts_plus_noise():
    """Prior predictive: the releases are integer draws centred on the implied counts."""
    known, prior, releases, rho = CASES["K4-low-noise"]
    model = cell_attack(known, prior, releases, rho)
    draws = pm.sample_prior_predictive(draws=4000, model=model, random_seed=5)
    cells = draws["prior"]["C"].values.reshape(-1)
    frequencies = np.bincount(cells, minlength=4) / cells.size
    np.testing.assert_allclose(frequencies, prior, atol=4 * np.sqrt(0.25 / cells.size))
    noise = draws["prior_predictive"]["releases"].values.reshape(cells.size, -1) - (
        np.asarray(known) + np.eye(4, dtype=np.int64)[cells]
    )
    assert noise.dtype.kind == "i"
    # DG(σ² = 1/(2ρ) = 0.25), whose variance (a direct sum) is below σ².
    z = np.arange(-50, 51)
    weights = np.exp(-(z**2) / (2 * (1 / (2 * rho))))
    variance = float((z**2 * weights).sum() / weights.sum())
    assert abs(noise.mean()) < 4 * np.sqrt(variance / noise.size)
    assert noise.var() == pytest.approx(variance, abs=4 * np.sqrt(2 * variance / noise.size))
