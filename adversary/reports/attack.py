"""The analysis of any attack at a glance: posterior per prior, measures per prior, curves over ρ.

What ``adversary demo --model`` shows for an attack that is not a single
block (which has the paper's Tables 4–5 and Figures 1–3,
:mod:`~adversary.reports.single_block`): for each of the attack's priors,
the adversary's posterior of the target at the observed release
(:func:`~adversary.analyses.compare.compare_priors`) and the data holder's
measures (3.3), (3.4), (3.6) (:func:`~adversary.analyses.compare.sweep`);
and, when the attack has a ρ (:func:`~adversary.analyses.choose_rho.rho_fields`),
those measures against ρ over two decades either side of its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..analyses.choose_rho import rho_fields
from ..analyses.compare import compare_priors, sweep, to_table

__all__ = ["AttackReport", "attack_report"]

#: Values of ρ drawn, evenly on a log scale over two decades either side of the attack's.
CURVE_POINTS = 9


@dataclass(frozen=True)
class AttackReport:
    """``posterior`` and ``measures``: one row per prior; ``swept``: the ρ drawn (or None)."""

    posterior: pd.DataFrame
    measures: pd.DataFrame
    swept: str | None
    figures: list[Path]


def _first_scalar_rho(case) -> str | None:
    names = [name for name in rho_fields(case) if "[" not in name]
    return names[0] if names else None


def attack_report(case, out: Path | None = None) -> AttackReport:
    """The tables of the module docstring, and the curves over ρ written into ``out``."""
    posterior = to_table(compare_priors(case))
    measures = to_table(sweep(case, progress=False))
    field = _first_scalar_rho(case)
    figures = []
    if field is not None and out is not None:
        from ..plots.compare import risk_curves_figure  # on use: matplotlib only for a figure

        rho = float(case.parameters()[field])
        curve = sweep(case, {field: np.geomspace(rho / 100, rho * 100, CURVE_POINTS)})
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"risk_by_{field}.png"
        risk_curves_figure(curve).savefig(path, dpi=120)
        figures.append(path)
    return AttackReport(posterior=posterior, measures=measures, swept=field, figures=figures)
