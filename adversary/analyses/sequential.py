"""Sequential releases of one count: Kazan & Reiter (2023), supplement S5.

The single-block adversary of Sec. 3.1 (``X1 ∈ {m, m+1}``, ``P[X1 = m+1] = p``)
sees m releases ``x*_{11}, …, x*_{1m}`` of the same count, release j made with
its own ρ_j (and noise convention), ``x*_{1j} = x1 + Z_j``, ``Z_j ~ DG(0, σ_j²)``
independent and not depending on the earlier releases.

**Updated prior (S5.4).** After releases 1..j-1 the adversary's prior for
release j is their posterior so far; release j updates it exactly as (3.1)
does the original prior. In odds, ``posterior odds_j = odds_{j-1} · Λ_j`` with
``log Λ_j = (2(x*_{1j} - m) - 1)/(2σ_j²)``
(:func:`adversary.scenarios.single_block.log_likelihood_ratio`), so the log
odds are carried from release to release (no rounding to a probability of 0
or 1 in between).

**Risks (S5.2), (S5.7)–(S5.8).** The conditional risk of release j is
``R'(x*_{1j} | earlier) = P[X1 = x1 | releases 1..j] / P[X1 = x1 | releases 1..j-1]``
and the total risk of releases 1..j is the product of the conditional risks,
which telescopes to ``P[X1 = x1 | releases 1..j] / P[X1 = x1]`` (S5.5), the
risk of one joint look at all of them. The total does not depend on the order
of the releases; the conditional risks do.

**Marginals over releases.** m releases of one count, ``x*_{1j} = m + T + Z_j``,
are the ℓ-level attack of S1.3 (:mod:`adversary.scenarios.multi_level`) with
ℓ = m levels whose known counts are all equal (``m_i = m``) and whose ρ are
the releases' ρ. So the data holder's marginal posterior, marginal total risk
(the expectation of the product (S5.8) over releases from the truth) and the
probability that the decision after all releases is right are
:func:`adversary.scenarios.multi_level.marginals`, with its error bounds; a
release made under the DAS convention enters as the paper-convention
``ρ = 1/(2σ²)`` of its noise. Note that the expectation of the product is not
the product of the expected conditional risks.

Arrays of releases and per-release ρ have the releases on their **last axis**
(release 1 first); priors and counts broadcast against the other axes.

**Other noise.** Each function takes ``mechanism=`` instead of ``rhos`` and
``convention``: one :class:`~adversary.noise.mechanisms.NoiseMechanism` per
release (or one for every release where the releases fix their number).
Discrete Gaussians give the same numbers as the ρ that produce their σ²; for
other noise release j multiplies the odds by
``P_j[x*_{1j} - m - 1] / P_j[x*_{1j} - m]``, which bounded noise can make 0 or
infinite (the posterior is then settled: a later release cannot move it, and
its conditional risk is 1). Releases that contradict each other (one proves
``m + 1``, another ``m``) raise ``ValueError``. The privacy budget the releases
spend together, :func:`composed_rho`, needs every mechanism to be zCDP.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import xarray as xr
from scipy import special

from .._validation import as_counts, as_integers, as_positive, as_probability, nonempty_last_axis
from ..measures.decision import DEFAULT_TIE_RULE
from ..measures.noise import (
    impossible_release_error,
    log_ratio,
    mechanism_label,
    mechanism_tuple,
    resolve_many,
)
from ..measures.releases import DEFAULT_TAIL_MASS
from ..noise import noise_variance
from ..scenarios import multi_level, single_block

__all__ = [
    "SequentialRisk",
    "composed_rho",
    "marginal_by_releases",
    "marginals",
    "paper_rhos",
    "sequential_risk",
    "updated_case",
    "updated_prior",
]


# --- inputs ------------------------------------------------------------------------------


def paper_rhos(rhos, convention="paper") -> np.ndarray:
    """Per-release ρ in the paper's convention, ``1/(2σ_j²)``, releases on the last axis.

    ``convention`` is one name for every release or a sequence with one name
    per release (e.g. ``("paper", "das")``): a DAS release with ρ has
    ``σ² = 1/ρ``, the paper's noise for ``ρ/2``.
    """
    rhos = as_positive(rhos, "rhos")
    if rhos.ndim == 0:
        rhos = rhos[None]
    if isinstance(convention, str) or np.ndim(convention) == 0:
        sigma2 = noise_variance(rhos, convention)
    else:
        conventions = list(convention)
        if len(conventions) != rhos.shape[-1]:
            raise ValueError(
                f"convention must be one name or one per release ({rhos.shape[-1]} from rhos), "
                f"got {convention!r}"
            )
        columns = [noise_variance(rhos[..., j], c) for j, c in enumerate(conventions)]
        sigma2 = np.stack(columns, axis=-1)
    return 1.0 / (2.0 * sigma2)


def composed_rho(mechanism) -> float:
    """The zCDP ρ of all the releases together: ``Σ_j ρ_j`` (zCDP composes by adding ρ).

    ``mechanism`` is a sequence of :class:`~adversary.noise.mechanisms.NoiseMechanism`
    (one per release). Each must be ρ-zCDP
    (:meth:`~adversary.noise.mechanisms.NoiseMechanism.zcdp_rho`): bounded noise
    (truncated geometric, cell key, a finite table) is not, and is refused.
    """
    mechanisms = mechanism_tuple(mechanism)
    total = 0.0
    for j, m in enumerate(mechanisms, start=1):
        rho = m.zcdp_rho()
        if rho is None:
            raise ValueError(
                f"mechanism: release {j} ({m.label}) is not zCDP (bounded noise gives no "
                "zCDP or pure-DP guarantee), so the releases have no composed rho"
            )
        total += rho
    return total


def _releases(releases) -> np.ndarray:
    releases = as_integers(releases, "releases")
    return nonempty_last_axis(releases, "releases", "at least one noisy count")


def _truth_has_c(known, true_count) -> np.ndarray:
    if true_count is None:
        return np.ones(np.shape(known), dtype=bool)
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known) & (truth != known + 1)):
        raise ValueError(
            f"true_count must equal known_count or known_count + 1, got true_count={true_count!r}"
            f" with known_count={known!r}"
        )
    return truth == known + 1


# --- the adversary's view of m releases (S5.1)–(S5.8) -----------------------------------


def updated_prior(
    release, prior, rho=None, known_count=0, convention="paper", *, mechanism=None
) -> np.ndarray:
    """The adversary's prior ``P[X1 = m+1]`` for the next release after seeing ``release``, (S5.4).

    Their posterior (3.1) after one release; chaining it release by release
    gives the posterior after all of them. Broadcasts its arguments.
    """
    return single_block.posterior(
        release, prior, rho, known_count, None, convention, mechanism=mechanism
    )


def updated_case(case, release, rho=None, mechanism=None):
    """A :class:`~adversary.scenarios.single_block.SingleBlockCase` for the next release, (S5.4).

    Every prior of ``case`` is replaced by the adversary's posterior after
    ``release`` (made with the case's noise: its ρ and convention, or its
    mechanism); ``rho`` or ``mechanism``, if given, is the next release's
    noise. The case's other fields are kept.
    """
    if rho is not None and mechanism is not None:
        raise ValueError("rho: give the next release's rho or mechanism, not both")
    priors = {
        label: float(
            updated_prior(
                release, p, case.rho, case.known_count, case.convention, mechanism=case.mechanism
            )
        )
        for label, p in case.priors.items()
    }
    changes = {"priors": priors}
    if rho is not None:
        changes.update(rho=float(rho), mechanism=None)
    if mechanism is not None:
        changes.update(rho=None, mechanism=mechanism)
    return replace(case, **changes)


@dataclass(frozen=True)
class SequentialRisk:
    """The adversary's view after each of m releases, for a truth (S5).

    Arrays have the broadcast shape of the cases with a last axis over the
    releases ``j = 1 … m``.

    Attributes
    ----------
    prior_of_truth
        ``P[X1 = x1]`` before any release (no release axis).
    updated_priors
        ``P[X1 = x1 | releases 1..j-1]``: the prior of the truth for release j (S5.4).
    posteriors
        ``P[X1 = x1 | releases 1..j]``.
    conditional_risks
        ``R'(x*_{1j} | x*_{11}, …, x*_{1,j-1})`` (S5.1)–(S5.2): ``posteriors / updated_priors``.
    total_risks
        ``R'(x*_{11}, …, x*_{1j})``, the product of the first j conditional
        risks (S5.7)–(S5.8); equals ``posteriors / prior_of_truth`` (S5.5).
    """

    prior_of_truth: np.ndarray
    updated_priors: np.ndarray
    posteriors: np.ndarray
    conditional_risks: np.ndarray
    total_risks: np.ndarray

    @property
    def total_risk(self) -> np.ndarray:
        """``R'`` of all m releases (S5.8)."""
        return self.total_risks[..., -1]

    @property
    def posterior(self) -> np.ndarray:
        """The posterior of the truth after all m releases."""
        return self.posteriors[..., -1]


