"""Dare County's target seen through every PL 94-171 query (illustrative).

Kazan & Reiter (2023), Sec. 4.2, with the 2020 release as it is: the target
(household, voting age, not Hispanic, Black; the only one in the block) is
measured not only by the block's detailed (GVHR) count but by every query
whose table holds that cell — race, Hispanic, voting age, household/group
quarters and their crossings — each with its ρ in the 2020 budget
(``pl94-2020-persons``; the total holds every cell and tells nothing). The
adversary knows everyone else in the block, subtracts them from each count,
and combines the looks in the exact likelihood
(:class:`adversary.scenarios.multi_query.MultiQueryCase`). Their prior is the
paper's ``p`` on the target's cell, the rest spread evenly over the other 55
cells of the 56-cell classification (household/GQ × voting age × Hispanic ×
seven races): **illustrative**, since the paper's adversary states only
``p``. With ``queries="detailed"`` (``adversary risk every_query --queries
detailed``) every number is ``dare_county``'s; the measures with all queries
are Monte Carlo with standard errors. Noise convention: the paper's,
σ² = 1/(2ρ) (``convention="das"`` for 1/ρ).

Copy this file to put your own target, prior, queries or levels.
"""

from adversary.paper_setting import PRIORS
from adversary.reports.queries import DARE_TARGET
from adversary.scenarios.multi_query import MultiQueryCase, cell_prior

CASE = MultiQueryCase(
    name="Dare County ED 28-21, every query (illustrative)",
    description=__doc__,
    priors={label: cell_prior(DARE_TARGET, p) for label, p in PRIORS.items()},
    truth=DARE_TARGET,
    queries="all",
    levels=("block",),
    convention="paper",
    # made up: the nine looks' counts minus the others (race, Hispanic, …, detailed)
    releases=(1, 0, 2, 1, 0, 1, 1, 3, 1),
)
