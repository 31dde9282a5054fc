"""``adversary choose-rho MODEL_FILE``: the largest ρ keeping a risk measure below a threshold.

Loads the attack a model file declares (a ``CASE`` or a ``model()`` factory with
its ``TRUTH``; a shipped case name such as ``dare_county`` or a path) and finds
the largest ρ of one of its fields
(``--field``, default ``rho``; e.g. ``rho1``, ``rhos[0]``), the others held,
such that the marginal risk (``--max-risk R``, R > 1) or the probability of a
correct decision (``--max-correct-decision Q``, 0 < Q < 1) stays at or below
the threshold for every selected prior (``--prior``, repeatable; default all)
and every ρ' up to it, by :func:`adversary.analyses.choose_rho.choose_rho`: a log
grid scan from ``--rho-min`` to ``--rho-max``, refined over the last decade
below the first violation, then bisection to a relative ``--tolerance``. Each
measure counts with its error bound added. The ε of (ε, δ)-DP that the ρ
implies for that one release is printed at ``--delta``.

``--json`` prints one object with keys: ``model``, ``field``, ``measure``
(``"marginal_risk"`` or ``"correct_decision_probability"``), ``threshold``,
``priors`` (labels), ``rho`` (the answer), ``rho_above`` (``rho · (1 +
tolerance)``, where the threshold is exceeded), ``binding_prior`` (the prior
exceeding it most there; null when the search reached ``rho_max`` without a
violation), ``measure_at_rho``, ``bound_at_rho``, ``measure_above``,
``bound_above`` and ``prior_of_truth`` (each ``{prior: number}``), ``epsilon``,
``delta``, ``conversion``, ``tolerance``, ``rho_min``, ``rho_max``,
``points_per_decade``, ``refine``, ``refine_decades``,
``limited_by_rho_max``, ``evaluations``, ``mechanism`` and ``pure_epsilon``
(for a case whose noise is a mechanism: its label and pure ε, else null).
"""

from __future__ import annotations

import json
import sys

from ..budget import DEFAULT_DELTA
from .common import add_attack_arguments, attack_from, command_parser

_LABELS = {
    "marginal_risk": "marginal risk",
    "correct_decision_probability": "correct-decision probability",
}


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "choose-rho",
        "largest rho keeping the marginal risk or correct-decision probability below a bound",
        __doc__,
        run,
    )
    add_attack_arguments(parser)
    bound = parser.add_mutually_exclusive_group(required=True)
    bound.add_argument(
        "--max-risk", type=float, metavar="R", help="largest acceptable marginal risk (> 1)"
    )
    bound.add_argument(
        "--max-correct-decision",
        type=float,
        metavar="Q",
        help="largest acceptable probability of a correct decision (0 < Q < 1)",
    )
    parser.add_argument("--field", default="rho", help="the rho to vary (default: rho)")
    parser.add_argument(
        "--prior",
        action="append",
        metavar="LABEL",
        default=None,
        help="prior label of the attack (repeatable; default: every prior)",
    )
    parser.add_argument("--rho-min", type=float, default=1e-4, help="search from (default 1e-4)")
    parser.add_argument("--rho-max", type=float, default=1e2, help="search to (default 100)")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=1e-3,
        help="relative resolution of the answer (default 1e-3)",
    )
    parser.add_argument(
        "--points-per-decade", type=int, default=20, help="coarse scan density (default 20)"
    )
    parser.add_argument(
        "--refine", type=int, default=8, help="refined scan is this many times denser (default 8)"
    )
    parser.add_argument(
        "--delta",
        type=float,
        default=DEFAULT_DELTA,
        help=f"delta for the epsilon reported (default {DEFAULT_DELTA:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _as_text(result) -> str:
    from ..accounting import Conversion

    label = _LABELS[result.measure]
    priors = ", ".join(result.priors)
    lines = [
        f"{result.case_name}: largest {result.field} keeping the {label} <= "
        f"{result.threshold:g} for every prior ({priors})",
        "",
    ]
    if result.limited_by_rho_max:
        lines.append(
            f"{result.field} = {result.rho:.6g}: no violation up to rho_max = {result.rho_max:g}"
            " (the end of the searched range, not a crossing)"
        )
    else:
        lines.append(
            f"{result.field} = {result.rho:.6g}  (exceeded at {result.rho_above:.6g} = "
            f"{result.field} x (1 + {result.tolerance:g}) under prior {result.binding_prior})"
        )
    citation = Conversion(result.conversion).citation
    lines.append(f"epsilon = {result.epsilon:.6g} at delta = {result.delta:g} ({citation})")
    lines.append("")
    width = max(len("prior"), *(len(p) for p in result.priors))
    head = f"{'prior':<{width}}  {'at rho':>12}  {'above':>12}  {'error bound':>11}"
    lines += [head, "-" * len(head)]
    for prior in result.priors:
        lines.append(
            f"{prior:<{width}}  {result.measure_at_rho[prior]:>12.6g}"
            f"  {result.measure_above[prior]:>12.6g}  {result.bound_at_rho[prior]:>11.2g}"
        )
    lines.append("")
    lines.append(
        f"Scan: {result.rho_min:g} to {result.rho_max:g}, {result.points_per_decade} points per "
        f"decade, {result.refine}x refined over {result.refine_decades:g} decade(s) below the "
        f"first violation; {result.evaluations} values of {result.field} evaluated."
    )
    return "\n".join(lines)


def run(args) -> int:
    from ..analyses.choose_rho import choose_rho

    case = attack_from(args)
    if args.max_risk is not None:
        measure, threshold = "marginal_risk", args.max_risk
    else:
        measure, threshold = "correct_decision_probability", args.max_correct_decision
    result = choose_rho(
        case,
        threshold,
        measure,
        field=args.field,
        priors=args.prior,
        rho_min=args.rho_min,
        rho_max=args.rho_max,
        points_per_decade=args.points_per_decade,
        refine=args.refine,
        tolerance=args.tolerance,
        delta=args.delta,
    )
    if args.json:
        fields = result.as_dict()
        out = {"model": fields.pop("case_name")} | fields
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_as_text(result))
    return 0
