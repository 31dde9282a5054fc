"""Named privacy-loss budget allocations: how a total ρ is split over a release.

A :class:`BudgetAllocation` splits a total zCDP budget ``rho_total`` over the
levels of a geographic hierarchy (a share per level) and, within each level,
over the queries measured there (a share per query, summing to 1 in the
level). Shares are exact :class:`~fractions.Fraction` objects; a query at a
level gets ``ρ = rho_total · level share · query share`` and, since zCDP
composes additively (Bun & Steinke 2016, Lemma 2.3), level and grand totals
are plain sums. From ρ follow the noise variance σ² of that query's discrete
Gaussian under a neighbour convention (:mod:`adversary.noise.conventions`)
and the (ε, δ)-DP guarantee it implies (:mod:`adversary.accounting`).

Presets (:data:`PRESETS`, :func:`get_preset`)
----------------------------------------------
``pl94-2020-persons``
    The 2020 Census P.L. 94-171 redistricting persons file with
    ``ρ = 2.56`` as published (Kazan & Reiter 2023, Table 2; JASON 2022,
    Sec. 5.4.2). Level shares 104, 1440, 447, 687, 1256, 165 (/4099) for US,
    State, County, Tract, Optimized block group, Block, and the 11 queries of
    each level. The detailed (GVHR) query shares are Kazan & Reiter's Table 2
    fractions (189/241, 230/4097, 754/4097, 241/2051, 1288/4099, 3945/4097);
    they give Table 2's final column (GVHR ρ ≈ 0.0509, 0.0505, 0.0514,
    0.0504, 0.2465, 0.0992). All 66 query shares are the exact fractions of
    the Census Bureau's production strategy
    (``ProductionCandidate20210527US_mult8_add02_dsepJune3`` in
    ``DAS_2020_Redistricting_Production_Code``), which reproduce every cell,
    row total and column total of JASON (2022) Figure 5-3 to its three printed
    decimals (tested). The US level has no total-population query (share 0).
``pl94-2020-persons-production``
    The same allocation at the unrounded production budget
    ``ρ = 1/global_scale² = (542/339)² ≈ 2.5562`` (``global_scale = 339/542``
    in the DAS production ``person_default.ini``). The Census Bureau's reported
    ε = 17.14 at δ = 1e-10 for the persons file is the Canonne–Kamath–Steinke
    conversion of this ρ; ρ = 2.56 gives 17.16 (CKS) or 17.92 (Bun–Steinke).

Levels and queries have stable lowercase keys (``"block"``,
``"block_group"``, ``"detailed"``, …) and display labels; lookups accept any
case and ``-`` or space for ``_``. Unknown names raise :class:`ValueError`
naming the argument (``preset``, ``level``, ``query``, ``convention``).

Allocations as values
---------------------
Every function that reads a budget takes a preset name, a
:class:`BudgetAllocation` or the path of a budget file (``.toml`` or
``.json``, format in :mod:`adversary.budget_files`): :func:`as_allocation`
turns any of them into the allocation. :meth:`BudgetAllocation.with_rho_total`,
:meth:`~BudgetAllocation.with_level_shares` and
:meth:`~BudgetAllocation.with_query_shares` derive new allocations, and
:meth:`~BudgetAllocation.to_dict` / :meth:`~BudgetAllocation.from_dict` write
and read one as plain data with exact fraction strings.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the arithmetic imports numpy on use: the presets' names load without it
    from .noise.conventions import NoiseConvention

__all__ = [
    "ALL",
    "DEFAULT_DELTA",
    "DEFAULT_PRESET",
    "PRESETS",
    "BudgetAllocation",
    "BudgetRow",
    "as_allocation",
    "detailed_rho",
    "get_preset",
]

DEFAULT_DELTA = 1e-10
"""δ the Census Bureau uses to report ε for 2020 products (DAS ``approx_dp_delta``)."""

ALL = "all"
"""Key of a total row in :meth:`BudgetAllocation.table` (all queries, or all levels)."""


def _key(value) -> str:
    return str(value).strip().lower().replace("-", "_").replace(" ", "_")


def _index_of(key, keys: tuple[str, ...], name: str) -> int:
    """Position of ``key`` (any case) among ``keys``; else an error naming ``name`` and the keys."""
    try:
        return keys.index(_key(key))
    except ValueError:
        known = ", ".join(repr(k) for k in keys)
        raise ValueError(f"{name} must be one of {known}, got {key!r}") from None


@dataclass(frozen=True)
class BudgetRow:
    """One line of :meth:`BudgetAllocation.table`.

    ``share`` is the fraction of the allocation's ``rho_total``; ``rho`` the
    zCDP parameter; ``sigma2`` the discrete Gaussian's σ² under the table's
    convention (``None`` for total rows, which compose several queries, and
    for queries not measured at a level); ``epsilon_cks`` and
    ``epsilon_bun_steinke`` the ε of (ε, δ)-DP at the table's δ (0 when
    ρ = 0). A level-total row has ``query == "all"``; the grand total has
    ``level == query == "all"``.
    """

    level: str
    level_label: str
    query: str
    query_label: str
    share: float
    rho: float
    sigma2: float | None
    epsilon_cks: float
    epsilon_bun_steinke: float

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class BudgetAllocation:
    """A total zCDP budget split over levels and, within each level, over queries.

    ``levels``/``queries`` are keys (top-down for levels) with matching
    ``level_labels``/``query_labels``; ``level_shares[i]`` is level i's share
    of ``rho_total``; ``query_shares[i][j]`` is query j's share *within*
    level i. Each set of shares must be >= 0 and sum to exactly 1.
    """

    name: str
    description: str
    rho_total: Fraction
    levels: tuple[str, ...]
    level_labels: tuple[str, ...]
    queries: tuple[str, ...]
    query_labels: tuple[str, ...]
    level_shares: tuple[Fraction, ...]
    query_shares: tuple[tuple[Fraction, ...], ...]
    sources: tuple[str, ...] = ()

    def __post_init__(self):
        rho_total = _as_fraction(self.rho_total, "rho_total")
        if rho_total <= 0:
            raise ValueError(f"rho_total must be a number > 0, got {self.rho_total!r}")
        object.__setattr__(self, "rho_total", rho_total)
        for keys, labels, what in (
            (self.levels, self.level_labels, "levels"),
            (self.queries, self.query_labels, "queries"),
        ):
            if len(set(keys)) != len(keys) or ALL in keys or any(k != _key(k) for k in keys):
                raise ValueError(f"{what} must be distinct lowercase keys other than 'all'")
            if len(labels) != len(keys):
                raise ValueError(f"{what} and their labels differ in length")
        level_shares = tuple(_as_fraction(s, "level_shares") for s in self.level_shares)
        query_shares = tuple(
            tuple(_as_fraction(s, "query_shares") for s in row) for row in self.query_shares
        )
        _check_shares(level_shares, len(self.levels), "level_shares")
        if len(query_shares) != len(self.levels):
            raise ValueError("query_shares must have one row per level")
        for level, row in zip(self.levels, query_shares, strict=True):
            _check_shares(row, len(self.queries), f"query_shares[{level!r}]")
        object.__setattr__(self, "level_shares", level_shares)
        object.__setattr__(self, "query_shares", query_shares)

    # --- derived allocations ---------------------------------------------------

    def with_rho_total(self, rho_total, name: str | None = None) -> BudgetAllocation:
        """The same shares of another total ρ (exact: a float is read as the decimal it prints
        as)."""
        rho_total = _as_fraction(rho_total, "rho_total")
        label = f"{self.name} at rho_total {rho_total}"
        return self._derived(name, label, rho_total=rho_total)

    def with_level_shares(self, shares, name: str | None = None) -> BudgetAllocation:
        """Other level shares: ``{level: share}`` (a level left out gets 0) or one per level."""
        label = f"{self.name} with other level shares"
        return self._derived(name, label, level_shares=self._row(shares, self.levels, "level"))

    def with_query_shares(self, level, shares, name: str | None = None) -> BudgetAllocation:
        """Other query shares at ``level``: ``{query: share}`` (a query left out gets 0) or one
        per query."""
        i = self._level_index(level)
        rows = list(self.query_shares)
        rows[i] = self._row(shares, self.queries, "query")
        label = f"{self.name} with other query shares at {self.levels[i]}"
        return self._derived(name, label, query_shares=tuple(rows))

    def _derived(self, name: str | None, label: str, **changes) -> BudgetAllocation:
        name = label if name is None else str(name)
        return replace(self, name=name, description=label, **changes)

    def _row(self, shares, keys: tuple[str, ...], what: str) -> tuple[Fraction, ...]:
        """``shares`` as one exact share per key: a mapping by (any-case) key, or a sequence."""
        if isinstance(shares, Mapping):
            row = [Fraction(0)] * len(keys)
            for key, share in shares.items():
                row[_index_of(key, keys, what)] = _as_fraction(share, f"{what} shares")
            return tuple(row)
        if isinstance(shares, str) or not hasattr(shares, "__len__"):
            raise TypeError(f"{what} shares must be a mapping or a sequence, got {shares!r}")
        if len(shares) != len(keys):
            raise ValueError(f"{what} shares must have {len(keys)} entries, got {len(shares)}")
        return tuple(_as_fraction(share, f"{what} shares") for share in shares)

    # --- as plain data ---------------------------------------------------------

    def to_dict(self) -> dict:
        """The allocation as JSON-able data: ``name``, ``description``, ``rho_total``,
        ``level_shares`` ``{level: share}``, ``query_shares`` ``{level: {query: share}}`` and
        ``sources``, every number an exact fraction string (``"3945/4097"``)."""
        return {
            "name": self.name,
            "description": self.description,
            "rho_total": str(self.rho_total),
            "level_shares": {
                k: str(s) for k, s in zip(self.levels, self.level_shares, strict=True)
            },
            "query_shares": {
                level: {q: str(s) for q, s in zip(self.queries, row, strict=True)}
                for level, row in zip(self.levels, self.query_shares, strict=True)
            },
            "sources": list(self.sources),
        }

    @classmethod
    def from_dict(cls, data: Mapping, name: str | None = None) -> BudgetAllocation:
        """The allocation :meth:`to_dict` (or a budget file, :mod:`adversary.budget_files`)
        describes; ``name`` is the default of a missing ``name`` key."""
        from .budget_files import allocation_from_dict

        return allocation_from_dict(data, name)

    # --- lookups -------------------------------------------------------------

    def _level_index(self, level) -> int:
        return _index_of(level, self.levels, "level")

    def _query_index(self, query) -> int:
        return _index_of(query, self.queries, "query")

    def level_label(self, level) -> str:
        """Display label of ``level``."""
        return self.level_labels[self._level_index(level)]

    def query_label(self, query) -> str:
        """Display label of ``query``."""
        return self.query_labels[self._query_index(query)]

    # --- budget arithmetic -----------------------------------------------------

    def share(self, level=None, query=None) -> Fraction:
        """Exact share of ``rho_total``: of one query at one level, or a total.

        ``share(level, query)`` is one cell; ``share(level)`` the level's total;
        ``share(query=q)`` query q summed over levels (JASON Fig. 5-3's *All*
        column); ``share()`` is 1.
        """
        rows = range(len(self.levels)) if level is None else [self._level_index(level)]
        cols = range(len(self.queries)) if query is None else [self._query_index(query)]
        return sum(
            (self.level_shares[i] * self.query_shares[i][j] for i in rows for j in cols),
            Fraction(0),
        )

    def rho(self, level=None, query=None) -> float:
        """``rho_total · share(level, query)``: one query's ρ, or a total by zCDP composition."""
        return float(self.rho_total * self.share(level, query))

    def sigma2(self, level, query, convention: str | NoiseConvention = "paper") -> float:
        """σ² of the discrete Gaussian measuring ``query`` at ``level``.

        ``1/(2ρ)`` under the paper's convention, ``1/ρ`` under the DAS's
        (:func:`adversary.noise.noise_variance`). Raises
        :class:`ValueError` for a query with share 0 at that level (not measured).
        """
        from .noise.conventions import as_convention, noise_variance

        convention = as_convention(convention)
        rho = self.rho(level, query)
        if rho == 0:
            raise ValueError(
                f"query {query!r} is not measured at level {level!r} in preset {self.name!r}"
            )
        return float(noise_variance(rho, convention))

    def epsilon(
        self, level=None, query=None, delta: float = DEFAULT_DELTA, conversion: str = "cks"
    ) -> float:
        """ε of the (ε, δ)-DP guarantee implied by :meth:`rho` (0 when ρ = 0).

        ``conversion`` is ``"cks"`` (Canonne, Kamath & Steinke 2020, Cor. 13)
        or ``"bun-steinke"`` (Bun & Steinke 2016, Prop. 1.3); see
        :func:`adversary.accounting.epsilon_from_zcdp`.
        """
        from .accounting import epsilon_from_zcdp

        rho = self.rho(level, query)
        if rho == 0:
            epsilon_from_zcdp(1.0, delta, conversion)  # still validate delta, conversion
            return 0.0
        return float(epsilon_from_zcdp(rho, delta, conversion))

    def table(
        self,
        convention: str | NoiseConvention = "paper",
        delta: float = DEFAULT_DELTA,
        *,
        totals: bool = False,
    ) -> list[BudgetRow]:
        """Every (level, query) cell as a :class:`BudgetRow`, levels top-down.

        With ``totals=True`` each level's cells are followed by its total row
        (``query == "all"``) and the table ends with the grand total
        (``level == query == "all"``).
        """
        import numpy as np

        from .accounting import epsilon_from_zcdp
        from .noise.conventions import as_convention, noise_variance

        convention = as_convention(convention)
        cells: list[tuple[str, str, str, str, Fraction, bool]] = []
        for i, level in enumerate(self.levels):
            for j, query in enumerate(self.queries):
                share = self.level_shares[i] * self.query_shares[i][j]
                cells.append(
                    (level, self.level_labels[i], query, self.query_labels[j], share, True)
                )
            if totals:
                cells.append(
                    (level, self.level_labels[i], ALL, "All queries", self.level_shares[i], False)
                )
        if totals:
            cells.append((ALL, "All levels", ALL, "All queries", Fraction(1), False))

        rho = np.array([float(self.rho_total * share) for *_, share, _ in cells])
        measured = rho > 0
        eps_cks = np.zeros_like(rho)
        eps_bs = np.zeros_like(rho)
        eps_cks[measured] = epsilon_from_zcdp(rho[measured], delta, "cks")
        eps_bs[measured] = epsilon_from_zcdp(rho[measured], delta, "bun-steinke")
        rows = []
        for k, (level, level_label, query, query_label, share, single) in enumerate(cells):
            sigma2 = float(noise_variance(rho[k], convention)) if single and measured[k] else None
            rows.append(
                BudgetRow(
                    level=level,
                    level_label=level_label,
                    query=query,
                    query_label=query_label,
                    share=float(share),
                    rho=float(rho[k]),
                    sigma2=sigma2,
                    epsilon_cks=float(eps_cks[k]),
                    epsilon_bun_steinke=float(eps_bs[k]),
                )
            )
        return rows


