"""TopDown with every query over a synthetic state: one release, or many for Monte Carlo.

Top down (JASON 2022, Sec. 5.1 and 6.3): every unit of every level measures
every query its level's share funds (:mod:`.measure`); its cells are
estimated by GLS (:mod:`.operators`); the state is fitted to its invariant
total and each level below to its parent's published cells (:mod:`.fit`).
The state and the counties are done first, on the caller's process; then
each county's subtree (its tracts, block groups and blocks) is one task, on
the Dask ``client`` if one is given, else in turn on this process. Each
county's noise comes from its own generator
(:func:`~.measure.unit_generator`), so the release is the same bytes
whatever the number of workers.

``nonnegative`` and ``rounded`` (default both) make the published tables:
non-negative integers, consistent at every level, the state's total the
invariant. With both ``False`` the result is the linear estimator (GLS, the
state's invariant, the equal split of each parent's discrepancy), whose
covariance is ``V_c = (1 − 1/n)Σ_ℓ + V_P/n²``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...memory import check_memory
from ...scenarios.reconstruction.classification import REDUCED, Classification
from .fit import fit_children, fit_state
from .measure import noisy_answers, unit_generator
from .operators import LEVELS, level_operators
from .tables import Hierarchy, level_dataset

__all__ = ["every_query_runs", "every_query_topdown"]

#: Float64 arrays of units × cells a release holds per level (truth, answers, estimates, fit).
RELEASE_ARRAYS = 6
#: The levels of one county's subtree, fitted in one task.
SUBTREE = LEVELS[2:]


def _checked_options(runs, seed, nonnegative, rounded) -> None:
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    for name, value in (("nonnegative", nonnegative), ("rounded", rounded)):
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"{name} must be True or False, got {value!r}")


def county_subtree(counts, starts, published, operators, seed, run, county, options) -> list:
    """The published cells of one county's tracts, block groups and blocks (one task).

    ``counts``: the true cells of each level of :data:`SUBTREE` in the county;
    ``starts``: each level's families within the county; ``published``: the
    county's published cells; ``options``: ``(nonnegative, rounded)``.
    """
    nonnegative, rounded = options
    parent, out = published[None, :], []
    for level in SUBTREE:
        rng = unit_generator(seed, run, level, county)
        estimates = operators[level].estimate(noisy_answers(counts[level], operators[level], rng))
        parent = fit_children(
            estimates,
            starts[level],
            parent,
            operators[level],
            nonnegative=nonnegative,
            rounded=rounded,
        )
        out.append(parent)
    return out


def _upper(tree: Hierarchy, operators, seed, run, options):
    """The published cells of the state and of the counties (this process)."""
    nonnegative, rounded = options
    state_op, county_op = operators["state"], operators["county"]
    rng = unit_generator(seed, run, "state", 0)
    estimate = state_op.estimate(noisy_answers(tree.counts["state"], state_op, rng))[0]
    total = int(tree.counts["state"].sum())
    state = fit_state(estimate, state_op, total, nonnegative=nonnegative, rounded=rounded)
    counties = tree.counts["county"]
    answers = np.concatenate(
        [
            noisy_answers(counties[k : k + 1], county_op, unit_generator(seed, run, "county", k))
            for k in range(counties.shape[0])
        ]
    )
    fitted = fit_children(
        county_op.estimate(answers),
        tree.starts["county"],
        state[None, :],
        county_op,
        nonnegative=nonnegative,
        rounded=rounded,
    )
    return state, fitted


def _subtree_inputs(tree: Hierarchy, county: int):
    """The true cells and family starts of county ``county``'s subtree."""
    first, last = county, county + 1  # rows of the level above, within the county
    counts, starts = {}, {}
    for level in SUBTREE:
        bounds = tree.starts[level][first : last + 1]
        counts[level] = tree.counts[level][bounds[0] : bounds[-1]]
        starts[level] = bounds - bounds[0]
        first, last = bounds[0], bounds[-1]
    return counts, starts


def _releases(truth, allocation, runs, classification, convention, queries, seed, options, client):
    """``{level: runs × units × cells}`` of ``runs`` releases."""
    if not isinstance(classification, Classification):
        raise TypeError(f"classification must be a Classification, got {classification!r}")
    _checked_options(runs, seed, *options)
    tree = Hierarchy(truth, classification.n_cells)
    operators = level_operators(allocation, classification, convention, queries)
    units = sum(tree.counts[level].shape[0] for level in LEVELS)
    rows = max(op.matrix.shape[0] for op in operators.values())
    check_memory(
        8.0 * (RELEASE_ARRAYS * units * classification.n_cells * runs + units * rows),
        f"runs ({runs} releases of {units} units × {classification.n_cells} cells)",
    )
    upper = [_upper(tree, operators, seed, run, options) for run in range(runs)]
    counties = tree.counts["county"].shape[0]
    inputs = [_subtree_inputs(tree, k) for k in range(counties)]
    calls = [
        (inputs[k][0], inputs[k][1], upper[run][1][k], operators, seed, run, k, options)
        for run in range(runs)
        for k in range(counties)
    ]
    if client is None:
        done = [county_subtree(*call) for call in calls]
    else:
        done = client.gather([client.submit(county_subtree, *c, pure=False) for c in calls])
    out = {
        "state": np.stack([u[0][None, :] for u in upper]),
        "county": np.stack([u[1] for u in upper]),
    }
    for depth, level in enumerate(SUBTREE):
        out[level] = np.stack(
            [
                np.concatenate([done[run * counties + k][depth] for k in range(counties)])
                for run in range(runs)
            ]
        )
    return tree, out


def _tree(tree: Hierarchy, out: dict) -> xr.DataTree:
    nodes = {
        level: level_dataset(out[level], tree.units[level], tree.parents[level]) for level in LEVELS
    }
    return xr.DataTree.from_dict(nodes)


def every_query_runs(
    truth: xr.DataTree,
    allocation,
    runs: int,
    *,
    classification: Classification = REDUCED,
    convention="das",
    queries=None,
    seed: int = 0,
    nonnegative: bool = True,
    rounded: bool = True,
    client=None,
) -> xr.DataTree:
    """``runs`` independent releases of TopDown with every query of ``allocation``: counts of
    dims ``("run", "unit", "cell")`` (module docstring).

    ``truth``: the true tables (:func:`~.tables.truth_tables`); ``queries``:
    the queries measured where funded (default every PL 94-171 query);
    ``convention``: σ² from ρ (``"das"``: 1/ρ); ``seed``: run ``r``'s county
    ``k`` draws from :func:`~.measure.unit_generator` ``(seed, r, level, k)``.
    Returns the published tables in the truth's format (int64 counts when
    ``rounded``, else float64).
    """
    options = (nonnegative, rounded)
    tree, out = _releases(
        truth, allocation, runs, classification, convention, queries, seed, options, client
    )
    return _tree(tree, out)


def every_query_topdown(truth: xr.DataTree, allocation, **options) -> xr.DataTree:
    """One release: run 0 of :func:`every_query_runs` (the same keyword ``options``), its
    counts of dims ``("unit", "cell")``."""
    return every_query_runs(truth, allocation, 1, **options).isel(run=0, drop=True)
