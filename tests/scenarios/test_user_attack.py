"""A PyMC model factory as an attack (adversary.attack): the protocol, analyses, errors.

The factory here is the K-cell attack of tests/test_user_defined_attack.py and of
the tutorial notebook (notebooks/tutorial_write_your_own_attack.ipynb), which
walk the same path for a user.
"""

import math
import re

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

import adversary
from adversary.analyses.choose_rho import choose_rho, rho_fields
from adversary.analyses.compare import compare_priors, sweep
from adversary.distributions import DiscreteGaussian, FinitePmf
from adversary.measures.exact import exact_measures
from adversary.measures.protocol import Attack
from adversary.scenarios import single_block as sb

PRIORS = {"skewed": (0.5, 0.3, 0.2), "even": (1 / 3, 1 / 3, 1 / 3)}


def cell_attack(prior=(0.5, 0.3, 0.2), rho=0.0992, releases=(6, 2, 1), known=(5, 2, 0)):
    known = np.asarray(known, dtype=np.int64)
    with pm.Model() as model:
        cell = FinitePmf("C", support=list(range(len(known))), probs=prior)
        counts = pt.as_tensor(known) + pt.cast(pt.eq(pt.arange(len(known)), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, observed=list(releases))
    return model


def single_block_factory(prior=0.5, rho=0.0992, release=3):
    """The single-block attack written by hand: its measures are (3.3), (3.4), (3.6)."""
    from adversary.distributions import BernoulliCount

    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=0, p=prior)
        DiscreteGaussian("x1_release", mu=x1, rho=rho, observed=release)
    return model


@pytest.fixture(scope="module")
def cells():
    return adversary.attack(cell_attack, priors=PRIORS, truth={"C": 0})


def test_a_factory_is_an_attack(cells):
    assert isinstance(cells, Attack)
    assert cells.name == "cell_attack" and cells.target == "C"
    assert cells.true_latents == {"C": 0}
    assert cells.parameters() == {
        "rho": 0.0992,
        "releases": (6, 2, 1),
        "known": (5, 2, 0),
        "truth": {"C": 0},
        "tie_rule": "split",
    }
    assert [rv.name for rv in cells.model("even").free_RVs] == ["C"]
    changed = cells.replace(rho=0.5, tie_rule="largest")
    assert changed.parameters()["rho"] == 0.5 and changed.tie_rule == "largest"
    assert cells.parameters()["rho"] == 0.0992  # the original is unchanged


def test_measures_equal_the_exact_route_under_each_prior(cells):
    for label, prior in PRIORS.items():
        direct = exact_measures(cell_attack(prior), {"C": 0}, random_seed=cells.random_seed)
        via = cells.marginal_measures(label)
        assert via.method == "exact"
        assert via.correct_decision_probability == direct.correct_decision_probability
        assert via.marginal_risk == direct.marginal_risk
        # the seed places the release grid's first windows: other windows, within the bound
        other = exact_measures(cell_attack(prior), {"C": 0}, random_seed=7)
        bound = via.error_bound + other.error_bound
        assert abs(other.marginal_posterior - via.marginal_posterior) <= bound
        assert abs(other.correct_decision_probability - via.correct_decision_probability) <= bound


def test_sweep_and_choose_rho_of_a_hand_written_single_block_equal_the_closed_forms():
    attack = adversary.attack(
        single_block_factory, priors={"1/2": 0.5, "1/10": 0.1}, truth={"X1": 1}
    )
    rhos = [0.01, 0.0992, 1.0]
    result = sweep(attack, {"rho": rhos}, progress=False)
    for label, p in (("1/2", 0.5), ("1/10", 0.1)):
        row = result.sel(prior=label)
        bound = row["error_bound"].values + 1e-15
        assert np.all(np.abs(row["marginal_posterior"] - sb.marginal_posterior(p, rhos)) <= bound)
        assert np.all(
            np.abs(row["correct_decision_probability"] - sb.correct_decision_probability(p, rhos))
            <= bound
        )
    assert rho_fields(attack) == ["rho"]
    chosen = choose_rho(attack, 1.1, priors=["1/2"], points_per_decade=5, refine=2, tolerance=0.05)
    closed = choose_rho(
        adversary.load_case("dare_county"),
        1.1,
        priors=["1/2"],
        points_per_decade=5,
        refine=2,
        tolerance=0.05,
    )
    assert chosen.rho == pytest.approx(closed.rho, rel=1e-12)


def test_compare_priors_reports_the_posterior_of_the_truth(cells):
    result = compare_priors(cells)
    assert list(result["prior"].values) == ["skewed", "even"]
    assert result.attrs["target"] == "C = 0"
    np.testing.assert_allclose(
        result["posterior_of_truth"], result["C_posterior"].sel(C=0), rtol=1e-12
    )


def test_a_factory_without_priors_has_one_default_prior():
    attack = adversary.attack(cell_attack, truth={"C": 1})
    assert list(attack.priors) == ["default"]
    assert attack.marginal_measures().prior_of_truth == pytest.approx(0.3)


