"""Three adversaries of one target in a hierarchy: noisy measurements, published tables, both.

The target is in one block; the adversary knows every other record of the
hierarchy, so the true count of each unit is ``known + x · path`` with
``x ∈ {0, 1}`` (the target in the cell or not, prior ``p``) and ``path`` the
target's block and its ancestors. For the truth ``x*`` and every noise vector
``z`` of the grid (:mod:`.grid`), with ``r = known + x* · path + z``:

- **noisy measurements only** (the multi-level attack, S1.3): the log
  likelihood ratio ``Σ_{u ∈ path} log f_u(z_u + x* − 1) − log f_u(z_u + x*)``;
- **published tables only**: TopDown's output ``T = topdown(r)``
  (:func:`adversary.topdown.topdown_many`), whose likelihood
  ``P[T | x] = Σ_z P[z] · 1[topdown(known + x · path + z) = T]`` is summed over
  the whole grid for both ``x``;
- **both**: ``P[r, T | x] = P[r | x] · 1[T = topdown(r; x)]``. TopDown is a
  function of the measurements (and of the invariant, if the root's true
  count is one), so without an invariant this is the noisy adversary.

The data holder's measures of each adversary — (3.3), (3.4), (3.6) — are
sums over the grid, exact up to its omitted mass, and so is the Bayes
accuracy ``p · P[correct | x* = 1] + (1 − p) · P[correct | x* = 0]``, which
by the data-processing inequality is never larger from the tables than from
the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ...measures.decision import binary_credit
from ...measures.product_grid import NoiseGrid
from ...topdown import topdown_many
from .grid import table_ids

__all__ = [
    "ADVERSARIES",
    "AdversaryMeasures",
    "PublishedLaw",
    "noisy_log_ratio",
    "published_law",
    "published_tables",
    "simulated_laws",
    "three_adversaries",
]

ADVERSARIES = ("noisy", "published", "both")


@dataclass(frozen=True)
class AdversaryMeasures:
    """One adversary's measures for one truth: (3.3), (3.4), (3.6) and the grid's omitted mass."""

    adversary: str
    truth: int
    marginal_posterior: float
    marginal_risk: float
    correct_decision_probability: float
    omitted_mass: float


def _log(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(values)


@dataclass(frozen=True)
class PublishedLaw:
    """The law of the published table on the grid, for both values of ``x`` (computed once).

    ``tables``: the distinct tables (rows of units); ``ids[x]``: the id of the
    table published from each noise vector when the truth is ``x``;
    ``likelihood[x]``: ``P[T | x]`` of each table id; ``crossed[x]``: the id
    of the table TopDown would publish from the same measurements under the
    other value's invariant (``ids[x]`` without one).
    """

    tables: np.ndarray
    ids: dict
    likelihood: dict
    crossed: dict

    def of_table(self, table) -> np.ndarray:
        """``(P[T | 0], P[T | 1])`` of one published table (0 for a table never published)."""
        match = np.flatnonzero(np.all(self.tables == np.asarray(table)[None, :], axis=1))
        return np.array([self.likelihood[x][match[0]] if match.size else 0.0 for x in (0, 1)])


def published_tables(noise, known, path, variances, parents, invariant) -> tuple[dict, dict]:
    """TopDown's table from each noise vector for ``x`` = 0 and 1, and ``crossed``: the table
    under the other value's invariant (the same table without an invariant)."""
    tables, crossed = {}, {}
    for x in (0, 1):
        measured = known[None, :] + x * path[None, :] + noise
        root = None if invariant is None else invariant + x
        tables[x] = topdown_many(measured, variances, parents, root)
        crossed[x] = (
            tables[x]
            if invariant is None
            else topdown_many(measured, variances, parents, invariant + 1 - x)
        )
    return tables, crossed


def noisy_log_ratio(noise, path, mechanisms, x: int) -> np.ndarray:
    """``log P[r | 1] − log P[r | 0]`` of the measurements on the target's path, for the
    truth ``x`` and each noise vector (``r = known + x · path + noise``)."""
    ratio = np.zeros(len(noise))
    for u in np.flatnonzero(path):
        ratio += mechanisms[u].logpmf(noise[:, u] + x - 1) - mechanisms[u].logpmf(noise[:, u] + x)
    return ratio


