"""``adversary risk MODEL_FILE``: the data holder's risk measures of a case, and sweeps.

For the truth of the attack a model file declares (a ``CASE`` or a ``model()``
factory with its ``TRUTH``), prints, under each prior
(or the one ``--prior`` names), the adversary's posterior of the truth
averaged over the releases the mechanism could produce (Kazan & Reiter
(3.3)), the marginal risk (3.4), the probability that the adversary's 0-1
decision is right (3.6), and a bound on the error of these sums. With
``--sweep NAME=VALUES`` (repeatable) it evaluates them for every combination
of the values of the case's fields, prints the table, and with ``--out FOLDER`` writes it
as CSV and the risk curves as PNG into it (without ``--out`` it writes no
file; a second run into the same ``--out`` is refused while the first runs).

VALUES is a comma-separated list (``rho=0.01,0.1,1``; ``convention=paper,das``),
``geomspace:START:STOP:N`` or ``linspace:START:STOP:N`` (N values, both ends
included), ``range:START:STOP[:STEP]`` (integers, STOP excluded, as Python's
range), or a semicolon-separated list of Python literals for tuple-valued
fields (``truth=(1,1,0);(1,2,1)``; one tuple alone: ``truth=(1,1,0)``).

``--json`` prints one object with keys:

``case``
    name of the case; ``target``: the latent the adversary decides on;
    ``truth``: ``{latent: true value}``, the data holder's truth;
    ``method``: how the case computed the measures (e.g. ``exact``);
    ``mechanism``: the spec of the case's noise mechanism (``--mechanism``'s form,
    e.g. ``"discrete_laplace:scale=2.0"``; a list where the releases' differ), or
    null when the noise is the case's ρ.
``priors``
    ``{label: p}`` of the priors evaluated (the prior's text when it is not one
    number, e.g. a vector over categories).
``swept``
    ``{name: [values]}`` of the swept fields (empty without ``--sweep``).
``rows``
    list of ``{"prior", "p", <swept fields>, "marginal_posterior", "marginal_risk",
    "correct_decision_probability", "error_bound", "risk_error_bound", "omitted_mass",
    "prior_of_truth"}`` (``error_bound`` bounds the error of the posterior and of
    P[correct], ``risk_error_bound`` that of the risk), one per prior and
    combination of swept values (a value that is not a number or a string, such
    as a tuple, as its text: ``"(1, 1, 0)"``).
``table``, ``figure``
    paths of the CSV and PNG files written (null without ``--sweep`` or
    ``--out``; ``figure`` also null when there are too many combinations to
    draw).

A factory's model whose release grid is too large to sum (over ``max_releases``),
or that has continuous latents, gets its measures by Monte Carlo over release sets
drawn from the truth: 2 000 of them, each posterior exact (discrete latents) or by
MCMC (continuous ones, about 0.3–0.5 s per release set). The MCMC route is timed
on its first two release sets and refused over ``--time-budget``; to set how many
release sets, declare the attack as ``CASE = adversary.attack(model, priors=PRIORS,
truth=TRUTH, releases=200)`` in the model file.

For a reconstruction case (``CASE = ReconstructionCase(...)``) it prints the
data holder's reconstruction measures instead, beside the prior alone: each
summed exactly over every release set within the noise's cut-offs when that
grid is small (with the bound on what the omitted releases could change),
else averaged over ``--replications`` release sets drawn from the truth
(``--seed``), with its standard error; ``--json`` keys as ``adversary
reconstruct`` with ``{"mean", "standard_error", "bound"}`` per measure, and
``releases`` (``grid`` or ``sampled``), ``replications``, ``omitted_mass``.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from .._output import locked, staged
from .common import (
    add_attack_arguments,
    attack_from,
    case_mechanisms,
    command_parser,
    mechanism_text,
)
from .reconstruct import HOLDER_REPLICATIONS, HOLDER_SEED, holder_run, reconstruction_case

#: ``--sweep`` VALUES spaced by numpy's function of the same name.
_SPACES = ("geomspace", "linspace")


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "risk",
        "marginal risk and decision probability of a model file's truth; parameter sweeps",
        __doc__,
        run,
    )
    add_attack_arguments(parser)
    parser.add_argument("--prior", default=None, help="prior label (default: every prior)")
    parser.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="a case field and its values (repeatable)",
    )
    parser.add_argument(
        "--out",
        default=None,
        type=Path,
        help="folder for the sweep's table and plot (default: none written)",
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument(
        "--replications",
        type=int,
        help=f"reconstruction cases: release sets drawn from the truth "
        f"(default {HOLDER_REPLICATIONS})",
    )
    parser.add_argument(
        "--seed", type=int, help=f"reconstruction cases: random seed ({HOLDER_SEED})"
    )


def _number(text: str, spec: str):
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"--sweep: {text!r} in {spec!r} is not a number")
    return value


def _item(text: str):
    """One listed value: a Python literal (number, tuple, quoted string) or a bare word."""
    text = text.strip()
    if not text:
        raise ValueError("empty value")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_values(spec: str) -> list:
    """The values of one ``--sweep`` VALUES (see the module docstring)."""
    kind, _, rest = spec.partition(":")
    if kind in _SPACES:
        parts = rest.split(":")
        if len(parts) != 3:
            raise ValueError(f"--sweep: expected {kind}:START:STOP:N, got {spec!r}")
        start, stop, n = (_number(p, spec) for p in parts)
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"--sweep: N must be a positive integer in {spec!r}")
        if kind == "geomspace" and (start <= 0 or stop <= 0):
            raise ValueError(f"--sweep: geomspace needs START and STOP > 0, got {spec!r}")
        import numpy as np

        return [float(v) for v in getattr(np, kind)(start, stop, n)]
    if kind == "range":
        parts = [_number(p, spec) for p in rest.split(":")]
        if len(parts) not in (2, 3) or not all(isinstance(p, int) for p in parts):
            raise ValueError(f"--sweep: expected range:START:STOP[:STEP] of integers, got {spec!r}")
        values = list(range(*parts))
        if not values:
            raise ValueError(f"--sweep: {spec!r} is an empty range")
        return values
    if ";" not in spec and spec.strip()[:1] in ("(", "[") and isinstance(_item(spec), tuple | list):
        return [_item(spec)]  # one tuple-valued value, e.g. truth=(1,1,0)
    separator = ";" if ";" in spec else ","
    try:
        return [_item(text) for text in spec.split(separator)]
    except ValueError:
        raise ValueError(f"--sweep: {spec!r} has an empty value") from None


def parse_sweeps(specs: list[str], case) -> dict[str, list]:
    """``{name: values}`` from the ``--sweep`` options, names checked against the parameters."""
    fields = list(case.parameters())
    over = {}
    for spec in specs:
        name, equals, values = spec.partition("=")
        name = name.strip()
        if not equals or not name or not values:
            raise ValueError(f"--sweep: expected NAME=VALUES, got {spec!r}")
        if name not in fields and name == getattr(case, "prior_argument", None):
            raise ValueError(
                f"--sweep: {name!r} is the prior: give the priors in the model file's PRIORS "
                "and choose one with --prior (every prior is evaluated without it)"
            )
        if name not in fields:
            raise ValueError(
                f"--sweep: {name!r} is not a parameter of {case.name}; have {', '.join(fields)}"
            )
        if name in over:
            raise ValueError(f"--sweep: {name!r} is given twice")
        over[name] = parse_values(values)
    return over


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def _rows(table) -> list[dict]:
    flat = table.reset_index()
    return [{k: _plain(v) for k, v in row.items()} for row in flat.to_dict("records")]


def _method_line(method: str) -> str:
    """How the measures were computed, with what their error bound means."""
    if "monte-carlo" not in method:
        return f"method: {method} (sums over the release grid)"
    rows = "some rows by Monte Carlo" if "," in method else "Monte Carlo"
    return (
        f"method: {method} ({rows} over release sets drawn from the truth: the error bound is "
        "a multiple of the standard error)"
    )


def _as_text(case, method, table, over, files) -> str:
    import pandas as pd

    from ..analyses.compare import MEASURES

    lines = [case.name]
    truth = case.true_latents
    if truth is not None:
        shown = ", ".join(f"{k} = {_plain(v)}" for k, v in truth.items())
        lines.append(f"truth: {shown} (target {case.target})")
    convention = case.parameters().get("convention")
    kind, mechanisms = case_mechanisms(case)
    if mechanisms:
        labels = dict.fromkeys(getattr(m, "label", str(m)) for m in mechanisms)
        lines.append(f"{kind}: {', '.join(labels)}")
    elif isinstance(convention, str):
        variance = {"paper": "σ² = 1/(2ρ)", "das": "σ² = 1/ρ"}.get(convention, "")
        lines.append(f"noise convention: {convention} ({variance})")
    lines.append(
        "averaged over releases from the truth: marginal posterior (3.3), marginal risk (3.4),"
        " P[correct decision] (3.6)"
    )
    lines.append(_method_line(method))
    if over:
        lines.append("swept: " + ", ".join(f"{n} ({len(v)} values)" for n, v in over.items()))
    prior_column = "p"
    if not pd.api.types.is_numeric_dtype(table["p"]):  # a prior over values: its truth
        prior_column = "prior_of_truth"
    shown = table[[prior_column, *MEASURES[:4]]].rename(
        columns={
            "prior_of_truth": "prior of truth",
            "marginal_posterior": "marg. posterior",
            "marginal_risk": "marg. risk",
            "correct_decision_probability": "P[correct]",
            "error_bound": "error bound",
        }
    )
    lines += ["", shown.to_string(float_format=lambda v: f"{v:.6g}")]
    files = [path for path in files if path is not None]
    if files:
        lines += ["", "written:", *(f"  {path}" for path in files)]
    elif over:
        lines += ["", "no file written (give --out FOLDER to write the table and plot)"]
    return "\n".join(lines)


def _output(args, case, dataset, table, over, table_path, figure_path) -> str:
    """What the command prints: the JSON of the module docstring, or the text table."""
    if not args.json:
        files = [table_path, figure_path] if over else []
        return _as_text(case, dataset.attrs["method"], table, over, files)
    result = {
        "case": case.name,
        "target": case.target,
        "truth": None
        if case.true_latents is None
        else {k: _plain(v) for k, v in case.true_latents.items()},
        "method": dataset.attrs["method"],
        "mechanism": mechanism_text(case),
        "priors": {
            str(k): _plain(v)
            for k, v in zip(dataset["prior"].values, dataset["p"].values, strict=True)
        },
        "swept": {name: _plain(list(values)) for name, values in over.items()},
        "rows": _rows(table),
        "table": None if table_path is None else str(table_path),
        "figure": None if figure_path is None else str(figure_path),
    }
    return json.dumps(result, indent=2)


def run(args) -> int:
    reconstruction = reconstruction_case(args.model)
    if reconstruction is not None:
        return holder_run(reconstruction, args)
    if args.replications is not None or args.seed is not None:
        raise ValueError(
            f"--replications and --seed apply to reconstruction cases; {args.model!r} is an "
            "attack (sweep its own fields instead, e.g. --sweep seed=1,2)"
        )
    with locked(args.out if args.sweep else None, "--out"):
        return _attack_run(args)


def _attack_run(args) -> int:
    from ..analyses.compare import sweep, to_table

    case = attack_from(args)
    over = parse_sweeps(args.sweep, case)
    priors = None if args.prior is None else [args.prior]
    try:
        dataset = sweep(case, over, priors=priors)
    except (ValueError, TypeError) as error:
        message = str(error.args[0]) if error.args else type(error).__name__
        if message.startswith("over: "):  # a swept value the case rejects, or the case itself
            detail = message.removeprefix("over: ")
            raise type(error)(f"--sweep {detail}" if over else detail.removeprefix(": ")) from error
        raise
    table = to_table(dataset)
    if not over or args.out is None:
        print(_output(args, case, dataset, table, over, None, None))
        return 0
    stem = "sweep_" + "_".join(over)
    with staged(args.out, "--out", owned=(f"{stem}.png",)) as stage:
        table.to_csv(stage / f"{stem}.csv")
        table_path, figure_path = args.out / f"{stem}.csv", None
        from ..plots.compare import risk_curves_figure

        try:
            figure = risk_curves_figure(dataset)
        except ValueError as error:
            print(f"adversary risk: no plot: {error}", file=sys.stderr)
        else:
            figure.savefig(stage / f"{stem}.png", dpi=120)
            figure_path = args.out / f"{stem}.png"
        text = _output(args, case, dataset, table, over, table_path, figure_path)
    print(text)
    return 0
