"""A block's records to reconstruct from its noisy tables: :class:`ReconstructionCase`."""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..._validation import as_integers, as_positive, scalar_integer, scalar_positive
from ...budget import BudgetAllocation, as_allocation
from ...measures.decision import DEFAULT_TIE_RULE, check_tie_rule
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism

if TYPE_CHECKING:  # imported where a PyMC model is built
    import pymc as pm

__all__ = ["HISTOGRAM", "LATENTS", "PERSONS", "RELEASES", "ReconstructionCase"]

#: Names of the model's latents (one cell per person, or the histogram) and of its releases.
PERSONS, HISTOGRAM, RELEASES = "persons", "histogram", "releases"
LATENTS = ("persons", "histogram")


@dataclass(frozen=True)
class ReconstructionCase:
    """What the adversary knows and sees about a block, and the truth the data holder knows.

    - ``n`` — the block's number of persons (known to the adversary);
    - ``cells`` — labels of the K cells of the cross-classification;
    - ``prior`` — the adversary's probability of each cell: each person
      independently in cell k with probability ``prior[k]``, so the histogram
      is multinomial; with ``concentration`` c the cell probabilities are
      Dirichlet(c · prior) instead, and the histogram Dirichlet-multinomial;
    - ``queries`` — one tuple of cell indices per released count (the count is
      the sum of those cells);
    - ``rhos`` — one ρ per released count (or one for all), the noise the
      discrete Gaussian of ``convention`` (``"paper"``: σ² = 1/(2ρ); ``"das"``:
      σ² = 1/ρ); or a budget — a preset's name (``"pl94-2020-persons"``), a
      :class:`~adversary.budget.BudgetAllocation` or a budget file's path:
      each count gets the block-level ρ of its query, named by its label
      (``"race[3]"`` is a count of the ``race`` query), stored as the ρ per
      count; or ``mechanism`` — one noise mechanism of the package, or one
      per count — instead;
    - ``releases`` — one noisy count per query (``None``: only the data
      holder's measures, which average over releases from the truth);
    - ``truth`` — the true histogram (K counts summing to ``n``; ``None``:
      no measure that needs it);
    - ``query_labels`` — a name per count, for reports;
    - ``tie_rule`` — how the measures count ties
      (:mod:`adversary.measures.decision`): ``"split"`` (default) gives a
      tie among k most probable histograms, or among records of equal
      confidence at the edge of the top r, an equal share each, so no
      measure depends on the order of the cells; ``"smallest"`` /
      ``"largest"`` take the first / last tied choice in the cells' order
      (:mod:`~adversary.scenarios.reconstruction.ties`).

    A release is refused when it lies so far outside the block's possible
    counts ``0 … n`` that reaching it from any of them needs noise beyond the
    mechanism's cut-off at :data:`~adversary.measures.releases.DEFAULT_TAIL_MASS`
    (``10^-15``): no histogram then has a likelihood the package resolves
    (:meth:`checked_releases`).
    """

    name: str
    n: int
    cells: tuple[str, ...]
    prior: tuple[float, ...]
    queries: tuple[tuple[int, ...], ...]
    rhos: tuple[float, ...] | float | None = None
    releases: tuple[int, ...] | None = None
    truth: tuple[int, ...] | None = None
    convention: str = "paper"
    mechanism: NoiseMechanism | tuple[NoiseMechanism, ...] | None = None
    concentration: float | None = None
    query_labels: tuple[str, ...] | None = None
    tie_rule: str = DEFAULT_TIE_RULE
    description: str = ""

    def __post_init__(self):
        set_ = lambda field, value: object.__setattr__(self, field, value)  # noqa: E731
        set_("n", scalar_integer(self.n, "n", 1))
        if isinstance(self.cells, str) or not hasattr(self.cells, "__len__") or not self.cells:
            raise ValueError(f"cells must be a non-empty sequence of labels, got {self.cells!r}")
        cells = tuple(str(c) for c in self.cells)
        if len(set(cells)) != len(cells):
            raise ValueError("cells must be distinct labels")
        set_("cells", cells)
        set_("prior", _probability_vector(self.prior, len(cells)))
        set_("queries", _queries(self.queries, len(cells)))
        labels = self.query_labels
        labels = tuple(f"q{i}" for i in range(len(self.queries))) if labels is None else labels
        if isinstance(labels, str) or not hasattr(labels, "__len__"):
            raise ValueError(f"query_labels must be a sequence of labels, got {labels!r}")
        if len(labels) != len(self.queries):
            raise ValueError(
                f"query_labels must name each of the {len(self.queries)} queries, got {len(labels)}"
            )
        set_("query_labels", tuple(str(label) for label in labels))
        if isinstance(self.rhos, str | os.PathLike | BudgetAllocation):
            set_("rhos", _preset_rhos(self.rhos, self.query_labels))
        rhos, mechanisms = _noise(self.rhos, self.mechanism, self.convention, len(self.queries))
        if self.rhos is not None:
            set_("rhos", tuple(float(r) for r in rhos))
        else:
            set_("mechanism", mechanisms)
        set_("_mechanisms", mechanisms)
        cutoffs = _cutoffs(mechanisms, "mechanism" if self.rhos is None else "rhos")
        set_("_reach", np.array([cutoffs[m] for m in mechanisms], dtype=np.int64))
        check_tie_rule(self.tie_rule)
        if self.releases is not None:
            set_("releases", tuple(int(x) for x in self.checked_releases(self.releases)))
        if self.truth is not None:
            truth = _integers(self.truth, "truth", len(cells))
            if min(truth) < 0 or sum(truth) != self.n:
                raise ValueError(
                    f"truth must be {len(cells)} counts >= 0 summing to n = {self.n}, "
                    f"got sum {sum(truth)}"
                )
            set_("truth", truth)
        if self.concentration is not None:
            set_("concentration", scalar_positive(self.concentration, "concentration"))

    # --- derived ---------------------------------------------------------------------------

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    def noise(self) -> tuple[NoiseMechanism, ...]:
        """The noise of each released count (from ``rhos`` and ``convention``, or ``mechanism``)."""
        return self._mechanisms

    def checked_releases(self, releases=None) -> np.ndarray:
        """``releases`` (default the case's) as int64, one per query, each within reach.

        Released count ``q`` must lie in ``[-K_q, n + K_q]``, ``K_q`` its noise's
        cut-off at :data:`~adversary.measures.releases.DEFAULT_TAIL_MASS`: the true
        count is between 0 and ``n``, so a release farther out has, under every
        histogram, a likelihood below the tail the package's sums leave out.
        """
        releases = self.releases if releases is None else releases
        if releases is None:
            raise ValueError("releases: the case has none; pass the noisy counts to condition on")
        array = np.array(_integers(releases, "releases", len(self.queries)), dtype=np.int64)
        reach = self._reach
        outside = np.flatnonzero((array < -reach) | (array > self.n + reach))
        if outside.size:
            q = int(outside[0])
            raise ValueError(
                f"releases[{q}] = {array[q]} is far outside the block's possible counts "
                f"0..{self.n}: reaching it needs noise beyond ±{reach[q]}, of probability "
                f"below {DEFAULT_TAIL_MASS:g}"
            )
        return array

    def incidence(self) -> np.ndarray:
        """The ``(queries, cells)`` 0/1 matrix: released counts = incidence @ histogram."""
        matrix = np.zeros((len(self.queries), self.n_cells), dtype=np.int64)
        for q, cells in enumerate(self.queries):
            matrix[q, list(cells)] = 1
        return matrix

    def released_counts(self, histogram):
        """The true released counts of a histogram (a PyTensor vector): one sum per query.

        A scatter-add over the queries' cells, so the cost is the number of
        (query, cell) pairs — not queries × cells as a dense product would be
        (0.08 ms against 220 ms per evaluation for the 2 016-cell detailed query).
        """
        import pytensor.tensor as pt

        cells = np.concatenate([np.array(q, dtype=np.int64) for q in self.queries])
        owner = np.repeat(np.arange(len(self.queries)), [len(q) for q in self.queries])
        zeros = pt.zeros(len(self.queries), dtype="int64")
        return pt.inc_subtensor(zeros[owner], pt.cast(histogram, "int64")[cells])

    def replace(self, **changes) -> ReconstructionCase:
        """A copy with some fields changed (validated again)."""
        if "rhos" in changes and "mechanism" not in changes:
            changes["mechanism"] = None
        if "mechanism" in changes and "rhos" not in changes:
            changes["rhos"] = None
        return dataclasses.replace(self, **changes)

    # --- the adversary's PyMC model --------------------------------------------------------

    def model(self, releases=None, latent: str = "persons") -> pm.Model:
        """The adversary's model, the released counts observed (``releases``: default the case's).

        ``latent="persons"`` (what :func:`~.posterior.sampled_posterior` uses):
        one cell per person, ``persons`` (a ``pm.Categorical`` vector of length
        ``n`` with the prior's probabilities; under a Dirichlet prior, uniform
        categories plus a ``pm.Potential`` making their joint law the Pólya
        sequence of the Dirichlet-multinomial). :func:`adversary.inference.sample`
        updates the persons one at a time, all 56 (or K) cells scored in one
        call — a person changing cell. ``latent="histogram"``: the block's
        histogram itself, ``pm.Multinomial`` or ``pm.DirichletMultinomial``,
        updated by moving persons between pairs of cells
        (:class:`~adversary.inference.TransferGibbs`); cheaper per sweep, much
        slower to mix (measured on the shipped 12-person block: about 110
        effective samples of the overlap per second against 900–1 040 with
        persons). The persons are exchangeable, so either way the histogram is
        what the tables tell.
        """
        import pymc as pm

        from ...distributions import DiscreteGaussian, NoiseRelease

        if latent not in LATENTS:
            raise ValueError(f"latent must be one of {', '.join(LATENTS)}, got {latent!r}")
        releases = self.checked_releases(releases)
        with pm.Model() as model:
            histogram = self._histogram(latent)
            counts = self.released_counts(histogram)
            if all(isinstance(m, DiscreteGaussianNoise) for m in self.noise()):
                sigma2 = np.array([m.sigma2 for m in self.noise()])
                DiscreteGaussian(RELEASES, mu=counts, sigma2=sigma2, observed=releases)
            else:
                NoiseRelease(RELEASES, counts, list(self.noise()), observed=releases)
        return model

    def _histogram(self, latent: str):
        """The latent (in the model on the context stack) and the histogram as a graph."""
        import pymc as pm
        import pytensor.tensor as pt

        prior = np.array(self.prior)
        alpha = None if self.concentration is None else self.concentration * prior
        if latent == "histogram":
            if alpha is None:
                return pm.Multinomial(HISTOGRAM, n=self.n, p=prior)
            return pm.DirichletMultinomial(HISTOGRAM, n=self.n, a=alpha)
        support = prior > 0
        uniform = support / support.sum()
        persons = pm.Categorical(PERSONS, p=prior if alpha is None else uniform, shape=self.n)
        histogram = pt.eq(persons[:, None], np.arange(self.n_cells)[None, :]).sum(axis=0)
        if alpha is not None:
            # P(sequence) = Γ(α₀)/Γ(α₀ + n) Π_k Γ(α_k + h_k)/Γ(α_k); the uniform's constant cancels.
            positive = np.where(support, alpha, 1.0)
            pm.Potential(
                "polya_sequence",
                pt.sum(pt.gammaln(positive + histogram) - pt.gammaln(positive)),
            )
        return histogram


