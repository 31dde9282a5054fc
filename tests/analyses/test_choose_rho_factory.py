"""choose_rho on a user's model factory equals it on the hand-written case of the same attack.

The issue-26 three-category attack: the target's cell among three, each
cell's count released with DAS-convention noise, written as a PyMC factory
(``adversary.attack``) and as an :class:`UnknownAttributeCase`. The factory is
rebuilt at every ρ of the scan (its structure compiled once); both must find
the same largest ρ keeping the marginal risk at or below 1.5 for both priors.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

import adversary
from adversary.analyses.choose_rho import choose_rho
from adversary.distributions import DiscreteGaussian, FinitePmf
from adversary.scenarios.unknown_attribute import UnknownAttributeCase

PRIORS = {"skewed": (0.5, 0.3, 0.2), "even": (1 / 3, 1 / 3, 1 / 3)}


def three_cells(prior=PRIORS["skewed"], rho=0.0992, releases=(6, 2, 1), known=(5, 2, 0)):
    known = np.asarray(known, dtype=np.int64)
    with pm.Model() as model:
        cell = FinitePmf("C", support=[0, 1, 2], probs=prior)
        counts = pt.as_tensor(known) + pt.cast(pt.eq(pt.arange(3), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, convention="das", observed=releases)
    return model


HAND = UnknownAttributeCase(
    name="three cells",
    categories=("a", "b", "c"),
    known_counts=(5, 2, 0),
    priors=PRIORS,
    true_category="a",
    rho=0.0992,
    convention="das",
    observed_releases=(6, 2, 1),
)


def test_the_factory_and_the_hand_written_case_choose_the_same_rho():
    factory = adversary.attack(three_cells, priors=PRIORS, truth={"C": 0})
    settings = {"rho_min": 0.05, "points_per_decade": 5, "refine": 2, "tolerance": 0.01}
    generic = choose_rho(factory, 1.5, **settings)
    hand = choose_rho(HAND, 1.5, **settings)
    assert generic.rho == pytest.approx(hand.rho, rel=1e-12)
    assert generic.binding_prior == hand.binding_prior == "even"
    for label in PRIORS:
        assert generic.measure_at_rho[label] == pytest.approx(
            hand.measure_at_rho[label], abs=generic.bound_at_rho[label] + hand.bound_at_rho[label]
        )
