"""The block-group attack's data-holder measures for many truths from one decision map.

The adversary's posterior at a release ``(x1*, x2*, y1*)`` depends on the
release, ``d``, the ρ's and the prior — not on the truth. Under the paper's
improper uniform prior of ``X2 | X1`` (S3.3), which depends on ``k2 - k1``
only, it depends on the known count ``m`` only through the shift
``(u, v) = (x1* - m, x2* - m)``: with ``j = k2 - k1``,

    S_m(x2*, y1*) = Σ_{j ≥ 0} N2(v - j) Ny(y1* - j) = T(v, y1*),
    S_{m+1}(x2*, y1*) = T(v - 1, y1*),

so the log odds (see :mod:`.releases`) are a function
``λ(u, v, y1*)``. The target's truth is ``x1 = m + 1`` and ``x2``, i.e.
``u ~ 1 + Z1``, ``v ~ t + Z2`` and ``y1* ~ t - 1 + Zy`` with ``t = x2 - m``:
the measures depend on the truth through ``t`` alone, and

    E_t[g(λ)] = Σ_{v, y} N2(v - t) Ny(y - t + 1) C_g(v, y),
    C_g(v, y) = Σ_u N1(u - 1) g(λ(u, v, y)),

where ``C_g`` (``g`` the posterior of the truth, or the decision's credit) is
one map for every truth. :func:`measures_by_truth` computes ``log S`` once per
``(d, ρ1, ρ2)`` on a release grid covering every ``t`` asked for, each
prior's ``C_g`` from it, and each truth's measures as the small bilinear form
above — over the same releases as :func:`.releases.release_measures`
for that truth, so the numbers agree with it to rounding (the shared ``k2``
window may be wider: more of a negligible tail). Truths far apart are split
into groups of at most :data:`MAX_SPAN` so that no map grows with the spread
of the data.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..._validation import as_probability
from ...measures.decision import DEFAULT_TIE_RULE, binary_credit, check_tie_rule
from ...memory import affordable_rows
from .releases import _reach, log_sums, x1_log_ratio
from .setting import attack_setting

__all__ = ["MAX_SPAN", "maps_apply", "measures_by_truth"]

#: Widest range of ``t = x2 - m`` one map covers.
MAX_SPAN = 256


def maps_apply(x2_prior, noise) -> bool:
    """Whether one map serves every truth: the improper uniform ``X2`` prior, Gaussian noise."""
    return x2_prior.kind == "improper_uniform" and noise.gaussian


def measures_by_truth(offsets, *, priors, tie_rule=DEFAULT_TIE_RULE, **setting) -> dict:
    """Marginal posterior, risk (3.3)–(3.4) and P[correct] (3.6) for many truths, many priors.

    ``offsets``: ``t = x2 - m ≥ 1`` of each truth ``(x1, x2) = (m + 1, x2)``;
    ``priors``: the p of each prior; ``setting``: the keyword arguments of
    :func:`~.setting.attack_setting` but ``prior`` and ``known_count``
    (which cannot change the measures). Returns arrays of shape
    ``(priors, truths)``: ``marginal_posterior``, ``marginal_risk``,
    ``correct_decision_probability``, and ``omitted_mass`` (per truth).
    Refuses a setting one map cannot serve (:func:`maps_apply`).
    """
    check_tie_rule(tie_rule)
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size == 0 or np.any(offsets < 1):
        raise ValueError(f"offsets must be a 1-d sequence of x2 - m >= 1, got {offsets!r}")
    priors = np.atleast_1d(as_probability(priors, "priors")).astype(np.float64)
    chosen = attack_setting(prior=0.5, known_count=0, **setting)
    if not maps_apply(chosen.x2_prior, chosen.noise):
        raise ValueError(
            "x2_prior: one decision map serves every truth only under the improper uniform "
            "prior of X2 with discrete Gaussian noise; use release_measures per truth"
        )
    out = {
        name: np.empty((priors.size, offsets.size))
        for name in ("marginal_posterior", "correct_decision_probability")
    }
    order = np.argsort(offsets, kind="stable")
    for group in _groups(offsets[order]):
        columns = order[group]
        part = _Map(offsets[columns], chosen, tie_rule).measures(priors)
        for name in out:
            out[name][:, columns] = part[name]
    out["marginal_risk"] = out["marginal_posterior"] / priors[:, None]
    omitted = chosen.tail_mass + getattr(chosen.noise.sum_noise, "omitted_mass", 0.0)
    out["omitted_mass"] = np.full(offsets.size, omitted)
    return out


def _groups(sorted_offsets: np.ndarray) -> list[np.ndarray]:
    """Positions of consecutive runs of the sorted offsets, each spanning at most MAX_SPAN."""
    groups, start = [], 0
    for i in range(1, sorted_offsets.size + 1):
        if i == sorted_offsets.size or sorted_offsets[i] - sorted_offsets[start] >= MAX_SPAN:
            groups.append(np.arange(start, i))
            start = i
    return groups


class _Map:
    """``log S`` on a grid covering the truths ``t`` of ``offsets`` (module docstring)."""

    def __init__(self, offsets: np.ndarray, setting, tie_rule: str):
        self.noise, self.tie_rule, self.offsets = setting.noise, tie_rule, offsets
        k1, k2, y_noise = _reach(self.noise, setting.tail_mass)
        self.y_noise = np.array(y_noise)
        low, high = int(offsets.min()), int(offsets.max())
        z1 = np.arange(-k1, k1 + 1)
        self.grid = {
            "x1_release": 1 + z1,
            "x2_release": np.arange(low - k2, high + k2 + 1),
            "y1_release": np.arange(low - 1 + y_noise.start, high - 1 + y_noise.stop),
        }
        self.x1_weights = self.noise.block.pmf(z1)
        self.x2_weights = self.noise.group.pmf(np.arange(-k2, k2 + 1))
        self.y1_weights = np.exp(self.noise.logpmf_others(self.y_noise))
        _, (log_s0, log_s1) = log_sums(
            self.grid, self.noise, setting.x2_prior, 0, setting.tail_mass
        )
        self.starts2 = offsets - k2 - self.grid["x2_release"][0]
        self.starts_y = offsets - 1 + self.y_noise[0] - self.grid["y1_release"][0]
        # Releases far from every truth (x2* and y1* of different truths) can underflow both
        # sums; no truth weighs them, so they are set aside rather than computed.
        used = np.zeros(log_s0.shape, dtype=bool)
        for a, b in zip(self.starts2, self.starts_y, strict=True):
            used[a : a + self.x2_weights.size, b : b + self.y1_weights.size] = True
        self.plane, self.used = used.shape, np.flatnonzero(used)
        with np.errstate(invalid="ignore"):
            self.log_s_ratio = (log_s1 - log_s0).reshape(-1)[self.used]
        self.x1_evidence = x1_log_ratio(self.grid["x1_release"], self.noise, 0)

    def _summed_over_x1(self, p: float) -> tuple[np.ndarray, np.ndarray]:
        """``C_g(v, y)`` for the posterior of the truth and the decision's credit, prior ``p``.

        Only on releases some truth weighs (0 elsewhere).
        """
        n1, cells = self.x1_evidence.size, self.used.size
        posterior, credit = np.zeros(cells), np.zeros(cells)
        rows = affordable_rows(8.0 * 4 * cells, n1, "the block group's decision map")
        for first in range(0, n1, rows):
            mine = slice(first, first + rows)
            log_odds = special.logit(p) + self.x1_evidence[mine, None] + self.log_s_ratio[None]
            if np.any(np.isnan(log_odds)):
                raise ValueError("x2_prior: some releases are impossible under both values of X1")
            weights = self.x1_weights[mine]
            posterior += weights @ special.expit(log_odds)
            credit += weights @ binary_credit(log_odds, True, self.tie_rule)
        planes = np.zeros((2, math.prod(self.plane)))
        planes[0, self.used], planes[1, self.used] = posterior, credit
        return planes[0].reshape(self.plane), planes[1].reshape(self.plane)

    def measures(self, priors: np.ndarray) -> dict:
        """Each prior's measures for each truth: ``N2(· - t)ᵀ C_g Ny(· - t + 1)``."""
        n2, ny = self.x2_weights.size, self.y1_weights.size
        out = {
            name: np.empty((priors.size, self.offsets.size))
            for name in ("marginal_posterior", "correct_decision_probability")
        }
        for i, p in enumerate(priors):
            maps = dict(
                zip(
                    ("marginal_posterior", "correct_decision_probability"),
                    self._summed_over_x1(float(p)),
                    strict=True,
                )
            )
            for name, plane in maps.items():
                for j, (a, b) in enumerate(zip(self.starts2, self.starts_y, strict=True)):
                    window = plane[a : a + n2, b : b + ny]
                    out[name][i, j] = self.x2_weights @ window @ self.y1_weights
        return out
