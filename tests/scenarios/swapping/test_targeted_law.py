"""The law of targeted record swapping: hand-made blocks, and the mechanism's frequencies."""

import numpy as np
import pandas as pd
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.population.synthetic import synthetic_population
from adversary.scenarios.reconstruction import REDUCED
from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw
from adversary.swapping import assign_households
from adversary.swapping.targeted import SAMPLED, TargetedRecordSwapping


def cell(voting_age=1, hispanic=0, race=0):
    return int(np.ravel_multi_index((0, voting_age, hispanic, race), REDUCED.sizes))


A = cell()  # an adult, not Hispanic, White
RARE = cell(race=3)


def law(rate=0.1, k=3, donor_rate=0.2, **kwargs):
    trs = TargetedRecordSwapping(rate=rate, k_anonymity=k, **kwargs)
    return TargetedSwapLaw.from_mechanism(trs, donor_rate=donor_rate)


def test_a_unique_household_is_swapped_surely_and_leaves_the_others_only_donors():
    block = ((A, A, A),) * 10 + ((A, RARE),)
    # n = 11, r = 1, target 11 · 0.1 / 2 = 0.55 < r: no household sampled, a = 0.
    expected = [0.2] * 10 + [1.0]
    assert np.allclose(law().swap_probabilities(block), expected)
    assert law().risky(block).tolist() == [False] * 10 + [True]


def test_a_block_of_common_households_gets_the_residual_rate():
    block = ((A, A, A),) * 10
    # a = (10 · 0.1 / 2 - 0) / 10 = 0.05; π = a + (1 - a) · d.
    assert np.allclose(law().swap_probabilities(block), 0.05 + 0.95 * 0.2)


def test_the_residual_is_the_target_less_the_risky_households_over_the_rest():
    block = ((A, A, A),) * 3 + ((RARE,),)
    # rate 1: target 2, one risky: a = (2 - 1) / 3.
    got = law(rate=1.0, donor_rate=0.0).swap_probabilities(block)
    assert np.allclose(got, [1 / 3, 1 / 3, 1 / 3, 1.0])
    # Enough risky households to meet the target: the others are only donors.
    block = ((RARE,), (cell(race=4),), (A, A, A))
    assert np.allclose(law(rate=1.0, donor_rate=0.25).swap_probabilities(block), [1, 1, 0.25])


def test_risk_is_the_count_of_the_risk_variables_combination_only():
    hispanic = cell(hispanic=1)
    block = ((A, A, A), (hispanic,))
    assert law().risky(block).tolist() == [False, True]
    assert law(risk_variables=("race",)).risky(block).tolist() == [False, False]
    assert law(k=1).risky(((RARE,),)).tolist() == [False]
    assert law(k=4).risky(((A, A, A),)).tolist() == [True]


def test_donor_rates_per_profile():
    child = cell(voting_age=0)
    block = ((A, A, A),) * 4 + ((A, child),) * 4
    rates = {(3, 3): 0.5}
    got = law(rate=0.0, donor_rate=rates).swap_probabilities(block)
    assert np.allclose(got, [0.5] * 4 + [0.0] * 4)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ((), "block must be a non-empty tuple of households"),
        (((),), "each household must be a non-empty tuple of cell codes"),
        (((56,),), r"cell codes must lie in 0..55"),
        (((0.5,),), "each household must be a non-empty tuple of cell codes"),
    ],
)
def test_bad_blocks_are_one_line(block, message):
    with pytest.raises(ValueError, match=message):
        law().swap_probabilities(block)


def test_bad_law_parameters_are_one_line():
    with pytest.raises(TypeError, match="mechanism must be a TargetedRecordSwapping"):
        TargetedSwapLaw(object())
    with pytest.raises(ValueError, match=r"donor_rate must be in \[0, 1\], got 1.5"):
        law(donor_rate=1.5)
    with pytest.raises(ValueError, match=r"donor_rate must be in \[0, 1\]"):
        law(donor_rate={(1, 1): -0.1})


@pytest.fixture(scope="module")
def persons():
    return assign_households(synthetic_population(20_000, seed=5), seed=1)


