"""The attack under swapping against literal Bayes: every swap vector, every incoming cell.

On tiny blocks (2-3 households of 1-3 persons) the likelihood of a release is
summed over EVERY swap-indicator vector and EVERY cell of every incoming
member (no convolution), for the household law and for a law whose π depends
on the hypothesised block; the posterior (3.1), the release pmf and the
measures (3.3), (3.4), (3.6) must agree with it.
"""

import itertools
from collections import defaultdict

import numpy as np
import pytest

from adversary.memory import memory_budget
from adversary.scenarios.reconstruction import REDUCED
from adversary.scenarios.swapping import single_block as sb
from adversary.scenarios.swapping import unknown_attribute as ua
from adversary.scenarios.swapping.laws import HouseholdSwapLaw
from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw
from adversary.swapping.targeted import TargetedRecordSwapping

IS_ADULT = REDUCED.levels()[:, 1] == 1
# Reduced cell codes: adult white, adult black, child white, child black (households).
W, B, C0, C1 = 14, 15, 0, 1
BLOCKS = [
    # (households, target): the target's cell in the block is the truth.
    (((B,), (W, W)), (0, 0)),
    (((B, C0), (W,), (W, C1, C0)), (0, 0)),
    (((W, B, C1), (B,), (W, W)), (0, 1)),
    (((W,), (W, C0)), (0, 0)),  # the truth is the alternative cell
]


class UniqueFirstLaw:
    """A law that depends on the block: a household with a member whose cell is unique in the
    block is swapped with probability 0.6, any other with 0.15 (as targeted swapping would)."""

    def swap_probabilities(self, block):
        counts = defaultdict(int)
        for members in block:
            for code in members:
                counts[code] += 1
        return np.array([0.6 if any(counts[c] == 1 for c in m) else 0.15 for m in block])


LAWS = [HouseholdSwapLaw(0.3), HouseholdSwapLaw(0.04), UniqueFirstLaw()]
LAWS += [TargetedSwapLaw(TargetedRecordSwapping(rate=0.5, k_anonymity=2), donor_rate=0.2)]
LAW_IDS = ["rate 0.3", "rate 0.04", "block-dependent", "TRS"]


def with_cell(block, target, cell):
    household, member = target
    members = list(block[household])
    members[member] = cell
    return tuple(tuple(members) if h == household else m for h, m in enumerate(block))


def literal_likelihood(block, law, composition, tracked) -> dict:
    """``{release: P[release | block]}`` over every swap vector and every incoming cell."""
    pi = law.swap_probabilities(block)
    support = {
        kind: [(c, p) for c, p in enumerate(composition.pmf(kind)) if p > 0]
        for kind in (True, False)
    }
    result = defaultdict(float)
    for swaps in itertools.product((0, 1), repeat=len(block)):
        weight = np.prod([p if s else 1 - p for p, s in zip(pi, swaps, strict=True)])
        if weight == 0:
            continue
        kept = [code for members, s in zip(block, swaps, strict=True) if not s for code in members]
        slots = [
            support[bool(IS_ADULT[code])]
            for members, s in zip(block, swaps, strict=True)
            if s
            for code in members
        ]
        for draw in itertools.product(*slots):
            cells = kept + [c for c, _ in draw]
            release = tuple(cells.count(c) for c in tracked)
            result[release] += weight * np.prod([p for _, p in draw])
    return dict(result)


def literal_bayes(block, target, cells, priors, law, composition, tracked):
    """``({release: posterior over cells}, [likelihood dict per cell])``."""
    likelihoods = [
        literal_likelihood(with_cell(block, target, c), law, composition, tracked) for c in cells
    ]
    posteriors = {}
    for release in set().union(*likelihoods):
        joint = np.array(
            [p * lk.get(release, 0.0) for p, lk in zip(priors, likelihoods, strict=True)]
        )
        if joint.sum() > 0:
            posteriors[release] = joint / joint.sum()
    return posteriors, likelihoods


def single(block, target, law, composition):
    return (block, target, B, W, law, composition)


