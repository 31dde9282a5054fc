"""The names of the tie rules of (3.6), without numpy: the command line's choices read them.

The rules themselves, and the decision they settle, are in
:mod:`adversary.measures.decision`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TIE_RULE", "TIE_RULES", "check_tie_rule"]

#: The tie rules (:mod:`adversary.measures.decision`'s docstring).
TIE_RULES = ("split", "largest", "smallest")

#: The rule every function uses unless told otherwise.
DEFAULT_TIE_RULE = "split"


def check_tie_rule(tie_rule, name: str = "tie_rule") -> str:
    """``tie_rule`` if it is one of :data:`TIE_RULES`, else a ``ValueError`` naming ``name``."""
    if not isinstance(tie_rule, str) or tie_rule not in TIE_RULES:
        raise ValueError(f"{name} must be one of {', '.join(TIE_RULES)}; got {tie_rule!r}")
    return tie_rule
