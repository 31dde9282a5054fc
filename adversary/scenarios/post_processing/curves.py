"""S6's Figure 6: the measures with post-processing against ``x̃2`` and against ρ1."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..._validation import as_counts, as_positive, as_probability
from ...budget import get_preset
from ...measures.decision import DEFAULT_TIE_RULE
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import noise_variance
from .. import single_block
from .data_holder import table_marginals
from .release_noise import release_noise
from .releases import AttackSetting, attack_setting
from .rule import scalar_count
from .scores import true_count_of
from .unprocessed import unprocessed_marginal_risk

__all__ = ["marginal_by_rho", "marginal_by_x2_tilde"]


def _block_rho() -> float:
    """ρ1 ≈ 0.0992 of Figure 6: the 2020 persons file's block-level detailed query."""
    return float(get_preset().rho("block", "detailed"))


def _one_d(values, name: str, check) -> np.ndarray:
    array = check(values, name)
    if array.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-d sequence, got shape {array.shape}")
    return np.atleast_1d(array)


_MEASURE_NAMES = (
    "marginal_posterior",
    "marginal_risk",
    "correct_decision_probability",
    "posterior_error_bound",
    "risk_error_bound",
    "decision_error_bound",
    "omitted_mass",
)


def _setting(
    d: int = 27,
    x2: int = 1,
    known_count: int = 0,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
):
    """The curves' :class:`AttackSetting`; ``x̃2`` varies along them (0 here)."""
    return attack_setting(
        d=d,
        x2=x2,
        x2_tilde=0,
        known_count=known_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )


#: The arguments of :func:`_setting`, in order.
_SETTING = ("d", "x2", "known_count", "convention", "exact_sum", "tail_mass", "mechanism")


def _curve(chosen: AttackSetting, rho, priors, x2_tildes, true_count, tie_rule):
    """Measures over ``(x2_tilde, *rho.shape, prior)``; comparisons over ``(*rho.shape, prior)``."""
    truth = true_count_of(chosen.known, true_count)
    if chosen.mechanism is None:
        rho = np.asarray(rho)[..., None]  # broadcast against the prior axis
    tables = chosen.tables(rho, x2_tildes)
    results = [table_marginals(table, priors, truth, tie_rule) for table in tables]
    measures = {name: np.stack([getattr(r, name) for r in results]) for name in _MEASURE_NAMES}
    common = dict(
        known_count=chosen.known,
        true_count=true_count,
        convention=chosen.convention,
        mechanism=chosen.mechanism,
        tail_mass=chosen.tail_mass,
    )
    alongside = {
        "unprocessed_marginal_risk": unprocessed_marginal_risk(
            priors, rho, d=chosen.d, x2=chosen.x2, exact_sum=chosen.exact_sum, **common
        ),
        "single_block_marginal_risk": single_block.marginal_risk(priors, rho, **common),
        "single_block_correct_decision_probability": single_block.correct_decision_probability(
            priors, rho, tie_rule=tie_rule, **common
        ),
    }
    return measures, {
        k: np.broadcast_to(v, results[0].omitted_mass.shape) for k, v in alongside.items()
    }


