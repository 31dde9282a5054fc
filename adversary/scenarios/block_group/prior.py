"""The adversary's prior on the block-group count ``X2`` given the block count ``X1``.

Kazan & Reiter's block-group attack (Sec. 3.2) needs ``P[X2 = k2 | X1 = k1]``,
always zero below ``k1`` (the block is inside its block group). Supplement S4
compares four choices, all available here:

- :func:`improper_uniform`: ``Uniform{k1, k1+1, …}`` (S4.1), the paper's
  default; log-prior 0 on the support, the same constant for every ``k1``.
- :func:`bounded_uniform`: ``Uniform{k1, …, upper}`` (S4.2), probability
  ``1/(upper - k1 + 1)``, which depends on ``k1``.
- :func:`point_mass`: all mass on one value (S4: at 1 and at 25).
- :func:`conditional_pmf`: any pmf on a finite set, restricted to
  ``{k1, k1+1, …}`` and renormalised for each ``k1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_counts

__all__ = [
    "BlockGroupPrior",
    "bounded_uniform",
    "conditional_pmf",
    "improper_uniform",
    "point_mass",
]


@dataclass(frozen=True)
class BlockGroupPrior:
    """``P[X2 = k2 | X1 = k1]`` as a table-free rule; build it with the functions below."""

    kind: str
    values: tuple[int, ...] = ()
    probabilities: tuple[float, ...] = ()

    @property
    def upper(self) -> int | None:
        """Largest count with prior mass, or ``None`` for the improper uniform."""
        return None if self.kind == "improper_uniform" else max(self.values)

    def log_prior(self, k2, k1) -> np.ndarray:
        """``log P[X2 = k2 | X1 = k1]`` (``-inf`` where ``k2 < k1`` or off the support)."""
        k2, k1 = np.broadcast_arrays(np.asarray(k2), np.asarray(k1))
        feasible = k2 >= k1
        if self.kind == "improper_uniform":
            return np.where(feasible, 0.0, -np.inf)
        values = np.array(self.values)
        weights = np.array(self.probabilities)
        on_support = np.isin(k2, values) & feasible
        weight = np.where(
            on_support, weights[np.searchsorted(values, np.where(on_support, k2, values[0]))], 0.0
        )
        # Renormalise over the support at or above k1.
        above = (values[None, :] >= k1.reshape(-1, 1)).astype(np.float64) @ weights
        mass = above.reshape(k1.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(weight > 0, np.log(weight) - np.log(mass), -np.inf)

    def pymc_variable(self, name: str, x1, known: int):
        """Declare ``X2 | X1`` in the current PyMC model, including ``1[X2 ≥ X1]``.

        ``x1`` is the model's ``X1`` (values ``known`` or ``known + 1``). The
        improper and bounded uniforms carry the constraint in their lower
        bound; a point mass or pmf gets a ``Potential`` for the constraint and,
        for a pmf, the log of its renormalising mass ``Σ_{v ≥ k1} w(v)``.
        """
        import pymc as pm
        import pytensor.tensor as pt

        from ...distributions import BoundedUniform, FinitePmf, ImproperUniform, PointMass

        if self.kind == "improper_uniform":
            return ImproperUniform(name, lower=x1)
        if self.kind == "bounded_uniform":
            return BoundedUniform(name, lower=x1, upper=self.upper)
        if self.kind == "point_mass":
            x2 = PointMass(name, value=self.values[0])
        else:
            x2 = FinitePmf(name, support=list(self.values), probs=self._normalised_weights())
        potential = pt.switch(pt.ge(x2, x1), np.float64(0.0), np.float64(-np.inf))
        if self.kind == "pmf":
            # -log of the mass left at or above k1; -inf where none is left (X1 = k1 impossible).
            masses = [self._mass_at_or_above(k1) for k1 in (known, known + 1)]
            terms = [np.float64(-np.log(m)) if m > 0 else np.float64(-np.inf) for m in masses]
            potential = potential + pt.switch(pt.eq(x1, known), terms[0], terms[1])
        pm.Potential(f"{name}_given_X1", potential)
        return x2

    def _normalised_weights(self) -> list[float]:
        weights = np.array(self.probabilities)
        return list(weights / weights.sum())

    def _mass_at_or_above(self, k1: int) -> float:
        return float(
            sum(w for v, w in zip(self.values, self._normalised_weights(), strict=True) if v >= k1)
        )

    def describe(self) -> str:
        if self.kind == "improper_uniform":
            return "Uniform{k1, k1+1, ...}"
        if self.kind == "bounded_uniform":
            return f"Uniform{{k1, ..., {self.upper}}}"
        if self.kind == "point_mass":
            return f"point mass at {self.values[0]}"
        return f"pmf on {list(self.values)} restricted to >= k1"


def improper_uniform() -> BlockGroupPrior:
    """``X2 | X1 = k1 ~ Uniform{k1, k1+1, …}`` (S4.1), the paper's default."""
    return BlockGroupPrior("improper_uniform")


def bounded_uniform(upper) -> BlockGroupPrior:
    """``X2 | X1 = k1 ~ Uniform{k1, …, upper}`` (S4.2)."""
    upper = int(as_counts(upper, "upper"))
    if upper < 1:
        raise ValueError(f"upper must be >= 1 so that both block counts stay possible, got {upper}")
    values = tuple(range(upper + 1))
    return BlockGroupPrior("bounded_uniform", values, (1.0,) * len(values))


def point_mass(value) -> BlockGroupPrior:
    """``P[X2 = value | X1 = k1] = 1`` (S4: the adversary believes they know ``x2``)."""
    value = int(as_counts(value, "value"))
    return BlockGroupPrior("point_mass", (value,), (1.0,))


def conditional_pmf(pmf: dict) -> BlockGroupPrior:
    """A pmf ``{count: weight}`` on ``X2``, restricted to ``≥ k1`` and renormalised.

    The weights need not sum to one: only their ratios matter after renormalising.
    """
    if not isinstance(pmf, dict) or not pmf:
        raise ValueError(f"pmf must be a non-empty dict {{count: probability}}, got {pmf!r}")
    values = as_counts(list(pmf), "pmf")
    weights = np.asarray(list(pmf.values()), dtype=np.float64)
    if np.any(weights < 0) or not np.all(np.isfinite(weights)) or weights.sum() <= 0:
        raise ValueError(f"pmf probabilities must be finite, >= 0 and not all 0, got {pmf!r}")
    order = np.argsort(values)
    return BlockGroupPrior(
        "pmf", tuple(int(v) for v in values[order]), tuple(float(w) for w in weights[order])
    )
