"""``adversary frontier``: which release to make — every attack's risk beside the tables' accuracy.

Evaluates a family of budget allocations around a reference (``--budget FILE``
or a preset, default the 2020 production allocation ``pl94-2020-persons``):
for each, the analytic accuracy of the tables TopDown with every query
publishes over a synthetic state of PERSONS people (``--synthetic``, seeded by
``--seed``) or over true tables (DATA: CSV or Parquet with columns ``state``,
``county``, ``tract``, ``block_group``, ``block``, ``cell`` — the cell on the
56-cell classification — and ``count``), and the data holder's risk under
each attack (``--attacks``, default all) for each prior (``--priors``). It
searches the level shares for the most accurate allocation whose risk stays
within ``--risk-profile`` and for the least risky at the reference's
accuracy, marks the Pareto set and places the reference on it. With
``--runs R`` the reference's and the best allocation's accuracy are
re-checked by simulating TopDown R times (non-negativity and rounding
included) on a local Dask cluster (``--workers``) or ``--scheduler``.

Writes into ``--out``: ``frontier.csv`` (one row per allocation: shares,
``within_limits``, ``on_frontier``, ``dominates_reference``, risk and error
scores, each attack's marginal risk and P[correct] per prior, each metric's
analytic MAE and variance per level), ``best_allocation.toml`` (a budget file
every command's ``--budget`` reads), ``summary.json`` and ``frontier.png``.

Scores: ``error_score`` of a metric is the mean over county, tract, block
group and block of the analytic variance relative to the reference's (the
reference scores 1); ``risk_score`` of an attack is the largest over the
priors of its marginal risk (3.4) plus its error bound relative to the
profile's limit (within the profile: at most 1; without a profile the limit
is 1).

``--family`` (repeatable; default: the total halved and doubled, the block
level's share 1/20, 1/10, 1/5 and the block's detailed share 1/2, 3/4):
``totals:R1,R2,…`` (total ρ, shares kept), ``level:LEVEL:S1,S2,…`` (one
level's share, the others in proportion), ``query:LEVEL:QUERY:S1,S2,…`` (one
query's share within a level), ``grid:LEVEL1,LEVEL2,…:STEPS`` (the simplex
of those levels' shares in STEPS steps), ``file:PATH`` (a budget file).

``--risk-profile``: the largest acceptable posterior-to-prior ratio at each
prior (Kazan & Reiter 2024): ``constant:R``, ``ratio-or-posterior:R,A``
(their Example 1: the ratio R, or any ratio leaving the posterior at most A)
or ``piecewise:P1=R1,P2=R2,…`` (joined linearly in log p). Without it no
risk limit is checked: every allocation is ``within_limits`` and the most
accurate search is unconstrained (the risk scores are then the marginal risks
themselves).

``summary.json`` keys: ``version``, ``inputs`` (reference, data, seed,
attacks, priors, profile, convention, family, runs), ``placement`` (whether
the reference is dominated, by which allocations, and the factors),
``searches`` (each answer's name and shares, or why it failed), ``best``,
``timings``, ``files``. ``--json`` prints the same object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import add_budget_arguments, command_parser


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "frontier",
        "risk beside accuracy across budget allocations: the frontier and the best allocation",
        __doc__,
        run,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("data", nargs="?", metavar="DATA", help="true cell counts (CSV/Parquet)")
    source.add_argument("--synthetic", type=int, metavar="PERSONS", help="a synthetic state")
    parser.add_argument("--preset", default=None, help="reference preset (same as --budget NAME)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --synthetic and --runs")
    parser.add_argument("--risk-profile", default=None, metavar="SPEC", help="risk limits")
    parser.add_argument("--attacks", default=None, help="attacks, comma-separated (default all)")
    parser.add_argument("--priors", default=None, help="priors, comma-separated (default K&R's)")
    parser.add_argument("--convention", default="das", help="noise convention: das or paper")
    parser.add_argument(
        "--family",
        action="append",
        default=None,
        metavar="SPEC",
        help="allocations to evaluate, repeatable (forms above)",
    )
    parser.add_argument(
        "--search",
        default="both",
        help="searches to run: most_accurate, least_risky, both (default) or none",
    )
    parser.add_argument("--runs", type=int, default=0, help="TopDown simulations (0: none)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler")
    parser.add_argument("--workers", type=int, default=None, help="local Dask workers")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--no-plots", action="store_true", help="write no figure")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_budget_arguments(parser, "pl94-2020-persons")


def run(args) -> int:
    from .._output import locked
    from ..analyses.frontier.report import run_and_write, summary_text
    from ..analyses.frontier.specs import frontier_inputs

    inputs = frontier_inputs(args)
    with locked(args.out, "--out"):
        summary = run_and_write(inputs, args.out, plots=not args.no_plots)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
    else:
        print(summary_text(summary))
    return 0
