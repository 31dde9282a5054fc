"""The two evaluators of a frontier study: an allocation's accuracy and its disclosure risk.

:func:`accuracy_evaluator` gives, for an allocation, the analytic accuracy of
the tables TopDown with every query publishes over a geography
(:func:`adversary.topdown.accuracy.analytic_accuracy`: the exact variance of the
least-squares estimates of each metric at each level, their RMSE and MAE) and
one **error score** per metric (``error_score``): the mean over the levels of
the variance relative to a reference allocation's (the 2020 production
allocation scores 1; a level whose reference variance is 0 — a county that is
the whole invariant state — is left out).

:func:`risk_evaluator` gives every chosen attack's measures
(:func:`adversary.analyses.allocation_risk.allocation_risk`) and one **risk
score** per attack (``risk_score``): the largest over the priors of the marginal risk (3.4)
*plus its error bound*, relative to the risk profile's limit at that prior
(≤ 1: within the limit; without a profile the limit is 1, the score the
largest marginal risk); for the reconstruction attack, the largest over block
sizes of the reconstructed share plus its error bound, relative to its bound
(or the share itself): ``reconstruction_score``. Each attack reads the ρ of a
few (level, query) pairs (:data:`ATTACK_INPUTS`); its measures are computed
once per distinct tuple of those ρ, so a family that varies only what an
attack does not read reuses them.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...budget import get_preset
from ...scenarios.reconstruction.classification import PL94_QUERIES
from ...topdown.accuracy import analytic_accuracy
from ..allocation_risk import DEFAULT_PRIORS, allocation_risk
from ..allocation_risk.evaluate import as_attacks
from ..allocation_risk.limits import as_profile, as_reconstruction_bound, reconstruction_limits

__all__ = ["ATTACK_INPUTS", "accuracy_evaluator", "risk_evaluator"]

_SIX_LEVELS = get_preset().levels
#: The ten PL 94-171 tables released at the block (every query but ``hhinstlevels``).
_BLOCK_TABLES = tuple(PL94_QUERIES)

#: The (level, query) pairs whose ρ each attack reads (its cases in ``allocation_risk.cases``).
ATTACK_INPUTS = {
    "single_block": (("block", "detailed"),),
    "unknown_attribute": (("block", "detailed"),),
    "block_group": (("block", "detailed"), ("block_group", "detailed")),
    "published_tables": (("block", "detailed"), ("block_group", "detailed")),
    "many_levels": tuple((level, "detailed") for level in _SIX_LEVELS),
    "every_query": tuple(("block", query) for query in _BLOCK_TABLES),
    "reconstruction": tuple(("block", query) for query in _BLOCK_TABLES),
}


def accuracy_evaluator(geography, reference, **options):
    """``allocation -> Dataset`` of its analytic accuracy and ``error_score`` (module docstring).

    ``geography`` is what :func:`~adversary.topdown.accuracy.analytic_accuracy`
    accepts (a synthetic :class:`~adversary.population.synthetic.Geography` or
    truth tables); ``reference`` the allocation whose variances score 1;
    ``options`` go to ``analytic_accuracy`` (``classification``, ``convention``,
    ``levels``).
    """
    reference_variance = analytic_accuracy(reference, geography, **options)["variance"]
    # a level equal to the invariant state (one county in a small state) has variance 0: unscored
    scored = reference_variance.where(reference_variance > 0)
    if scored.isnull().all("level").any():
        raise ValueError(
            "reference: its analytic variance is 0 at every level for some metric; "
            "choose levels below the invariant state"
        )

    def accuracy(allocation) -> xr.Dataset:
        result = analytic_accuracy(allocation, geography, **options)
        score = (result["variance"] / scored).mean("level", skipna=True)
        return result.assign(error_score=score.reset_coords(drop=True))

    return accuracy


def _limits(profile, reconstruction_bound, priors):
    """The marginal-risk limit at each prior and the reconstruction bound (or ``None``)."""
    if profile is None:
        ratio_limit = np.ones(len(priors))
    else:
        ratio_limit = np.asarray(
            as_profile(profile)(np.asarray(priors, dtype=np.float64)), dtype=np.float64
        )
    bins = None if reconstruction_bound is None else as_reconstruction_bound(reconstruction_bound)
    return ratio_limit, bins


def _reconstruction_score(measures: xr.Dataset, bins) -> float:
    upper = measures["reconstructed_share"] + measures["reconstructed_share_error"]
    if bins is None:
        return float(upper.max())
    limits = reconstruction_limits(measures["block_size"].values, bins)
    return float((upper.values / limits).max())


def risk_evaluator(
    attacks=None,
    priors=DEFAULT_PRIORS,
    *,
    profile=None,
    reconstruction_bound=None,
    convention: str = "das",
    **options,
):
    """``allocation -> Dataset`` of every attack's measures and ``risk_score`` (module docstring).

    ``profile`` is a :class:`~adversary.analyses.allocation_risk.profile.RiskProfile` or
    its spec (``"constant:3"``); ``reconstruction_bound`` the largest acceptable
    reconstructed share by block size (``{1: 0.5, "2-3": 0.3}``); ``options`` go
    to :func:`~adversary.analyses.allocation_risk.allocation_risk`
    (``block_sizes``, ``reconstruction_replications``, ``seed``).
    """
    attacks = as_attacks(attacks)
    priors = tuple(float(p) for p in priors)
    ratio_limit, bins = _limits(profile, reconstruction_bound, priors)
    cache: dict[tuple, xr.Dataset] = {}

    def measures(attack: str, allocation) -> xr.Dataset:
        key = (attack, *(allocation.rho(level, query) for level, query in ATTACK_INPUTS[attack]))
        if key not in cache:
            cache[key] = allocation_risk(
                allocation, attacks=[attack], priors=priors, convention=convention, **options
            )
        return cache[key]

    def risk(allocation) -> xr.Dataset:
        parts = {attack: measures(attack, allocation) for attack in attacks}
        with_prior = [part for attack, part in parts.items() if attack != "reconstruction"]
        merged = xr.Dataset()
        if with_prior:
            merged = xr.concat(with_prior, dim="attack").drop_attrs()
            upper = merged["ratio"] + merged["ratio_error"]
            limit = xr.DataArray(ratio_limit, dims="prior", coords={"prior": merged["prior"]})
            merged["risk_score"] = (upper / limit).max("prior")
        if "reconstruction" in parts:
            shares = parts["reconstruction"].drop_attrs()
            names = [name for name in shares.data_vars if "block_size" in shares[name].dims]
            merged = merged.merge(shares[names], join="exact", compat="equals")
            merged["reconstruction_score"] = _reconstruction_score(parts["reconstruction"], bins)
        return merged

    return risk
