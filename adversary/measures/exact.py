"""The data holder's measures of any PyMC attack model, summed exactly over a release grid.

Kazan & Reiter's marginal posterior (3.3), marginal risk (3.4) and probability
of a correct decision (3.6) are expectations over the releases the mechanism
produces from the truth. For a model whose releases (observed variables) are
integers and whose latents are discrete, this module computes them as sums:

1. **the release grid**: a window per released scalar, started from the
   range of a few dozen releases drawn from the truth and widened until
   the release probability outside the grid is below ``tail_mass / 2``; the
   releases of smallest probability are then dropped while their total stays
   below ``tail_mass / 2``. The release pmf is the model's own observed
   log-p with the latents at the truth, so what is left out,
   ``omitted_mass = 1 - Σ P[release]``, is exact (up to rounding). When the
   release scalars are independent given the latents
   (:func:`~adversary.measures.tabulated_likelihood.factorises`) the windows
   grow from each scalar's pmf, the grid's mass being their product;
2. **the posteriors**: the adversary's posterior of the event and of the
   target for every release on the grid, exactly
   (:class:`~adversary.measures.release_posteriors.ReleasePosteriors`, one
   compiled log-p, or tables of each release scalar's likelihood);
3. **the sums**: ``Σ P[release] · posterior`` (3.3), over the prior of the
   event (3.4); ``Σ P[release] · credit`` (3.6), the credit of each decision
   by the tie rule (:mod:`~adversary.measures.decision`).

Each summed quantity lies in [0, 1], so the releases left out move it by at
most ``omitted_mass``; the latent windows of each posterior add their
estimated omitted mass (weighted by the release probability). The
``error_bound`` is the sum of both. A decision is taken as computed on the
latent grid: it could differ from the exact one only where two values of the
target have posteriors within that release's omitted latent mass of each
other.

The truth, target, event and the prior of the event are as for the Monte
Carlo route (:mod:`~adversary.measures.attack_model`); the two agree within
the Monte Carlo error, and on the shipped scenarios equal their closed forms.

Every function compiled for a model is kept with its structure
(:mod:`~adversary.measures.structure`): the models of a scan over ρ, or of a
sweep, compile once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.model import modelcontext
from pymc.pytensorf import compile as compile_pytensor
from pytensor.graph.replace import graph_replace, vectorize_graph

from .._validation import as_probability
from ..inference._conditional import one_shot
from ..inference.grid import geometric_tail, scalar_labels
from ..inference.safe import counted_as_integers
from .attack_model import generator, is_discrete, observed_data, positive_int
from .decision import DEFAULT_TIE_RULE
from .marginal import MarginalMeasures
from .release_posteriors import ReleasePosteriors
from .simulation import release_simulator
from .stated import Statements, decision_credit, risk_error, state_attack
from .structure import kwargs_key, memoized, structured, values_key
from .tabulated_likelihood import factorises

__all__ = ["DEFAULT_MAX_RELEASES", "ReleaseGrid", "exact_measures", "release_grid"]

#: The largest release grid summed over, unless a caller says otherwise.
DEFAULT_MAX_RELEASES = 1_000_000

# Release sets drawn to place the first windows (fewer where the windows grow from each
# scalar's pmf, whose tables span well beyond them at no cost); rounds of widening at most.
_PILOT_DRAWS = 64
_TABULATED_PILOT_DRAWS = 16
_MAX_GROWTH_ROUNDS = 64
# Tables for the release windows span this many times their width more each side: windows
# started from 16 draws (about ±1.8 standard deviations) grow to ±7 or more for a tail mass
# of 1e-12, within the first tables.
_WINDOW_MARGIN = 3.0
# The most latent cells whose tables the release pmf shares with the posteriors.
_SHARED_TABLE_CELLS = 4096
# Release sets whose posteriors are computed in one call (bounds the memory of the pmfs).
_CHUNK = 50_000


class _ReleaseLogpmf:
    """``log P[releases | latents = truth]`` for a batch of release sets, compiled once.

    Built in random-variable space (``pymc.logp`` of each observed variable,
    the latents replaced by their true values), so transforms play no part.
    """

    def __init__(self, model, truth):
        observed = list(model.observed_RVs)
        self.names = [rv.name for rv in observed]
        self.dtypes = [model.rvs_to_values[rv].dtype for rv in observed]
        single = {
            rv: pt.tensor(dtype=d, shape=np.shape(observed_data(model, rv)))
            for rv, d in zip(observed, self.dtypes, strict=True)
        }
        terms = [pt.sum(pm.logp(rv, single[rv], warn_rvs=False)) for rv in observed]
        terms = counted_as_integers(terms)
        replace = {
            rv: pt.constant(np.asarray(truth[rv.name], dtype=rv.dtype)) for rv in model.free_RVs
        }
        replace.update(single)
        total = graph_replace(pt.add(*terms) if len(terms) > 1 else terms[0], replace, strict=False)
        batched = [pt.tensor(dtype=s.dtype, shape=(None, *s.type.shape)) for s in single.values()]
        out = vectorize_graph(total, replace=dict(zip(single.values(), batched, strict=True)))
        self.fn = compile_pytensor(batched, pt.cast(out, "float64"), **one_shot(None))

    def __call__(self, releases: dict[str, np.ndarray]) -> np.ndarray:
        args = [
            np.asarray(releases[n], dtype=d) for n, d in zip(self.names, self.dtypes, strict=True)
        ]
        return np.asarray(self.fn(*args), dtype=np.float64)


class _TabulatedReleaseLogpmf:
    """``log P[releases | latents = truth]`` as each release scalar's log-pmf over a window, from
    the tables of :mod:`~adversary.measures.tabulated_likelihood`.

    The tables are those of the latent grid's first cells (the truth among them) where
    there are at most :data:`_SHARED_TABLE_CELLS`: the posteriors' first tables are then
    the same evaluation (kept by the tables), not another; else of the truth alone.
    """

    def __init__(self, engine: ReleasePosteriors, truth):
        grid = engine.grid
        self.tables = grid.logp.tables
        self.names = engine.observed
        self.cells = [
            np.asarray(truth[v.name]).reshape(1, 1, *grid.shapes[v.name]) for v in grid.value_vars
        ]
        self.column = 0
        try:
            ranges, _, _ = grid.sized_ranges(truth, {}, max_cells=_SHARED_TABLE_CELLS)
        except ValueError:  # more cells than that: the truth's tables alone
            return
        candidates, flat = grid.cells(ranges)
        true_cell = np.concatenate([np.asarray(truth[v.name]).reshape(-1) for v in grid.value_vars])
        where = np.flatnonzero(np.all(flat == true_cell, axis=1))
        if where.size:
            self.cells, self.column = candidates, int(where[0])

    def by_scalar(self, windows, names) -> list[np.ndarray]:
        """Each release scalar's log-pmf over its window ``(lowest, highest)``; the scalars
        those of the observed variables ``names``, in that order."""
        lowest = min(lo for lo, _ in windows)
        span = np.arange(lowest, max(hi for _, hi in windows) + 1)
        tables = self.tables(self.cells, span, _WINDOW_MARGIN)
        tables = dict(zip(self.names, tables, strict=True))
        table = np.concatenate([tables[name][:, self.column, :] for name in names], axis=1)
        return [table[lo - lowest : hi - lowest + 1, k] for k, (lo, hi) in enumerate(windows)]


def _logpmf(model, truth, compile_kwargs):
    """The release log-pmf at the truth: from likelihood tables where the model factorises
    (those of the engine :func:`exact_measures` uses, compiled with the same options)."""
    untransformed = all(
        is_discrete(rv) and model.rvs_to_transforms.get(rv) is None for rv in model.free_RVs
    )
    if untransformed and factorises(model):
        return _TabulatedReleaseLogpmf(ReleasePosteriors.of(model, compile_kwargs), truth)
    return _ReleaseLogpmf(model, truth)


class ReleaseGrid:
    """The releases an attack model produces from its truth, on a grid, with their probabilities.

    Attributes after :func:`release_grid`: ``releases`` (``{observed name:
    array (n, *shape)}``), ``probability`` (``(n,)``), ``windows``
    (``{scalar label: (lowest, highest)}``) and ``omitted_mass`` (``1 - Σ
    probability``: the release probability left out).
    """

    def __init__(self, releases, probability, windows, omitted_mass, dropped_mass):
        self.releases = releases
        self.probability = probability
        self.windows = windows
        self.omitted_mass = omitted_mass
        self.dropped_mass = dropped_mass

    def __len__(self) -> int:
        return len(self.probability)


def release_grid(
    model,
    truth: Mapping,
    *,
    tail_mass: float = 1e-12,
    max_releases: int = DEFAULT_MAX_RELEASES,
    random_seed=None,
    compile_kwargs: dict | None = None,
) -> ReleaseGrid:
    """Every release set of non-negligible probability under ``truth``, with that probability.

    See the module docstring (step 1). ``truth`` names every free latent.
    Refuses (``ValueError`` naming ``max_releases``) a grid larger than
    ``max_releases`` before building it. ``compile_kwargs`` as for
    :func:`exact_measures`.
    """
    grown = grown_windows(
        model,
        truth,
        tail_mass=tail_mass,
        max_releases=max_releases,
        random_seed=random_seed,
        compile_kwargs=compile_kwargs,
    )
    releases = _by_variable(_cells(grown.windows), grown.shapes)
    p, omitted = grown.p, grown.omitted
    if p is None:  # the grid, its log-p the sum of the scalars' in turn
        p, omitted = product_probability(grown.by_scalar)
    kept, dropped_mass = kept_releases(p, tail_mass / 2)
    keep = np.flatnonzero(kept)
    return ReleaseGrid(
        releases={name: array[keep] for name, array in releases.items()},
        probability=p[keep],
        windows=grown.labelled_windows(),
        omitted_mass=omitted + dropped_mass,
        dropped_mass=dropped_mass,
    )


@dataclass
class GrownWindows:
    """The release windows of :func:`grown_windows`: ``windows`` (``[lowest, highest]`` per
    release scalar, the scalars ``labels``), and either ``by_scalar`` (each scalar's log-pmf
    over its window, when the scalars are independent) or ``p`` (the grid's probabilities)
    with ``omitted`` (the release probability outside the grid)."""

    labels: list
    shapes: dict
    windows: list
    by_scalar: list | None
    p: np.ndarray | None
    omitted: float

    def labelled_windows(self) -> dict:
        return {lb: (lo, hi) for lb, (lo, hi) in zip(self.labels, self.windows, strict=True)}

    def __len__(self) -> int:
        return math.prod(hi - lo + 1 for lo, hi in self.windows)


def grown_windows(
    model, truth, *, tail_mass, max_releases, random_seed=None, compile_kwargs=None
) -> GrownWindows:
    """The windows of the release grid, grown until it leaves out at most ``tail_mass / 2``
    (module docstring, step 1; arguments as for :func:`release_grid`)."""
    model = modelcontext(model)
    tail_mass = float(as_probability(tail_mass, "tail_mass"))
    max_releases = positive_int(max_releases, "max_releases")
    continuous = [rv.name for rv in model.observed_RVs if not is_discrete(rv)]
    if continuous:
        raise TypeError(
            f"model: its releases {continuous} are not integers, so there is no release grid to "
            "sum over; use monte_carlo_measures"
        )
    logpmf = memoized(
        model,
        ("release_logpmf", values_key(truth), kwargs_key(compile_kwargs)),
        lambda: _logpmf(model, truth, compile_kwargs),
    )
    shapes = {rv.name: np.shape(observed_data(model, rv)) for rv in model.observed_RVs}
    labels = [lb for name, shape in shapes.items() for lb in scalar_labels(name, shape)]
    tabulated = isinstance(logpmf, _TabulatedReleaseLogpmf)
    draws = _TABULATED_PILOT_DRAWS if tabulated else _PILOT_DRAWS
    pilot = release_simulator(model, truth, generator(random_seed))(draws)
    flat = np.concatenate([pilot[n].reshape(draws, -1) for n in shapes], axis=1)
    windows = [[int(lo), int(hi)] for lo, hi in zip(flat.min(0), flat.max(0), strict=True)]
    for _ in range(_MAX_GROWTH_ROUNDS):
        sizes = [hi - lo + 1 for lo, hi in windows]
        n = math.prod(sizes)
        if n > max_releases:
            shown = dict(zip(labels, map(tuple, windows), strict=True))
            raise ValueError(
                f"max_releases: the release grid needs {n} release sets (windows {shown}), more "
                f"than max_releases={max_releases}; raise it or use monte_carlo_measures"
            )
        by_scalar = p = None
        if tabulated:
            # Independent scalars: the grid's mass is the product of each window's.
            by_scalar = logpmf.by_scalar(windows, list(shapes))
            masses = [np.exp(_checked(log_p)) for log_p in by_scalar]
            sums = [np.sum(m, dtype=np.longdouble) for m in masses]
            total = math.prod(sums)
            marginals = [
                m * float(math.prod(sums[:a] + sums[a + 1 :])) for a, m in enumerate(masses)
            ]
        else:
            p = np.exp(_checked(logpmf(_by_variable(_cells(windows), shapes))))
            total = np.sum(p, dtype=np.longdouble)  # extended precision: 1 - total loses nothing
            marginals = None
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"model: the release probabilities sum to {float(total)} > 1 over the grid; the "
                "observed variables' log-p is not a normalised pmf"
            )
        omitted = max(0.0, float(1 - total))
        if omitted <= tail_mass / 2:
            return GrownWindows(labels, shapes, windows, by_scalar, p, omitted)
        if marginals is None:
            grid = p.reshape(sizes)
            marginals = [
                grid.sum(axis=tuple(b for b in range(len(sizes)) if b != a))
                for a in range(len(sizes))
            ]
        grow = _extensions(marginals, tail_mass / (4 * len(labels)))
        if not grow:  # the estimates are small but the mass is not: widen every side
            grow = [(a, s, max(sizes[a], 4)) for a in range(len(labels)) for s in (0, 1)]
        for axis, side, steps in grow:
            windows[axis][side] += steps if side else -steps
    raise ValueError(
        f"tail_mass: the release grid still leaves {omitted:.3g} of the release probability out "
        f"after {_MAX_GROWTH_ROUNDS} widenings"
    )


def product_probability(by_scalar: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """The probability of every release set of a product grid (the last scalar fastest), the
    product of its scalars' pmfs, and the mass the grid leaves out (one less the product of
    each window's mass, summed in extended precision)."""
    masses = [np.exp(log_p) for log_p in by_scalar]
    p = masses[0]
    for mass in masses[1:]:
        p = np.multiply.outer(p, mass)
    total = math.prod(np.sum(m, dtype=np.longdouble) for m in masses)
    return p.reshape(-1), max(0.0, float(1 - total))


def _cells(windows) -> np.ndarray:
    """Every release set of the windows' product, one per row (the last scalar fastest)."""
    grids = np.meshgrid(*(np.arange(lo, hi + 1) for lo, hi in windows), indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1)


def _checked(log_p: np.ndarray) -> np.ndarray:
    if np.any(np.isnan(log_p)) or np.any(log_p > 1e-9):
        raise ValueError("model: its releases' log-p is not a log-probability (NaN or > 0)")
    return log_p


def _by_variable(cells: np.ndarray, shapes: dict) -> dict[str, np.ndarray]:
    out, column = {}, 0
    for name, shape in shapes.items():
        k = math.prod(shape)
        out[name] = cells[:, column : column + k].reshape(len(cells), *shape)
        column += k
    return out


def _extensions(marginals: list, threshold: float) -> list[tuple[int, int, int]]:
    """``(axis, side, steps)``: how far to widen each side whose mass beyond exceeds ``threshold``.

    ``marginals``: the grid's release probability summed over every axis but one, per axis.

    Side 0 is low, 1 high. A side whose marginal decays geometrically with
    ratio ``r`` and leaves an estimated ``t`` beyond it is widened by enough
    steps for ``t r^steps`` to fall below ``threshold``; a side that does not
    decay is widened by the window's width.
    """
    out = []
    for axis, marginal in enumerate(marginals):
        width = marginal.size
        for side, (edge, inner) in enumerate(
            (
                (marginal[0], marginal[-1]) if width < 2 else (marginal[0], marginal[1]),
                (marginal[-1], marginal[0]) if width < 2 else (marginal[-1], marginal[-2]),
            )
        ):
            beyond = float(geometric_tail(edge, inner)) if width > 1 else math.inf
            if beyond <= threshold:
                continue
            ratio = edge / inner if width > 1 and inner > edge else 1.0
            steps = width
            if ratio < 1.0 and math.isfinite(beyond):
                steps = math.ceil(math.log(threshold / beyond) / math.log(ratio))
            out.append((axis, side, max(1, min(steps, max(width, 4)))))
    return out


def kept_releases(p: np.ndarray, budget: float) -> tuple[np.ndarray, float]:
    """Which releases stay when the least probable are dropped, up to ``budget`` of probability
    (the smallest first, of equal ones the first on the grid: :func:`._dropping.kept_mask`),
    and the mass dropped."""
    from ._dropping import kept_mask  # numba: imported when a grid is summed

    kept, dropped = kept_mask(np.ascontiguousarray(p, dtype=np.float64), float(budget))
    return kept, float(dropped)


def exact_measures(
    model,
    truth: Mapping,
    event: Mapping | Callable | None = None,
    *,
    target: str | None = None,
    tie_rule: str = DEFAULT_TIE_RULE,
    prior_of_truth: float | None = None,
    tail_mass: float = 1e-12,
    latent_tail_mass: float = 1e-12,
    max_releases: int = DEFAULT_MAX_RELEASES,
    max_cells: int = 20_000_000,
    random_seed=None,
    compile_kwargs: dict | None = None,
) -> MarginalMeasures:
    """Marginal posterior (3.3), marginal risk (3.4) and P[correct] (3.6) summed over releases.

    Parameters
    ----------
    model : pymc.Model
        An attack model with discrete latents and integer releases (observed
        variables whose mechanism can be sampled).
    truth, event, target, prior_of_truth :
        As for :func:`~adversary.measures.monte_carlo.monte_carlo_measures`.
    tie_rule : {"split", "largest", "smallest"}
        How a tied decision counts in (3.6).
    tail_mass : float in (0, 1)
        Release probability the sums may leave out (module docstring).
    latent_tail_mass : float in (0, 1)
        Posterior mass each latent window may leave out.
    max_releases, max_cells : int
        Refuse a release grid, or a latent grid, larger than this.
    random_seed :
        Seeds the pilot draws that place the first windows (the result does
        not depend on it beyond the error bound).

    Returns
    -------
    MarginalMeasures
        ``method="exact"``; ``omitted_mass`` the release probability left out;
        ``error_bound`` that plus the weighted latent tail mass; ``details``:
        ``releases`` (number summed), ``release_windows``, ``latent_omitted_mass``,
        ``prior``, ``target``, ``risk_error_bound``, ``seconds``.
    """
    started = time.perf_counter()
    model = structured(modelcontext(model))
    latent_tail_mass = float(as_probability(latent_tail_mass, "latent_tail_mass"))
    stated = state_attack(
        model,
        Statements(truth, event, target, prior_of_truth, tie_rule),
        latent_tail_mass,
        max_cells,
        compile_kwargs,
        random_seed,
        "exact sums need discrete latents: use monte_carlo_measures(..., method='mcmc')",
    )
    grown = grown_windows(
        model,
        stated.truth,
        tail_mass=tail_mass,
        max_releases=max_releases,
        random_seed=random_seed,
        compile_kwargs=compile_kwargs,
    )
    from .product_sums import product_sums, product_sums_take  # numba: imported when summing

    engine = ReleasePosteriors.of(model, compile_kwargs)
    summed = None
    if product_sums_take(engine, grown):  # one compiled pass over the product grid
        p, omitted = product_probability(grown.by_scalar)
        kept, dropped = kept_releases(p, tail_mass / 2)
        summed = product_sums(
            engine, grown, kept, omitted + dropped, stated, latent_tail_mass, max_cells
        )
    if summed is None:
        summed = _chunked_sums(engine, grown, stated, tail_mass, latent_tail_mass, max_cells)
    posterior_sum, credit_sum, latent_error = summed.posterior, summed.credit, summed.latent_error
    prior = stated.prior_of_truth
    error = summed.omitted + latent_error
    return MarginalMeasures(
        marginal_posterior=posterior_sum,
        marginal_risk=posterior_sum / prior,
        correct_decision_probability=credit_sum,
        prior_of_truth=prior,
        omitted_mass=summed.omitted,
        error_bound=error,
        method="exact",
        details={
            "releases": summed.summed,
            "release_windows": grown.labelled_windows(),
            "latent_omitted_mass": latent_error,
            "target": stated.target,
            "prior": stated.prior_details,
            "risk_error_bound": risk_error(error, prior, stated.prior_standard_error),
            "seconds": time.perf_counter() - started,
        },
        tie_rule=stated.tie_rule,
    )


def _chunked_sums(engine, grown, stated, tail_mass, latent_tail_mass, max_cells):
    """The sums of :func:`exact_measures` from the posteriors of the release grid, a chunk of
    release sets at a time (any model; :mod:`.product_sums` is faster where it applies)."""
    releases = _by_variable(_cells(grown.windows), grown.shapes)
    p, omitted = grown.p, grown.omitted
    if p is None:
        p, omitted = product_probability(grown.by_scalar)
    kept, dropped = kept_releases(p, tail_mass / 2)
    keep = np.flatnonzero(kept)
    probability = p[keep]
    sums = np.zeros(3)
    ranges = None  # each chunk's latent windows start where the last chunk's ended
    for start in range(0, len(keep), _CHUNK):
        part = keep[start : start + _CHUNK]
        weights = probability[start : start + _CHUNK]
        table = engine.reduced(
            {name: array[part] for name, array in releases.items()},
            stated.event,
            stated.target,
            centre=stated.truth,
            tail_mass=latent_tail_mass,
            max_cells=max_cells,
            start=ranges,
        )
        ranges = table.ranges
        credit = decision_credit(
            table.target, table.target_values, stated.true_target, stated.tie_rule
        )
        sums += (
            float(weights @ table.event),
            float(weights @ credit),
            float(weights @ np.minimum(table.omitted, 1.0)),
        )
    from .product_sums import ProductSums

    return ProductSums(sums, len(keep), omitted + dropped)