def _dataset(chosen: AttackSetting, measures, alongside, dims, coords, true_count, tie_rule):
    """The curves' Dataset: measures over ``dims``, comparisons over ``dims[1:]``, the setting."""
    data = {name: (dims, value) for name, value in measures.items()}
    data.update({name: (dims[1:], value) for name, value in alongside.items()})
    attrs = {
        "d": chosen.d,
        "x2": chosen.x2,
        "known_count": chosen.known,
        "true_count": int(true_count_of(chosen.known, true_count)),
        "convention": "mechanism" if chosen.mechanism is not None else str(chosen.convention),
        "exact_sum": int(bool(chosen.exact_sum)),
        "tail_mass": float(chosen.tail_mass),
        "tie_rule": tie_rule,
        "source": "Kazan & Reiter (2023), supplement S6, (S6.8) and Figure 6",
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def marginal_by_x2_tilde(
    x2_tildes=None,
    *,
    prior=0.5,
    rho=None,
    d: int = 27,
    x2: int = 1,
    known_count: int = 0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
) -> xr.Dataset:
    """S6's Figure 6, left panel: the measures with post-processing against ``x̃2``.

    ``x2_tildes`` default ``1 … 100``; ``rho`` default the 2020 block-level
    detailed query's ρ1 ≈ 0.0992 (the paper's convention); ``prior`` a number
    or 1-d sequence of p (default 1/2, as S6); ``d = 27`` (S6 does not state
    d; the case study's), ``x2 = 1`` known, ``m = 0``, truth ``x1 = m + 1``.

    Returns a Dataset over ``(x2_tilde, prior)`` with the measures of
    :class:`PostProcessedMarginals` and, over ``prior`` alone, the two
    comparisons: ``unprocessed_marginal_risk`` (the same adversary seeing
    ``x1*`` and ``y1*``; the bound, :func:`unprocessed_marginal_risk`) and
    ``single_block_marginal_risk`` / ``single_block_correct_decision_probability``
    (an adversary seeing only ``x1*``, (3.4) and (3.6); not a bound, see the
    module docstring). ``mechanism`` replaces ``rho`` and ``convention`` (the
    coordinate ``mechanism`` then labels it instead of ``rho``).
    """
    x2_tildes = (
        np.arange(1, 101) if x2_tildes is None else _one_d(x2_tildes, "x2_tildes", as_counts)
    )
    x2_tildes = [scalar_count(x, "x2_tildes") for x in x2_tildes]
    if mechanism is None:
        rho = _block_rho() if rho is None else rho
        if np.ndim(rho) != 0:
            raise ValueError(f"rho must be a single number here, got {rho!r}")
        noise_variance(rho, convention)
        rho = np.float64(rho)
    else:
        exact_sum = release_noise(rho, convention, mechanism, exact_sum)[2]
    chosen = _setting(d, x2, known_count, convention, exact_sum, tail_mass, mechanism)
    priors = _one_d(prior, "prior", as_probability)
    measures, alongside = _curve(chosen, rho, priors, x2_tildes, true_count, tie_rule)
    coords = {"x2_tilde": x2_tildes, "prior": priors}
    if mechanism is None:
        coords["rho"] = float(rho)
    else:
        coords["mechanism"] = mechanism.label
    dims = ("x2_tilde", "prior")
    return _dataset(chosen, measures, alongside, dims, coords, true_count, tie_rule)


def marginal_by_rho(
    rhos=None,
    *,
    x2_tildes=(1, 10, 100),
    prior=0.5,
    true_count=None,
    tie_rule=DEFAULT_TIE_RULE,
    **setting,
) -> xr.Dataset:
    """S6's Figure 6, right panel: the measures with post-processing against ρ1, per ``x̃2``.

    ``rhos`` default 41 values log-spaced from 0.01 to 1; ``x2_tildes`` default
    ``(1, 10, 100)`` as the figure; the other arguments (``d``, ``x2``,
    ``known_count``, ``convention``, ``exact_sum``, ``tail_mass``) as
    :func:`marginal_by_x2_tilde`, whose defaults they have (not ``mechanism``:
    the curve varies ρ).
    Returns a Dataset over ``(x2_tilde, rho, prior)`` with the measures of
    :class:`PostProcessedMarginals` and, over ``(rho, prior)``, the
    comparisons ``unprocessed_marginal_risk``, ``single_block_marginal_risk``
    and ``single_block_correct_decision_probability``. Attribute
    ``reference_rho`` is the figure's dashed line, ρ1 ≈ 0.0992.
    """
    unknown = sorted(set(setting) - set(_SETTING))
    if unknown or "mechanism" in setting:
        raise ValueError(
            f"{(unknown or ['mechanism'])[0]}: marginal_by_rho takes rhos, x2_tildes, prior, "
            f"true_count, tie_rule and {', '.join(_SETTING[:-1])} (it varies ρ: no mechanism)"
        )
    chosen = _setting(**setting)
    convention = chosen.convention
    rhos = np.geomspace(0.01, 1.0, 41) if rhos is None else _one_d(rhos, "rhos", as_positive)
    x2_tildes = [scalar_count(x, "x2_tildes") for x in _one_d(x2_tildes, "x2_tildes", as_counts)]
    noise_variance(rhos, convention)
    priors = _one_d(prior, "prior", as_probability)
    measures, alongside = _curve(chosen, rhos, priors, x2_tildes, true_count, tie_rule)
    coords = {"x2_tilde": x2_tildes, "rho": rhos, "prior": priors}
    dims = ("x2_tilde", "rho", "prior")
    curves = _dataset(chosen, measures, alongside, dims, coords, true_count, tie_rule)
    return curves.assign_attrs(reference_rho=_block_rho())
