"""The exact discrete Gaussian sampler of :mod:`.exact_sampling`, compiled by numba.

:func:`fill` runs CKS Algorithms 1–3 exactly as ``exact_sampling._make_sampler`` does, on
the same stream of 64-bit words, reading them in the same order, but decides most
Bernoulli trials without Python's big integers:

* Lemire's uniform ``U < t`` and ``Bernoulli(exp(-1))``'s trials ``A_K ~ Bernoulli(1/K)``
  are compared exactly on 64-bit integers;
* a trial ``A_K ~ Bernoulli(θ/K)`` of Algorithm 1's series compares the word with the
  float ``θ/K``, and is decided only when the word's interval ``[w, w + 1)/2⁶⁴`` lies
  farther from ``θ/K`` than a bound on the float's error (:func:`_compare`);
* Algorithm 3's exponent ``γ = (|y|·d·t - n)²/(2·n·d·t²)`` is split into its integer part
  (that many ``Bernoulli(exp(-1))``) and the rest exactly on 64-bit integers where they
  hold it, else in float64 with an error bound, as far as the bound decides.

A trial the kernel cannot decide exactly ends the call with the draw's first word
(:data:`UNDECIDED`); the caller replays that one draw with the Python sampler from that
word, which reads the same words and decides the rest exactly. So every draw is the one
the Python sampler makes, only faster (a word falls in the float's margin with probability
about 2⁻³⁹).
"""

from __future__ import annotations

import numpy as np

from .._numba_cache import njit_cached

__all__ = ["DONE", "OUT_OF_WORDS", "UNDECIDED", "constants", "fill"]

DONE, OUT_OF_WORDS, UNDECIDED = 0, 1, 2
_NO_WORDS, _CANNOT_TELL = -2, -1  # the trials' codes besides 0 and 1

_WORD_SCALE = 2.0**-64
# |float(w)·2⁻⁶⁴ - w/2⁶⁴| ≤ 2⁻⁵³ and U < (w + 1)/2⁶⁴: room for both and the sums' rounding.
_SLACK = 2.0**-50
# Relative error allowed on every float threshold (θ/K and γ's parts round at 2⁻⁵³ each).
_RELATIVE = 2.0**-40
_MAX_FACTORS = 2**62


@njit_cached()
def _compare(w, theta, error):
    """1 if ``U < θ`` for every ``U`` in ``[w, w + 1)/2⁶⁴``, 0 if for none, else -1;
    ``θ`` is known within ``error``."""
    u = float(w) * _WORD_SCALE
    bound = error + theta * _RELATIVE + _SLACK
    if u <= theta - bound:
        return 1
    if u >= theta + bound:
        return 0
    return _CANNOT_TELL


@njit_cached()
def _series(words, pos, theta, error):
    """``(Bernoulli(exp(-θ)), pos)`` for ``θ ≤ 1`` (within ``error``): CKS Algorithm 1's
    ``A_K ~ Bernoulli(θ/K)`` from ``K = 1`` until the first 0; 1 iff that ``K`` is odd."""
    k = 1
    while True:
        if pos == words.size:
            return _NO_WORDS, pos
        drawn = _compare(words[pos], theta / k, error / k)
        pos += 1
        if drawn == _CANNOT_TELL:
            return _CANNOT_TELL, pos
        if drawn == 0:
            return k % 2, pos
        k += 1


@njit_cached()
def _exp_minus_one(words, pos):
    """``(Bernoulli(exp(-1)), pos)``: Algorithm 1 with γ = 1, from ``K = 2``, compared on
    integers (``(w + 1)·K ≤ 2⁶⁴`` is ``w < ⌊2⁶⁴/K⌋``, ``w·K ≥ 2⁶⁴`` is ``w ≥ ⌈2⁶⁴/K⌉``)."""
    k = 2
    while True:
        if pos == words.size:
            return _NO_WORDS, pos
        w = words[pos]
        pos += 1
        below = np.uint64(0xFFFFFFFFFFFFFFFF) // np.uint64(k)  # ⌊(2⁶⁴ - 1)/K⌋
        if k & (k - 1) == 0:  # K divides 2⁶⁴: ⌊2⁶⁴/K⌋ = ⌈2⁶⁴/K⌉ = below + 1
            floor, ceil = below + np.uint64(1), below + np.uint64(1)
        else:
            floor, ceil = below, below + np.uint64(1)
        if w < floor:
            k += 1
        elif w >= ceil:
            return k % 2, pos
        else:
            return _CANNOT_TELL, pos


@njit_cached()
def _factors(words, pos, count):
    """``count`` factors ``Bernoulli(exp(-1))``, stopped at the first 0: ``(0 or 1, pos)``."""
    for _ in range(count):
        drawn, pos = _exp_minus_one(words, pos)
        if drawn != 1:
            return drawn, pos
    return 1, pos


@njit_cached()
def _exp_exact(words, pos, p, q):
    """``Bernoulli(exp(-p/q))`` for integers ``p ≥ 0, q ≥ 1``, split as the Python sampler
    splits it (``⌊γ⌋`` factors, ``γ - 1`` of them for an integer ``γ``, then the rest)."""
    if p == 0:
        return 1, pos
    whole = 0
    if p >= q:
        whole, p = p // q, p % q
        if p == 0:
            whole -= 1
            p = q
    drawn, pos = _factors(words, pos, whole)
    if drawn != 1:
        return drawn, pos
    return _series(words, pos, p / q, 0.0)


