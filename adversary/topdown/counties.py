"""Synthetic counties shaped like JASON's experiment, and the experiment itself (Sec. 6.3.2–6.3.3).

JASON post-process one query of the 2010 Census, the voting-age Hispanic
population by county: 58,479,383 people in 3,142 counties of the 50 states,
each state's total an invariant. The county counts themselves are not in the
report (its Figure 6-3 plots them by rank, from a handful to about 3
million), so :func:`synthetic_counties` draws counties of that shape: log-normal
counts (σ of the log 2.0) scaled to the report's total, in 50 states of
realistic sizes, with the report's two named Virginia counties, Fairfax
(187,160) and Lancaster (67), put in one state. :func:`state_runs` adds
discrete Gaussian noise of standard deviation σ to every county, solves each
state's constraints (sum = the state's invariant total, every county ≥ 0)
at the optimum JASON's closed form and iteration reach
(:func:`~.solver.nonnegative_sum_fit`, every run of a state at once; JASON
do not round), ``runs`` times.
County counts (and their sum) must be at most 2**53
(:data:`~adversary._validation.MAX_EXACT_COUNT`), the integers float64 holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import (
    MAX_EXACT_COUNT,
    as_exact_reals,
    as_generator,
    as_index,
    scalar_positive,
)
from ..memory import check_memory
from ..noise.mechanisms import DiscreteGaussianNoise
from .solver import nonnegative_sum_fit

__all__ = [
    "COUNTIES",
    "FAIRFAX",
    "LANCASTER",
    "TOTAL",
    "Counties",
    "state_runs",
    "synthetic_counties",
]

#: JASON's query: 3,142 counties, 58,479,383 voting-age Hispanic persons (2010).
COUNTIES, TOTAL, STATES = 3_142, 58_479_383, 50
#: The two Virginia counties of JASON's Figures 6-9 and 6-10.
FAIRFAX, LANCASTER = 187_160, 67
#: The largest noise standard deviation of :func:`state_runs`: its noisy counts (the noise is
#: below 64 σ but with probability e^-2048) stay within the exact integers of float64.
MAX_SIGMA = MAX_EXACT_COUNT / 64
#: Float64 arrays of runs × counties that :func:`state_runs` holds at once.
RUN_ARRAYS = 4


@dataclass(frozen=True)
class Counties:
    """County counts (``population``), each county's state (``state``) and the named counties'
    indices (``fairfax``, ``lancaster``)."""

    population: np.ndarray
    state: np.ndarray
    fairfax: int
    lancaster: int

    def __post_init__(self):
        population = as_exact_reals(self.population, "population")
        if population.ndim != 1 or population.size == 0:
            raise ValueError(f"population must be a vector of counts, got shape {population.shape}")
        if np.any(population < 0) or np.any(population != np.round(population)):
            bad = population[(population < 0) | (population != np.round(population))]
            raise ValueError(f"population must be counts >= 0, got {float(bad[0])!r}")
        if population.sum() > MAX_EXACT_COUNT:
            raise ValueError(
                f"population must sum to at most 2**53, got {float(population.sum())!r}"
            )
        state = np.asarray(self.state)
        if (
            state.shape != population.shape
            or not np.issubdtype(state.dtype, np.integer)
            or np.any(state < 0)
        ):
            raise ValueError(
                f"state must hold one state index >= 0 per county ({population.size}), "
                f"got {state.dtype} of shape {state.shape}"
            )
        for name in ("fairfax", "lancaster"):  # -1: not among these counties
            value = getattr(self, name)
            if not (isinstance(value, int | np.integer) and value == -1):
                as_index(value, population.size, name, "a county index (or -1)")
        object.__setattr__(self, "population", population.astype(np.int64))
        object.__setattr__(self, "state", state.astype(np.int64))

    def state_totals(self) -> np.ndarray:
        return np.bincount(self.state, weights=self.population).astype(np.int64)

    def of_state(self, state: int) -> Counties:
        """The counties of one state (Fairfax and Lancaster are in state 0), renumbered."""
        states = int(self.state.max()) + 1
        members = np.flatnonzero(self.state == as_index(state, states, "state", "a state index"))
        if members.size == 0:
            raise ValueError(f"state: state {state!r} has no counties")
        index = {int(c): i for i, c in enumerate(members)}
        return Counties(
            population=self.population[members],
            state=np.zeros(members.size, dtype=np.int64),
            fairfax=index.get(self.fairfax, -1),
            lancaster=index.get(self.lancaster, -1),
        )


def synthetic_counties(seed: int = 2010) -> Counties:
    """3,142 counties in 50 states summing to 58,479,383, Fairfax and Lancaster among them."""
    rng = as_generator(seed)
    sizes = rng.dirichlet(np.full(STATES, 1.5)) * (COUNTIES - STATES)
    per_state = 1 + np.floor(sizes).astype(np.int64)
    per_state[np.argsort(sizes - np.floor(sizes))[::-1][: COUNTIES - per_state.sum()]] += 1
    state = np.repeat(np.arange(STATES), per_state)
    drawn = rng.lognormal(mean=0.0, sigma=2.0, size=COUNTIES)
    drawn[:2] = 0.0  # the named counties, in state 0, set below
    scale = (TOTAL - FAIRFAX - LANCASTER) / drawn.sum()
    population = np.floor(drawn * scale).astype(np.int64)
    population[:2] = FAIRFAX, LANCASTER
    shortfall = TOTAL - int(population.sum())
    population[np.argsort(drawn)[::-1][:shortfall]] += 1
    return Counties(population=population, state=state, fairfax=0, lancaster=1)


def state_runs(counties: Counties, sigma: float, runs: int, seed: int = 0) -> np.ndarray:
    """Post-processed county counts, runs × counties: noise of s.d. ``sigma``, each state solved
    for its invariant total with every county ≥ 0 (real-valued, as JASON)."""
    if not isinstance(counties, Counties):
        raise TypeError(f"counties must be Counties, got {type(counties).__name__}")
    if scalar_positive(sigma, "sigma") > MAX_SIGMA:
        raise ValueError(f"sigma must be at most 2**47 (MAX_SIGMA), got {sigma!r}")
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    check_memory(RUN_ARRAYS * 8.0 * runs * counties.population.size, f"runs ({runs} runs)")
    noise = DiscreteGaussianNoise.from_variance(float(sigma) ** 2)
    rng = as_generator(seed)
    totals = counties.state_totals()
    members = [np.flatnonzero(counties.state == s) for s in range(totals.size)]
    noisy = counties.population + noise.sample((runs, counties.population.size), rng)
    published = np.empty(noisy.shape)
    for s, units in enumerate(members):  # every run of a state at once
        variances = np.full(units.size, noise.variance)
        published[:, units] = nonnegative_sum_fit(
            noisy[:, units], variances, np.full(runs, float(totals[s]))
        )
    return published
