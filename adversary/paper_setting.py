"""Kazan & Reiter's (2023) setting, as the shipped model files and the reproduction share it.

The paper's five priors of the target's cell (Sec. 4.2: ``1/864`` spreads the
prior evenly over the 864 cells of the 1940 GVHR query) and the 2020 ρ of the
detailed (GVHR) query at the block and the block group (Table 2), read from
the ``pl94-2020-persons`` budget: 2.56 · 165/4099 · 3945/4097 ≈ 0.0992 at the
block. Budget arithmetic only, so a model file that imports these loads no
numerical library beyond numpy.
"""

from __future__ import annotations

from .budget import get_preset

__all__ = ["BUDGET", "PRIORS", "RHO_BLOCK", "RHO_GROUP"]

#: The 2020 persons-file budget (``pl94-2020-persons``): ρ of every query at every level.
BUDGET = get_preset("pl94-2020-persons")
#: ρ of the block-level detailed query (Table 2), ≈ 0.0992.
RHO_BLOCK = float(BUDGET.rho("block", "detailed"))
#: ρ of the block-group-level detailed query (Table 2).
RHO_GROUP = float(BUDGET.rho("block_group", "detailed"))
#: The paper's five priors P[target in the cell], by label.
PRIORS = {"1/2": 1 / 2, "1/5": 1 / 5, "1/10": 1 / 10, "1/50": 1 / 50, "1/864": 1 / 864}
