"""The ``adversary`` command line: one module per sub-command.

Each sub-command module has ``register(subparsers)``, which adds its parser
and sets ``func`` to a callable taking the parsed arguments and returning an
exit status. Bad input reaches the user as one line on stderr and a non-zero
exit status, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .. import __version__
from .._output import end_line
from ..memory import ENVIRONMENT_VARIABLE, memory_budget
from ..time_budget import time_budget
from .common import OneLineParser, one_line

SUBCOMMAND_MODULES = (
    "demo",
    "budget",
    "run",
    "population",
    "choose_rho",
    "risk",
    "reconstruct",
    "frontier",
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="adversary",
        description="Disclosure risk of noisy count releases against a Bayesian adversary.",
    )
    parser.add_argument("--version", action="version", version=f"adversary {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with (
            memory_budget(getattr(args, "memory_budget", None), "--memory-budget"),
            time_budget(getattr(args, "time_budget", None), "--time-budget"),
        ):
            return int(args.func(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C: one line; the commands clean up as they unwind
        end_line()  # a progress line the interruption cut, even before its phase began
        print(f"adversary {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a reader that stopped, e.g. `| head`
        sys.stdout = open(os.devnull, "w")  # silence the flush at exit
        return 0
    except OSError as error:  # a file or folder the command could not read or write
        end_line()
        where = "" if error.filename is None else f": {error.filename}"
        print(f"adversary {args.command}: error: {error.strerror or error}{where}", file=sys.stderr)
        return 2
    except MemoryError:  # an allocation no budget check foresaw
        end_line()
        print(
            f"adversary {args.command}: error: out of memory; lower --memory-budget (or "
            f"{ENVIRONMENT_VARIABLE}) so that large grids are refused before they are allocated",
            file=sys.stderr,
        )
        return 2
    except (ValueError, TypeError, KeyError) as error:
        end_line()
        print(f"adversary {args.command}: error: {one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
