"""The single-block attack side by side, and the study: closed forms and the existing attacks."""

import math
from fractions import Fraction

import numpy as np
import pytest
from matplotlib.figure import Figure

from adversary.analyses.swapping_comparison.dp_accuracy import dg_mean_absolute
from adversary.analyses.swapping_comparison.single_block_risk import (
    cell_key_transition,
    dp_single_block,
    swap_single_block,
    unique_targets,
)
from adversary.analyses.swapping_comparison.study import swapping_comparison
from adversary.budget import detailed_rho, get_preset
from adversary.noise import CellKeyNoise
from adversary.population.synthetic import synthetic_population
from adversary.scenarios import single_block
from adversary.scenarios.swapping.laws import HouseholdSwapLaw
from adversary.swapping import assign_households
from adversary.swapping.cell_key import CellKeyMethod

P_TABLE = CellKeyNoise(target_variance=1.0, bound=3)


def test_dp_single_block_is_the_exact_attack_at_the_block_detailed_rho():
    rho = detailed_rho("block")
    measures = dp_single_block(scale=4.0)
    assert measures["risk_p10"] == pytest.approx(
        single_block.marginal_risk(0.1, rho=4 * rho, convention="das")
    )
    assert measures["correct_p2"] == pytest.approx(
        single_block.correct_decision_probability(0.5, rho=4 * rho, convention="das")
    )


def test_the_cell_key_transition_is_the_methods_noise_at_uniform_keys():
    keys = (np.arange(200_000) + 0.5) / 200_000
    method = CellKeyMethod(P_TABLE)
    transition = cell_key_transition(6, P_TABLE)
    assert np.allclose(transition.sum(axis=1), 1.0)
    for n in range(7):
        released = n + method.noise_of(np.full(keys.size, n), keys)
        empirical = np.bincount(released, minlength=transition.shape[1]) / keys.size
        assert np.abs(empirical - transition[n]).max() < 1e-4


def _target(households, target, cell, alternative):
    counts = np.zeros(56, dtype=int)
    counts[[cell, alternative, 1, 15]] = 5  # voting-age and younger household persons
    return {
        "households": households,
        "target": target,
        "cell": cell,
        "alternative": alternative,
        "area_counts": counts,
    }


def test_unswapped_release_reveals_a_unique_target_and_the_cell_key_hides_it_in_closed_form():
    # REDUCED's C order (hhgq, voting_age, hispanic, race): household cells 14..27 are of
    # voting age, 0..13 not
    target = _target(((15, 1), (16,)), (1, 0), cell=16, alternative=17)
    exact = swap_single_block([target], HouseholdSwapLaw(0.0))
    assert exact["risk_p10"] == pytest.approx(10.0) and exact["correct_p2"] == 1.0
    # with the cell key: the count of c is 1 (truth) or 0 (alternative, released as 0);
    # the truth is released as 0 with q = P[z = -1 | z >= -1], else as a positive count
    z = np.arange(-3, 4)
    pmf = P_TABLE.pmf(z)
    q = pmf[2] / pmf[2:].sum()
    keyed = swap_single_block([target], HouseholdSwapLaw(0.0), cell_key=P_TABLE)
    for name, p in (("risk_p10", 0.1), ("risk_p50", 0.02)):
        posterior = (1 - q) + q * (p * q / (p * q + 1 - p))
        assert keyed[name] == pytest.approx(posterior / p, rel=1e-12)
    # at p = 1/2 a release of 0 decides for the alternative (q < 1): right when released > 0
    assert keyed["correct_p2"] == pytest.approx(1 - q, rel=1e-12)


def test_unique_targets_are_unique_in_their_blocks_with_their_households():
    persons = assign_households(synthetic_population(3000, seed=5), seed=5)
    targets = unique_targets(persons, 15, seed=1)
    assert len(targets) == 15
    for t in targets:
        cells = [c for household in t["households"] for c in household]
        h, i = t["target"]
        assert t["households"][h][i] == t["cell"] and cells.count(t["cell"]) == 1
        assert t["alternative"] != t["cell"]
        in_block = persons[(persons["block"] == t["block"]) & (persons["household"] >= 0)]
        assert len(cells) == len(in_block)


