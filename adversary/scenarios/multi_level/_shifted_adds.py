"""The shifted adds of :func:`.sums._grid_prefixes`, compiled by numba.

:func:`shifted_adds` returns what the Python loop ``new[s : s + n] += w * dist`` over the
shifts ``s`` in increasing order computes, to the last bit: each output point receives the
same products ``w * dist[i]``, rounded the same way, added in the same order (numba does
not fuse the multiply and the add without ``fastmath``). It only visits the output in
blocks that stay in the processor's cache, in SIMD registers, instead of passing over all
of it once per shift: about 6× faster on the grids of ``unique_many_levels``.
"""

from __future__ import annotations

import numpy as np

from ..._numba_cache import njit_cached

__all__ = ["shifted_adds"]

#: Output points visited together: the block and its inputs stay in a core's cache.
_BLOCK = 2048


@njit_cached()
def shifted_adds(dist, shifts, weights, size):
    """``new = zeros(size)``, then ``new[shifts[k] : shifts[k] + dist.size] += weights[k] * dist``
    for ``k = 0, 1, …`` (``shifts`` increasing, each within ``size - dist.size``)."""
    new = np.zeros(size)
    n = dist.size
    for start in range(0, size, _BLOCK):
        stop = min(start + _BLOCK, size)
        for k in range(shifts.size):
            shift = shifts[k]
            weight = weights[k]
            lo = max(start, shift)
            hi = min(stop, shift + n)
            if hi <= lo:
                continue
            out = new[lo:hi]
            part = dist[lo - shift : hi - shift]
            for i in range(out.size):  # from 0: no wraparound test, so it vectorises
                out[i] += weight * part[i]
    return new
