"""An exact Gibbs step for the persons of a reconstruction model, with the tables kept up to date.

The generic exact step (:class:`adversary.inference.BoundedGibbs`) scores a
person's K candidate cells by evaluating the model's graph once per candidate:
every released count recomputed from all the persons, so a sweep costs
``n · K · (n + queries × cells)``. This step knows the model's structure
(:meth:`~adversary.scenarios.reconstruction.case.ReconstructionCase.model`
with ``latent="persons"``) and keeps the
true released counts ``m`` of the current persons. To update person i in
cell c it removes the person (``m_q -= 1`` for the queries holding c), and
cell k's log full conditional is, up to a constant,

    log p_k + Σ_{q ∋ k} [log P_q(x*_q - m_q - 1) - log P_q(x*_q - m_q)],

the noise's log-pmf looked up in a table over the counts a query can hold
(0…n) and one sparse product with the cell-by-query incidence:
``O(queries + cells × queries per cell)`` per person. The draw is exact (the
same conditional as the model's); the person then re-enters the counts. Under
a Dirichlet prior the prior term is the Pólya sequence's: ``log(α_k + h_k)``
with ``h`` the histogram without the person. It is a PyMC step method, so
:func:`adversary.inference.sample` runs it.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pymc.blocking import PointType, StatsType
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence
from pymc.util import get_random_generator
from scipy import sparse

from ...inference._conditional import draw_index
from .case import PERSONS, ReconstructionCase

__all__ = ["PersonsGibbs"]


class PersonsGibbs(BlockedStep):
    """Exact Gibbs updates of every person's cell in a reconstruction model (module docstring).

    Parameters
    ----------
    case : adversary.scenarios.reconstruction.case.ReconstructionCase
        The case whose ``model(releases)`` is being sampled.
    releases : sequence of int, optional
        The released counts the model conditions on (default the case's).
    model, rng, blocked, initial_point, compile_kwargs :
        As for PyMC step methods.
    """

    name = "persons_gibbs"
    default_blocked = True
    default_tune_steps = 200
    stats_dtypes_shapes: ClassVar[dict] = {"moved": (np.int64, [])}

    def __init__(
        self,
        case: ReconstructionCase,
        releases=None,
        *,
        model=None,
        rng=None,
        blocked: bool = True,
        initial_point: PointType | None = None,
        compile_kwargs: dict | None = None,
    ):
        model = modelcontext(model)
        self.vars = [model.rvs_to_values[model[PERSONS]]]
        self.blocked = blocked
        self.rng = get_random_generator(rng)
        self.case = case
        releases = case.releases if releases is None else releases
        self.releases = np.asarray(releases, dtype=np.int64)
        self.incidence = case.incidence()
        self.by_cell = sparse.csr_matrix(self.incidence.T.astype(np.float64))  # (cells, queries)
        self.queries_of = [np.flatnonzero(self.incidence[:, k]) for k in range(case.n_cells)]
        # log P_q(x*_q - m) for every count m a query can hold, 0…n: looked up, not recomputed.
        counts = np.arange(case.n + 1)
        self.table = np.empty((len(case.queries), case.n + 1))
        for q, mechanism in enumerate(case.noise()):
            self.table[q] = mechanism.logpmf(self.releases[q] - counts)
        self.rows = np.arange(len(case.queries))
        prior = np.array(case.prior)
        with np.errstate(divide="ignore"):
            self.log_prior = np.log(prior)
        self.alpha = None if case.concentration is None else case.concentration * prior
        super().__init__()

    @staticmethod
    def competence(var, has_grad=False):
        return Competence.INCOMPATIBLE  # only for the model it is built for: pass it as step=

    def _scores(self, counts: np.ndarray) -> np.ndarray:
        """``Σ_q log P_q(x*_q - m_q - 1{k ∈ q})`` for every cell k, up to a constant.

        Written as ``Σ_q b_q + Σ_{q ∋ k} (a_q - b_q)`` with ``a = log P(x* - m - 1)``
        and ``b = log P(x* - m)``; an infinite term (bounded noise) is counted
        apart, so a cell whose placement makes some count impossible gets ``-inf``.
        """
        above = self.table[self.rows, counts + 1]  # counts exclude the person: at most n - 1
        here = self.table[self.rows, counts]
        bad_above, bad_here = ~np.isfinite(above), ~np.isfinite(here)
        if not (bad_above.any() or bad_here.any()):
            return self.by_cell @ (above - here)
        above, here = np.where(bad_above, 0.0, above), np.where(bad_here, 0.0, here)
        impossible = self.by_cell @ bad_above + bad_here.sum() - self.by_cell @ bad_here
        return np.where(impossible > 0, -np.inf, self.by_cell @ (above - here))

    def step(self, point: PointType) -> tuple[PointType, StatsType]:
        name = self.vars[0].name
        cells = np.array(point[name], dtype=np.int64, copy=True)
        histogram = np.bincount(cells, minlength=self.case.n_cells)
        counts = self.incidence @ histogram
        moved = 0
        for i, cell in enumerate(cells):
            counts[self.queries_of[cell]] -= 1
            histogram[cell] -= 1
            scores = self._scores(counts)
            if self.alpha is None:
                scores = scores + self.log_prior
            else:
                with np.errstate(divide="ignore"):
                    scores = scores + np.log(np.where(self.alpha > 0, self.alpha + histogram, 0.0))
            new = draw_index(scores, self.rng)
            moved += int(new != cell)
            cells[i] = new
            counts[self.queries_of[new]] += 1
            histogram[new] += 1
        point = dict(point)
        point[name] = cells
        return point, [{"moved": moved}]
