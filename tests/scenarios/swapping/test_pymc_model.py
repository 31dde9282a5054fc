"""The PyMC model of the attack under swapping: enumerated and sampled against the exact posterior.

Sampling by the package's exact Gibbs steps; the tolerance is 4 Monte Carlo
standard errors from the ESS of the event's indicator.
"""

from collections import defaultdict

import numpy as np
import pytest

from adversary.inference import enumerate_posterior, sample
from adversary.scenarios.swapping import single_block as sb
from adversary.scenarios.swapping import unknown_attribute as ua
from adversary.scenarios.swapping.laws import HouseholdSwapLaw
from adversary.scenarios.swapping.pymc_model import model

# 300 draws a chain, not 1000 (the draws were two thirds of the test's time): the tested
# indicators' ESS is then 560-1650 at these seeds (at least assert_within_mcse's 200), and the
# tolerance, 4 sqrt(p (1 - p) / ESS), is computed from it.
DRAWS = {"draws": 300, "tune": 100, "chains": 2, "cores": 1, "progressbar": False}


class RareCellLaw:
    """π depends on the hypothesised block: 0.5 for a household holding a cell held by at most
    two persons of the block, else 0.1."""

    def swap_probabilities(self, block):
        counts = defaultdict(int)
        for members in block:
            for code in members:
                counts[code] += 1
        return np.array([0.5 if any(counts[c] <= 2 for c in m) else 0.1 for m in block])


@pytest.fixture
def block(cells):
    w, b, c0 = cells.adult_white, cells.adult_black, cells.child_white
    return ((b,), (w, w), (w, w, c0), (b, w)), (0, 0)


@pytest.mark.parametrize("law", [HouseholdSwapLaw(0.3), RareCellLaw()], ids=["household", "rare"])
def test_enumeration_is_the_exact_posterior(block, cells, small_composition, law):
    households, target = block
    arguments = (households, target, cells.adult_black, cells.adult_white, law, small_composition)
    attack = sb.hypotheses(*arguments)
    for release in (0, 1, 2, 3):
        table = enumerate_posterior(model(attack, (release,), (0.7, 0.3), known_count=1))
        assert table.marginal("X1").sel(X1=2).item() == pytest.approx(
            sb.posterior(release, 0.3, *arguments), rel=1e-9
        )
    candidates = (cells.adult_white, cells.adult_black, cells.adult_asian)
    attack = ua.hypotheses(households, target, candidates, law, small_composition)
    prior = (0.5, 0.3, 0.2)
    for release in ((5, 2, 0), (5, 1, 1), (4, 2, 1)):
        table = enumerate_posterior(model(attack, release, prior))
        exact = ua.posterior(release, prior, households, target, candidates, law, small_composition)
        assert table.marginal("C").values == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("law", [HouseholdSwapLaw(0.3), RareCellLaw()], ids=["household", "rare"])
def test_sampling_is_the_exact_posterior(block, cells, small_composition, law, assert_within_mcse):
    households, target = block
    arguments = (households, target, cells.adult_black, cells.adult_white, law, small_composition)
    tree = sample(
        model(sb.hypotheses(*arguments), (2,), (0.7, 0.3), known_count=1), random_seed=3, **DRAWS
    )
    assert_within_mcse(tree, {"X1": 2}, sb.posterior(2, 0.3, *arguments))
    candidates = (cells.adult_white, cells.adult_black, cells.adult_asian)
    attack = ua.hypotheses(households, target, candidates, law, small_composition)
    prior = (0.5, 0.3, 0.2)
    tree = sample(model(attack, (4, 2, 1), prior), random_seed=4, **DRAWS)
    exact = ua.posterior((4, 2, 1), prior, households, target, candidates, law, small_composition)
    for k in range(3):
        if 0.02 < exact[k] < 0.98:
            assert_within_mcse(tree, {"C": k}, float(exact[k]))


def test_the_start_is_feasible_at_rate_zero(block, cells, small_composition):
    """At rate 0 only the truth's hypothesis and no swaps produce the release."""
    households, target = block
    law = HouseholdSwapLaw(0.0)
    arguments = (households, target, cells.adult_black, cells.adult_white, law, small_composition)
    attack_model = model(sb.hypotheses(*arguments), (2,), (0.7, 0.3), known_count=1)
    start = attack_model.initial_point()
    assert start["X1"] == 2 and not any(start[f"swapped_{h}"] for h in range(4))
    assert np.isfinite(attack_model.compile_logp()(start))