@njit_cached()
def _exp_float(words, pos, gamma, error):
    """``Bernoulli(exp(-γ))`` with ``γ > 0`` known within ``error`` only: the factors certain
    to be in ``⌊γ⌋`` (or ``γ - 1``) first, then -1 unless the bound fixes their number."""
    low, high = gamma - error, gamma + error
    if low <= 0.0:  # γ = 0 (no trial) cannot be told from a small γ
        return _CANNOT_TELL, pos
    sure = np.ceil(low) - 1.0  # the factors number ⌈γ⌉ - 1, at least this
    most = np.ceil(high) - 1.0
    drawn, pos = _factors(words, pos, int(min(sure, _MAX_FACTORS)))
    if drawn != 1:
        return drawn, pos
    if most != sure or sure >= _MAX_FACTORS:
        return _CANNOT_TELL, pos
    return _series(words, pos, gamma - sure, error * (1.0 + _RELATIVE) + high * 2.0**-52)


@njit_cached()
def _mulhi(a, b):
    """The high 64 bits of the 128-bit product of two uint64."""
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> shift, b & mask, b >> shift
    hi_lo, lo_hi = a_hi * b_lo, a_lo * b_hi
    cross = ((a_lo * b_lo) >> shift) + (hi_lo & mask) + lo_hi
    return a_hi * b_hi + (hi_lo >> shift) + (cross >> shift)


@njit_cached()
def _draw(words, pos, constants):
    """One draw (Algorithm 3 from Algorithm 2), as ``exact_sampling._make_sampler``'s
    ``draw``: ``(code, value, pos)`` with code 0 for a draw, else a trial's code."""
    t, lemire_floor, sigma2, centre, n, dt, den, exact_up_to = constants
    t_word = np.uint64(t)
    while True:
        if pos == words.size:
            return _NO_WORDS, 0, pos
        w = words[pos]
        pos += 1
        if w * t_word < lemire_floor:  # Lemire: the low word of w·t decides a rejection
            continue
        u = np.int64(_mulhi(w, t_word))
        if u != 0:  # D ~ Bernoulli(exp(-U/t))
            drawn, pos = _series(words, pos, u / t, 0.0)
            if drawn != 1:
                if drawn == 0:
                    continue
                return drawn, 0, pos
        v = 0  # V ~ Geometric: Bernoulli(exp(-1)) successes
        while True:
            drawn, pos = _exp_minus_one(words, pos)
            if drawn < 0:
                return drawn, 0, pos
            if drawn == 0:
                break
            v += 1
        y = u + t * v
        if pos == words.size:
            return _NO_WORDS, 0, pos
        negative = words[pos] >> np.uint64(63) == np.uint64(1)
        pos += 1
        if negative and y == 0:
            continue
        if y <= exact_up_to:  # (y·d·t - n)² and 2·n·d·t² fit in int64
            a = y * dt - n
            drawn, pos = _exp_exact(words, pos, a * a, den)
        else:  # γ = (y - σ²/t)²/(2σ²), its float within 2⁻⁴⁸·(y + σ²/t)²/σ²: allow 2⁸ that
            gamma = (y - centre) ** 2 / (2.0 * sigma2)
            drawn, pos = _exp_float(words, pos, gamma, 2.0**-40 * (y + centre) ** 2 / sigma2)
        if drawn < 0:
            return drawn, 0, pos
        if drawn == 1:
            return 0, -y if negative else y, pos


@njit_cached()
def fill(words, pos, out, filled, constants):
    """Draw into ``out[filled:]`` from ``words[pos:]``: ``(filled, pos, status)``.

    ``status`` is :data:`DONE`, :data:`OUT_OF_WORDS` or :data:`UNDECIDED`; for the last two
    ``pos`` is the first word of the draw not made; ``constants`` are :func:`constants`'.
    """
    while filled < out.size:
        code, value, end = _draw(words, pos, constants)
        if code == _NO_WORDS:
            return filled, pos, OUT_OF_WORDS
        if code == _CANNOT_TELL:
            return filled, pos, UNDECIDED
        out[filled] = value
        filled += 1
        pos = end
    return filled, pos, DONE


def constants(n: int, d: int, t: int) -> tuple:
    """The constants of ``σ² = n/d`` and ``t = ⌊σ⌋ + 1`` for :func:`fill` (numba types)."""
    dt, den = d * t, 2 * n * d * t * t
    # y·d·t - n exact in int64 with its square for y ≤ exact_up_to (-1: never).
    exact_up_to = (2**31 + n) // dt if den < 2**62 and n < 2**31 else -1
    return (
        np.int64(t),
        np.uint64((1 << 64) % t),
        float(n / d),
        float(n / d) / t,
        np.int64(n if exact_up_to >= 0 else 0),
        np.int64(dt if exact_up_to >= 0 else 0),
        np.int64(den if exact_up_to >= 0 else 1),
        np.int64(exact_up_to),
    )
