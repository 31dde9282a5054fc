"""Compiled kernels keep numba's disk cache where they can and still import where they cannot."""

import numpy as np
from numba.core import caching

from adversary._numba_cache import njit_cached


def test_a_kernel_is_cached_where_numba_can_write():
    def add_one(x):
        return x + 1

    compiled = njit_cached()(add_one)
    assert compiled._cache.__class__.__name__ == "FunctionCache"  # numba's disk cache
    assert compiled(np.int64(1)) == 2


def test_without_a_writable_folder_it_compiles_without_the_cache(monkeypatch):
    # numba raises at decoration ("cannot cache function ...: no locator available") when it
    # finds no folder to write: a read-only installation without NUMBA_CACHE_DIR or a home.
    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])

    def add_two(x):
        return x + 2

    compiled = njit_cached(nogil=True)(add_two)
    assert compiled._cache.__class__.__name__ == "NullCache"
    assert compiled(np.int64(1)) == 3
