"""The release grid less its least probable release sets, compiled (numba).

:func:`kept_mask` drops the release sets of smallest probability while their
total stays within a budget — the smallest first, and of equal probabilities
the first on the grid. Only releases of probability at most the budget can go.
It needs no full sort (:func:`drop_count`): the probabilities are binned by
their binary exponent (zeros below every other), the bins whose values fit
together with every smaller bin's are taken whole, and only the next bin's
values are sorted and added one by one.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba_cache import njit_cached

__all__ = ["drop_count", "kept_mask"]

# Below the binary exponent of the smallest positive float64 (-1073), for zeros.
_BELOW_EVERY_EXPONENT = -1100


@njit_cached()
def _exponents(values, bits, budget, out):
    """Each value's binary exponent (``math.frexp``'s, read from its bits where it is normal),
    :data:`_BELOW_EVERY_EXPONENT` for zeros, into ``out`` for the values at most ``budget``;
    returns the lowest and highest (``highest < lowest`` when there are none)."""
    lowest, highest = 1 << 30, -(1 << 30)
    for i in range(values.size):
        value = values[i]
        if value <= budget:
            field = (bits[i] >> 52) & 0x7FF
            if value == 0.0:
                e = _BELOW_EVERY_EXPONENT
            elif field > 0:
                e = field - 1022
            else:  # subnormal
                e = math.frexp(value)[1]
            out[i] = e
            lowest, highest = min(lowest, e), max(highest, e)
    return lowest, highest


@njit_cached()
def drop_count(values, budget):
    """``(n, cut)``: the ``n`` smallest of ``values`` (at most ``budget`` each) have a running
    total within ``budget`` (and ``n + 1`` would not), the largest of them ``cut``;
    ``(0, nan)`` when none fits. Values above ``budget`` are ignored."""
    exponents = np.empty(values.size, dtype=np.int64)
    lowest, highest = _exponents(values, values.view(np.int64), budget, exponents)
    if highest < lowest:
        return 0, np.nan
    totals = np.zeros(highest - lowest + 1)
    for i in range(values.size):  # in order, as the running totals below
        if values[i] <= budget:
            totals[exponents[i] - lowest] += values[i]
    whole, base = 0, 0.0  # exponent bins taken whole, and their total
    running = 0.0
    for b in range(totals.size):
        running += totals[b]
        if running > budget:
            break
        whole, base = b + 1, running
    count, cut = 0, np.nan
    edge = lowest + whole  # the bin where the total reaches the budget
    in_edge = 0
    for i in range(values.size):
        if values[i] <= budget:
            if exponents[i] < edge:
                count += 1
                if not values[i] <= cut:  # the first, or a larger one
                    cut = values[i]
            elif exponents[i] == edge:
                in_edge += 1
    if in_edge:
        boundary = np.empty(in_edge)
        k = 0
        for i in range(values.size):
            if values[i] <= budget and exponents[i] == edge:
                boundary[k] = values[i]
                k += 1
        running = 0.0
        for value in np.sort(boundary):
            running += value
            if base + running > budget:
                break
            count += 1
            cut = value
    return count, cut


@njit_cached()
def kept_mask(p, budget):
    """``(kept, dropped mass)``: which releases stay when the least probable are dropped up
    to ``budget`` (module docstring), and the probability dropped."""
    kept = np.ones(p.size, dtype=np.bool_)
    dropped, cut = drop_count(p, budget)
    if dropped == 0:
        return kept, 0.0
    below = 0
    for value in p:
        if value < cut:
            below += 1
    ties = dropped - below  # of the values equal to the cut, the first this many go
    mass = 0.0
    for i in range(p.size):
        if p[i] < cut or (p[i] == cut and ties > 0):
            if p[i] == cut:
                ties -= 1
            kept[i] = False
            mass += p[i]
    return kept, mass
