"""Which allocations are worth making: the Pareto set of risk against error, and dominance.

Every selected variable of an evaluation (:func:`~adversary.analyses.frontier.evaluation.evaluate`)
is to be *minimised*: the risk variables (e.g. the marginal risk, Kazan & Reiter
2023 (3.4), or the probability of a correct decision (3.6)) and the error
variables (e.g. a variance, a mean absolute error). A variable with dimensions
besides ``allocation`` gives one objective per combination of their coordinates
(``marginal_risk[attack=single_block, prior=1/864]``); to weigh some coordinates only,
select them first (``pareto_set(evaluation.sel(metric="detailed"), …)``). Every
selected value must be finite (a variance of a query not measured, ``inf``, is
refused: select the measured ones).

Allocation ``a`` *dominates* ``b`` when every objective of ``a`` is at most that
of ``b`` and at least one is smaller. The Pareto set is the allocations no
other allocation dominates; every allocation outside it is dominated by one in
it (domination is transitive and the family finite). Allocations with equal
objectives do not dominate one another: both stay in the set.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import xarray as xr

from ...memory import check_memory

__all__ = ["ParetoSet", "dominance", "objectives", "pareto_set"]


def _names(value, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    return list(value)


def objectives(evaluation: xr.Dataset, risks=(), errors=()) -> xr.DataArray:
    """The objectives as a matrix: dims ``(allocation, objective)``, coordinate ``kind``
    (``"risk"`` or ``"error"``) on ``objective``, labels ``variable[dim=label, …]``."""
    if not isinstance(evaluation, xr.Dataset) or "allocation" not in evaluation.dims:
        raise TypeError("evaluation must be an xarray.Dataset with an 'allocation' dimension")
    risks, errors = _names(risks, "risks"), _names(errors, "errors")
    if not risks and not errors:
        raise ValueError("risks and errors must select at least one variable between them")
    both = sorted(set(risks) & set(errors))
    if both:
        raise ValueError(f"risks and errors must not both select {both}")
    columns, labels, kinds = [], [], []
    for kind, names in (("risk", risks), ("error", errors)):
        for variable in names:
            if variable not in evaluation.data_vars:
                raise ValueError(
                    f"{kind}s must name variables of the evaluation "
                    f"({', '.join(map(str, evaluation.data_vars))}), got {variable!r}"
                )
            data = evaluation[variable]
            if "allocation" not in data.dims:
                raise ValueError(f"{kind}s: variable {variable!r} has no 'allocation' dimension")
            others = [d for d in data.dims if d != "allocation"]
            values = data.transpose("allocation", *others).values.astype(float)
            values = values.reshape(values.shape[0], -1)
            if not np.isfinite(values).all():
                raise ValueError(f"{kind}s: variable {variable!r} has values that are not finite")
            columns.append(values)
            for index in np.ndindex(*(data.sizes[d] for d in others)):
                where = ", ".join(
                    f"{d}={data[d].values[i]}" for d, i in zip(others, index, strict=True)
                )
                labels.append(f"{variable}[{where}]" if where else variable)
                kinds.append(kind)
    return xr.DataArray(
        np.concatenate(columns, axis=1),
        dims=("allocation", "objective"),
        coords={
            "allocation": evaluation["allocation"].values,
            "objective": labels,
            "kind": ("objective", kinds),
        },
    )


def _dominators(matrix: np.ndarray) -> np.ndarray:
    """``out[i, j]``: allocation j dominates allocation i."""
    n, m = matrix.shape
    check_memory(n * n + 3 * n * m * 8, f"the dominance table of {n:,} allocations")
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        out[i] = (matrix <= matrix[i]).all(axis=1) & (matrix < matrix[i]).any(axis=1)
    return out


class ParetoSet(NamedTuple):
    """The result of :func:`pareto_set`."""

    #: The evaluation of the non-dominated allocations (in the evaluation's order).
    front: xr.Dataset
    #: Booleans, dims ``(allocation, dominator)`` over every allocation: True where
    #: ``dominator`` dominates ``allocation`` (a row of False: in the front).
    dominated_by: xr.DataArray


def pareto_set(evaluation: xr.Dataset, risks=(), errors=()) -> ParetoSet:
    """The allocations of ``evaluation`` that no other dominates, every selected variable of
    ``risks`` and ``errors`` (names of data variables) minimised (module docstring)."""
    matrix = objectives(evaluation, risks, errors)
    table = _dominators(matrix.values)
    names = matrix["allocation"].values
    dominated_by = xr.DataArray(
        table,
        dims=("allocation", "dominator"),
        coords={"allocation": names, "dominator": names},
        name="dominated_by",
    )
    front = evaluation.isel(allocation=np.flatnonzero(~table.any(axis=1)))
    return ParetoSet(front, dominated_by)


def dominance(evaluation: xr.Dataset, reference: str, risks=(), errors=()) -> xr.Dataset:
    """Whether allocation ``reference`` (e.g. the 2020 production one) is dominated, by which
    allocations and by how much.

    For an allocation ``a`` dominating the reference ``r`` (module docstring),
    with ``E_k`` the error objectives and ``R_k`` the risk objectives (all > 0):

    ``error_factor(a) = min_k E_k(r) / E_k(a)``
        the largest factor by which ``a`` divides *every* error of ``r``
        (``E_k(a) ≤ E_k(r) / error_factor`` for every k), at no more risk
        (``a`` dominates ``r``, so ``R_k(a) ≤ R_k(r)``); at least 1;
    ``risk_factor(a) = min_k R_k(r) / R_k(a)``
        likewise for the risks, at no more error; at least 1.

    Returns
    -------
    xarray.Dataset
        dim ``dominator`` (the allocations dominating ``r``, in the
        evaluation's order; empty when none does) with ``error_factor`` and
        ``risk_factor``; scalars ``dominated`` (bool), ``largest_error_factor``
        and ``largest_risk_factor`` (the largest over the dominators: the
        largest factor by which some allocation reduces every error at no
        more risk, and every risk at no more error; 1 when nothing dominates
        ``r``); attribute ``reference``.
    """
    matrix = objectives(evaluation, risks, errors)
    names = [str(n) for n in matrix["allocation"].values]
    if reference not in names:
        raise ValueError(f"reference must name an allocation of the evaluation, got {reference!r}")
    kinds = matrix["kind"].values
    if not ((kinds == "risk").any() and (kinds == "error").any()):
        raise ValueError("risks and errors must each select at least one variable for dominance")
    values = matrix.values
    if (values <= 0).any():
        bad = matrix["objective"].values[(values <= 0).any(axis=0)][0]
        raise ValueError(f"risks and errors must be > 0 for dominance factors; {bad} is not")
    ref = values[names.index(reference)]
    dominating = (values <= ref).all(axis=1) & (values < ref).any(axis=1)
    ratios = ref / values[dominating]
    error_factor = ratios[:, kinds == "error"].min(axis=1)
    risk_factor = ratios[:, kinds == "risk"].min(axis=1)
    return xr.Dataset(
        {
            "error_factor": ("dominator", error_factor),
            "risk_factor": ("dominator", risk_factor),
            "dominated": ((), bool(dominating.any())),
            "largest_error_factor": ((), float(error_factor.max(initial=1.0))),
            "largest_risk_factor": ((), float(risk_factor.max(initial=1.0))),
        },
        coords={"dominator": [n for n, d in zip(names, dominating, strict=True) if d]},
        attrs={"reference": reference},
    )
