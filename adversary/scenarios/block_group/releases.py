"""The block-group attack from the data holder's side: every release, at once.

For a known truth ``(x1, x2, y1 = x2 - x1)`` the releases ``(x1*, x2*, y1*)``
have probability ``P[x1* | x1] P[x2* | x2] P[y1* | y1]``. For each release the
adversary's posterior of ``X1`` (S3.4, summed over ``X2``) has log odds

    logit P[X1 = m+1 | r] = logit p + log N1(x1* - m - 1) - log N1(x1* - m)
                            + log S_{m+1}(x2*, y1*) - log S_m(x2*, y1*),

    S_k1(x2*, y1*) = Σ_{k2 ≥ k1} P[X2 = k2 | X1 = k1] N2(x2* - k2) Ny(y1* + k1 - k2),

so the whole release grid costs two small matrix products (over ``k2``) and
one broadcast over ``x1*``, instead of a sum over a five-dimensional
``(x1*, x2*, y1*, X1, X2)`` grid. :func:`decision_map` returns, for every
release on the grid, its probability, the adversary's posterior and 0-1
decision with and without the block group (Kazan & Reiter's Figure 4), and
the marginal measures (3.3), (3.4), (3.6) in its attributes.

Cut-offs: each release's noise is summed over ``[-K, K]`` with ``K`` from
:func:`~adversary.noise.discrete_gaussian.cutoff` at ``tail_mass / 3``, so the
grid leaves out at most ``tail_mass`` of release probability (for the exact
sum noise, its table's omitted mass is added). The ``k2`` window is grown
until, at every release, the log-concave tail beyond it is below
``tail_mass`` relative to ``S`` (as in :func:`.exact_posterior.posterior`).

**Other noise** (``mechanism``, see :mod:`.noise_laws`): each release's noise
is its mechanism's table (the whole support for bounded noise), the single
block's log odds are ``logpmf(x1* - m - 1) - logpmf(x1* - m)`` (``±inf`` where
bounded noise settles ``X1``), the ``k2`` window is exact (the tabulated sum
``Zy`` bounds it), and ``omitted_mass`` is the release probability the tables
actually leave out (0 for bounded noise, up to the FFT rounding of a long sum).
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr
from scipy import special

from ..._validation import as_counts
from ...measures.decision import DEFAULT_TIE_RULE, TIE_TOLERANCE, binary_credit, check_tie_rule
from ...measures.noise import log_ratio
from ...measures.releases import DEFAULT_TAIL_MASS
from ...memory import affordable_rows, check_memory
from ...noise import discrete_gaussian
from ...noise.finite_pmf import FinitePmf
from ...time_budget import timed_blocks
from .exact_posterior import exact_k2_window
from .noise_laws import BlockGroupNoise
from .prior import BlockGroupPrior
from .setting import attack_setting

__all__ = ["decision_map", "log_sums", "release_grid", "release_measures", "x1_log_ratio"]


def _cutoff(mechanism, share: float) -> int:
    """The noise cut-off: the whole support of bounded noise (outside the DG path)."""
    if mechanism.bounded:
        return mechanism.cutoff(0.0)
    return int(mechanism.cutoff(share))


def _reach(noise: BlockGroupNoise, tail_mass: float) -> tuple[int, int, range]:
    """Cut-offs ``K1``, ``K2`` and the ``y1*`` noise range, each leaving ``tail_mass / 3``."""
    share = tail_mass / 3.0
    if noise.gaussian:
        k1 = int(discrete_gaussian.cutoff(noise.sigma2_block, share))
        k2 = int(discrete_gaussian.cutoff(noise.sigma2_group, share))
    else:
        k1, k2 = _cutoff(noise.block, share), _cutoff(noise.group, share)
    if isinstance(noise.sum_noise, FinitePmf):
        table = noise.sum_noise
        if not noise.gaussian and noise.block.bounded:
            return k1, k2, range(table.start, table.start + table.probabilities.size)
        # Each tail summed from its own end: a cumulative sum from the bottom cannot resolve
        # 1 - share/2 (its rounding is as large as share), and a table convolved by FFT can
        # end in zeros.
        probabilities = table.probabilities
        low = int(np.searchsorted(np.cumsum(probabilities), share / 2.0))
        above = int(np.searchsorted(np.cumsum(probabilities[::-1]), share / 2.0))
        high = probabilities.size - 1 - above
        return k1, k2, range(table.start + low, table.start + high + 1)
    ky = int(discrete_gaussian.cutoff(noise.sum_noise, share))
    return k1, k2, range(-ky, ky + 1)


def release_grid(truth, noise: BlockGroupNoise, tail_mass: float = DEFAULT_TAIL_MASS) -> dict:
    """The release values holding all but ``tail_mass`` of the probability, and their pmfs."""
    x1, x2, y1 = truth
    k1, k2, y_noise = _reach(noise, tail_mass)
    sizes = (2 * k1 + 1, 2 * k2 + 1, len(y_noise))
    check_memory(
        sum(sizes) * 8 * 4,
        "the release values x1*, x2*, y1* ({:,}, {:,} and {:,} of them)".format(*sizes),
    )
    z1, z2, zy = np.arange(-k1, k1 + 1), np.arange(-k2, k2 + 1), np.array(y_noise)
    return {
        "x1_release": x1 + z1,
        "x2_release": x2 + z2,
        "y1_release": y1 + zy,
        "x1_probability": noise.block.pmf(z1),
        "x2_probability": noise.group.pmf(z2),
        "y1_probability": np.exp(noise.logpmf_others(zy)),
    }


def _omitted_mass(noise: BlockGroupNoise, grid: dict, truth, tail_mass: float) -> float:
    """Release probability the grid leaves out (a rigorous bound).

    Discrete Gaussians: ``tail_mass`` (each cut-off leaves at most a third)
    plus the exact sum table's omitted mass. Other noise: the mechanisms' own
    bounds outside ``K1``, ``K2``, the sum table's mass off the ``y1*`` range
    and its omitted mass (each 0 for bounded noise).
    """
    table = noise.sum_noise if isinstance(noise.sum_noise, FinitePmf) else None
    if noise.gaussian:
        return tail_mass + (table.omitted_mass if table is not None else 0.0)
    x1, x2, y1 = truth
    reach1 = int(grid["x1_release"][-1] - x1)
    reach2 = int(grid["x2_release"][-1] - x2)
    first, last = (int(grid["y1_release"][i] - y1 - table.start) for i in (0, -1))
    off_range = math.fsum(table.probabilities[:first]) + math.fsum(table.probabilities[last + 1 :])
    return (
        noise.block.outside_mass(reach1)
        + noise.group.outside_mass(reach2)
        + off_range
        + table.omitted_mass
    )


def _log_sum_over_x2(k1, x2_releases, y1_releases, noise, x2_prior, k2_window):
    """``log S_k1(x2*, y1*)`` on the grid, by a product over ``k2`` with row scaling."""
    k2 = np.arange(k2_window[0], k2_window[1] + 1)
    log_a = (
        noise.logpmf_group(x2_releases[None, :] - k2[:, None]) + x2_prior.log_prior(k2, k1)[:, None]
    )
    log_b = noise.logpmf_others(y1_releases[None, :] + k1 - k2[:, None])
    # Scale each k2 row of a by its maximum and move that into b: products stay in range.
    row_max = np.max(np.where(np.isfinite(log_a), log_a, -np.inf), axis=1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    log_b = log_b + row_max
    col_max = np.max(log_b, axis=0, keepdims=True)
    col_max = np.where(np.isfinite(col_max), col_max, 0.0)
    a, b = np.exp(log_a - row_max), np.exp(log_b - col_max)
    terms_edge = a[-1][:, None] * b[-1][None, :]
    terms_inner = a[-2][:, None] * b[-2][None, :]
    total = a.T @ b
    with np.errstate(divide="ignore"):
        return np.log(total) + col_max, terms_edge, terms_inner, total


def _k2_windows(grid, noise, x2_prior, known, tail_mass):
    """``k2`` range for the sums ``S``, grown until every tail beyond it is negligible."""
    if not noise.gaussian:  # a tabulated Zy: the window is exact
        lo, hi = exact_k2_window(grid["x2_release"], grid["y1_release"], noise, x2_prior, known)
        return lo, hi, False
    if x2_prior.kind != "improper_uniform":
        return known, max(x2_prior.upper, known + 1), False
    precision = 1 / noise.sigma2_group + 1 / noise.sigma2_others
    centre = (
        grid["x2_release"].max() / noise.sigma2_group
        + (grid["y1_release"].max() + known + 1) / noise.sigma2_others
    ) / precision
    reach = int(discrete_gaussian.cutoff(1 / precision, tail_mass)) + 2
    return known, max(known + 2, int(np.ceil(centre)) + reach), True


def x1_log_ratio(x1_release, noise, known: int) -> np.ndarray:
    """``log N1(x1* - m - 1) - log N1(x1* - m)``: the single block's evidence for ``X1 = m + 1``.

    ``±inf`` where bounded noise settles ``X1`` (:func:`~adversary.measures.noise.log_ratio`).
    """
    if noise.gaussian:
        return discrete_gaussian.logpmf(
            x1_release - known - 1, noise.sigma2_block
        ) - discrete_gaussian.logpmf(x1_release - known, noise.sigma2_block)
    return log_ratio(
        noise.block.logpmf(x1_release - known - 1), noise.block.logpmf(x1_release - known)
    )


def log_sums(grid: dict, noise, x2_prior, known: int, tail_mass: float):
    """The ``k2`` window, grown until its tail is negligible, and ``log S_k1`` (k1 = m, m+1).

    ``log S_k1`` is over the grid's ``(x2*, y1*)`` releases (module docstring).
    """
    lo, hi, grow = _k2_windows(grid, noise, x2_prior, known, tail_mass)
    while True:
        check_memory(
            (hi - lo + 1) * (grid["x2_release"].size + grid["y1_release"].size) * 8 * 4,
            f"the sums over X2 in [{lo:,}, {hi:,}]",
        )
        log_s, omitted_ok = [], True
        for k1 in (known, known + 1):
            log_sum, edge, inner, total = _log_sum_over_x2(
                k1, grid["x2_release"], grid["y1_release"], noise, x2_prior, (lo, hi)
            )
            if grow:
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(inner > 0, edge / inner, np.where(edge > 0, np.inf, 0.0))
                    tail = np.where(ratio < 1, edge * ratio / (1 - ratio), np.inf)
                omitted_ok &= bool(np.all(tail <= tail_mass * total))
            log_s.append(log_sum)
        if omitted_ok:
            return (lo, hi), log_s
        hi += hi - lo + 1


# Bytes per release a decision map holds at once: 16 float64 grids (with the temporaries
# of the sums) and two boolean ones.
_BYTES_PER_RELEASE = 8 * 16 + 2
# The same for the measures alone, computed in blocks of x1* releases.
_BYTES_PER_RELEASE_IN_BLOCKS = 8 * 16
#: Releases a block of release_measures holds at most (at least one x1* row): blocks
#: small enough that the first one, timed, projects the whole grid's time within a second.
BLOCK_RELEASES = 2_000_000


def decision_map(truth, *, tie_rule=DEFAULT_TIE_RULE, **setting) -> xr.Dataset:
    """Every release's probability, the adversary's posterior and decisions (Figure 4).

    ``truth`` is ``(x1, x2)`` or ``(x1, x2, y1)`` with ``y1 = x2 - x1``; ``setting``
    the keyword arguments of :func:`~adversary.scenarios.block_group.attack_setting`. Returns a
    Dataset over ``(x1_release, x2_release, y1_release)`` with variables
    ``release_probability``, ``posterior`` (of ``X1 = m+1``, S3.4), ``decision``
    and ``decision_without_hierarchy`` (3.5, from ``x1*`` alone), and ``tied``
    and ``tied_without_hierarchy`` (the two values equally probable: common with
    a point-mass prior on ``X2``, where the log odds are often exactly 0). A
    decision is the count decided, ``m`` or ``m + 1``; a tie is decided by
    ``tie_rule`` (:mod:`adversary.measures.decision`), and under ``"split"`` its
    ``decision`` is ``m + 1/2``, the expected count decided. Attributes:
    those of :func:`release_measures`. The whole grid is held at once: a grid
    over the memory budget (:mod:`adversary.memory`) is refused before it is
    allocated; :func:`release_measures` computes the measures in bounded memory.
    """
    releases = _ReleaseSums(truth, tie_rule, setting)
    shape = tuple(releases.grid[name].size for name in _DIMS)
    check_memory(
        math.prod(shape) * _BYTES_PER_RELEASE,
        f"the block group's decision map over {' x '.join(f'{n:,}' for n in shape)} releases",
    )
    block = releases.block(slice(None))
    variables = {
        "release_probability": block["weights"],
        "posterior": block["posterior"],
        "decision": releases.known + block["up"],
        "decision_without_hierarchy": releases.known + block["up_alone"],
        "tied": np.abs(block["log_odds"]) <= TIE_TOLERANCE,
        "tied_without_hierarchy": np.abs(block["single_block_log_odds"]) <= TIE_TOLERANCE,
    }
    return xr.Dataset(
        {name: (_DIMS, values) for name, values in variables.items()},
        coords={name: releases.grid[name] for name in _DIMS},
        attrs=releases.attributes([releases.sums(block)]),
    )


def release_measures(truth, *, tie_rule=DEFAULT_TIE_RULE, **setting) -> dict:
    """The data holder's measures over every release, in memory bounded by the budget.

    Arguments as :func:`decision_map`; the sums run over blocks of ``x1*``
    releases sized to the memory budget (:mod:`adversary.memory`), so no
    release grid is held whole, and the first block, timed, projects the
    whole: a grid over the time budget (:mod:`adversary.time_budget`) is
    refused, a long one shows its progress on stderr. Returns ``truth``, ``prior``, ``x2_prior``,
    ``marginal_posterior`` (3.3) and ``marginal_risk`` (3.4) of the truth,
    ``correct_decision_probability`` (3.6) and the same without the block group
    (ties counted by ``tie_rule``), ``changed_to_correct`` / ``changed_to_wrong``
    (the release probability by which the block group raises / lowers the
    decision's credit: where it changes the decision to the right / wrong
    value, a tie counting half), ``tie_rule``, ``omitted_mass`` and
    ``x2_window``.
    """
    releases = _ReleaseSums(truth, tie_rule, setting)
    n1, n2, ny = (releases.grid[name].size for name in _DIMS)
    per_row, held = n2 * ny * _BYTES_PER_RELEASE_IN_BLOCKS, n2 * ny * 8 * 2  # held: log S
    rows = affordable_rows(per_row, n1, "the block group's release grid", held)
    rows = min(rows, max(1, BLOCK_RELEASES // (n2 * ny)))  # the first block times the whole
    what = f"the block group's release grid of {n1:,} x {n2:,} x {ny:,} releases"
    blocks = timed_blocks(n1, rows, n2 * ny, what)  # refused over the time budget
    return releases.attributes([releases.sums(releases.block(block)) for block in blocks])


_DIMS = ("x1_release", "x2_release", "y1_release")
_SUMMED = (
    "marginal_posterior",
    "correct_decision_probability",
    "correct_decision_probability_without_hierarchy",
    "changed_to_correct",
    "changed_to_wrong",
)


class _ReleaseSums:
    """The release grid of one attack and the adversary's decisions on blocks of it."""

    def __init__(self, truth, tie_rule, setting):
        check_tie_rule(tie_rule)
        setting = attack_setting(**setting)
        self.noise, self.prior, self.known = setting.noise, setting.prior, setting.known
        self.x2_prior, self.tail_mass, self.tie_rule = setting.x2_prior, setting.tail_mass, tie_rule
        self.truth = _validated_truth(truth, self.known)
        self.grid = release_grid(self.truth, self.noise, self.tail_mass)
        n2, ny = self.grid["x2_release"].size, self.grid["y1_release"].size
        # log S and its temporaries, or log S and the releases of one x1* (release_measures)
        check_memory(
            n2 * ny * (16 + _BYTES_PER_RELEASE_IN_BLOCKS),
            f"the sums over X2 on {n2:,} x {ny:,} releases (x2*, y1*)",
        )
        self.window, self.log_s = log_sums(
            self.grid, self.noise, self.x2_prior, self.known, self.tail_mass
        )
        self.has_c = self.truth[0] == self.known + 1

    def block(self, rows: slice) -> dict:
        """Probabilities, posteriors and decisions on the releases with ``x1*`` in ``rows``."""
        noise, known, prior, tie_rule = self.noise, self.known, self.prior, self.tie_rule
        x1r = self.grid["x1_release"][rows, None, None]
        single_block_log_odds = special.logit(prior) + x1_log_ratio(x1r, noise, known)
        with np.errstate(invalid="ignore"):
            log_odds = single_block_log_odds + (self.log_s[1] - self.log_s[0])[None, :, :]
        weights = (
            self.grid["x1_probability"][rows, None, None]
            * self.grid["x2_probability"][None, :, None]
            * self.grid["y1_probability"][None, None, :]
        )
        # Releases of probability 0 (holes in a table, or its FFT-rounded zeros) may be
        # impossible under both values of X1; they carry no weight (posterior set to 1/2).
        undefined = np.isnan(log_odds)
        if undefined.any():
            log_odds = np.where(undefined & (weights == 0), 0.0, log_odds)
            if np.any(np.isnan(log_odds)):
                raise ValueError(
                    "x2_prior: some releases on the grid are impossible under both values of X1"
                )
        single_block_log_odds = np.where(
            np.isnan(single_block_log_odds), 0.0, single_block_log_odds
        )
        # P[the decision is m + 1] by the tie rule (1/2 on a split tie), and the truth's credit;
        # without the block group, per x1* and broadcast over the grid.
        up = binary_credit(log_odds, True, tie_rule)
        up_alone = binary_credit(single_block_log_odds, True, tie_rule)
        return {
            "weights": weights,
            "log_odds": log_odds,
            "single_block_log_odds": np.broadcast_to(single_block_log_odds, log_odds.shape),
            "posterior": special.expit(log_odds),
            "up": up,
            "up_alone": np.broadcast_to(up_alone, log_odds.shape),
        }

    def sums(self, block: dict) -> dict:
        """The block's share of the sums over releases behind (3.3) and (3.6)."""
        weights, up, up_alone = block["weights"], block["up"], block["up_alone"]
        credit, credit_alone = (up, up_alone) if self.has_c else (1.0 - up, 1.0 - up_alone)
        posterior_of_truth = block["posterior"] if self.has_c else special.expit(-block["log_odds"])
        return {
            "marginal_posterior": np.sum(weights * posterior_of_truth),
            "correct_decision_probability": np.sum(weights * credit),
            "correct_decision_probability_without_hierarchy": np.sum(weights * credit_alone),
            "changed_to_correct": np.sum(weights * np.maximum(credit - credit_alone, 0.0)),
            "changed_to_wrong": np.sum(weights * np.maximum(credit_alone - credit, 0.0)),
        }

    def attributes(self, sums: list[dict]) -> dict:
        """The measures from the blocks' sums, with the attack's settings and cut-offs."""
        totals = {key: float(math.fsum(part[key] for part in sums)) for key in _SUMMED}
        prior_of_truth = self.prior if self.has_c else 1.0 - self.prior
        return {
            "truth": list(self.truth),
            "prior": self.prior,
            "x2_prior": self.x2_prior.describe(),
            "marginal_posterior": totals["marginal_posterior"],
            "marginal_risk": totals["marginal_posterior"] / prior_of_truth,
            **{key: totals[key] for key in _SUMMED[1:]},
            "tie_rule": self.tie_rule,
            "omitted_mass": _omitted_mass(self.noise, self.grid, self.truth, self.tail_mass),
            "x2_window": list(self.window),
        }


