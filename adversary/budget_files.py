"""Budget files: a :class:`~adversary.budget.BudgetAllocation` read from and written to TOML, JSON.

A budget file splits a total zCDP ρ over the levels and queries of the 2020
P.L. 94-171 persons file (the keys of the preset ``pl94-2020-persons``). In
TOML::

    name = "half-block-detailed"            # optional: default the file's stem
    description = "2020, block detailed halved"  # optional
    rho_total = "64/25"                     # a number or an exact fraction string
    sources = ["..."]                       # optional: what the allocation follows

    [level_shares]                          # level -> share of rho_total
    us = "104/4099"
    state = "1440/4099"
    # ... county, tract, block_group, block

    [query_shares.block]                    # query -> share within the level
    total = "5/4097"
    detailed = "3945/4097"
    # ... race, hispanic, voting_age, hhinstlevels, hhgq, hispanic_race,
    #     voting_age_race, voting_age_hispanic, voting_age_hispanic_race

JSON holds the same keys (``query_shares`` an object of objects). Levels are
``us``, ``state``, ``county``, ``tract``, ``block_group``, ``block``; queries
those of :data:`adversary.budget.PRESETS` (any case, ``-`` or space for
``_``). A level or query left out has share 0; the level shares, and the
query shares of each level with a positive share, must each sum to exactly 1.
A level of share 0 may leave out its table (its queries then all have ρ = 0;
the allocation stores its share as the detailed query's, so that its shares
sum to 1). Shares are numbers, decimal strings (``"0.25"``) or fraction
strings (``"3945/4097"``), kept exact: a float is read as the decimal it
prints as. Every error is one line naming the file and the key.

:func:`write_budget` writes every share as an exact fraction string, so that
reading the file back gives an equal allocation.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import tomllib
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from .budget import DEFAULT_PRESET, PRESETS, BudgetAllocation, _key, as_allocation

__all__ = ["allocation_from_dict", "budget_json", "read_budget", "stored_budget", "write_budget"]

SUFFIXES = (".toml", ".json")
_KEYS = ("name", "description", "rho_total", "level_shares", "query_shares", "sources")
_TEMPLATE = PRESETS[DEFAULT_PRESET]


def read_budget(path: str | os.PathLike) -> BudgetAllocation:
    """The allocation in the budget file ``path`` (``.toml`` or ``.json``, by its suffix)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"budget file {str(path)!r} must end in .toml or .json")
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise ValueError(f"budget file {str(path)!r}: cannot read it ({reason})") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        kind = path.suffix.lower()[1:].upper()
        raise ValueError(f"budget file {str(path)!r}: malformed {kind}: {error}") from None
    try:
        return allocation_from_dict(data, path.stem)
    except (ValueError, TypeError) as error:
        raise ValueError(f"budget file {str(path)!r}: {error}") from None