def _as_fraction(value, name: str) -> Fraction:
    """Exact value of a share or budget; a float is read as the decimal it prints as."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be numbers (int, float or Fraction), got {value!r}")
    if isinstance(value, numbers.Rational):
        return Fraction(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return Fraction(repr(float(value)))


def _check_shares(shares: tuple[Fraction, ...], length: int, name: str) -> None:
    if len(shares) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(shares)}")
    if any(s < 0 for s in shares):
        raise ValueError(f"{name} must be >= 0 and sum to exactly 1, got {min(shares)} < 0")
    if sum(shares) != 1:
        raise ValueError(f"{name} must be >= 0 and sum to exactly 1, got sum {sum(shares)}")


# --- the 2020 P.L. 94-171 persons file ---------------------------------------------

_PL94_LEVELS = ("us", "state", "county", "tract", "block_group", "block")
_PL94_LEVEL_LABELS = ("United States", "State", "County", "Tract", "Optimized block group", "Block")
# Kazan & Reiter (2023) Table 2, column 2 = DAS person_US.ini geolevel_budget_prop.
_PL94_LEVEL_SHARES = tuple(Fraction(n, 4099) for n in (104, 1440, 447, 687, 1256, 165))

# Order and names of JASON (2022) Figure 5-3 (= the DAS query order).
_PL94_QUERIES = (
    "total",
    "race",
    "hispanic",
    "voting_age",
    "hhinstlevels",
    "hhgq",
    "hispanic_race",
    "voting_age_race",
    "voting_age_hispanic",
    "voting_age_hispanic_race",
    "detailed",
)
_PL94_QUERY_LABELS = (
    "Total population",
    "Race",
    "Hispanic",
    "Voting age",
    "HHInstLevels",
    "Household/GQ",
    "Hispanic x Race",
    "Voting age x Race",
    "Voting age x Hispanic",
    "Voting age x Hispanic x Race",
    "Detailed (GVHR)",
)


def _fractions(denominator: int, *numerators) -> tuple[Fraction, ...]:
    return tuple(n if isinstance(n, Fraction) else Fraction(n, denominator) for n in numerators)


# Within-level query shares, in _PL94_QUERIES order: the production strategy
# ProductionCandidate20210527US_mult8_add02_dsepJune3 (DAS_2020_Redistricting_Production_Code,
# programs/strategies/strategies.py). Last entry = Kazan & Reiter Table 2, column 3.
_PL94_QUERY_SHARES = (
    # US: no total-population query
    _fractions(4097, 0, 52, 26, 26, 26, 26, 130, 130, 26, Fraction(26, 241), Fraction(189, 241)),
    _fractions(4097, 3773, 6, 6, 6, 6, 6, 12, 12, 6, Fraction(2, 241), 230),  # State
    _fractions(4097, 3126, 10, 10, 10, 10, 10, 28, 28, 10, 101, 754),  # County
    _fractions(
        4102,
        1567,
        Fraction(4, 2051),
        5,
        5,
        5,
        5,
        1933,
        Fraction(10, 2051),
        5,
        67,
        Fraction(241, 2051),
    ),  # Tract
    _fractions(4099, 1705, 3, 3, 3, 3, 3, 1055, 9, 3, 24, 1288),  # Optimized block group
    _fractions(4097, 5, 9, 5, 5, 5, 5, 21, 21, 5, 71, 3945),  # Block
)

_PL94_SOURCES = (
    "Kazan & Reiter (2023), Table 2: rho = 2.56, level shares, GVHR (detailed) shares",
    "JASON (2022), Figure 5-3: all 66 shares as percentages of rho (3 decimals)",
    "U.S. Census Bureau, DAS_2020_Redistricting_Production_Code: "
    "configs/production/pl94/person_US.ini (geolevel_budget_prop), "
    "programs/strategies/strategies.py (ProductionCandidate20210527US_mult8_add02_dsepJune3), "
    "configs/production/pl94/person_default.ini (global_scale = 339/542)",
)


def _pl94_persons(name: str, rho_total: Fraction, description: str) -> BudgetAllocation:
    return BudgetAllocation(
        name=name,
        description=description,
        rho_total=rho_total,
        levels=_PL94_LEVELS,
        level_labels=_PL94_LEVEL_LABELS,
        queries=_PL94_QUERIES,
        query_labels=_PL94_QUERY_LABELS,
        level_shares=_PL94_LEVEL_SHARES,
        query_shares=_PL94_QUERY_SHARES,
        sources=_PL94_SOURCES,
    )


DEFAULT_PRESET = "pl94-2020-persons"

PRESETS = MappingProxyType(
    {
        preset.name: preset
        for preset in (
            _pl94_persons(
                "pl94-2020-persons",
                Fraction(256, 100),
                "2020 Census P.L. 94-171 persons file, rho = 2.56 as published "
                "(Kazan & Reiter 2023 Table 2; JASON 2022 Fig. 5-3)",
            ),
            _pl94_persons(
                "pl94-2020-persons-production",
                Fraction(542, 339) ** 2,
                "2020 Census P.L. 94-171 persons file at the unrounded production "
                "rho = (542/339)^2 = 2.5562 (DAS global_scale 339/542); "
                "reproduces the reported epsilon = 17.14 at delta = 1e-10 (CKS)",
            ),
        )
    }
)
"""Named allocations, by name (read-only)."""


def get_preset(name: str = DEFAULT_PRESET) -> BudgetAllocation:
    """The preset called ``name`` (any case, ``_`` for ``-``); ValueError naming ``preset``."""
    try:
        return PRESETS[_preset_key(name)]
    except KeyError:
        known = ", ".join(repr(k) for k in PRESETS)
        raise ValueError(f"preset must be one of {known}, got {name!r}") from None


def as_allocation(budget, name: str = "budget") -> BudgetAllocation:
    """``budget`` as an allocation: a :class:`BudgetAllocation` (returned as is), a preset name
    (:func:`get_preset`) or the path (``str`` or ``os.PathLike``) of a ``.toml`` or ``.json``
    budget file (:func:`adversary.budget_files.read_budget`). Errors name ``name``."""
    if isinstance(budget, BudgetAllocation):
        return budget
    if isinstance(budget, str) and _preset_key(budget) in PRESETS:
        return PRESETS[_preset_key(budget)]
    if isinstance(budget, os.PathLike) or (isinstance(budget, str) and os.path.splitext(budget)[1]):
        from .budget_files import read_budget

        try:
            return read_budget(budget)
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
    known = ", ".join(repr(k) for k in PRESETS)
    if isinstance(budget, str):
        raise ValueError(
            f"{name} must be a preset ({known}) or a .toml or .json budget file, got {budget!r}"
        )
    raise TypeError(
        f"{name} must be a BudgetAllocation, a preset name ({known}) or the path of a .toml or "
        f".json budget file, got {type(budget).__name__}"
    )


def _preset_key(name) -> str:
    return str(name).strip().lower().replace("_", "-")


def detailed_rho(level: str, preset: str | BudgetAllocation = DEFAULT_PRESET) -> float:
    """ρ of the detailed (GVHR) query at ``level`` of ``preset`` (a budget,
    :func:`as_allocation`): the one count of Kazan & Reiter's attacks (paper Table 2: ≈ 0.0992
    for the block, ≈ 0.2465 for the block group)."""
    return float(as_allocation(preset, "preset").rho(level, "detailed"))
