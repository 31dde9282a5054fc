"""Block-group attack (Sec. 3.2, S3) under other noise: DG equivalence, brute force."""

import dataclasses

import numpy as np
import pytest

from adversary.inference import enumerate_posterior
from adversary.noise import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
)
from adversary.scenarios import block_group as bg
from adversary.scenarios.block_group.case import BlockGroupCase
from adversary.scenarios.block_group.prior import bounded_uniform, improper_uniform
from adversary.scenarios.block_group.releases import decision_map

RHO1 = 2.56 * 165 / 4099 * 3945 / 4097
RHO2 = 2.56 * 1256 / 4099 * 1288 / 4099
PAIRS = {
    "laplace": (DiscreteLaplaceNoise.from_variance(1.5), DiscreteLaplaceNoise.from_variance(1.0)),
    "cell key": (CellKeyNoise(1.0, 2), CellKeyNoise(2.0, 3)),
    "mixed": (CellKeyNoise(1.5, 3), FinitePmfNoise(-1, [0.3, 0.0, 0.5, 0.2])),
}
REACH = 40  # |z| beyond which these mechanisms' pmfs are below 1e-20


class Brute:
    """The block-group posterior by Bayes' rule on explicit grids (the sum noise by convolution)."""

    def __init__(self, block, group, d, x2_prior, known=0, k2_max=150):
        self.block, self.group, self.known = block, group, known
        z = np.arange(-REACH, REACH + 1)
        one = block.pmf(z)
        table = one
        for _ in range(d - 1):
            table = np.convolve(table, one)
        self.y_start, self.y_table = -REACH * d, table
        self.k2 = np.arange(known, k2_max + 1)
        self.x2_prior = x2_prior

    def y_pmf(self, w):
        index = np.asarray(w) - self.y_start
        inside = (index >= 0) & (index < self.y_table.size)
        return np.where(inside, self.y_table[np.clip(index, 0, self.y_table.size - 1)], 0.0)

    def sums(self, x2r, y1r, k1):
        """S_k1(x2*, y1*) = Σ_k2 P[k2 | k1] N2(x2* - k2) Ny(y1* + k1 - k2), broadcast."""
        k2 = self.k2
        prior = np.exp(self.x2_prior.log_prior(k2, k1))
        terms = (
            prior
            * self.group.pmf(np.asarray(x2r)[..., None] - k2)
            * self.y_pmf(np.asarray(y1r)[..., None] + k1 - k2)
        )
        return terms.sum(axis=-1)

    def posterior(self, x1r, x2r, y1r, p):
        m = self.known
        with_c = p * self.block.pmf(np.asarray(x1r) - m - 1) * self.sums(x2r, y1r, m + 1)
        without = (1 - p) * self.block.pmf(np.asarray(x1r) - m) * self.sums(x2r, y1r, m)
        return with_c / (with_c + without)

    def marginals(self, truth, p):
        x1, x2, y1 = truth
        z = np.arange(-REACH, REACH + 1)
        z1, z2 = z[self.block.pmf(z) > 0], z[self.group.pmf(z) > 0]
        zy = np.arange(self.y_start, self.y_start + self.y_table.size)[self.y_table > 0]
        x1r, x2r, y1r = x1 + z1, x2 + z2, y1 + zy
        weights = (
            self.block.pmf(z1)[:, None, None]
            * self.group.pmf(z2)[None, :, None]
            * self.y_pmf(zy)[None, None, :]
        )
        post = self.posterior(x1r[:, None, None], x2r[None, :, None], y1r[None, None, :], p)
        of_truth = post if x1 == self.known + 1 else 1 - post
        decided = np.where(post >= 0.5, self.known + 1, self.known)
        return float(np.sum(weights * of_truth)), float(np.sum(weights * (decided == x1)))


@pytest.mark.parametrize("convention", ["paper", "das"])
@pytest.mark.parametrize("sum_noise", [None, "approximate", "exact"])
def test_equivalent_discrete_gaussians_give_identical_numbers(convention, sum_noise):
    pair = tuple(DiscreteGaussianNoise.from_rho(r, convention) for r in (RHO1, RHO2))
    common = {"prior": 0.3, "d": 27, "sum_noise": sum_noise}
    for x2_prior in (improper_uniform(), bounded_uniform(10)):
        left = bg.posterior(1, 2, 0, x2_prior=x2_prior, mechanism=pair, **common)
        right = bg.posterior(
            1, 2, 0, rho1=RHO1, rho2=RHO2, convention=convention, x2_prior=x2_prior, **common
        )
        assert left.identical(right)
    left = decision_map((1, 1, 0), mechanism=pair, **common)
    right = decision_map((1, 1, 0), rho1=RHO1, rho2=RHO2, convention=convention, **common)
    assert left.identical(right)
    case = BlockGroupCase(
        "dg", (1, 2, 0), (1, 1, 0), {"a": 0.5}, RHO1, RHO2, 27, convention=convention
    )
    as_mechanism = dataclasses.replace(case, rho1=None, rho2=None, mechanism=pair)
    assert as_mechanism.sum_noise == case.sum_noise == "approximate"
    assert as_mechanism.marginal_measures() == case.marginal_measures()


