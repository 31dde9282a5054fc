"""``adversary demo``: the paper's single-block analysis of Dare County ED 28-21, or any attack's.

For the default case (or any single-block case given by ``--model``) prints
Kazan & Reiter's Table 4 (for each released ``x1*``: its probability under
the truth, and the posterior and risk under each prior) and Table 5
(marginal posterior, marginal risk and the probability of a correct decision
at the production block ρ), and with ``--out FOLDER`` writes Figures 1–3 as
PNG files into it (without ``--out`` it writes no file). For any other attack (a shipped case or
a model file with a ``CASE`` or a ``model()`` factory) it prints the
adversary's posterior of the target at the observed release under each
prior, the data holder's measures under each prior, and, when the attack has
a ρ, draws them against ρ (``risk_by_<rho>.png``, into ``--out``). A second
run into the same ``--out`` is refused while the first runs.

``--json`` prints the same numbers as one JSON object. For a single-block
case, with keys:

``case``
    name of the case study; ``rho``, ``convention``, ``known_count``,
    ``true_count``: the attack's parameters; ``mechanism``: the spec of its noise
    mechanism (``--mechanism``'s form; ``rho`` is then null), null when the noise is ``rho``;
    ``priors``: ``{label: p}``.
``table4``
    list of rows ``{"release", "release_probability", "posterior": {label: …},
    "risk": {label: …}}``.
``table5``
    list of rows ``{"prior", "p", "marginal_posterior", "marginal_risk",
    "correct_decision_probability"}``.
``tail_mass``
    bound on the release probability left out of the marginal sums.
``figures``
    paths of the PNG files written (empty without ``--out``).

For any other attack: ``case``, ``priors`` (``{label: prior}``, as text when
not a number), ``target``, ``truth`` (``{latent: value}``), ``posterior``
(one row per prior: ``posterior_of_truth`` and the target's pmf),
``measures`` (one row per prior: the :class:`~adversary.measures.marginal.MarginalMeasures`
numbers), ``swept`` (the ρ drawn, or null) and ``figures``.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from .._output import locked, staged
from .common import add_attack_arguments, attack_from, command_parser, mechanism_text


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "demo",
        "the paper's single-block analysis (Tables 4-5, Figures 1-3), or any attack's",
        __doc__,
        run,
    )
    parser.add_argument(
        "--model", default="dare_county", help="shipped case name or model file (any attack)"
    )
    add_attack_arguments(parser, positional=False)
    parser.add_argument(
        "--out", default=None, type=Path, help="folder for the figures (default: none written)"
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")


def _as_json(case, table4, table5, figures) -> dict:
    from ..measures.releases import DEFAULT_TAIL_MASS

    priors = list(case.priors)
    return {
        "case": case.name,
        "rho": case.rho,
        "convention": str(case.convention),
        "mechanism": mechanism_text(case),
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
    at = f"rho = {case.rho:.6g}" if case.mechanism is None else f"noise {case.mechanism.label}"
    noise = f"{at} ({case.convention} convention)" if case.mechanism is None else at
    lines = [
        f"{case.name}",
        f"single-block attack: known count m = {case.known_count}, true count x1 = {case.truth},"
        f" {noise}",
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
        f"Table 5: averaged over releases from the truth, at {at}",
        f"{'prior':>8} {'marg. posterior':>16} {'marg. risk':>11} {'P[correct decision]':>20}",
    ]
    for label, row in table5.iterrows():
        lines.append(
            f"{label:>8} {row['marginal_posterior']:>16.4g} {row['marginal_risk']:>11.4f}"
            f" {row['correct_decision_probability']:>20.4g}"
        )
    lines += ["", *_written(figures)]
    return "\n".join(lines)


def _written(figures) -> list[str]:
    """The lines naming the figures written, or saying how to write them."""
    if not figures:
        return ["Figures: none written (give --out FOLDER to write them)"]
    return ["Figures written:", *(f"  {path}" for path in figures)]


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def _attack_json(case, report) -> dict:
    return {
        "case": case.name,
        "priors": {label: _plain(prior) for label, prior in case.priors.items()},
        "target": case.target,
        "truth": {k: _plain(v) for k, v in (case.true_latents or {}).items()},
        "posterior": [
            {"prior": str(label), **{k: _plain(v) for k, v in row.items()}}
            for label, row in report.posterior.iterrows()
        ],
        "measures": [
            {"prior": str(label), **{k: _plain(v) for k, v in row.items()}}
            for label, row in report.measures.iterrows()
        ],
        "swept": report.swept,
        "figures": [str(path) for path in report.figures],
    }


def _attack_text(case, report) -> str:
    lines = [
        case.name,
        f"target {case.target}; truth {dict(case.true_latents or {})}",
        "",
        "The adversary's posterior at the observed release, under each prior:",
        report.posterior.to_string(float_format=lambda v: f"{v:.4g}"),
        "",
        "Averaged over releases from the truth: marginal posterior (3.3), marginal risk (3.4),"
        " P[correct decision] (3.6):",
        report.measures.to_string(float_format=lambda v: f"{v:.6g}"),
    ]
    if report.figures:
        lines += ["", f"Against {report.swept}, written:", *(f"  {p}" for p in report.figures)]
    return "\n".join(lines)


def run(args) -> int:
    from ..reports.attack import attack_report
    from ..scenarios.single_block import SingleBlockCase

    with locked(args.out, "--out"):
        case = attack_from(args)
        with staged(args.out, "--out") if args.out is not None else nullcontext() as stage:
            if isinstance(case, SingleBlockCase):
                text = _single_block_output(args, case, stage)
            else:
                report = attack_report(case, stage)
                report = replace(report, figures=[args.out / p.name for p in report.figures])
                text = (
                    json.dumps(_attack_json(case, report), indent=2)
                    if args.json
                    else _attack_text(case, report)
                )
    print(text)
    return 0


def _single_block_output(args, case, stage) -> str:
    """Tables 4 and 5 and Figures 1–3 (written into ``stage`` unless None), as JSON or text."""
    from ..reports.single_block import marginal_table, release_table

    if stage is not None and case.mechanism is not None:
        raise ValueError(
            "--out: Figures 1-3 of a single-block case are drawn against rho, which a case whose "
            f"noise is a mechanism ({case.mechanism.label}) does not have; drop --out"
        )
    table4 = release_table(case)
    table5 = marginal_table(case)
    written = []
    if stage is not None:
        from ..plots.single_block import save_figures

        written = save_figures(case, stage)
    figures = [args.out / path.name for path in written]
    if args.json:
        return json.dumps(_as_json(case, table4, table5, figures), indent=2)
    return _as_text(case, table4, table5, figures)
