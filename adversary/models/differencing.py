"""Dare County's target count released again and differenced from totals (illustrative).

Bach (2020), Sec. 3.3: a release that holds the same count more than once,
with independent noise, lets an adversary average the noise away. Here the
target's cell count of Dare County ED 28-21 (Kazan & Reiter Sec. 4.2, the
target unique: ``m = 0``) is released four times at the 2020 block-level
detailed ρ ≈ 0.0992 (paper convention, σ² = 1/(2ρ)), and two published
totals hold it: one over the cell and one other cell, one over the cell and
six others, whose counts the adversary differences away without knowing
them. The Bayes adversary combines all six looks in the exact likelihood
(:class:`adversary.scenarios.differencing.DifferencingCase`); with
``repeats=1`` and no differences it is the single-block attack of
``dare_county``. **Illustrative**: the 2020 release measures each query once;
repeats are what a release without "same participants, same noise" allows.
Set ``mechanism=CellKeyNoise(...)`` (and ``rho=None``) for the cell-key
method's bounded noise.
"""

from adversary.paper_setting import PRIORS, RHO_BLOCK
from adversary.scenarios.differencing import DifferencingCase

CASE = DifferencingCase(
    name="Dare County ED 28-21, repeated and differenced counts (illustrative)",
    description=__doc__,
    priors=PRIORS,
    known_count=0,
    repeats=4,
    differences=(1, 6),
    rho=RHO_BLOCK,
    convention="paper",
    # made up: the sum of the four repeats, and the two totals minus their other cells
    observed_releases=(5, 2, -1),
)
