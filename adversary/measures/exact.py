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

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.model import modelcontext
from pymc.pytensorf import compile as compile_pytensor
from pytensor.graph.replace import graph_replace, vectorize_graph

from .._validation import as_probability
from ..inference.grid import geometric_tail, scalar_labels
from ..inference.safe import counted_as_integers, safe_mode
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

# Release sets drawn to place the first windows; rounds of widening at the most.
_PILOT_DRAWS = 64
_MAX_GROWTH_ROUNDS = 64
# Below the binary exponent of the smallest positive float64 (-1073), for zeros (_drop_count).
_BELOW_EVERY_EXPONENT = -1100
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
        self.fn = compile_pytensor(batched, pt.cast(out, "float64"), mode=safe_mode("FAST_COMPILE"))

    def __call__(self, releases: dict[str, np.ndarray]) -> np.ndarray:
        args = [
            np.asarray(releases[n], dtype=d) for n, d in zip(self.names, self.dtypes, strict=True)
        ]
        return np.asarray(self.fn(*args), dtype=np.float64)


class _TabulatedReleaseLogpmf:
    """``log P[releases | latents = truth]`` as each release scalar's log-pmf over a window, from
    the tables of :mod:`~adversary.measures.tabulated_likelihood`, the truth the one cell."""

    def __init__(self, engine: ReleasePosteriors, truth):
        self.tables = engine.grid.logp.tables
        self.names = engine.observed
        self.cells = [
            np.asarray(truth[v.name]).reshape(1, 1, *engine.grid.shapes[v.name])
            for v in engine.grid.value_vars
        ]

    def by_scalar(self, windows, names) -> list[np.ndarray]:
        """Each release scalar's log-pmf over its window ``(lowest, highest)``; the scalars
        those of the observed variables ``names``, in that order."""
        lowest = min(lo for lo, _ in windows)
        span = np.arange(lowest, max(hi for _, hi in windows) + 1)
        tables = dict(zip(self.names, self.tables(self.cells, span), strict=True))
        table = np.concatenate([tables[name][:, 0, :] for name in names], axis=1)
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
    pilot = release_simulator(model, truth, generator(random_seed))(_PILOT_DRAWS)
    flat = np.concatenate([pilot[n].reshape(_PILOT_DRAWS, -1) for n in shapes], axis=1)
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
        if isinstance(logpmf, _TabulatedReleaseLogpmf):
            # Independent scalars: the grid's mass is the product of each window's.
            by_scalar = logpmf.by_scalar(windows, list(shapes))
            masses = [np.exp(_checked(log_p)) for log_p in by_scalar]
            sums = [np.sum(m, dtype=np.longdouble) for m in masses]
            total = math.prod(sums)
            marginals = [
                m * float(math.prod(sums[:a] + sums[a + 1 :])) for a, m in enumerate(masses)
            ]
        else:
            releases = _by_variable(_cells(windows), shapes)
            p = np.exp(_checked(logpmf(releases)))
            total = np.sum(p, dtype=np.longdouble)  # extended precision: 1 - total loses nothing
            marginals = None
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"model: the release probabilities sum to {float(total)} > 1 over the grid; the "
                "observed variables' log-p is not a normalised pmf"
            )
        omitted = max(0.0, float(1 - total))
        if omitted <= tail_mass / 2:
            if marginals is not None:  # the grid, its log-p the sum of the scalars' in turn
                releases = _by_variable(_cells(windows), shapes)
                log_p = by_scalar[0]
                for term in by_scalar[1:]:
                    log_p = np.add.outer(log_p, term)
                p = np.exp(log_p.reshape(-1))
                omitted = max(0.0, float(1 - np.sum(p, dtype=np.longdouble)))
            return _dropping_smallest(releases, p, omitted, tail_mass / 2, labels, windows)
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


