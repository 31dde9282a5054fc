"""An attack's ρ from a budget allocation: :func:`with_budget`, the command line's ``--budget``.

A case whose released counts are queries of the 2020 P.L. 94-171 allocation
takes their ρ from any allocation (a preset's name, a
:class:`~adversary.budget.BudgetAllocation` or a budget file):

- the single-block attack (:class:`~.single_block.SingleBlockCase`, Kazan &
  Reiter Sec. 3.1), the post-processed block count
  (:class:`~.post_processing.PostProcessingCase`, S6) and the unknown
  attribute (:class:`~.unknown_attribute.UnknownAttributeCase`, S1.2: every
  category's cell a block count): ``rho`` = the block's detailed query;
- the block-group attack (:class:`~.block_group.case.BlockGroupCase`,
  Sec. 3.2): ``rho1`` = the block's, ``rho2`` = the block group's detailed
  query; TopDown's published tables (:mod:`.published_tables`): ``rho_block``
  and ``rho_parent`` the same two;
- the many-levels attack (:class:`~.multi_level.MultiLevelCase`, S1.3): each
  level of ``level_names`` its detailed query (the names must be levels of
  the allocation);
- every query (:class:`~.multi_query.MultiQueryCase`): ``budget`` is the
  allocation and ``rho_total`` its total;
- reconstruction (:class:`~.reconstruction.ReconstructionCase`): each count
  the block-level ρ of its query, named by its label (``"race[3]"``); the
  stated releases are kept (and refused in one line if the new noise cannot
  reach them).

Any other case — one whose noise is a ``mechanism``, the differencing attack
(repeats the allocation does not have), a ``model()`` factory — takes its ρ
directly: :func:`with_budget` refuses it in one line.
"""

from __future__ import annotations

from ..budget import BudgetAllocation, as_allocation

__all__ = ["budget_rhos", "with_budget"]

_BLOCK, _GROUP = ("block", "detailed"), ("block_group", "detailed")


def budget_rhos(case) -> dict[str, tuple] | None:
    """``{field: (level, query)}`` (or a tuple of them, one per level) of a case whose ρ fields
    are queries of the 2020 allocation; ``None`` for any other case."""
    from .block_group.case import BlockGroupCase
    from .multi_level import LEVELS_2020, MultiLevelCase
    from .post_processing import PostProcessingCase
    from .published_tables.setting import BlockGroupTables
    from .single_block import SingleBlockCase
    from .unknown_attribute import UnknownAttributeCase

    if isinstance(case, SingleBlockCase | PostProcessingCase | UnknownAttributeCase):
        return {"rho": _BLOCK}
    if isinstance(case, BlockGroupCase):
        return {"rho1": _BLOCK, "rho2": _GROUP}
    if isinstance(case, BlockGroupTables):
        return {"rho_block": _BLOCK, "rho_parent": _GROUP}
    if isinstance(case, MultiLevelCase) and case.level_names:
        if all(level in LEVELS_2020 for level in case.level_names):
            return {"rhos": tuple((level, "detailed") for level in case.level_names)}
    return None


def with_budget(case, budget: str | BudgetAllocation, name: str = "budget"):
    """``case`` with its ρ from ``budget`` (the mapping of the module docstring); a case that
    takes its ρ directly, or a query the budget does not measure, is one ValueError naming
    ``name``."""
    from .multi_query import MultiQueryCase
    from .reconstruction import PL94_QUERIES, ReconstructionCase

    allocation = as_allocation(budget, name)
    label = f"case {case.name!r} ({type(case).__name__})"
    if getattr(case, "mechanism", None) is not None:
        raise ValueError(f"{name}: {label} takes its noise from its mechanism, not a rho")
    if isinstance(case, MultiQueryCase):
        return case.replace(budget=allocation, rho_total=None)
    labels = getattr(case, "query_labels", None) or ()
    if isinstance(case, ReconstructionCase) and labels:
        if all(label.split("[")[0] in PL94_QUERIES for label in labels):
            try:
                return case.replace(rhos=allocation)
            except ValueError as error:  # e.g. a stated release impossible under the new noise
                raise ValueError(f"{name}: under {allocation.name!r}, {error}") from None
    fields = budget_rhos(case)
    if fields is None:
        raise ValueError(
            f"{name}: {label} takes its rho directly; {name} sets the rho of a case whose "
            "counts are queries of the 2020 allocation (single block, block group, many "
            "levels, post-processing, unknown attribute, published tables, every query, "
            "reconstruction)"
        )
    changes = {}
    for field, cells in fields.items():
        rhos = [_rho(allocation, level, query, label, name) for level, query in _cells(cells)]
        changes[field] = rhos[0] if isinstance(cells[0], str) else tuple(rhos)
    return case.replace(**changes)


def _cells(cells: tuple) -> tuple:
    return (cells,) if isinstance(cells[0], str) else cells


def _rho(allocation: BudgetAllocation, level: str, query: str, label: str, name: str) -> float:
    rho = allocation.rho(level, query)
    if rho == 0:
        raise ValueError(
            f"{name}: {allocation.name!r} does not measure the {query} query at {level} "
            f"(share 0); {label} needs it"
        )
    return rho