def _validated_truth(truth, known_count) -> tuple[int, int, int]:
    values = [int(v) for v in as_counts(list(truth), "truth")]
    if len(values) == 2:
        values.append(values[1] - values[0])
    if len(values) != 3:
        raise ValueError(f"truth must be (x1, x2) or (x1, x2, y1), got {truth!r}")
    x1, x2, y1 = values
    known = int(as_counts(known_count, "known_count"))
    if x1 not in (known, known + 1):
        raise ValueError(f"truth: x1 must be known_count or known_count + 1, got {x1}")
    if x2 < x1 or y1 != x2 - x1:
        raise ValueError(f"truth must have x2 >= x1 and y1 = x2 - x1, got {truth!r}")
    return x1, x2, y1


def posterior_by_full_enumeration(
    grid: dict,
    noise: BlockGroupNoise,
    prior: float,
    x2_prior: BlockGroupPrior,
    known: int,
    x2_max: int,
) -> np.ndarray:
    """Reference for :func:`decision_map`: the straightforward way, on the full 5-d grid.

    Evaluates the log joint (S3.4) on every ``(x1*, x2*, y1*, X1, X2)`` with
    ``X2 ≤ x2_max`` and normalises over ``(X1, X2)``; returns ``P[X1 = m+1]``
    on the release grid. Memory and time grow with the product of all five
    sizes; the benchmark compares :func:`decision_map` against it.
    """
    x1r = grid["x1_release"][:, None, None, None, None]
    x2r = grid["x2_release"][None, :, None, None, None]
    y1r = grid["y1_release"][None, None, :, None, None]
    k1 = np.array([known, known + 1])[None, None, None, :, None]
    k2 = np.arange(known, x2_max + 1)[None, None, None, None, :]
    log_joint = (
        np.where(k1 == known + 1, np.log(prior), np.log1p(-prior))
        + noise.logpmf_block(x1r - k1)
        + noise.logpmf_group(x2r - k2)
        + noise.logpmf_others(y1r - (k2 - k1))
        + x2_prior.log_prior(k2, k1)
    )
    log_x1 = special.logsumexp(log_joint, axis=-1)
    return np.exp(log_x1[..., 1] - special.logsumexp(log_x1, axis=-1))
