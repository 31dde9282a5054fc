"""The inputs of a frontier run, read from text (the command line's options) and checked.

:func:`parse_family` reads a family spec (``totals:1.28,5.12``,
``level:block:0.05,0.1``, ``query:block:detailed:0.5``,
``grid:block_group,block:4``, ``file:PATH``); :func:`frontier_inputs` checks
every input of ``adversary frontier`` before anything runs, so that bad input
is one line naming its option.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ...budget import BudgetAllocation, as_allocation
from ..allocation_risk import DEFAULT_PRIORS, RiskProfile, parse_risk_profile
from ..allocation_risk.evaluate import as_attacks, as_priors
from .families import level_share_grid, level_shares, query_shares, rho_totals

__all__ = ["FrontierInputs", "frontier_inputs", "parse_family"]

_FORMS = "totals:R1,R2 | level:LEVEL:S1,S2 | query:LEVEL:QUERY:S1,S2 | grid:L1,L2:STEPS | file:PATH"
_SEARCHES = ("most_accurate", "least_risky")


def _numbers(text: str, spec: str) -> list[Fraction]:
    try:
        values = [Fraction(part.strip()) for part in text.split(",")]
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"--family {spec!r}: {text!r} is not a list of numbers") from None
    if not values:
        raise ValueError(f"--family {spec!r}: no values")
    return values


def parse_family(spec: str, base: BudgetAllocation) -> list[BudgetAllocation]:
    """The allocations of one family spec around ``base`` (module docstring)."""
    kind, _, rest = str(spec).partition(":")
    parts = rest.split(":")
    try:
        if kind == "totals" and len(parts) == 1:
            return rho_totals(base, _numbers(parts[0], spec))
        if kind == "level" and len(parts) == 2:
            values = _numbers(parts[1], spec)
            return level_shares(base, [[v] for v in values], levels=[parts[0]])
        if kind == "query" and len(parts) == 3:
            values = _numbers(parts[2], spec)
            return query_shares(base, parts[0], [[v] for v in values], queries=[parts[1]])
        if kind == "grid" and len(parts) == 2:
            return level_share_grid(base, parts[0].split(","), int(parts[1]))
        if kind == "file" and rest:
            return [as_allocation(Path(rest), "--family")]
    except ValueError as error:
        raise ValueError(f"--family {spec!r}: {error}") from None
    raise ValueError(f"--family must be one of {_FORMS}, got {spec!r}")


@dataclass(frozen=True)
class FrontierInputs:
    """Everything a frontier run reads, checked (:func:`frontier_inputs`)."""

    base: BudgetAllocation
    family: list | None
    family_specs: tuple[str, ...]
    data: Path | None
    synthetic: int | None
    seed: int
    attacks: tuple[str, ...]
    priors: tuple[float, ...]
    profile: RiskProfile | None
    convention: str
    searches: tuple[str, ...]
    runs: int
    scheduler: str | None
    workers: int | None
    progress: bool


def _searches(text: str) -> tuple[str, ...]:
    if text.strip() == "both":
        return _SEARCHES
    if text.strip() == "none":
        return ()
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names or any(n not in _SEARCHES for n in names):
        raise ValueError(f"--search must be most_accurate, least_risky, both or none, got {text!r}")
    return names


def frontier_inputs(args) -> FrontierInputs:
    """``adversary frontier``'s arguments checked, one line naming the option on bad input."""
    from ...noise.conventions import as_convention

    if args.preset is not None and args.budget is not None:
        raise ValueError("--preset and --budget both name the reference; give one")
    base = as_allocation(args.budget or args.preset or "pl94-2020-persons", "--budget")
    for option, least in (("synthetic", 1), ("seed", 0), ("workers", 1)):
        value = getattr(args, option)
        if value is not None and value < least:
            raise ValueError(f"--{option} must be >= {least}, got {value}")
    if args.runs < 0 or args.runs == 1:
        raise ValueError(f"--runs must be 0 (no simulation) or >= 2, got {args.runs}")
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers starts a local cluster; it cannot be given with --scheduler")
    for option in ("scheduler", "workers"):
        if getattr(args, option) is not None and not args.runs:
            raise ValueError(f"--{option} runs the TopDown simulation; give --runs R (R >= 2)")
    data = None if args.data is None else Path(args.data)
    if data is not None and not data.is_file():
        raise ValueError(f"DATA: {data} is not a file")
    specs = tuple(args.family or ())
    family = [a for spec in specs for a in parse_family(spec, base)] if specs else None
    try:
        attacks = as_attacks(args.attacks)
        priors = DEFAULT_PRIORS if args.priors is None else as_priors(args.priors.split(","))
    except ValueError as error:
        option = "--attacks" if "attack" in str(error) else "--priors"
        raise ValueError(f"{option}: {error}") from None
    profile = None if args.risk_profile is None else parse_risk_profile(args.risk_profile)
    return FrontierInputs(
        base=base,
        family=family,
        family_specs=specs,
        data=data,
        synthetic=args.synthetic,
        seed=args.seed,
        attacks=attacks,
        priors=tuple(float(p) for p in priors),
        profile=profile,
        convention=str(as_convention(args.convention, "--convention").value),
        searches=_searches(args.search),
        runs=args.runs,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
    )
