"""Limits on a computation (its memory, its time): set for a block, by the environment, or default.

:mod:`adversary.memory` and :mod:`adversary.time_budget` each hold one
:class:`Limit`: its value is the innermost :meth:`Limit.within` block's, else
the environment variable's, else the default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_quantity(text, name: str, units: dict[str, float], kind: str) -> float:
    """``text``, a number or a number with one of ``units`` (``""`` for none), in base units.

    A bool, or a text that is no such number, is refused naming ``name`` and
    ``kind`` (what was expected, e.g. ``"a size such as 8GiB"``).
    """
    if isinstance(text, bool):
        raise ValueError(f"{name} must be {kind}, got {text!r}")
    if isinstance(text, int | float):
        return float(text) * units[""]
    match = _QUANTITY.match(str(text))
    if match is None or match.group(2).lower() not in units:
        raise ValueError(f"{name} must be {kind}, got {text!r}")
    return float(match.group(1)) * units[match.group(2).lower()]


class Limit:
    """A limit read from :meth:`within`, else ``variable``, else ``default``; ``parse(text, name)``
    turns a text (or number) into its value, refusing a bad one naming ``name``."""

    def __init__(
        self,
        variable: str,
        default: float,
        parse: Callable[[object, str], float],
        show: Callable[[float], str],
        option: str,
    ):
        self.variable, self.default, self.parse = variable, default, parse
        self.show, self.option = show, option
        self._override: ContextVar = ContextVar(f"adversary_{variable.lower()}", default=None)

    def check(self, amount: float, what: str, needs: str, noun: str, error: type) -> None:
        """Raise ``error`` when ``amount`` exceeds the limit: ``<what> would <needs>, more than
        the <noun> of <limit> (raise it with ...)``; ``needs`` holds ``{}`` for the amount."""
        limit = self.current()
        if amount > limit:
            raise error(
                f"{what} would {needs.format(self.show(amount))}, more than the {noun} of "
                f"{self.show(limit)} (raise it with {self.option} or {self.variable})"
            )

    def current(self):
        """The limit: the innermost :meth:`within`'s, else the environment's, else the default."""
        override = self._override.get()
        if override is not None:
            return override
        text = os.environ.get(self.variable, "").strip()
        return self.parse(text, self.variable) if text else self.default

    @contextmanager
    def within(self, value, name: str) -> Iterator:
        """Within the block the limit is ``value`` (parsed, naming ``name``); ``None`` keeps it."""
        if value is None:
            yield self.current()
            return
        token = self._override.set(self.parse(value, name))
        try:
            yield self._override.get()
        finally:
            self._override.reset(token)