def test_a_large_release_grid_falls_back_to_monte_carlo(cells):
    small = cells.replace(tie_rule="split")
    from dataclasses import replace

    capped = replace(small, max_releases=100, releases=400)
    measures = capped.marginal_measures("even")
    assert measures.method == "monte-carlo"
    assert measures.details["why_monte_carlo"].startswith("max_releases")
    exact = small.marginal_measures("even")
    se = measures.details["standard_errors"]["correct_decision_probability"]
    assert abs(measures.correct_decision_probability - exact.correct_decision_probability) <= 4 * se


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: adversary.attack(42), "model_fn must be a function returning a pymc.Model"),
        (
            lambda: adversary.attack(lambda rho: pm.Model()),
            r"needs a value for \['rho'\]",
        ),
        (
            lambda: adversary.attack(cell_attack, arguments={"sigma": 1}),
            r"\['sigma'\] are not keyword arguments of cell_attack\(\)",
        ),
        (
            lambda: adversary.attack(lambda rho=1.0: cell_attack(), priors={"a": 0.5}),
            "has no keyword argument 'prior'",
        ),
        (lambda: adversary.attack(lambda: 3), "must return a pymc.Model, got int"),
        (lambda: adversary.attack(cell_attack, target="D"), "target: 'D' is not a latent"),
        (lambda: adversary.attack(cell_attack, tie_rule="first"), "tie_rule must be one of"),
        (lambda: adversary.attack(cell_attack, colour="red"), r"unknown option\(s\) \['colour'\]"),
        (lambda: adversary.attack(cell_attack).marginal_measures(), "truth: cell_attack states"),
        (lambda: adversary.attack(cell_attack).replace(sigma=2), "'sigma' is not a parameter"),
        (
            lambda: adversary.attack(single_block_factory, priors={"ok": 0.5, "a": 1.5}),
            r"^priors\['a'\] = 1.5: p must lie strictly between 0 and 1, got 1.5$",
        ),
        (
            lambda: adversary.attack(cell_attack, priors=PRIORS).replace(
                priors={"ok": (0.5, 0.5, 0.0), "b": (0.5, 0.6, -0.1)}
            ),
            r"^priors\['b'\] = \(0.5, 0.6, -0.1\): ",
        ),
        (
            lambda: adversary.attack(cell_attack).replace(prior=(1, 0, 0)),
            "'prior' is the prior argument of cell_attack: give the priors as priors=",
        ),
    ],
)
def test_bad_attacks_are_refused_with_a_message_naming_the_argument(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_a_value_the_model_cannot_take_is_named_once_by_replace_and_by_a_sweep():
    """A vector rho for a scalar release: PyMC's shape error, which names no argument, is told
    which value it was; a sweep does not name it twice."""
    attack = adversary.attack(single_block_factory, priors={"1/10": 0.1}, truth={"X1": 1})
    named = r"rho=\[0.1, 0.2\]: single_block_factory\(\) could not build its model: Size length"
    with pytest.raises(ValueError, match=rf"^{named}"):
        attack.replace(rho=[0.1, 0.2])
    with pytest.raises(ValueError, match=rf"^over: {named}"):
        sweep(attack, {"rho": [[0.1, 0.2]]})
    with pytest.raises(ValueError, match=r"^rho must be finite and > 0, got -1.0$"):
        attack.replace(rho=-1.0)  # a refusal naming the argument already is kept as it is


@pytest.mark.parametrize("rho", [math.nan, math.inf, -1.0, -0.1, 0.0])
@pytest.mark.parametrize(
    ("factory", "priors", "truth"),
    [
        (cell_attack, {"even": PRIORS["even"]}, {"C": 0}),
        (single_block_factory, {"1/10": 0.1}, {"X1": 1}),
    ],
)
def test_a_bad_rho_in_a_scan_is_named_as_rho(factory, priors, truth, rho):
    """After the first evaluations rho is a shared scalar of one model: NaN reached the noise
    sampler as "sigma2 must be finite and > 0, got nan", naming a parameter the user never
    wrote; inf as "sigma2 ... got 0.0", -0.1 (single block) as "sigma2 ... got -5.0"."""
    attack = adversary.attack(factory, priors=priors, truth=truth)
    for value in (0.1, 0.2):  # a scan: the shared model is built and used
        attack.replace(rho=value).marginal_measures()
    with pytest.raises(ValueError, match=rf"^rho must be finite and > 0, got {rho!r}$"):
        attack.replace(rho=rho).marginal_measures()


@pytest.mark.parametrize("prior", [(math.nan, 0.5, 0.5), (0.2, math.inf, 0.3), math.nan])
def test_a_prior_that_is_not_finite_is_refused_naming_its_label(cells, prior):
    """PyMC's Categorical raised a ParameterValueError deep in PyTensor for (nan, .5, .5)."""
    message = rf"^priors: 'bad' must be finite numbers, got {re.escape(repr(prior))}$"
    with pytest.raises(ValueError, match=message):
        adversary.attack(cell_attack, priors={"bad": prior})
    with pytest.raises(ValueError, match=message):
        cells.replace(priors={"good": (0.5, 0.3, 0.2), "bad": prior})