def _cutoffs(mechanisms, name: str) -> dict:
    """Each mechanism's cut-off at ``DEFAULT_TAIL_MASS``; noise too wide for one is ``name``'s."""
    cutoffs = {}
    for q, mechanism in enumerate(mechanisms):
        if mechanism in cutoffs:
            continue
        try:
            cutoffs[mechanism] = mechanism.cutoff(DEFAULT_TAIL_MASS)
        except ValueError as error:
            raise ValueError(
                f"{name}[{q}]: noise too wide for the package's sums ({error})"
            ) from None
    return cutoffs


def _probability_vector(value, size: int) -> tuple[float, ...]:
    try:
        array = None if isinstance(value, str) else np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"prior must be {size} numbers, one per cell, got {value!r}") from None
    if array is None or array.shape != (size,):
        raise ValueError(f"prior must be {size} probabilities, one per cell, got {value!r}")
    if (
        not np.all(np.isfinite(array))
        or np.any(array < 0)
        or not math.isclose(float(array.sum()), 1.0, abs_tol=1e-9)
    ):
        raise ValueError(
            f"prior must be a probability vector (>= 0, summing to 1), got sum {array.sum()}"
        )
    return tuple(float(p) for p in array)


def _queries(value, n_cells: int) -> tuple[tuple[int, ...], ...]:
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) == 0:
        raise ValueError("queries must be a non-empty sequence of tuples of cell indices")
    out = []
    for q, cells in enumerate(value):
        indices = _integers(cells, f"queries[{q}]", None)
        if not indices or len(set(indices)) != len(indices):
            raise ValueError(f"queries[{q}] must be distinct cell indices, got {cells!r}")
        bad = [c for c in indices if not 0 <= c < n_cells]
        if bad:
            raise ValueError(f"queries[{q}] names cells {bad} that do not exist (0..{n_cells - 1})")
        out.append(indices)
    return tuple(out)


