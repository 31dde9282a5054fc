"""Exact share arithmetic shared by the families and the search.

A set of shares (the level shares of an allocation, or the query shares of one
level) is changed by setting the shares of some *chosen* keys; the other keys
take what is left, ``1 − Σ chosen``, in proportion to their shares in the
base allocation. Everything is exact :class:`~fractions.Fraction` arithmetic,
so the result sums to exactly 1 (what :class:`~adversary.budget.BudgetAllocation`
requires).
"""

from __future__ import annotations

import dataclasses
import numbers
from fractions import Fraction

from ...budget import BudgetAllocation, _as_fraction

#: Largest denominator of a float read as a share or a total (``Fraction.limit_denominator``).
MAX_DENOMINATOR = 10**9
#: How far a float vector meant to sum to 1 may be from 1 before it is refused.
SUM_TOLERANCE = 1e-6


def as_exact(value, name: str) -> Fraction:
    """``value`` as a Fraction: exact for ints and Fractions; a float ``x`` becomes
    ``Fraction(x).limit_denominator(10**9)`` (0.3 is 3/10, 1/3 as a float is 1/3)."""
    exact = _as_fraction(value, name)  # refuses what is not a finite real number
    if isinstance(value, numbers.Rational):
        return exact
    return Fraction(float(value)).limit_denominator(MAX_DENOMINATOR)


def normalised(values: tuple[Fraction, ...], name: str) -> tuple[Fraction, ...]:
    """``values / Σ values`` exactly, for values meant to sum to 1 (within 1e-6)."""
    total = sum(values, Fraction(0))
    if any(v < 0 for v in values) or abs(total - 1) > SUM_TOLERANCE:
        raise ValueError(f"{name} must be >= 0 and sum to 1, got sum {float(total)!r}")
    return tuple(v / total for v in values)


def respread(
    base: tuple[Fraction, ...], chosen: dict[int, Fraction], name: str
) -> tuple[Fraction, ...]:
    """``base`` with the entries ``chosen`` (index → share) set and the others scaled.

    The others share ``1 − Σ chosen`` in proportion to their ``base`` shares. When
    ``chosen`` covers every index its values must sum to exactly 1. Refuses (naming
    ``name``) a negative share, chosen shares summing to more than 1, and a
    remainder that cannot be spread (the others all have share 0 in ``base``).
    """
    if any(v < 0 for v in chosen.values()):
        raise ValueError(f"{name} must be >= 0, got {[float(v) for v in chosen.values()]}")
    rest = 1 - sum(chosen.values(), Fraction(0))
    others = [i for i in range(len(base)) if i not in chosen]
    held = sum((base[i] for i in others), Fraction(0))
    if rest < 0:
        raise ValueError(f"{name}: the chosen shares sum to {float(1 - rest)!r}, more than 1")
    if rest > 0 and held == 0:
        what = "the others have share 0 in the base" if others else "they cover every key"
        raise ValueError(
            f"{name}: the chosen shares sum to {float(1 - rest)!r}, less than 1, and {what}"
        )
    return tuple(
        chosen[i] if i in chosen else (base[i] * rest / held if held else Fraction(0))
        for i in range(len(base))
    )


def with_shares(
    base: BudgetAllocation,
    name: str,
    *,
    rho_total: Fraction | None = None,
    levels: dict[int, Fraction] | None = None,
    queries: dict[int, dict[int, Fraction]] | None = None,
) -> BudgetAllocation:
    """``base`` renamed (its description saying so, its sources dropped: the shares are no
    longer the sources'), with ``rho_total``, chosen level shares (index → share) and chosen
    query shares (level index → {query index → share}) set by :func:`respread`."""
    level_shares = base.level_shares
    if levels:
        level_shares = respread(level_shares, levels, "level_shares")
    query_shares = list(base.query_shares)
    for i, chosen in (queries or {}).items():
        query_shares[i] = respread(query_shares[i], chosen, f"query_shares[{base.levels[i]!r}]")
    return dataclasses.replace(
        base,
        name=name,
        description=f"{base.name} with other shares or total (frontier family)",
        sources=(),
        rho_total=base.rho_total if rho_total is None else rho_total,
        level_shares=level_shares,
        query_shares=tuple(query_shares),
    )
