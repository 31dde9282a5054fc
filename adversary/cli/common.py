"""What the sub-commands share: their parser from the module docstring, the attack options.

A sub-command module's docstring is its help: the first line is a title, the
first paragraph after it the description and the rest the epilog (JSON keys,
formats), shown as written.
"""

from __future__ import annotations

import argparse
import re

from .. import time_budget
from ..measures.tie_rules import TIE_RULES
from ..mechanism_specs import MECHANISMS, mechanism_spec, parse_mechanism, with_mechanism
from ..memory import DEFAULT_BUDGET, ENVIRONMENT_VARIABLE, format_bytes
from ..model_files import load_case

__all__ = [
    "OneLineParser",
    "add_allocation_argument",
    "add_attack_arguments",
    "add_budget_arguments",
    "add_mechanism_argument",
    "attack_from",
    "budgeted",
    "case_mechanisms",
    "command_parser",
    "mechanism_option",
    "mechanism_text",
    "one_line",
    "plain_text",
]


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line naming the command and the argument.

    argparse prints its usage block (a dozen lines) before the error, and reports an unknown
    option of a sub-command as the top-level command's (``adversary: error: unrecognized
    arguments``); here both are ``adversary <command>: error: …`` with where help is, as the
    commands' own errors are. The sub-commands' parsers are of this class too.
    """

    def error(self, message):
        self._fail(self.prog, message)

    def parse_args(self, args=None, namespace=None):
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            self._fail(prog, f"unrecognized arguments: {' '.join(unknown)}")
        return parsed

    def _fail(self, prog: str, message: str):
        self.exit(2, f"{prog}: error: {message} (see {prog} --help)\n")


def command_parser(subparsers, name: str, summary: str, doc: str, func) -> argparse.ArgumentParser:
    """The sub-command's parser: ``summary`` in the list of commands, ``doc`` as its help.

    The docstring's reStructuredText markup (````literal````, ``:role:`target```)
    is shown as plain text.
    """
    paragraphs = plain_text(doc).split("\n\n")
    parser = subparsers.add_parser(
        name,
        help=summary,
        description=paragraphs[1],
        epilog="\n\n".join(paragraphs[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser


def plain_text(text: str) -> str:
    """``text`` without reStructuredText's inline markup: literals and roles as their text."""
    text = re.sub(r":[\w:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", text)
    return re.sub(r"``(.+?)``", r"\1", text, flags=re.DOTALL)


def one_line(error: BaseException) -> str:
    """The first non-blank line of ``error``'s message, or its class name when there is none."""
    message = str(error.args[0]) if error.args else ""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


#: ``--post-processing`` values (the keys of
#: :data:`adversary.scenarios.published_tables.POST_PROCESSING`, not imported: the command line
#: starts without PyMC).
POST_PROCESSING_CHOICES = ("none", "topdown", "both")
_HAS = {
    "queries": "MultiQueryCase, e.g. the shipped every_query",
    "post_processing": "PublishedTablesCase, e.g. the shipped published_tables",
}


def add_attack_arguments(parser, *, positional: bool = True) -> None:
    """``MODEL_FILE`` (or ``--model``), ``--tie-rule`` and what the release holds: which
    attack, how ties count, and ``--queries`` / ``--post-processing`` for cases that have them."""
    if positional:
        parser.add_argument("model", metavar="MODEL_FILE", help="model file or shipped case name")
    parser.add_argument(
        "--tie-rule",
        choices=TIE_RULES,
        default=None,
        help="how a tied decision counts in P[correct] (default: the attack's own, split)",
    )
    parser.add_argument(
        "--queries",
        default=None,
        help="the PL 94-171 queries the adversary sees: detailed, all, or names separated by "
        "commas (race,detailed); cases with a queries field (MultiQueryCase)",
    )
    parser.add_argument(
        "--post-processing",
        choices=POST_PROCESSING_CHOICES,
        default=None,
        help="what the adversary sees: the noisy measurements (none), TopDown's published "
        "tables (topdown) or both; cases with a post_processing field (PublishedTablesCase)",
    )
    add_mechanism_argument(parser)
    add_budget_arguments(parser)


def add_mechanism_argument(parser) -> None:
    """``--mechanism SPEC``: the release mechanism in place of the case's ρ
    (:func:`adversary.mechanism_specs.parse_mechanism`)."""
    usages = "; ".join(kind.usage for kind in MECHANISMS.values())
    parser.add_argument(
        "--mechanism",
        metavar="SPEC",
        default=None,
        help="the noise of every released count instead of the case's rho, as "
        f"NAME:key=value,... (e.g. discrete_laplace:scale=2): {usages}; values are numbers "
        "(1/50 too), names or a+b; Getting started lists the keys; not with --budget",
    )


def mechanism_option(case, args):
    """``case`` with ``--mechanism`` as its noise when given
    (:func:`adversary.mechanism_specs.with_mechanism`); refused with ``--budget``, which sets
    the ρ that the mechanism replaces."""
    spec = getattr(args, "mechanism", None)
    if spec is None:
        return case
    if getattr(args, "budget", None) is not None:
        raise ValueError(
            "--mechanism: not with --budget (--budget sets the rho of the case's discrete "
            "Gaussian noise; --mechanism replaces that noise): give one"
        )
    return with_mechanism(case, parse_mechanism(spec, "--mechanism"), "--mechanism")