def _drop_count(values: np.ndarray, budget: float) -> tuple[int, float]:
    """``(n, cut)``: the ``n`` smallest ``values`` have a running total within ``budget`` (and
    ``n + 1`` would not), the largest of them ``cut``; ``(0, nan)`` when none fits.

    By binary exponent (``np.frexp``; zeros below every other): the exponents whose values
    fit together with every smaller exponent's are taken whole, unsorted; only the next
    exponent's values are sorted and added one by one.
    """
    if not len(values):
        return 0, math.nan
    exponents = np.where(values > 0, np.frexp(values)[1], _BELOW_EVERY_EXPONENT)
    lowest = int(exponents.min())
    totals = np.cumsum(np.bincount(exponents - lowest, weights=values))
    whole = int(np.searchsorted(totals, budget, side="right"))  # exponent bins taken whole
    taken = exponents < lowest + whole
    count, base = int(taken.sum()), float(totals[whole - 1]) if whole else 0.0
    cut = float(values[taken].max()) if count else math.nan
    if whole < len(totals):  # the bin where the total reaches the budget, value by value
        bin_values = np.sort(values[exponents == lowest + whole])
        more = int(np.searchsorted(base + np.cumsum(bin_values), budget, side="right"))
        if more:
            count, cut = count + more, float(bin_values[more - 1])
    return count, cut


def _dropping_smallest(releases, p, omitted, budget, labels, windows) -> ReleaseGrid:
    """The grid without its least probable releases, up to ``budget`` of probability.

    Only releases of probability at most ``budget`` can be dropped. The
    smallest go first, and of equal probabilities the first on the grid.
    Only the binary order of magnitude where the running total reaches
    ``budget`` is sorted (:func:`_drop_count`): every smaller one goes whole.
    """
    dropped, cut = _drop_count(p[p <= budget], budget)
    kept = np.ones(len(p), dtype=bool)
    if dropped:
        below = p < cut
        kept[below] = False
        kept[np.flatnonzero(p == cut)[: dropped - int(below.sum())]] = False
    keep = np.flatnonzero(kept)
    dropped_mass = float(np.sum(p[~kept], dtype=np.longdouble))
    return ReleaseGrid(
        releases={name: array[keep] for name, array in releases.items()},
        probability=p[keep],
        windows={lb: (lo, hi) for lb, (lo, hi) in zip(labels, windows, strict=True)},
        omitted_mass=omitted + dropped_mass,
        dropped_mass=dropped_mass,
    )


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
    grid = release_grid(
        model,
        stated.truth,
        tail_mass=tail_mass,
        max_releases=max_releases,
        random_seed=random_seed,
        compile_kwargs=compile_kwargs,
    )
    engine = ReleasePosteriors.of(model, compile_kwargs)
    posterior_sum = credit_sum = latent_error = 0.0
    for start in range(0, len(grid), _CHUNK):
        part = slice(start, start + _CHUNK)
        weights = grid.probability[part]
        table = engine.reduced(
            {name: array[part] for name, array in grid.releases.items()},
            stated.event,
            stated.target,
            centre=stated.truth,
            tail_mass=latent_tail_mass,
            max_cells=max_cells,
        )
        credit = decision_credit(
            table.target, table.target_values, stated.true_target, stated.tie_rule
        )
        posterior_sum += float(weights @ table.event)
        credit_sum += float(weights @ credit)
        latent_error += float(weights @ np.minimum(table.omitted, 1.0))
    prior = stated.prior_of_truth
    error = grid.omitted_mass + latent_error
    return MarginalMeasures(
        marginal_posterior=posterior_sum,
        marginal_risk=posterior_sum / prior,
        correct_decision_probability=credit_sum,
        prior_of_truth=prior,
        omitted_mass=grid.omitted_mass,
        error_bound=error,
        method="exact",
        details={
            "releases": len(grid),
            "release_windows": grid.windows,
            "latent_omitted_mass": latent_error,
            "target": stated.target,
            "prior": stated.prior_details,
            "risk_error_bound": risk_error(error, prior, stated.prior_standard_error),
            "seconds": time.perf_counter() - started,
        },
        tie_rule=stated.tie_rule,
    )