@pytest.mark.parametrize(("households", "target"), BLOCKS)
@pytest.mark.parametrize("law", LAWS, ids=LAW_IDS)
@pytest.mark.parametrize("prior", [0.5, 0.02])
def test_posterior_is_literal_bayes(households, target, law, prior, small_composition):
    exact, _ = literal_bayes(
        households, target, (W, B), (1 - prior, prior), law, small_composition, (B,)
    )
    assert len(exact) >= 3
    for (release,), posterior in exact.items():
        value = sb.posterior(release, prior, *single(households, target, law, small_composition))
        assert value == pytest.approx(posterior[1], rel=1e-10, abs=1e-14)
        risk = sb.risk(release, prior, *single(households, target, law, small_composition))
        assert risk == pytest.approx(posterior[1] / prior, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize(("households", "target"), BLOCKS)
@pytest.mark.parametrize("law", LAWS, ids=LAW_IDS)
@pytest.mark.parametrize(
    ("prior", "tie_rule"), [(0.3, "split"), (0.5, "largest"), (0.1, "smallest")]
)
def test_measures_are_the_direct_sums(households, target, law, prior, tie_rule, small_composition):
    arguments = single(households, target, law, small_composition)
    truth = households[target[0]][target[1]]
    exact, likelihoods = literal_bayes(
        households, target, (W, B), (1 - prior, prior), law, small_composition, (B,)
    )
    truth_pmf = likelihoods[(W, B).index(truth)]
    pmf = sb.release_pmf(*arguments)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    for (release,), probability in truth_pmf.items():
        assert pmf[release] == pytest.approx(probability, rel=1e-10, abs=1e-15)
    posterior_of_truth = {x: post[(W, B).index(truth)] for (x,), post in exact.items()}
    marginal = sum(truth_pmf[(x,)] * posterior_of_truth[x] for (x,) in truth_pmf)

    def credit(x):  # the decision's probability of the truth at release x
        p_c = exact[(x,)][1]
        if abs(p_c - 0.5) < 1e-12:
            decided_c = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
        else:
            decided_c = float(p_c > 0.5)
        return decided_c if truth == B else 1.0 - decided_c

    correct = sum(truth_pmf[(x,)] * credit(x) for (x,) in truth_pmf)
    measures = sb.marginal_measures(prior, *arguments, tie_rule=tie_rule)
    prior_of_truth = prior if truth == B else 1 - prior
    assert measures.marginal_posterior == pytest.approx(marginal, rel=1e-10)
    assert measures.marginal_risk == pytest.approx(marginal / prior_of_truth, rel=1e-10)
    assert measures.correct_decision_probability == pytest.approx(correct, rel=1e-10, abs=1e-14)
    assert measures.prior_of_truth == pytest.approx(prior_of_truth)


# The unknown attribute: the target is adult white, black or asian; the release is the
# three cells' counts.
CANDIDATES = (W, B, 17)


@pytest.mark.parametrize(("households", "target"), BLOCKS[:3])
@pytest.mark.parametrize("law", [LAWS[0], LAWS[2]], ids=[LAW_IDS[0], LAW_IDS[2]])
@pytest.mark.parametrize("tie_rule", ["split", "smallest"])
def test_unknown_attribute_is_literal_bayes(households, target, law, tie_rule, small_composition):
    prior = (0.5, 0.3, 0.2)
    arguments = (households, target, CANDIDATES, law, small_composition)
    exact, likelihoods = literal_bayes(
        households, target, CANDIDATES, prior, law, small_composition, CANDIDATES
    )
    assert len(exact) >= 10
    for release, posterior in exact.items():
        assert ua.posterior(release, prior, *arguments) == pytest.approx(posterior, abs=1e-12)
    truth = CANDIDATES.index(households[target[0]][target[1]])
    truth_pmf = likelihoods[truth]
    marginal = sum(p * exact[x][truth] for x, p in truth_pmf.items())

    def credit(x):
        post = exact[x]
        tied = np.flatnonzero(post >= post.max() - 1e-12)
        if tie_rule == "split":
            return float(truth in tied) / tied.size
        return float(tied[0] == truth)

    correct = sum(p * credit(x) for x, p in truth_pmf.items())
    measures = ua.marginal_measures(prior, *arguments, tie_rule=tie_rule)
    assert measures.marginal_posterior == pytest.approx(marginal, rel=1e-10)
    assert measures.marginal_risk == pytest.approx(marginal / prior[truth], rel=1e-10)
    assert measures.correct_decision_probability == pytest.approx(correct, rel=1e-10, abs=1e-14)


def test_unknown_attribute_grid_is_sized_first(small_composition):
    households = tuple((W, W, C0) for _ in range(40))
    with memory_budget("1MB"), pytest.raises(ValueError, match=r"candidates: the release pmf"):
        ua.posterior(
            (0, 0, 0), (0.4, 0.3, 0.3), households, (0, 0), CANDIDATES, LAWS[0], small_composition
        )
