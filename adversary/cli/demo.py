"""``adversary demo``: the paper's single-block analysis of Dare County ED 28-21.

Prints Kazan & Reiter's Table 4 (for each released ``x1*``: its probability
under the truth, and the posterior and risk under each prior) and Table 5
(marginal posterior, marginal risk and the probability of a correct decision
at the production block ρ), and writes Figures 1–3 as PNG files into
``--out`` (default ``build/demo``).

``--json`` prints the same numbers as one JSON object with keys:

``case``
    name of the case study; ``rho``, ``convention``, ``known_count``,
    ``true_count``: the attack's parameters; ``priors``: ``{label: p}``.
``table4``
    list of rows ``{"release", "release_probability", "posterior": {label: …},
    "risk": {label: …}}``.
``table5``
    list of rows ``{"prior", "p", "marginal_posterior", "marginal_risk",
    "correct_decision_probability"}``.
``tail_mass``
    bound on the release probability left out of the marginal sums.
``figures``
    paths of the PNG files written.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..measures.releases import DEFAULT_TAIL_MASS
from ..model_files import load_case
from ..plots.single_block import save_figures
from ..reports.single_block import marginal_table, release_table


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the paper's single-block analysis of Dare County ED 28-21 (Tables 4-5, Figures 1-3)",
        description=__doc__.split("\n\n")[1],
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default="dare_county", help="shipped case name or model file")
    parser.add_argument("--out", default="build/demo", type=Path, help="folder for the figures")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.set_defaults(func=run)


def _as_json(case, table4, table5, figures) -> dict:
    priors = list(case.priors)
    return {
        "case": case.name,
        "rho": case.rho,
        "convention": str(case.convention),
        "known_count": case.known_count,
        "true_count": case.truth,
        "priors": dict(case.priors),
        "table4": [
            {
                "release": int(release),
                "release_probability": float(row[("release_probability", "")]),
                "posterior": {p: float(row[("posterior", p)]) for p in priors},
                "risk": {p: float(row[("risk", p)]) for p in priors},
            }
            for release, row in table4.iterrows()
        ],
        "table5": [
            {"prior": label, **{key: float(value) for key, value in row.items()}}
            for label, row in table5.iterrows()
        ],
        "tail_mass": DEFAULT_TAIL_MASS,
        "figures": [str(path) for path in figures],
    }


def _as_text(case, table4, table5, figures) -> str:
    priors = list(case.priors)
    width = max(8, *(len(p) + 4 for p in priors))
    head = "".join(f"{'p=' + p:>{width}}" for p in priors)
    lines = [
        f"{case.name}",
        f"single-block attack: known count m = {case.known_count}, true count x1 = {case.truth},"
        f" rho = {case.rho:.6g} ({case.convention} convention)",
        "",
        "Table 4: posterior P[X1 = x1 | x1*] and risk (posterior / prior) by release",
        f"{'x1*':>4} {'P[x1*|x1]':>10} |{head} |{head}",
    ]
    for release, row in table4.iterrows():
        post = "".join(f"{row[('posterior', p)]:>{width}.3f}" for p in priors)
        risk = "".join(f"{row[('risk', p)]:>{width}.2f}" for p in priors)
        lines.append(f"{release:>4} {row[('release_probability', '')]:>10.3f} |{post} |{risk}")
    lines += [
        f"P[x1*|x1]: probability of the release under the true count x1 = {case.truth}"
        " (Kazan & Reiter's Table 4 prints P[x1* | m] here; see docs/paper-differences.md).",
        "",
        f"Table 5: averaged over releases from the truth, at rho = {case.rho:.6g}",
        f"{'prior':>8} {'marg. posterior':>16} {'marg. risk':>11} {'P[correct decision]':>20}",
    ]
    for label, row in table5.iterrows():
        lines.append(
            f"{label:>8} {row['marginal_posterior']:>16.4g} {row['marginal_risk']:>11.4f}"
            f" {row['correct_decision_probability']:>20.4g}"
        )
    lines += ["", "Figures written:", *(f"  {path}" for path in figures)]
    return "\n".join(lines)


def run(args) -> int:
    case = load_case(args.model)
    table4 = release_table(case)
    table5 = marginal_table(case)
    figures = save_figures(case, args.out)
    if args.json:
        print(json.dumps(_as_json(case, table4, table5, figures), indent=2))
    else:
        print(_as_text(case, table4, table5, figures))
    return 0
