"""The search's variables: which shares of an allocation vary, as a vector scipy can move.

A *group* is one set of shares that varies: the level shares of the chosen
levels, or the query shares of the chosen queries within one level. Its
variables are the chosen shares themselves. When some keys of the set are not
chosen and hold a positive share in the base, they take the rest,
``1 − Σ chosen``, in proportion to their base shares (as in the families), and
the group's linear constraint is ``Σ chosen ≤ 1 − min_share`` (the others keep
at least ``min_share`` between them); otherwise the chosen shares are divided
by their sum and the constraint is ``Σ chosen = 1``. Every variable is bounded
to ``[min_share, 1]``; a vector past ``Σ chosen ≤ 1 − min_share`` (SLSQP's
iterates may step past a linear constraint) has its chosen shares scaled back
onto it. Both maps are smooth, so SLSQP sees a smooth problem.
The total ρ, when free, is varied as ``log ρ`` within its bounds.

A vector becomes an allocation exactly: each float is read as the exact
:class:`~fractions.Fraction` of its binary value (no rounding, so the
allocation scipy evaluated is the one returned), and the group's shares follow
by exact arithmetic, summing to exactly 1.

The search starts from the base allocation with every varied share below
``min_share`` raised to it (and ρ moved into its bounds): a starting point,
not an answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...budget import BudgetAllocation, _index_of
from ._shares import with_shares

__all__ = ["Variables"]


@dataclass(frozen=True)
class _Group:
    level: int | None  # None: the level shares; else the query shares of this level
    chosen: tuple[int, ...]
    full: bool  # the chosen shares sum to 1 (no other key holds a share)
    start: int  # first position in the vector


def _keys(keys, all_keys: tuple[str, ...], name: str) -> tuple[int, ...]:
    if isinstance(keys, str):
        keys = [keys]
    chosen = tuple(_index_of(key, all_keys, name) for key in keys)
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"{name} must name distinct keys, at least one, got {keys!r}")
    return chosen


class Variables:
    """The varied shares (and total ρ) of ``base`` as a vector (module docstring)."""

    def __init__(self, base: BudgetAllocation, levels, queries, rho_total, min_share: float):
        if not isinstance(base, BudgetAllocation):
            raise TypeError(f"base must be a BudgetAllocation, got {type(base).__name__}")
        self.base = base
        min_share = float(min_share)
        if not 0.0 < min_share < 0.5:
            raise ValueError(f"min_share must lie strictly between 0 and 0.5, got {min_share!r}")
        self.min_share = min_share
        sets = []
        if levels is not None:
            sets.append((None, _keys(levels, base.levels, "levels"), base.level_shares))
        if queries is not None:
            if not isinstance(queries, Mapping):
                raise TypeError(f"queries must be a mapping {{level: queries}}, got {queries!r}")
            for level, keys in queries.items():
                i = _index_of(level, base.levels, "queries")
                if any(i == j for j, _, _ in sets):
                    raise ValueError(f"queries names level {base.levels[i]!r} twice")
                sets.append((i, _keys(keys, base.queries, "queries"), base.query_shares[i]))
        self.groups: list[_Group] = []
        start = 0
        for level, chosen, shares in sets:
            held = sum((s for k, s in enumerate(shares) if k not in chosen), Fraction(0))
            group = _Group(level, chosen, held == 0, start)
            where = "level shares" if level is None else f"queries at {base.levels[level]!r}"
            if group.full and len(chosen) < 2:
                raise ValueError(
                    f"{'levels' if level is None else 'queries'}: one key holds every share of "
                    f"the {where}; choose at least two to vary"
                )
            if (len(chosen) + (not group.full)) * min_share >= 1:
                raise ValueError(f"min_share must be below 1/{len(chosen) + 1}, got {min_share!r}")
            self.groups.append(group)
            start += len(chosen)
        self.rho_bounds = None
        if rho_total is not None:
            bad = f"rho_total must be bounds (low, high), 0 < low < high, got {rho_total!r}"
            try:
                low, high = (float(b) for b in rho_total)
            except (TypeError, ValueError):
                raise ValueError(bad) from None
            if not 0 < low < high < math.inf:
                raise ValueError(bad)
            self.rho_bounds = (low, high)
        self.size = start + (self.rho_bounds is not None)
        if self.size == 0:
            raise ValueError("levels, queries and rho_total: choose something to vary")

    def _shares(self, group: _Group) -> tuple[Fraction, ...]:
        if group.level is None:
            return self.base.level_shares
        return self.base.query_shares[group.level]

    def describe(self) -> str:
        """What varies, in words."""
        parts = []
        for g in self.groups:
            if g.level is None:
                parts.append("level shares of " + ", ".join(self.base.levels[i] for i in g.chosen))
            else:
                keys = ", ".join(self.base.queries[i] for i in g.chosen)
                parts.append(f"query shares of {keys} at {self.base.levels[g.level]}")
        if self.rho_bounds is not None:
            parts.append("rho_total in [{:g}, {:g}]".format(*self.rho_bounds))
        return "; ".join(parts)

    def start(self) -> np.ndarray:
        """The base allocation as a vector (module docstring)."""
        x = np.empty(self.size)
        for g in self.groups:
            values = np.maximum([float(self._shares(g)[i]) for i in g.chosen], self.min_share)
            room = 1.0 if g.full else 1.0 - self.min_share
            if g.full or values.sum() > room:
                values *= room / values.sum()
            x[g.start : g.start + len(g.chosen)] = values
        if self.rho_bounds is not None:
            low, high = self.rho_bounds
            x[-1] = math.log(min(max(float(self.base.rho_total), low), high))
        return x

    def bounds(self) -> list[tuple[float, float]]:
        out = [(self.min_share, 1.0)] * (self.size - (self.rho_bounds is not None))
        if self.rho_bounds is not None:
            out.append(tuple(math.log(b) for b in self.rho_bounds))
        return out

    def linear_constraints(self) -> list[dict]:
        """Each group's ``Σ chosen = 1`` or ``1 − min_share − Σ chosen ≥ 0``, for SLSQP."""
        out = []
        for g in self.groups:
            a = np.zeros(self.size)
            a[g.start : g.start + len(g.chosen)] = 1.0
            room = 1.0 if g.full else 1.0 - self.min_share
            out.append(
                {
                    "type": "eq" if g.full else "ineq",
                    "fun": (lambda x, a=a, room=room, s=1 if g.full else -1: s * (a @ x - room)),
                    "jac": (lambda x, a=a, s=1 if g.full else -1: s * a),
                }
            )
        return out

    def allocation(self, x: np.ndarray, name: str) -> BudgetAllocation:
        """The exact allocation of vector ``x`` (module docstring)."""
        levels, queries = None, {}
        for g in self.groups:
            values = [Fraction(float(v)) for v in x[g.start : g.start + len(g.chosen)]]
            total = sum(values, Fraction(0))
            room = Fraction(1) if g.full else 1 - Fraction(self.min_share)
            if g.full or total > room:
                # SLSQP's iterates may step past Σ chosen ≤ 1 − min_share: scaled back onto it
                values = [v * room / total for v in values]
            chosen = dict(zip(g.chosen, values, strict=True))
            if g.level is None:
                levels = chosen
            else:
                queries[g.level] = chosen
        rho = None if self.rho_bounds is None else Fraction(math.exp(float(x[-1])))
        return with_shares(self.base, name, rho_total=rho, levels=levels, queries=queries)