def _blocks(persons):
    """Each household's identifier, its block's size class, and its block's tuple of households."""
    members = persons[persons["household"] >= 0]
    frame = pd.DataFrame(
        {
            "household": members["household"].to_numpy(),
            "block": members["block"].to_numpy(),
            "cell": block_cells(members, REDUCED),
        }
    ).sort_values(["block", "household"], kind="stable")
    cells = frame.groupby("household", sort=False)["cell"].agg(tuple)
    blocks = frame.groupby("household", sort=False)["block"].first()
    return cells, blocks


def _frequencies(trs, the_law, persons, seeds):
    """Per (risky, households in block) class: the law's mean and the mechanism's frequency.

    Two columns each: ``sampled`` (swapped as risky or sampled household: the law's steps 1–2)
    and ``swapped`` (in any role), with their binomial standard errors over ``seeds`` runs.
    """
    cells, blocks = _blocks(persons)
    frame = pd.DataFrame(index=cells.index, columns=["law_sampled", "law_swapped"], dtype=float)
    frame["risky"], frame["n"] = False, 0
    for _, ids in blocks.groupby(blocks, sort=False).groups.items():
        block = tuple(cells[i] for i in ids)
        frame.loc[ids, "law_sampled"] = the_law.sampling_probabilities(block)
        frame.loc[ids, "law_swapped"] = the_law.swap_probabilities(block)
        frame.loc[ids, "risky"] = the_law.risky(block)
        frame.loc[ids, "n"] = len(ids)
    frame["sampled"], frame["swapped"] = 0, 0
    for seed in range(seeds):
        h = trs.run(persons, seed=seed).households.set_index("household").reindex(cells.index)
        swapped = h["partner"].to_numpy() >= 0
        frame["swapped"] += swapped
        frame["sampled"] += np.where(frame["risky"], swapped, h["role"].to_numpy() == SAMPLED)
    frame["size"] = pd.cut(frame["n"], [0, 3, 8, 20, np.inf])
    rows = []
    for (risky, size), part in frame.groupby(["risky", "size"], observed=True):
        row = {"risky": risky, "size": str(size), "households": len(part)}
        for column in ("sampled", "swapped"):
            p = part[f"law_{column}"].to_numpy()
            row[f"law_{column}"] = p.mean()
            row[column] = part[column].sum() / (len(part) * seeds)
            row[f"se_{column}"] = np.sqrt((p * (1 - p)).sum() * seeds) / (len(part) * seeds)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table[table["households"] >= 20]


@pytest.mark.parametrize(("rate", "k"), [(0.1, 3), (0.3, 5), (0.2, 1)])
def test_the_law_matches_the_mechanisms_frequencies(persons, rate, k):
    """The mechanism over 30 seeds against the law, per (risky, households in block) class.

    Risky and sampled households (the block's part of the law): within 4 binomial standard
    errors. In any role, with the donor rate per profile measured on 5 other runs: within 4
    standard errors plus 0.07, the donor rate's stated dependence on the block's share of its
    parent area (module docstring of the law).
    """
    trs = TargetedRecordSwapping(rate=rate, k_anonymity=k)
    calibration = [trs.run(persons, seed=1000 + s).donor_rates() for s in range(5)]
    rates = {key: np.mean([c.get(key, 0.0) for c in calibration]) for key in calibration[0]}
    table = _frequencies(trs, TargetedSwapLaw.from_mechanism(trs, donor_rate=rates), persons, 30)
    free = ~table["risky"].to_numpy(bool)
    assert free.sum() >= 3 and (~free).sum() >= (3 if k > 1 else 0)
    gap = np.abs(table["sampled"] - table["law_sampled"]).to_numpy()
    assert (gap[free] <= 4 * table["se_sampled"].to_numpy()[free] + 1e-3).all()
    assert (table["law_sampled"][~free] == 1).all()
    assert (table["sampled"][~free] >= 0.99).all()  # the unswappable: a fraction of a percent
    gap = np.abs(table["swapped"] - table["law_swapped"]).to_numpy()
    assert (gap <= 4 * table["se_swapped"].to_numpy() + 0.07).all()