def case_mechanisms(case) -> tuple[str | None, tuple]:
    """What releases the case's counts: ``("noise", mechanisms)`` (distinct, in order),
    ``("swapping", (law,))`` for a swapping case, or ``(None, ())`` when its noise is its ρ."""
    parameters = case.parameters()
    if parameters.get("mechanism") is not None:
        mechanism = parameters["mechanism"]
        several = tuple(mechanism) if isinstance(mechanism, tuple | list) else (mechanism,)
        return "noise", tuple(dict.fromkeys(several))
    if "law" in parameters:
        return "swapping", (parameters["law"],)
    return None, ()


def mechanism_text(case):
    """The spec of the case's mechanism (:func:`case_mechanisms`; one per release only
    where they differ; one without a registered spec by its label; a swapping case's law
    by its mechanism's spec or its label), or ``None`` when its noise is its ρ."""
    _, mechanisms = case_mechanisms(case)
    if not mechanisms:
        return None
    texts = [_spec_or_label(getattr(m, "mechanism", m)) for m in mechanisms]
    return texts[0] if len(texts) == 1 else texts


def _spec_or_label(mechanism) -> str:
    try:
        return mechanism_spec(mechanism)
    except TypeError:
        return getattr(mechanism, "label", str(mechanism))


def add_allocation_argument(parser, default: str = "the case's own rho") -> None:
    """``--budget FILE|PRESET``: the privacy-loss budget allocation (a preset's name or a
    ``.toml`` / ``.json`` budget file, :func:`adversary.budget.as_allocation`)."""
    parser.add_argument(
        "--budget",
        metavar="FILE|PRESET",
        default=None,
        help="privacy-loss budget allocation: a .toml or .json budget file or a preset "
        "(pl94-2020-persons, pl94-2020-persons-production); an attack takes the rho of its "
        "counts' queries from it (Getting started lists which); default: "
        f"{default}",
    )


def budgeted(case, args):
    """``case`` with its ρ from ``--budget`` when given
    (:func:`adversary.scenarios.budgeted.with_budget`)."""
    if getattr(args, "budget", None) is None:
        return case
    from ..scenarios.budgeted import with_budget

    return with_budget(case, args.budget, "--budget")


def add_budget_arguments(parser, allocation_default: str = "the case's own rho") -> None:
    """The budgets: ``--budget FILE|PRESET``, the privacy-loss budget
    (:func:`add_allocation_argument`); ``--memory-budget SIZE``, the memory the computation's
    grids may take; and ``--time-budget DURATION``, the time its grids may be expected to take."""
    add_allocation_argument(parser, allocation_default)
    parser.add_argument(
        "--memory-budget",
        metavar="SIZE",
        default=None,
        help=f"memory the grids may take, e.g. 8GiB (default: ${ENVIRONMENT_VARIABLE} or "
        f"{format_bytes(DEFAULT_BUDGET)}); larger grids are refused before they are allocated",
    )
    parser.add_argument(
        "--time-budget",
        metavar="DURATION",
        default=None,
        help=f"time a grid may be expected to take, e.g. 1h or 90s (default: "
        f"${time_budget.ENVIRONMENT_VARIABLE} or "
        f"{time_budget.format_duration(time_budget.DEFAULT_BUDGET)}); a grid projected to take "
        "longer (from its size and the measured time of its first block) is refused",
    )


def check_sampling_options(args) -> None:
    """``--draws``, ``--chains`` and ``--cores`` (where the command has it) at least 1, ``--tune``
    (where the command has it) at least 0, ``--seed`` a 64-bit integer >= 0, whatever the
    method (an exact run takes no draws, but a bad option is still the user's mistake)."""
    for option in ("draws", "chains", "cores"):
        value = getattr(args, option, None)
        if value is not None and value < 1:
            raise ValueError(f"--{option} must be >= 1, got {value}")
    if getattr(args, "tune", None) is not None and args.tune < 0:
        raise ValueError(f"--tune must be >= 0, got {args.tune}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.seed >= 2**63:
        raise ValueError(f"--seed must be below 2^63, got {args.seed}")


def attack_from(args):
    """The attack ``args.model`` declares, with ``--budget`` or ``--mechanism``, ``--tie-rule``,
    ``--queries`` and ``--post-processing`` applied when given."""
    case = mechanism_option(load_case(args.model), args)
    case = budgeted(case, args)
    if args.tie_rule is not None:
        case = case.replace(tie_rule=args.tie_rule)
    options = {
        "queries": _queries(getattr(args, "queries", None)),
        "post_processing": getattr(args, "post_processing", None),
    }
    for field, value in options.items():
        if value is None:
            continue
        flag = "--" + field.replace("_", "-")
        if field not in case.parameters():
            raise ValueError(
                f"{flag}: the attack {case.name!r} has no {field} parameter "
                f"(cases that have one: {_HAS[field]})"
            )
        case = case.replace(**{field: value})
    return case


def _queries(text: str | None):
    """``--queries``: a named set (``detailed``, ``all``) or query names separated by commas."""
    if text is None:
        return None
    from ..scenarios.multi_query import query_names

    names = tuple(name.strip() for name in text.split(","))
    try:
        return query_names(names[0] if len(names) == 1 else names)
    except ValueError as error:
        raise ValueError(f"--{error}") from None
