"""``numba.njit`` with numba's on-disk cache wherever numba has a folder to write it."""

from __future__ import annotations

import numba

__all__ = ["njit_cached"]


def njit_cached(**options):
    """``numba.njit(cache=True, **options)``; without the cache where numba finds no folder
    it may write (a read-only installation, no ``NUMBA_CACHE_DIR`` and no writable home),
    where numba refuses at decoration: the function is then compiled in each process instead
    of its module failing to import."""

    def decorate(function):
        try:
            return numba.njit(cache=True, **options)(function)
        except RuntimeError as error:
            if "cannot cache" not in str(error):
                raise
            return numba.njit(cache=False, **options)(function)

    return decorate