def sequential_risk(
    releases,
    prior,
    rhos=None,
    known_count=0,
    true_count=None,
    convention="paper",
    *,
    mechanism=None,
) -> SequentialRisk:
    """Posteriors, conditional risks and total risks after each of m releases, (S5.1)–(S5.8).

    ``releases`` holds ``x*_{11}, …, x*_{1m}`` on its last axis; ``rhos`` one ρ
    (every release) or one per release on the last axis; ``convention`` one
    name or one per release (:func:`paper_rhos`); ``prior`` is ``p =
    P[X1 = m+1]``; ``true_count`` the data holder's ``x1`` (default ``m + 1``).
    Release j's prior is the posterior after the releases before it (S5.4),
    carried as log odds; each release multiplies the odds of ``m + 1`` by its
    likelihood ratio. The conditional and total risks are formed in log space.
    ``mechanism`` (one per release, or one for all) replaces ``rhos`` and
    ``convention`` (module docstring).
    """
    releases = _releases(releases)
    prior = as_probability(prior, "prior")
    known = as_counts(known_count, "known_count")
    has_c = _truth_has_c(known, true_count)
    a, mechanisms = _paper_rhos_or_mechanisms(rhos, convention, mechanism, releases.shape[-1])
    if mechanisms is not None:
        return _mechanism_sequential_risk(releases, prior, known, has_c, mechanisms)
    if a.shape[-1] not in (1, releases.shape[-1]):
        raise ValueError(
            f"rhos must be one ρ or one per release on the last axis ({releases.shape[-1]} "
            f"releases), got shape {a.shape}"
        )
    # log Λ_j = (2(x*_{1j} - m) - 1)/(2σ_j²), the single-block ratio of each release.
    log_ratio = (2.0 * (releases - known[..., None]).astype(np.float64) - 1.0) * a
    sign = np.where(has_c, 1.0, -1.0)[..., None]
    start = special.logit(prior)[..., None]
    log_odds = start + np.cumsum(log_ratio, axis=-1)  # of m + 1, after releases 1..j
    before = np.concatenate(
        [np.broadcast_to(start, (*log_odds.shape[:-1], 1)), log_odds[..., :-1]], axis=-1
    )
    # log P[truth] = log expit(±log odds) = -log(1 + e^{∓log odds}).
    log_after = -np.logaddexp(0.0, -sign * log_odds)
    log_before = -np.logaddexp(0.0, -sign * before)
    log_prior = log_before[..., :1]
    return SequentialRisk(
        prior_of_truth=np.exp(log_prior[..., 0]),
        updated_priors=np.exp(log_before),
        posteriors=np.exp(log_after),
        conditional_risks=np.exp(log_after - log_before),
        total_risks=np.exp(np.cumsum(log_after - log_before, axis=-1)),
    )


