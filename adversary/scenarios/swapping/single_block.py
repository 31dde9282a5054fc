"""The single-block attack of Kazan & Reiter (2023), Sec. 3.1, under swapping, exactly.

The adversary knows every member's cell of the block except the target's, so
they know ``m``, the others' count of the attacked cell c. Hypotheses: the
target is in c (``X1 = m + 1``, prior p) or in the stated alternative cell a
(``X1 = m``, prior 1 - p) — the cell the adversary would otherwise assign
(e.g. the block's majority cell; it matters because it sets the household's
voting-age count, hence its match key, and, under a law that depends on the
block, its π_h). The release is the block's exact count of c after swapping;
its pmf under each hypothesis is :mod:`.release`'s convolution.

- :func:`posterior`: ``P[X1 = m + 1 | x*] = p L1 / (p L1 + (1 - p) L0)``, (3.1);
  :func:`risk` is it over p, (3.2). A release neither hypothesis can produce
  (at rate 0: anything but m or m + 1) is an error.
- :func:`decision`: the posterior mode (3.5), ties by ``tie_rule``
  (``"largest"`` decides c, as the paper's rule).
- :func:`marginal_measures`: for the truth (the target's cell in the given
  block, c or a), the marginal posterior (3.3) summed over every release
  ``0..N``, the marginal risk (3.4) and the probability of a correct decision
  (3.6) — exact.

Blocks, targets and compositions are as :mod:`.block`; laws as :mod:`.laws`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule, decide
from ...measures.marginal import MarginalMeasures
from .block import check_block, check_cell, check_target
from .hypotheses import SwapHypotheses, swap_hypotheses

__all__ = ["decision", "hypotheses", "marginal_measures", "posterior", "release_pmf", "risk"]


def hypotheses(households, target, target_cell, alternative_cell, law, composition):
    """The two hypotheses (alternative cell first, then c, as ``X1 = m, m + 1``) with the
    release pmfs of the count of c."""
    target_cell = check_cell(target_cell, "target_cell")
    alternative_cell = check_cell(alternative_cell, "alternative_cell")
    if alternative_cell == target_cell:
        raise ValueError(f"alternative_cell must differ from target_cell ({target_cell})")
    cells = (alternative_cell, target_cell)
    return swap_hypotheses(households, target, cells, (target_cell,), law, composition)


def _prior_vector(prior) -> np.ndarray:
    p = float(as_probability(prior, "prior"))
    return np.array([1.0 - p, p])


def posterior(release, prior, households, target, target_cell, alternative_cell, law, composition):
    """``P[target in target_cell | x*]``, (3.1), for the release ``x*`` (count of the cell)."""
    attack = hypotheses(households, target, target_cell, alternative_cell, law, composition)
    return float(attack.posterior(release, _prior_vector(prior))[1])


def risk(release, prior, households, target, target_cell, alternative_cell, law, composition):
    """The risk (3.2) of "target in target_cell": its posterior over the prior p."""
    arguments = (households, target, target_cell, alternative_cell, law, composition)
    return posterior(release, prior, *arguments) / float(as_probability(prior, "prior"))


def release_pmf(households, target, target_cell, alternative_cell, law, composition):
    """``P[x* | block]`` of the given block (the truth) over ``x* = 0..N``; sums to 1."""
    block = check_block(households)
    household, member = check_target(target, block)
    truth = block[household][member]
    attack = hypotheses(block, target, target_cell, alternative_cell, law, composition)
    return attack.likelihoods[_truth_index(attack, truth)]


def decision(release, prior, *setting, tie_rule=DEFAULT_TIE_RULE, rng=None) -> int:
    """The Bayes decision (3.5): the cell (c or a) of larger posterior; a tie by ``tie_rule``.

    ``setting``: ``households, target, target_cell, alternative_cell, law,
    composition`` as for :func:`posterior`.
    """
    attack = hypotheses(*setting)
    scores = attack.log_scores(release, _prior_vector(prior))
    return int(decide(np.array(attack.cells), scores, check_tie_rule(tie_rule), rng=rng))


def _truth_index(attack: SwapHypotheses, truth: int) -> int:
    if truth not in attack.cells:
        raise ValueError(
            f"households: the target's cell in the block ({truth}) must be target_cell or "
            f"alternative_cell {attack.cells[::-1]} (it is the truth)"
        )
    return attack.cells.index(truth)


def marginal_measures(
    prior,
    households,
    target,
    target_cell,
    alternative_cell,
    law,
    composition,
    tie_rule=DEFAULT_TIE_RULE,
) -> MarginalMeasures:
    """(3.3), (3.4) and (3.6) for the truth: the target's cell in ``households``.

    Exact sums over every release ``0..N`` (``omitted_mass`` and ``error_bound`` 0).
    """
    check_tie_rule(tie_rule)
    block = check_block(households)
    household, member = check_target(target, block)
    attack = hypotheses(block, target, target_cell, alternative_cell, law, composition)
    truth = _truth_index(attack, block[household][member])
    return attack.marginal_measures(_prior_vector(prior), truth, tie_rule)
