"""The risk of one budget allocation under every attack (issue 24, point 4).

:func:`allocation_risk` builds each attack's case at the allocation's ρ
(:mod:`.cases`) and computes the data holder's measures of Kazan & Reiter
(2023) for each prior ``p`` of the target's cell:

- ``posterior`` — the marginal posterior of the truth (3.3), with the error
  bound ``correct_error`` (the sums' omitted mass bounds both);
- ``ratio`` — the marginal risk (3.4): the expected posterior of the truth
  over releases from it, over its prior (the posterior-to-prior ratio a risk
  profile bounds); ``ratio_error`` its stated error bound
  (:attr:`~adversary.measures.marginal.MarginalMeasures.risk_error_bound`);
- ``correct`` — the probability of a correct decision (3.6);
  ``correct_error`` its error bound.

Every attack's sums are exact (the omitted release mass is the bound) except
``every_query``, whose release grid over nine looks is too large to sum: its
measures are Monte Carlo over 20 000 release sets, the bound 4 standard errors
(``method`` says which).

The reconstruction attack has no prior ``p``: for a block of each size in
``block_sizes`` released as the ten PL 94-171 tables at the allocation's
block ρ, the data holder's expectation over releases from the truth of

- ``reconstructed_share`` — the expected share of the block's records that
  a reconstruction drawn from the posterior gets right (``overlap_share``);
- ``exact_block_rate`` — the probability that the most probable histogram is
  the true block (``map_exact``).

No exact sum over releases is feasible for ten tables (their release grid is
astronomically large), so the cheapest measure with exact posteriors is taken:
each posterior exact over every histogram, averaged over
``reconstruction_replications`` release sets drawn from the truth; the error
bound is 4 standard errors (:data:`~adversary.measures.standard_errors.DEFAULT_SE_MULTIPLE`).
The enumeration grows as ``C(n + 55, 55)`` histograms: sizes above 3 take
minutes, so the default sizes are 1, 2 and 3.

**Default priors** (:data:`DEFAULT_PRIORS`): Kazan & Reiter's (2023) five
priors 1/2, 1/5, 1/10, 1/50 and 1/864 (the last spreads the prior evenly
over the 864 GVHR cells) — those of every shipped case, spanning an adversary
who knows almost nothing to one who is indifferent between two cells.
"""

from __future__ import annotations

import time

import numpy as np
import xarray as xr

from ...measures.standard_errors import DEFAULT_SE_MULTIPLE
from ...noise.conventions import as_convention
from ...scenarios.reconstruction.data_holder import holder_measures
from .cases import ATTACKS, PRIOR_ATTACKS, as_budget, attack_case, reconstruction_case

__all__ = ["DEFAULT_BLOCK_SIZES", "DEFAULT_PRIORS", "allocation_risk", "as_attacks", "as_priors"]

#: Kazan & Reiter's (2023) five priors of the target's cell (module docstring).
DEFAULT_PRIORS = (1 / 2, 1 / 5, 1 / 10, 1 / 50, 1 / 864)
#: Block sizes of the reconstruction attack.
DEFAULT_BLOCK_SIZES = (1, 2, 3)


def as_attacks(attacks) -> tuple[str, ...]:
    """``attacks`` as a tuple of :data:`~.cases.ATTACKS` names (``None``: all; a comma list)."""
    if attacks is None:
        return ATTACKS
    if isinstance(attacks, str):
        attacks = [a.strip() for a in attacks.split(",")]
    chosen = tuple(attacks)
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown or not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(
            f"attacks must be distinct names among {', '.join(ATTACKS)}, got {attacks!r}"
        )
    return chosen


def as_priors(priors) -> tuple[float, ...]:
    """``priors`` as distinct floats strictly between 0 and 1."""
    try:
        values = tuple(float(p) for p in np.atleast_1d(np.asarray(priors, dtype=np.float64)))
    except (TypeError, ValueError):
        raise ValueError(f"priors must be numbers in (0, 1), got {priors!r}") from None
    if not values or not all(0.0 < p < 1.0 for p in values) or len(set(values)) != len(values):
        raise ValueError(f"priors must be distinct numbers strictly in (0, 1), got {priors!r}")
    return values


def _sizes(block_sizes) -> tuple[int, ...]:
    sizes = tuple(block_sizes)
    if not sizes or any(
        isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1 for n in sizes
    ):
        raise ValueError(f"block_sizes must be positive integers, got {block_sizes!r}")
    return tuple(int(n) for n in sizes)