def published_law(known, path, variances, parents, invariant, grid: NoiseGrid) -> PublishedLaw:
    """TopDown's table for every noise vector and both values (module docstring)."""
    tables, crossed = published_tables(grid.noise, known, path, variances, parents, invariant)
    distinct, (ids0, ids1, crossed0, crossed1) = table_ids(
        tables[0], tables[1], crossed[0], crossed[1]
    )
    ids = {0: ids0, 1: ids1}
    likelihood = {
        x: np.bincount(ids[x], weights=grid.weight, minlength=len(distinct)) for x in (0, 1)
    }
    return PublishedLaw(distinct, ids, likelihood, {0: crossed0, 1: crossed1})


def simulated_laws(known, path, variances, parents, invariant, mechanisms, draws, folds, rng):
    """``folds`` triples ``(grid, law, unseen)`` by simulation with cross-fitting.

    ``draws`` noise vectors are split into ``folds`` chunks; for each chunk, the
    table's law is estimated from the other chunks' runs (frequencies, each
    table seen given half a run so that ratios stay finite; the bias this
    leaves shrinks as ``draws`` grows) and the measures are averaged over the
    chunk's own runs (a :class:`~adversary.measures.product_grid.NoiseGrid` of
    equal weights). ``unseen[x]`` is the share of the chunk's runs for the
    truth ``x`` whose table the other chunks never published under either
    value: their likelihood ratio is 1 and their posterior the prior, whatever
    the true one (in [0, 1]), so the published adversary's measures may be off
    by that share — most runs once the tables outnumber ``draws`` (many blocks).
    """
    size = draws // folds
    chunks = [
        np.stack([np.asarray(m.sample(size, rng)) for m in mechanisms], axis=1)
        for _ in range(folds)
    ]
    arrays = []
    for noise in chunks:
        tables, crossed = published_tables(noise, known, path, variances, parents, invariant)
        arrays += [tables[0], tables[1], crossed[0], crossed[1]]
    distinct, ids = table_ids(*arrays)
    own = [ids[4 * k : 4 * k + 4] for k in range(folds)]
    counts = [[np.bincount(chunk[x], minlength=len(distinct)) for x in (0, 1)] for chunk in own]
    totals = [sum(c[x] for c in counts) for x in (0, 1)]
    pairs = []
    for k, chunk in enumerate(own):
        likelihood = {
            x: (totals[x] - counts[k][x] + 0.5) / (size * (folds - 1) + 0.5 * len(distinct))
            for x in (0, 1)
        }
        law = PublishedLaw(
            distinct, {0: chunk[0], 1: chunk[1]}, likelihood, {0: chunk[2], 1: chunk[3]}
        )
        never = (totals[0] == counts[k][0]) & (totals[1] == counts[k][1])
        unseen = {x: float(never[chunk[x]].mean()) for x in (0, 1)}
        pairs.append((NoiseGrid(chunks[k], np.full(size, 1.0 / size), 0.0), law, unseen))
    return pairs


def three_adversaries(
    prior: float,
    truth: int,
    mechanisms,
    path: np.ndarray,
    grid: NoiseGrid,
    law: PublishedLaw,
    tie_rule: str,
) -> list[AdversaryMeasures]:
    """The three adversaries' measures for the truth ``x* = truth`` (module docstring)."""
    prior_odds = np.log(prior) - np.log1p(-prior)
    noisy_odds = prior_odds + noisy_log_ratio(grid.noise, path, mechanisms, truth)
    seen = law.ids[truth]
    published_odds = prior_odds + _log(law.likelihood[1][seen]) - _log(law.likelihood[0][seen])
    same_table = law.crossed[truth] == seen  # the other value would publish this table too
    both_odds = np.where(same_table, noisy_odds, np.inf if truth == 1 else -np.inf)

    prior_of_truth = prior if truth == 1 else 1.0 - prior
    rows = []
    for name, odds in zip(ADVERSARIES, (noisy_odds, published_odds, both_odds), strict=True):
        posterior_of_truth = expit(odds if truth == 1 else -odds)
        credit = binary_credit(odds, truth == 1, tie_rule)
        marginal = float(grid.weight @ posterior_of_truth)
        rows.append(
            AdversaryMeasures(
                adversary=name,
                truth=truth,
                marginal_posterior=marginal,
                marginal_risk=marginal / prior_of_truth,
                correct_decision_probability=float(grid.weight @ credit),
                omitted_mass=grid.omitted_mass,
            )
        )
    return rows