@pytest.mark.parametrize("pair", list(PAIRS), ids=list(PAIRS))
@pytest.mark.parametrize(
    "x2_prior", [improper_uniform(), bounded_uniform(12)], ids=["improper", "bounded"]
)
def test_posterior_against_bayes_rule(pair, x2_prior):
    block, group = PAIRS[pair]
    brute = Brute(block, group, 3, x2_prior)
    for releases in ((1, 4, 3), (3, 2, 0), (-1, 6, 7)):
        if brute.sums(releases[1], releases[2], 0) + brute.sums(releases[1], releases[2], 1) == 0:
            continue
        expected = brute.posterior(*releases, 0.3)
        table = bg.posterior(*releases, prior=0.3, d=3, x2_prior=x2_prior, mechanism=PAIRS[pair])
        assert table.attrs["omitted_mass"] == 0.0 and table.attrs["sum_noise"] == "exact"
        assert float(table.isel(X1=1).sum()) == pytest.approx(float(expected), abs=1e-13)


@pytest.mark.parametrize("pair", list(PAIRS), ids=list(PAIRS))
@pytest.mark.parametrize("truth", [(1, 4, 3), (0, 2, 2)])
def test_decision_map_marginals_against_brute_force(pair, truth):
    block, group = PAIRS[pair]
    brute = Brute(block, group, 2, improper_uniform())
    result = decision_map(truth, prior=0.3, d=2, mechanism=PAIRS[pair])
    post, correct = brute.marginals(truth, 0.3)
    omitted = result.attrs["omitted_mass"]
    assert result.attrs["marginal_posterior"] == pytest.approx(post, abs=omitted + 1e-13)
    assert result.attrs["correct_decision_probability"] == pytest.approx(
        correct, abs=omitted + 1e-13
    )
    if block.bounded and group.bounded:
        assert omitted < 1e-15
    # Each release's posterior on the grid is the one-release posterior.
    point = result.isel(x1_release=1, x2_release=2, y1_release=3)
    releases = [int(point[name]) for name in ("x1_release", "x2_release", "y1_release")]
    assert float(point["posterior"]) == pytest.approx(
        float(brute.posterior(*releases, 0.3)), abs=1e-12
    )


def test_bounded_noise_settles_x1_and_approximation_is_refused():
    block = PAIRS["cell key"][0]  # block noise within ±2
    # x1* = m + 1 + 2 = 3 is out of reach of X1 = 0: the posterior of X1 = 1 is exactly 1.
    table = bg.posterior(3, 4, 3, prior=1e-4, d=3, mechanism=PAIRS["cell key"])
    assert float(table.isel(X1=0).sum()) == 0.0
    assert float(table.isel(X1=1).sum()) == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(ValueError, match="approximation"):
        bg.posterior(1, 2, 0, prior=0.5, d=3, sum_noise="approximate", mechanism=block)
    with pytest.raises(ValueError, match="not both"):
        bg.posterior(1, 2, 0, prior=0.5, rho1=RHO1, rho2=RHO2, d=3, mechanism=block)
    with pytest.raises(ValueError, match="impossible"):
        bg.posterior(40, 2, 0, prior=0.5, d=3, mechanism=PAIRS["cell key"])


def test_case_with_mechanisms_and_its_model():
    pair = PAIRS["mixed"]
    case = BlockGroupCase(
        "mixed", (1, 3, 2), (1, 3, 2), {"1/2": 0.5, "1/10": 0.1}, None, None, 2, mechanism=pair
    )
    assert case.sum_noise == "exact" and case.mechanism == pair
    brute = Brute(*pair, 2, improper_uniform())
    measures = case.marginal_measures("1/10")
    post, correct = brute.marginals((1, 3, 2), 0.1)
    assert measures.marginal_posterior == pytest.approx(post, abs=1e-13)
    assert measures.correct_decision_probability == pytest.approx(correct, abs=1e-13)
    model = dataclasses.replace(case, x2_prior=bounded_uniform(15)).model("1/10")
    table = enumerate_posterior(model).marginal("X1")
    exact = dataclasses.replace(case, x2_prior=bounded_uniform(15)).posterior("1/10")
    assert float(table.sel(X1=1)) == pytest.approx(float(exact.isel(X1=1).sum()), abs=1e-12)
    with pytest.raises(ValueError, match="approximation"):
        dataclasses.replace(case, sum_noise="approximate")


def test_exact_sum_under_the_das_convention():
    """The exact sum's table (FFT-convolved, ending in zeros) bounds the y1* grid from both ends."""
    common = {"prior": 0.3, "d": 27, "rho1": RHO1, "rho2": RHO2, "convention": "das"}
    exact = decision_map((1, 1, 0), sum_noise="exact", **common)
    approximate = decision_map((1, 1, 0), sum_noise="approximate", **common)
    table = bg.noise_model(RHO1, RHO2, 27, "das", "exact").sum_noise
    top = table.start + table.probabilities.size - 1
    assert int(exact["y1_release"].max()) < top
    for name in ("marginal_posterior", "correct_decision_probability"):
        assert exact.attrs[name] == pytest.approx(approximate.attrs[name], abs=1e-3)