def _paper_rhos_or_mechanisms(rhos, convention, mechanism, n=None):
    """``(1/(2σ_j²), None)`` for discrete Gaussians (ρ or mechanism), else ``(None, mechs)``."""
    if mechanism is None:
        if rhos is None:
            raise ValueError("rhos: give rhos (with convention) or mechanism")
        return paper_rhos(rhos, convention), None
    sigma2, mechanisms = resolve_many(rhos, convention, mechanism, n, "rhos")
    if mechanisms is None:
        return 1.0 / (2.0 * sigma2), None
    return None, mechanisms


def _mechanism_sequential_risk(releases, prior, known, has_c, mechanisms) -> SequentialRisk:
    """:func:`sequential_risk` for one mechanism per release (any noise)."""
    if releases.shape[-1] != len(mechanisms):
        raise ValueError(
            f"mechanism must hold one mechanism per release ({releases.shape[-1]}), "
            f"got {len(mechanisms)}"
        )
    noise = releases - known[..., None]
    log_ratios = np.stack(
        [
            log_ratio(m.logpmf(noise[..., j] - 1), m.logpmf(noise[..., j]))
            for j, m in enumerate(mechanisms)
        ],
        axis=-1,
    )
    sign = np.where(has_c, 1.0, -1.0)[..., None]
    start = special.logit(prior)[..., None]
    with np.errstate(invalid="ignore"):
        log_odds = start + np.cumsum(log_ratios, axis=-1)
    impossible = np.isnan(log_odds)
    if np.any(impossible):
        rows = np.broadcast_to(releases, log_odds.shape)[np.any(impossible, axis=-1)]
        raise impossible_release_error("releases", rows.tolist(), mechanisms)
    before = np.concatenate(
        [np.broadcast_to(start, (*log_odds.shape[:-1], 1)), log_odds[..., :-1]], axis=-1
    )
    log_after = -np.logaddexp(0.0, -sign * log_odds)
    log_before = -np.logaddexp(0.0, -sign * before)
    log_prior = log_before[..., :1]
    settled = np.isneginf(log_after) & np.isneginf(log_before)  # ruled out already: ratio 1
    with np.errstate(invalid="ignore"):
        conditional = np.where(settled, 0.0, log_after - log_before)
    return SequentialRisk(
        prior_of_truth=np.exp(log_prior[..., 0]),
        updated_priors=np.exp(log_before),
        posteriors=np.exp(log_after),
        conditional_risks=np.exp(conditional),
        total_risks=np.exp(log_after - log_prior),
    )


