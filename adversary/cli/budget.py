"""``adversary budget``: a named privacy-loss budget allocation, query by query.

Prints, for every geographic level and query of a preset (default
``pl94-2020-persons``, the 2020 P.L. 94-171 persons file of Kazan & Reiter's
Table 2 and JASON's Figure 5-3), its share of the total ρ, its zCDP ρ, the
σ² of its discrete Gaussian under the chosen neighbour convention
(``paper``: σ² = 1/(2ρ); ``das``: σ² = 1/ρ), and the ε of the (ε, δ)-DP
guarantee its ρ implies at ``--delta`` (default 1e-10, the Census Bureau's)
by two conversions: ``cks`` (Canonne, Kamath & Steinke 2020, Cor. 13; what
the Census Bureau reports) and ``bun-steinke`` (Bun & Steinke 2016,
Prop. 1.3: ε = ρ + 2√(ρ log(1/δ))). Each level ends with its total (zCDP
composes by adding ρ) and the table with the grand total. ``--budget FILE``
prints a budget file of your own (``.toml`` or ``.json``, format in
``adversary.budget_files``) exactly as a preset is printed, its ``name`` as
the preset's.

``--json`` prints the same numbers as one JSON object with keys:

``preset``, ``description``, ``sources``
    the preset's name, one-line description and the publications it follows.
``rho_total``, ``rho_total_exact``
    the total ρ as a float and as an exact fraction string (``"64/25"``).
``convention``, ``convention_description``
    ``"paper"`` or ``"das"`` and its σ² formula.
``delta``
    the δ at which every ε is computed.
``conversions``
    ``{"epsilon_cks": citation, "epsilon_bun_steinke": citation}``.
``rows``
    list, levels top-down, each level's queries then its total, then the grand
    total. Each row: ``level``, ``level_label``, ``query``, ``query_label``
    (``"all"`` / ``"All queries"`` on a level's total row; ``level`` is
    ``"all"`` on the grand total), ``share`` (fraction of ``rho_total``, float)
    and ``share_exact`` (the same as a fraction string), ``rho``, ``sigma2``
    (``null`` on total rows and for queries a level does not measure),
    ``epsilon_cks``, ``epsilon_bun_steinke`` (0 where ρ = 0).
"""

from __future__ import annotations

import json
import sys

from ..budget import ALL, DEFAULT_DELTA, DEFAULT_PRESET, PRESETS, as_allocation, get_preset
from .common import add_allocation_argument, command_parser


def register(subparsers) -> None:
    presets = ", ".join(PRESETS)
    parser = command_parser(
        subparsers,
        "budget",
        "rho, sigma^2 and epsilon of every query of a budget allocation (2020 PL 94-171)",
        __doc__,
        run,
    )
    allocation = parser.add_mutually_exclusive_group()
    allocation.add_argument(
        "--preset", default=None, help=f"allocation to print: {presets} (default {DEFAULT_PRESET})"
    )
    add_allocation_argument(allocation, "--preset")
    parser.add_argument(
        "--convention",
        default="paper",
        help="neighbour convention for sigma^2: paper (1/(2 rho), default) or das (1/rho)",
    )
    parser.add_argument(
        "--delta",
        default=repr(DEFAULT_DELTA),
        help=f"delta of the (epsilon, delta)-DP guarantee (default {DEFAULT_DELTA:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")


def _parse_delta(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"delta must be a number, got {text!r}") from None


def _exact_share(preset, row) -> str:
    if row.level == ALL:
        share = preset.share()
    elif row.query == ALL:
        share = preset.share(row.level)
    else:
        share = preset.share(row.level, row.query)
    return str(share)


def _as_json(preset, convention, delta, rows) -> dict:
    from ..accounting import Conversion

    return {
        "preset": preset.name,
        "description": preset.description,
        "sources": list(preset.sources),
        "rho_total": float(preset.rho_total),
        "rho_total_exact": str(preset.rho_total),
        "convention": str(convention),
        "convention_description": convention.description,
        "delta": delta,
        "conversions": {
            "epsilon_cks": Conversion.CKS.citation,
            "epsilon_bun_steinke": Conversion.BUN_STEINKE.citation,
        },
        "rows": [row.as_dict() | {"share_exact": _exact_share(preset, row)} for row in rows],
    }


def _as_text(preset, convention, delta, rows) -> str:
    from ..accounting import Conversion

    level_w = max(len(r.level_label) for r in rows)
    query_w = max(len(r.query_label) for r in rows)
    head = (
        f"{'level':<{level_w}}  {'query':<{query_w}}  {'share %':>8}  {'rho':>11}"
        f"  {'sigma^2':>11}  {'eps CKS':>8}  {'eps BS':>8}"
    )
    lines = [
        f"{preset.name}: {preset.description}",
        f"rho_total = {float(preset.rho_total):.6g} (= {preset.rho_total});"
        f" sigma^2 under the {convention} convention: {convention.description}",
        f"epsilon of (epsilon, delta)-DP at delta = {delta:g}:",
        f"  eps CKS: {Conversion.CKS.citation}",
        f"  eps BS:  {Conversion.BUN_STEINKE.citation}",
        "",
        head,
        "-" * len(head),
    ]
    for row in rows:
        sigma2 = "-" if row.sigma2 is None else f"{row.sigma2:.6g}"
        line = (
            f"{row.level_label:<{level_w}}  {row.query_label:<{query_w}}"
            f"  {100 * row.share:>8.3f}  {row.rho:>11.6g}  {sigma2:>11}"
            f"  {row.epsilon_cks:>8.4f}  {row.epsilon_bun_steinke:>8.4f}"
        )
        lines.append(line)
        if row.query == ALL:  # a level or the grand total closes a block
            lines.append("")
    lines.append("Sources: " + "; ".join(preset.sources))
    return "\n".join(lines)


def run(args) -> int:
    from ..noise.conventions import as_convention

    if args.budget is not None:
        preset = as_allocation(args.budget, "--budget")
    else:
        preset = get_preset(args.preset or DEFAULT_PRESET)
    convention = as_convention(args.convention)
    delta = _parse_delta(args.delta)
    rows = preset.table(convention, delta, totals=True)
    if args.json:
        json.dump(_as_json(preset, convention, delta, rows), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_as_text(preset, convention, delta, rows))
    return 0
