"""The single-block analysis of a case (Kazan & Reiter Sec. 4.2) as tables.

:func:`release_table` is the paper's Table 4 (for each tabulated release, its
probability under the truth and the posterior (3.1) and risk (3.2) under each
prior); :func:`marginal_table` is Table 5 (marginal posterior (3.3) and risk
(3.4)) with the probability of a correct decision (3.6) beside it;
:func:`rho_sweep` gives the curves of Figures 2 and 3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..scenarios import single_block as sb
from ..scenarios.single_block import SingleBlockCase

__all__ = ["marginal_table", "release_table", "rho_sweep"]


def _measure_columns(case: SingleBlockCase, measure: str, values: np.ndarray) -> dict:
    return {(measure, label): values[..., i] for i, label in enumerate(case.priors)}


def release_table(case: SingleBlockCase) -> pd.DataFrame:
    """Table 4: one row per release ``x1*`` in ``case.releases``.

    Columns: ``release_probability`` = ``P[X1* = x1* | X1 = x1]`` under the
    truth, then ``posterior`` and ``risk`` for each prior label.
    """
    releases = np.array(case.releases)
    args = (case.rho, case.known_count, case.true_count, case.convention)
    noise = {"mechanism": case.mechanism}
    post = sb.posterior(releases[:, None], case.prior_values, *args, **noise)
    risk = sb.risk(releases[:, None], case.prior_values, *args, **noise)
    columns = {
        ("release_probability", ""): sb.release_pmf(
            releases, case.rho, case.truth, case.convention, **noise
        ),
        **_measure_columns(case, "posterior", post),
        **_measure_columns(case, "risk", risk),
    }
    table = pd.DataFrame(columns, index=pd.Index(releases, name="release"))
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["measure", "prior"])
    return table


def marginal_table(case: SingleBlockCase, rho: float | None = None) -> pd.DataFrame:
    """Table 5 at ``rho`` (default ``case.rho``, or the case's mechanism): one row per prior.

    Columns: ``p``, ``marginal_posterior`` (3.3), ``marginal_risk`` (3.4) and
    ``correct_decision_probability`` (3.6). A ``rho`` given here is the discrete
    Gaussian's, whatever noise the case has.
    """
    noise = {"mechanism": case.mechanism if rho is None else None}
    rho = case.rho if rho is None else rho
    args = (case.prior_values, rho, case.known_count, case.true_count, case.convention)
    return pd.DataFrame(
        {
            "p": case.prior_values,
            "marginal_posterior": sb.marginal_posterior(*args, **noise),
            "marginal_risk": sb.marginal_risk(*args, **noise),
            "correct_decision_probability": sb.correct_decision_probability(*args, **noise),
        },
        index=pd.Index(list(case.priors), name="prior"),
    )


def rho_sweep(case: SingleBlockCase, rhos) -> pd.DataFrame:
    """The measures of :func:`marginal_table` for every ρ in ``rhos`` (long format).

    The noise is the discrete Gaussian at each ρ under the case's convention; a
    case with another mechanism is refused (sweep its mechanisms instead).
    """
    if case.mechanism is not None:
        raise ValueError(
            f"case: a sweep over rho needs the discrete Gaussian (rho, convention); this case "
            f"has the mechanism {case.mechanism.label}"
        )
    rhos = np.asarray(rhos, dtype=np.float64)
    args = (
        case.prior_values[None, :],
        rhos[:, None],
        case.known_count,
        case.true_count,
        case.convention,
    )
    measures = {
        "marginal_posterior": sb.marginal_posterior(*args),
        "marginal_risk": sb.marginal_risk(*args),
        "correct_decision_probability": sb.correct_decision_probability(*args),
    }
    index = pd.MultiIndex.from_product([rhos, list(case.priors)], names=["rho", "prior"])
    return pd.DataFrame({name: values.ravel() for name, values in measures.items()}, index=index)
