"""The unknown attribute under swapping (Kazan & Reiter S1.2's third attack), exactly.

The adversary knows every member's cell of the block except the target's,
which is one of K candidate cells with prior π (the cells that differ only in
the unknown variable: K = 2 for ethnicity, 7 for race, …). The release is the
swapped block's exact counts of the K candidate cells (and of every other
cell, which adds nothing: the block's total is exact, so the rest is N minus
their sum). Hypothesis k puts the target in candidate k; its likelihood is
:mod:`.release`'s K-dimensional convolution over households, the incoming
households' counts of the candidates multinomial in their numbers of persons
of each kind. The grid has ``(N + 1)^K`` releases: it is sized against the
memory budget before it is built, and refused in one line naming
``candidates`` when too large.

- :func:`posterior`: ``P[C = k | x*] ∝ π_k P[x* | k]``, (3.1); :func:`risk` is it
  over π, (3.2).
- :func:`decision`: the posterior mode (3.5), a tie by ``tie_rule``
  (``"smallest"``/``"largest"`` follow the order of ``candidates``).
- :func:`marginal_measures`: for the truth (the target's cell in the given
  block, one of the candidates), (3.3), (3.4) and (3.6) summed over every
  release of the grid — exact.
"""

from __future__ import annotations

import numpy as np

from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule, decide
from ...measures.marginal import MarginalMeasures
from ..unknown_attribute.inputs import checked_prior
from .block import check_block, check_cell, check_target
from .hypotheses import swap_hypotheses

__all__ = [
    "decision",
    "hypotheses",
    "hypotheses_cells",
    "marginal_measures",
    "posterior",
    "prior_vector",
    "risk",
    "true_index",
]


def hypotheses_cells(candidates) -> tuple[int, ...]:
    """The candidate cells checked: K >= 2 distinct cell codes."""
    if isinstance(candidates, str | bytes) or not hasattr(candidates, "__len__"):
        raise ValueError(f"candidates must be a sequence of cell codes, got {candidates!r}")
    cells = tuple(check_cell(c, "candidates") for c in candidates)
    if len(cells) < 2 or len(set(cells)) != len(cells):
        raise ValueError(f"candidates must be K >= 2 distinct cell codes, got {candidates!r}")
    return cells


def hypotheses(households, target, candidates, law, composition):
    """One hypothesis per candidate cell, with the release pmf of the candidates' counts."""
    cells = hypotheses_cells(candidates)
    return swap_hypotheses(households, target, cells, cells, law, composition, "candidates")


def prior_vector(prior, n: int, name: str = "prior") -> np.ndarray:
    """π checked: one probability per candidate (K = ``n``), > 0, summing to 1."""
    vector = checked_prior(prior, name, one=True)
    if vector.size != n:
        raise ValueError(f"{name} must hold one probability per candidate (K = {n}), got {prior!r}")
    return vector


def posterior(release, prior, households, target, candidates, law, composition) -> np.ndarray:
    """``P[C = k | x*]`` over the candidates, (3.1); ``release``: the K candidates' counts."""
    attack = hypotheses(households, target, candidates, law, composition)
    return attack.posterior(release, prior_vector(prior, len(attack.cells)))


def risk(release, prior, households, target, candidates, law, composition) -> np.ndarray:
    """The risk (3.2) of each candidate: its posterior over its prior."""
    arguments = (households, target, candidates, law, composition)
    return posterior(release, prior, *arguments) / prior_vector(
        prior, len(hypotheses_cells(candidates))
    )


def decision(
    release,
    prior,
    households,
    target,
    candidates,
    law,
    composition,
    *,
    tie_rule=DEFAULT_TIE_RULE,
    rng=None,
) -> int:
    """The Bayes decision (3.5): the candidate cell of largest posterior; a tie by ``tie_rule``."""
    attack = hypotheses(households, target, candidates, law, composition)
    scores = attack.log_scores(release, prior_vector(prior, len(attack.cells)))
    return int(decide(np.array(attack.cells), scores, check_tie_rule(tie_rule), rng=rng))


def true_index(households, target, candidates) -> int:
    """The index among ``candidates`` of the target's cell in the block (the truth)."""
    block = check_block(households)
    household, member = check_target(target, block)
    cells = hypotheses_cells(candidates)
    truth = block[household][member]
    if truth not in cells:
        raise ValueError(
            f"households: the target's cell in the block ({truth}) must be one of the "
            f"candidates {cells} (it is the truth)"
        )
    return cells.index(truth)


def marginal_measures(
    prior, households, target, candidates, law, composition, tie_rule=DEFAULT_TIE_RULE
) -> MarginalMeasures:
    """(3.3), (3.4) and (3.6) for the truth: the target's cell in ``households``. Exact."""
    check_tie_rule(tie_rule)
    truth = true_index(households, target, candidates)
    attack = hypotheses(households, target, candidates, law, composition)
    return attack.marginal_measures(prior_vector(prior, len(attack.cells)), truth, tie_rule)