def _prior_measures(attack, allocation, priors, convention):
    case = attack_case(attack, allocation, priors, convention)
    rows = [case.marginal_measures(label) for label in case.priors]
    return (
        [m.marginal_posterior for m in rows],
        [m.marginal_risk for m in rows],
        [m.risk_error_bound for m in rows],
        [m.correct_decision_probability for m in rows],
        [m.error_bound for m in rows],
        rows[0].method,
    )


def _reconstruction(allocation, sizes, convention, replications, seed):
    out = {k: [] for k in ("overlap_share", "map_exact")}
    errors = {k: [] for k in out}
    for n in sizes:
        measures = holder_measures(
            reconstruction_case(n, allocation, convention),
            replications=replications,
            method="exact",
            releases="sampled",
            seed=seed,
        )
        for key in out:
            out[key].append(measures[key]["mean"])
            errors[key].append(DEFAULT_SE_MULTIPLE * measures[key]["standard_error"])
    return out, errors


def allocation_risk(
    allocation,
    *,
    attacks=None,
    priors=DEFAULT_PRIORS,
    convention: str = "das",
    block_sizes=DEFAULT_BLOCK_SIZES,
    reconstruction_replications: int = 20,
    seed: int = 0,
) -> xr.Dataset:
    """Every chosen attack's measures at ``allocation`` (module docstring).

    Parameters
    ----------
    allocation : BudgetAllocation or str
        The allocation, or a preset's name (:func:`adversary.budget.get_preset`).
    attacks : sequence of str or str, optional
        Names among :data:`~.cases.ATTACKS` (a comma-separated string is
        accepted); default all.
    priors : sequence of float
        The adversary's prior ``p`` of the target's cell, each in (0, 1).
    convention : {"das", "paper"}
        Noise convention: ``σ² = 1/ρ`` (DAS) or ``1/(2ρ)`` (the paper's).
    block_sizes, reconstruction_replications, seed
        The reconstruction attack's block sizes, release sets and seed.

    Returns
    -------
    xarray.Dataset
        ``posterior``, ``ratio``, ``ratio_error``, ``correct``, ``correct_error`` over
        ``("attack", "prior")`` and ``method`` over ``attack`` for the attacks
        with a prior; ``reconstructed_share``, ``exact_block_rate`` and their
        ``*_error`` over ``block_size`` when ``"reconstruction"`` is chosen.
        ``attrs``: the allocation's name and total ρ, the convention, and
        ``seconds_<attack>``, the wall-clock of each attack.
    """
    allocation = as_budget(allocation)
    chosen = as_attacks(attacks)
    priors = as_priors(priors)
    convention = str(as_convention(convention).value)
    with_prior = [a for a in chosen if a in PRIOR_ATTACKS]
    attrs = {
        "allocation": allocation.name,
        "rho_total": float(allocation.rho_total),
        "convention": convention,
    }
    rows, methods = [], []
    for attack in with_prior:
        began = time.perf_counter()
        *values, method = _prior_measures(attack, allocation, priors, convention)
        rows.append(values)
        methods.append(method)
        attrs[f"seconds_{attack}"] = time.perf_counter() - began
    names = ("posterior", "ratio", "ratio_error", "correct", "correct_error")
    table = np.array(rows, dtype=np.float64).reshape(len(with_prior), len(names), len(priors))
    dataset = xr.Dataset(
        {name: (("attack", "prior"), table[:, i]) for i, name in enumerate(names)}
        | {"method": ("attack", np.array(methods, dtype=object))},
        coords={"attack": list(with_prior), "prior": list(priors)},
        attrs=attrs,
    )
    if "reconstruction" in chosen:
        sizes = _sizes(block_sizes)
        began = time.perf_counter()
        means, errors = _reconstruction(
            allocation, sizes, convention, reconstruction_replications, seed
        )
        pairs = (("reconstructed_share", "overlap_share"), ("exact_block_rate", "map_exact"))
        for name, key in pairs:
            dataset[name] = ("block_size", np.array(means[key]))
            dataset[f"{name}_error"] = ("block_size", np.array(errors[key]))
        dataset = dataset.assign_coords(block_size=list(sizes))
        dataset.attrs["seconds_reconstruction"] = time.perf_counter() - began
        dataset.attrs["reconstruction_replications"] = int(reconstruction_replications)
    return dataset