def _integers(value, name: str, size: int | None) -> tuple[int, ...]:
    """``value`` as a tuple of ints (``size`` of them): integer-valued, held as int64."""
    array = as_integers(value, name)
    if array.ndim != 1 or (size is not None and array.size != size):
        wanted = "a sequence of integers" if size is None else f"{size} integers"
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return tuple(int(x) for x in array)


def _preset_rhos(preset, labels: tuple[str, ...]) -> tuple[float, ...]:
    """The block-level ρ of each count's query (its label up to ``[``) in a budget."""
    try:
        allocation = as_allocation(preset, "rhos")
    except ValueError as error:
        raise ValueError(f"rhos: a string names a budget preset or file; {error}") from None
    names = [label.split("[")[0] for label in labels]
    try:
        return tuple(float(allocation.rho("block", name)) for name in names)
    except (KeyError, ValueError) as error:
        raise ValueError(
            f"rhos: budget {allocation.name!r} needs query_labels naming each count's query "
            f"(e.g. 'race[3]'); {error}"
        ) from None


def _noise(rhos, mechanism, convention, n_queries: int):
    """``(rhos per query or None, mechanisms per query)`` from either form of the noise."""
    if (rhos is None) == (mechanism is None):
        raise ValueError("rhos: give either rhos (with convention) or mechanism, not both")
    if mechanism is not None:
        mechanisms = (
            (mechanism,) * n_queries if isinstance(mechanism, NoiseMechanism) else tuple(mechanism)
        )
        if len(mechanisms) != n_queries or not all(
            isinstance(m, NoiseMechanism) for m in mechanisms
        ):
            raise ValueError(
                f"mechanism must be one noise mechanism or one per query ({n_queries})"
            )
        return None, mechanisms
    values = as_positive(rhos, "rhos")
    values = np.broadcast_to(values, (n_queries,)) if values.ndim == 0 else values
    if values.shape != (n_queries,):
        raise ValueError(
            f"rhos must be one ρ or one per query ({n_queries}), got shape {values.shape}"
        )
    # one (immutable) mechanism per distinct ρ: the tables' queries share a few
    distinct = {r: DiscreteGaussianNoise.from_rho(r, convention) for r in set(values.tolist())}
    return values, tuple(distinct[r] for r in values.tolist())