def test_the_study_on_a_small_state_ties_each_mechanism_to_its_closed_forms():
    # four times the 2020 budget: TopDown's block MAE within the swaps' reach on a small state
    budget = get_preset().with_rho_total(Fraction(4 * 256, 100))
    result = swapping_comparison(
        4000,
        seed=1,
        rates=(0.0, 0.5, 1.0),
        scales=(1.0, 4.0),
        budget=budget,
        seeds=2,
        runs=2,
        targets=6,
    )
    curves = result.curves.set_index(["mechanism", "value"])
    at_2020 = curves.loc[("dp", 1.0)]
    rho = 4 * detailed_rho("block")
    assert at_2020["mae_detailed_block"] == pytest.approx(dg_mean_absolute(1 / rho))
    assert at_2020["risk_p50"] == pytest.approx(
        single_block.marginal_risk(0.02, rho=rho, convention="das")
    )
    swap = curves.loc["swapping"]
    # rate 0: exact counts, a unique target revealed; rate 1: every household swapped, the
    # release says nothing of the target (posterior = prior)
    assert swap.loc[0.0, "mae_block"] == 0 and swap.loc[0.0, "risk_p10"] == pytest.approx(10)
    assert swap.loc[1.0, "risk_p10"] == pytest.approx(1) and swap.loc[1.0, "risk_p50"] == (
        pytest.approx(1)
    )
    assert set(result.curves["mechanism"]) == {"dp", "swapping", "trs", "trs+cell key"}
    equal = result.equal.set_index(["mechanism", "level", "reference"])
    found = equal.loc[("swapping", "block", "topdown")]
    assert found["low"] <= found["rate"] <= found["high"]
    # the refinement measured more rates inside the first bracket (grid rates 0.5 apart, the
    # bracket at least one step wide): the bracket is now at most one step
    refined = result.accuracy[
        (result.accuracy["mechanism"] == "swapping") & (result.accuracy["level"] == "block")
    ]
    assert len(refined) > 3 and found["high"] - found["low"] <= 0.5
    assert result.side_by_side["setting"].iloc[0] == "2020"
    figure = result.figure()
    assert isinstance(figure, Figure) and len(figure.axes) == 3
    assert all(len(ax.get_legend_handles_labels()[1]) >= 4 for ax in figure.axes[:1])
    with pytest.raises(ValueError, match="level must be one of"):
        result.figure(level="county")
    assert not math.isnan(found["target"])


def test_unique_targets_refuse_a_population_without_households_or_the_area():
    persons = synthetic_population(500, seed=5)
    with pytest.raises(ValueError, match=r"columns \['household'\] are missing"):
        unique_targets(persons, 3)
    with_households = assign_households(persons, seed=5)
    with pytest.raises(ValueError, match=r"columns \['district'\] are missing"):
        unique_targets(with_households, 3, within="district")


def test_swap_single_block_is_the_adversarys_exact_measures_averaged_over_targets():
    from adversary.scenarios.swapping import single_block as swapping
    from adversary.scenarios.swapping.block import Composition

    persons = assign_households(synthetic_population(3000, seed=5), seed=5)
    targets = unique_targets(persons, 4, seed=2)
    law = HouseholdSwapLaw(0.2)
    averaged = swap_single_block(targets, law)
    risks = [
        swapping.marginal_measures(
            0.1,
            t["households"],
            t["target"],
            t["cell"],
            t["alternative"],
            law,
            Composition.from_counts(t["area_counts"]),
        ).marginal_risk
        for t in targets
    ]
    assert averaged["risk_p10"] == pytest.approx(np.mean(risks), rel=1e-12)
    assert averaged["risk_p10_se"] == pytest.approx(np.std(risks, ddof=1) / 2, rel=1e-12)
