"""An exact Gibbs step for the persons of a reconstruction model, with the tables kept up to date.

The generic exact step (:class:`adversary.inference.BoundedGibbs`) scores a
person's K candidate cells by evaluating the model's graph once per candidate:
every released count recomputed from all the persons, so a sweep costs
``n · K · (n + queries × cells)``. This step knows the model's structure
(:meth:`~adversary.scenarios.reconstruction.case.ReconstructionCase.model`
with ``latent="persons"``) and runs the compiled sweep of
:mod:`~adversary.scenarios.reconstruction.kernel`, which keeps the released
counts of the current persons and scores every cell of a person in
``O(queries + Σ_k queries holding k)``. The draw is exact (the same
conditional as the model's). It is a PyMC step method, so
:func:`adversary.inference.sample` runs it.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pymc.blocking import PointType, StatsType
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence
from pymc.util import get_random_generator

from .case import PERSONS, ReconstructionCase
from .kernel import PersonsKernel

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
        self.kernel = PersonsKernel(case, releases)
        super().__init__()

    @staticmethod
    def competence(var, has_grad=False):
        return Competence.INCOMPATIBLE  # only for the model it is built for: pass it as step=

    def step(self, point: PointType) -> tuple[PointType, StatsType]:
        name = self.vars[0].name
        cells, moved = self.kernel.sweep(point[name], self.rng)
        point = dict(point)
        point[name] = cells
        return point, [{"moved": moved}]