# --- the data holder's view: marginal over releases from the truth ----------------------


def marginals(
    prior,
    rhos=None,
    known_count=0,
    true_count=None,
    convention="paper",
    tail_mass=DEFAULT_TAIL_MASS,
    grid_width=multi_level.DEFAULT_GRID_WIDTH,
    *,
    mechanism=None,
    tie_rule=DEFAULT_TIE_RULE,
) -> multi_level.MultiLevelMarginals:
    """Marginal posterior, marginal total risk and correct-decision probability of m releases.

    The expectation over ``x*_{1j} = x1 + Z_j`` of the posterior after all m
    releases, of the total risk (S5.8) and of the decision (3.5) from all of
    them being right. m releases of one count are the ℓ-level attack with
    ℓ = m and every known count ``m``, so this is
    :func:`adversary.scenarios.multi_level.marginals` with the releases' ρ in
    the paper's convention (:func:`paper_rhos`), with its error bounds.
    ``rhos`` has the releases on its last axis. ``mechanism`` (one per
    release) replaces ``rhos`` and ``convention``. Releases of equal ρ tie the
    decision with positive probability; ``tie_rule`` counts the ties
    (:mod:`adversary.measures.decision`).
    """
    a, mechanisms = _paper_rhos_or_mechanisms(rhos, convention, mechanism)
    known = as_counts(known_count, "known_count")
    return multi_level.marginals(
        prior,
        None if mechanisms is not None else a,
        known,
        true_count,
        "paper",
        tail_mass=tail_mass,
        grid_width=grid_width,
        mechanism=mechanisms,
        tie_rule=tie_rule,
    )


def marginal_by_releases(
    priors, rhos=None, *, convention="paper", mechanism=None, **common
) -> xr.Dataset:
    """The marginal measures after 1, 2, …, m releases, as a Dataset over ``(releases, prior)``.

    ``rhos`` is a 1-d sequence of the releases' ρ (``convention`` one name or
    one per release). Computed by
    :func:`adversary.scenarios.multi_level.marginal_by_levels` (every prefix
    of the releases in one pass); its ``levels`` axis is renamed ``releases``
    and ``rho`` holds the releases' ρ as given. With ``mechanism`` (one per
    release) instead, the coordinate ``mechanism`` labels each release's noise
    (and ``paper_rho`` holds ``1/(2σ²)`` when they are all discrete Gaussians).
    The other keyword arguments — ``known_count``, ``true_count``,
    ``tail_mass``, ``grid_width`` and ``tie_rule`` (how tied decisions count,
    :mod:`adversary.measures.decision`) — are those of :func:`marginals`,
    passed on as they are.
    """
    if mechanism is not None:
        return _mechanism_curve(priors, rhos, mechanism, common)
    rhos = as_positive(rhos, "rhos")
    if rhos.ndim != 1:
        raise ValueError(f"rhos must be a 1-d sequence of per-release ρ, got shape {rhos.shape}")
    a = paper_rhos(rhos, convention)
    curve = multi_level.marginal_by_levels(priors, a, convention="paper", **common)
    curve = curve.rename({"levels": "releases"}).assign_coords(
        rho=("releases", rhos), paper_rho=("releases", a)
    )
    conventions = [convention] * rhos.size if isinstance(convention, str) else list(convention)
    curve = curve.assign_coords(convention=("releases", [str(c) for c in conventions]))
    curve.attrs.update(
        convention=", ".join(str(c) for c in conventions),
        source="Kazan & Reiter (2023), supplement S5 (as the l-level attack of S1.3)",
    )
    return curve


def _mechanism_curve(priors, rhos, mechanism, common):
    """:func:`marginal_by_releases` for one mechanism per release (``common``: its options)."""
    a, mechanisms = _paper_rhos_or_mechanisms(rhos, "paper", mechanism)
    if mechanisms is None:
        curve = multi_level.marginal_by_levels(priors, a, convention="paper", **common)
        curve = curve.drop_vars("rho").assign_coords(paper_rho=("levels", a))
    else:
        curve = multi_level.marginal_by_levels(priors, mechanism=mechanisms, **common)
    labels = [m.label for m in mechanism_tuple(mechanism)]
    curve = curve.rename({"levels": "releases"}).assign_coords(mechanism=("releases", labels))
    curve.attrs.update(
        convention="mechanism",
        mechanism=mechanism_label(mechanism_tuple(mechanism)),
        source="Kazan & Reiter (2023), supplement S5 (as the l-level attack of S1.3)",
    )
    return curve
