"""The data holder's sums over a product release grid in one compiled pass (numba).

For a model whose release scalars are independent given the latents
(:mod:`.tabulated_likelihood`), the release grid is the product of one
window per scalar, the release probability the product of each scalar's pmf,
and the adversary's joint log-p of a cell ``c`` given a release set
``(v_0, …, v_{K-1})`` is ``prior[c] + Σ_k L_k[v_k, c]``. :func:`grid_sums`
walks the grid in its order (the last scalar fastest), keeping the partial sums
of the scalars before the last, and for each release set it keeps
(``kept``) adds up

- ``Σ P[release] · P[event | release]`` (3.3),
- ``Σ P[release] · credit`` (3.6), the truth's credit by the tie rule exactly
  as :func:`~adversary.measures.decision.truth_credit` gives it,
- ``Σ P[release] · min(1, Σ_s tail_s)``, the latent windows' estimated
  omitted posterior mass, and the largest ``tail_s`` per cut side ``s``
  (:func:`~adversary.inference.grid.geometric_tail` of the posterior mass on
  the side's edge cells and their inner neighbours),

without a (releases × cells) array. The cells' weights of a release set are
``e[c] · E[v_last, c]``: ``e`` the exponential of the partial log-p (less its
largest), ``E`` the last scalar's likelihood (less its row's largest). Where
their total is below 10⁻³⁰ (a release set whose likeliest cells are far apart)
the weights are recomputed from the log-p itself, less its largest, so that no
posterior underflows sooner than in the chunked route's ``exp(log p - max)``.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba_cache import njit_cached

__all__ = ["IMPOSSIBLE", "NAN", "OK", "RULES", "grid_sums"]

OK, IMPOSSIBLE, NAN = 0, 1, 2
#: Tie rules by their code in :func:`grid_sums`.
RULES = {"split": 0, "largest": 1, "smallest": 2}
# Below this total weight the weights are recomputed from the log-p, the largest their unit
# (the cells' posteriors then underflow only below 2^-1022 of the mode's, as the chunked
# route's do, not 10^-30 sooner).
_TINY = 1e-30
# A product below this has lost precision to underflow.
_SMALLEST_NORMAL = 2.2250738585072014e-308


@njit_cached()
def _weights(log_p, out):
    """``out = exp(log_p - max log_p)``; returns the maximum (-inf when every entry is)."""
    top = -np.inf
    for c in range(log_p.size):
        if log_p[c] > top:
            top = log_p[c]
    if top == -np.inf:
        out[:] = 0.0
        return top
    for c in range(log_p.size):
        out[c] = math.exp(log_p[c] - top)
    return top


@njit_cached()
def _tail(edge, inner):
    """:func:`~adversary.inference.grid.geometric_tail` of one pair of masses."""
    if edge == 0.0:
        return 0.0
    if inner > edge:
        ratio = edge / inner
        return edge * ratio / (1.0 - ratio)
    return np.inf


@njit_cached()
def _credit(target, true_index, rule, tie_ratio):
    """The truth's credit (3.6) from the target's posterior pmf ``target`` (unnormalised).

    Values are tied with the mode when their log posteriors are within the tie tolerance
    ``τ`` of its own (:func:`~adversary.measures.decision.decision_weights`): when their
    ratio to it is at least ``tie_ratio = e^{-τ}``.
    """
    if true_index < 0:
        return 0.0
    best = 0.0
    for t in range(target.size):
        if target[t] > best:
            best = target[t]
    threshold = best * tie_ratio
    ties = 0
    first = -1
    last = -1
    for t in range(target.size):
        if target[t] >= threshold:
            ties += 1
            last = t
            if first < 0:
                first = t
    if rule == 0:
        return 1.0 / ties if target[true_index] >= threshold else 0.0
    chosen = last if rule == 1 else first
    return 1.0 if chosen == true_index else 0.0


@njit_cached()
def _accumulate(
    weights,
    factors,
    f,
    event,
    target,
    log_p,
    p,
    rows,
    r,
    scale,
    sides,
    side_starts,
    target_mass,
    side_mass,
):
    """One release set's sums over the cells, each weighing ``weights[c] · factors[f, c]``:
    the total and the event's (returned), the target's pmf and the mass of each side's edge
    and inner cells (``side_mass[2s]``, ``side_mass[2s + 1]``; the cells of group ``g``
    are ``sides[side_starts[g]:side_starts[g + 1]]``), in the arrays given.

    The sides' masses, which may be far smaller than the total and whose ratios matter,
    are ``exp(log_p[p, c] + rows[r, c] - scale)`` (the same weights, ``scale`` the
    logarithm of the weights' unit), which underflow only where the cell's posterior is
    below 2⁻¹⁰²² of the unit: not the product of two exponentials, which can underflow
    sooner. (Rows are passed by index: a row taken as an array costs more than its sums.)
    """
    target_mass[:] = 0.0
    total = 0.0
    in_event = 0.0
    for c in range(weights.size):
        w = weights[c] * factors[f, c]
        total += w
        in_event += w * event[c]
        target_mass[target[c]] += w
    for g in range(side_mass.size):
        mass = 0.0
        for i in range(side_starts[g], side_starts[g + 1]):
            c = sides[i]
            mass += math.exp(log_p[p, c] + rows[r, c] - scale)
        side_mass[g] = mass
    return total, in_event


@njit_cached()
def _aggregate(
    weights, event, target, groups, sides, side_starts, total, in_event, target_mass, side, side_log
):
    """Per group of cells (``groups``): the sums of :func:`_accumulate` before the last
    scalar's factor, which is the same for every cell of a group; the sides' also as
    logarithms (where a product with that factor could underflow)."""
    total[:] = 0.0
    in_event[:] = 0.0
    target_mass[:, :] = 0.0
    for c in range(weights.size):
        g = groups[c]
        total[g] += weights[c]
        in_event[g] += weights[c] * event[c]
        target_mass[g, target[c]] += weights[c]
    for s in range(side_log.shape[0]):
        side[s, :] = 0.0
        for i in range(side_starts[s], side_starts[s + 1]):
            c = sides[i]
            side[s, groups[c]] += weights[c]
        for g in range(side_log.shape[1]):
            side_log[s, g] = math.log(side[s, g]) if side[s, g] > 0.0 else -np.inf


@njit_cached()
def _accumulate_groups(
    factors,
    log_factors,
    v,
    total_by,
    event_by,
    target_by,
    side_by,
    side_log_by,
    target_mass,
    side_mass,
):
    """:func:`_accumulate` from the sums per group (:func:`_aggregate`) and the last scalar's
    factor per group (``factors[v]``, and their logarithms)."""
    total = 0.0
    in_event = 0.0
    target_mass[:] = 0.0
    n_groups = factors.shape[1]
    for g in range(n_groups):
        total += total_by[g] * factors[v, g]
        in_event += event_by[g] * factors[v, g]
        for t in range(target_mass.size):
            target_mass[t] += target_by[g, t] * factors[v, g]
    for s in range(side_mass.size):
        mass = 0.0
        for g in range(n_groups):
            term = side_by[s, g] * factors[v, g]
            if term < _SMALLEST_NORMAL and side_by[s, g] > 0.0 and factors[v, g] > 0.0:
                term = math.exp(side_log_by[s, g] + log_factors[v, g])  # underflowed
            mass += term
        side_mass[s] = mass
    return total, in_event


@njit_cached()
def grid_sums(
    release_logp,
    tables,
    offsets,
    kept,
    prior,
    event,
    target,
    n_target,
    true_index,
    sides,
    side_starts,
    rule,
    tie_ratio,
    groups,
    n_groups,
):
    """The sums of the module docstring over the kept release sets.

    ``release_logp`` (``Σ W_k``) and ``tables`` (``Σ W_k × cells``) hold each
    scalar's release log-pmf and log-likelihood rows, scalar ``k``'s from
    ``offsets[k]`` to ``offsets[k + 1]``; ``kept`` the positions of the release
    sets summed on the grid (increasing; the last scalar fastest); ``prior`` the
    cells' prior log-p; ``event`` the event's indicator per cell; ``target``
    each cell's index among the target's ``n_target`` values and
    ``true_index`` the truth's (-1: outside); ``sides`` the cells of each cut
    side's edge, then of its inner neighbours, side after side (group ``g``
    from ``side_starts[g]`` to ``side_starts[g + 1]``); ``rule`` a code of
    :data:`RULES` and ``tie_ratio`` the ratio to the mode's posterior within
    which a value ties with it (:func:`_credit`); ``groups`` (one per cell,
    ``n_groups`` of them) cells on which the last scalar's likelihood is the
    same (its rows depend on some latents only): with fewer groups than cells,
    the sums over cells of a release set are taken per group once per value of
    the other scalars (:func:`_aggregate`), and each release set costs the
    groups, not the cells.

    Returns ``(status, sums, largest tails, summed sets)``: ``status`` is
    :data:`OK`, or :data:`IMPOSSIBLE` / :data:`NAN` (then ``summed sets`` is the
    offending release set's index).
    """
    n_scalars = offsets.size - 1
    n_cells = prior.size
    n_sides = (side_starts.size - 1) // 2
    widths = offsets[1:] - offsets[:-1]
    last = n_scalars - 1
    # The last scalar's likelihood rows less their largest, exponentiated.
    start = offsets[last]
    width = widths[last]
    last_weights = np.empty((width, n_cells))
    last_top = np.empty(width)
    for v in range(width):
        last_top[v] = _weights(tables[start + v], last_weights[v])
    grouped = n_groups < n_cells
    first_cell = np.full(n_groups, -1, dtype=np.int64)
    for c in range(n_cells):
        if first_cell[groups[c]] < 0:
            first_cell[groups[c]] = c
    group_log = np.empty((width, n_groups))  # the last scalar's rows by group, less the largest
    for v in range(width):
        for g in range(n_groups):
            group_log[v, g] = tables[start + v, first_cell[g]] - last_top[v]
    group_weights = np.exp(group_log)
    by_group = np.zeros(n_groups)
    event_by_group = np.zeros(n_groups)
    target_by_group = np.zeros((n_groups, n_target))
    side_by_group = np.zeros((2 * n_sides, n_groups))
    side_log_by_group = np.zeros((2 * n_sides, n_groups))
    last_release = np.empty(width)  # the last scalar's release pmf
    for v in range(width):
        last_release[v] = math.exp(release_logp[start + v])
    # Partial log-p of the scalars before the last: level k after scalar k; and their
    # exponentials, level by level the products of each scalar's rows (less their largest),
    # ``level_top`` the logarithm of each level's unit.
    partial = np.empty((n_scalars + 1, n_cells))
    partial[0, :] = prior
    outer_rows = np.empty((start, n_cells))
    outer_tops = np.empty(start)
    for r in range(start):
        outer_tops[r] = _weights(tables[r], outer_rows[r])
    level_weights = np.empty((n_scalars, n_cells))  # no exponentials per release set
    level_top = np.zeros(n_scalars)
    level_top[0] = _weights(prior, level_weights[0])
    weights = np.empty(n_cells)
    log_p = np.empty(n_cells)
    sums = np.zeros(3)
    tails = np.zeros(n_sides)
    side_mass = np.zeros(2 * n_sides)
    target_mass = np.zeros(n_target)
    ones = np.ones((1, n_cells))
    index = np.zeros(n_scalars, dtype=np.int64)
    outer_release = 1.0  # the release pmf of the scalars before the last
    outer_top = 0.0  # the largest partial log-p, the unit of ``weights``
    fresh = 0  # levels from this one to the last need their partial sums computed
    stale = True  # ``weights`` not yet computed
    summed = 0
    partial_logp = np.zeros(n_scalars + 1)
    previous = -1
    for position in kept:
        if position == previous + 1 and previous >= 0:  # the odometer: the last scalar fastest
            k = last
            index[k] += 1
            while index[k] == widths[k] and k > 0:
                index[k] = 0
                k -= 1
                index[k] += 1
            fresh = min(fresh, k)
        else:  # a jump: the position's digits, the first that changed marks the stale levels
            rest = position
            for k in range(last, -1, -1):
                digit = rest % widths[k]
                rest //= widths[k]
                if digit != index[k]:
                    index[k] = digit
                    fresh = min(fresh, k)
        previous = position
        if fresh < last or stale:
            for level in range(fresh, last):
                r = offsets[level] + index[level]
                row = tables[r]
                for c in range(n_cells):
                    partial[level + 1, c] = partial[level, c] + row[c]
                partial_logp[level + 1] = partial_logp[level] + release_logp[r]
                top = 0.0
                for c in range(n_cells):
                    w = level_weights[level, c] * outer_rows[r, c]
                    level_weights[level + 1, c] = w
                    top = max(top, w)
                level_top[level + 1] = level_top[level] + outer_tops[r]
                if not top > _TINY:  # products grown small: afresh from the log-p
                    level_top[level + 1] = _weights(partial[level + 1], level_weights[level + 1])
            weights[:] = level_weights[last]
            outer_top = level_top[last]
            outer_release = math.exp(partial_logp[last])
            if grouped:
                _aggregate(
                    weights,
                    event,
                    target,
                    groups,
                    sides,
                    side_starts,
                    by_group,
                    event_by_group,
                    target_by_group,
                    side_by_group,
                    side_log_by_group,
                )
            fresh, stale = last, False
        v = index[last]
        release_weight = outer_release * last_release[v]
        r = offsets[last] + v
        if grouped:
            total, in_event = _accumulate_groups(
                group_weights,
                group_log,
                v,
                by_group,
                event_by_group,
                target_by_group,
                side_by_group,
                side_log_by_group,
                target_mass,
                side_mass,
            )
        else:
            total, in_event = _accumulate(
                weights,
                last_weights,
                v,
                event,
                target,
                partial,
                last,
                tables,
                r,
                outer_top + last_top[v],
                sides,
                side_starts,
                target_mass,
                side_mass,
            )
        if not total > _TINY:  # underflow, no possible cell, or NaN: from the log-p
            for c in range(n_cells):
                log_p[c] = partial[last, c] + tables[r, c]
                if np.isnan(log_p[c]):
                    return NAN, sums, tails, position
            top = _weights(log_p, log_p)
            if not np.isfinite(top):
                return IMPOSSIBLE, sums, tails, position
            total, in_event = _accumulate(
                log_p,
                ones,
                0,
                event,
                target,
                partial,
                last,
                tables,
                r,
                top,
                sides,
                side_starts,
                target_mass,
                side_mass,
            )
        omitted = 0.0
        for s in range(n_sides):
            side_tail = _tail(side_mass[2 * s] / total, side_mass[2 * s + 1] / total)
            omitted += side_tail
            if side_tail > tails[s]:
                tails[s] = side_tail
        sums[0] += release_weight * (in_event / total)
        sums[1] += release_weight * _credit(target_mass, true_index, rule, tie_ratio)
        sums[2] += release_weight * min(omitted, 1.0)
        summed += 1
    return OK, sums, tails, summed