def write_budget(allocation: BudgetAllocation, path: str | os.PathLike) -> Path:
    """Write ``allocation`` to ``path`` as TOML or JSON (by its suffix); returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"path must end in .toml or .json, got {str(path)!r}")
    data = allocation.to_dict()
    text = _toml(data) if suffix == ".toml" else json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def stored_budget(budget, name: str = "budget") -> str | BudgetAllocation:
    """What a case or model keeps of a budget (:func:`~adversary.budget.as_allocation`): a
    preset's name, else the allocation (never a file's path: the file may change)."""
    allocation = as_allocation(budget, name)
    return allocation.name if PRESETS.get(allocation.name) == allocation else allocation


def budget_json(budget) -> str | dict:
    """What a run's summary records of a budget: a preset's name, else the allocation's
    :meth:`~adversary.budget.BudgetAllocation.to_dict`."""
    if isinstance(budget, str):
        return budget
    if PRESETS.get(budget.name) == budget:
        return budget.name
    return budget.to_dict()


def allocation_from_dict(data: Mapping, name: str | None = None) -> BudgetAllocation:
    """The allocation ``data`` describes (the keys of the module docstring); ``name`` is the
    default of a missing ``name``. Errors are one line naming the key."""
    if not isinstance(data, Mapping):
        raise ValueError(f"must hold a table of keys, got {type(data).__name__}")
    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; known: {', '.join(_KEYS)}")
    for key in ("rho_total", "level_shares"):
        if key not in data:
            raise ValueError(f"{key}: missing")
    if "name" not in data and name is None:
        raise ValueError("name: missing")
    rho_total = _exact(data["rho_total"], "rho_total")
    if rho_total <= 0:
        raise ValueError(f"rho_total must be > 0, got {data['rho_total']!r}")
    levels = _shares(data["level_shares"], _TEMPLATE.levels, "level_shares", "level")
    tables = data.get("query_shares", {})
    if not isinstance(tables, Mapping):
        raise ValueError("query_shares must be a table of levels")
    by_level = {}
    for level, table in tables.items():
        (key,) = _keyed({level: None}, _TEMPLATE.levels, "query_shares", "level")
        if key in by_level:
            raise ValueError(f"query_shares.{level}: level given twice")
        by_level[key] = _shares(table, _TEMPLATE.queries, f"query_shares.{level}", "query")
    rows = []
    for level, share in zip(_TEMPLATE.levels, levels, strict=True):
        if level in by_level:
            rows.append(by_level[level])
        elif share > 0:
            raise ValueError(f"query_shares.{level}: missing for a level of share {share} > 0")
        else:  # not measured: every query has ρ = 0; the shares still sum to 1
            rows.append(tuple(Fraction(q == "detailed") for q in _TEMPLATE.queries))
    sources = data.get("sources", [])
    if isinstance(sources, str) or not all(isinstance(s, str) for s in sources):
        raise ValueError("sources must be a list of strings")
    return BudgetAllocation(
        name=_text(data.get("name", name), "name"),
        description=_text(data.get("description", ""), "description"),
        rho_total=rho_total,
        levels=_TEMPLATE.levels,
        level_labels=_TEMPLATE.level_labels,
        queries=_TEMPLATE.queries,
        query_labels=_TEMPLATE.query_labels,
        level_shares=levels,
        query_shares=tuple(rows),
        sources=tuple(sources),
    )


def _text(value, key: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {value!r}")
    return value


def _keyed(table, keys: tuple[str, ...], where: str, what: str) -> list[str]:
    """The keys of ``table`` normalised (any case, ``-``/space for ``_``), each known and once."""
    found = []
    for raw in table:
        key = _key(raw)
        if key not in keys:
            raise ValueError(f"{where}.{raw}: unknown {what}; known: {', '.join(keys)}")
        if key in found:
            raise ValueError(f"{where}.{raw}: {what} given twice")
        found.append(key)
    return found


def _shares(table, keys: tuple[str, ...], where: str, what: str) -> tuple[Fraction, ...]:
    """One exact share per key (0 where ``table`` leaves it out), summing to exactly 1."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table of {what} -> share")
    shares = dict.fromkeys(keys, Fraction(0))
    for raw, key in zip(table, _keyed(table, keys, where, what), strict=True):
        share = _exact(table[raw], f"{where}.{raw}")
        if share < 0:
            raise ValueError(f"{where}.{raw} must be >= 0, got {table[raw]!r}")
        shares[key] = share
    total = sum(shares.values())
    if total != 1:
        raise ValueError(f"{where}: shares sum to {total} ({float(total):.6g}), not exactly 1")
    return tuple(shares.values())


def _exact(value, key: str) -> Fraction:
    """A number, or a decimal or fraction string, as an exact finite Fraction."""
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            pass
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        if isinstance(value, numbers.Rational):
            return Fraction(value)
        if math.isfinite(value):
            return Fraction(repr(float(value)))
    raise ValueError(f"{key} must be a finite number or a fraction string, got {value!r}")


def _toml(data: dict) -> str:
    """``data`` (:meth:`~adversary.budget.BudgetAllocation.to_dict`) as TOML."""
    lines = [f"{key} = {_string(data[key])}" for key in ("name", "description", "rho_total")]
    lines.append("sources = [" + ", ".join(_string(s) for s in data["sources"]) + "]")
    lines += ["", "[level_shares]"]
    lines += [f"{level} = {_string(share)}" for level, share in data["level_shares"].items()]
    for level, table in data["query_shares"].items():
        lines += ["", f"[query_shares.{level}]"]
        lines += [f"{query} = {_string(share)}" for query, share in table.items()]
    return "\n".join(lines) + "\n"


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes (all valid TOML) and DEL escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
