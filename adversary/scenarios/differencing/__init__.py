"""Differencing and averaging attacks: redundant noisy versions of the target's count.

:class:`DifferencingCase` (:mod:`.case`): repeated releases of the target's
count and published totals differenced against their other cells, combined in
the exact likelihood; against the single-query attack, under any mechanism
(the discrete Gaussian, the cell-key method's bounded noise, …).
"""

from __future__ import annotations

from .case import DifferencingCase, Look

__all__ = ["DifferencingCase", "Look"]
