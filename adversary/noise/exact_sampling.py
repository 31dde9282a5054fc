"""Exact sampling from the discrete Gaussian ``DG(0, σ²)``.

Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential
Privacy", Section 5:

* Algorithm 1 — ``Bernoulli(exp(-γ))`` for rational ``γ ≥ 0`` by the series
  trick: for ``γ ≤ 1`` draw ``A_K ~ Bernoulli(γ/K)`` for ``K = 1, 2, …`` until
  the first ``A_K = 0`` and return 1 iff that ``K`` is odd; for ``γ > 1``
  multiply ``⌊γ⌋`` independent ``Bernoulli(exp(-1))`` by one
  ``Bernoulli(exp(-(γ - ⌊γ⌋)))``, stopping at the first 0.
* Algorithm 2 — the discrete Laplace ``P[Y = y] ∝ exp(-|y|/t)`` from a uniform
  ``U ∈ {0, …, t-1}`` accepted with probability ``exp(-U/t)``, a geometric
  ``V`` counted with ``Bernoulli(exp(-1))``, ``|Y| = U + tV`` and a random sign
  (``-0`` rejected).
* Algorithm 3 — the discrete Gaussian by rejection from the discrete Laplace
  with ``t = ⌊σ⌋ + 1``, accepting ``Y`` with probability
  ``exp(-(|Y| - σ²/t)² / (2σ²))``.

All arithmetic is on Python integers: σ² is held exactly as a fraction
``n/d`` (a float converts exactly, so ``σ² = 1/(2ρ)`` computed in floating
point is sampled *as that float*), and every Bernoulli probability is a ratio
of integers. A ``Bernoulli(p/q)`` compares one uniform 64-bit word ``w`` with
``p/q`` — ``(w+1)q ≤ p·2⁶⁴`` means 1, ``wq ≥ p·2⁶⁴`` means 0 — and only in
the undecided case (probability at most 2⁻⁶⁴) appends further words, so it is
exact for any size of ``p`` and ``q``. Uniform integers below ``t`` use
Lemire's multiply-and-reject method, also exact. The output therefore has
exactly the distribution ``DG(0, σ²)`` given ideal uniform words; the only
randomness comes from ``rng.integers``.

Cost (measured, CPython 3.12, one core): 2.4–2.8 µs per draw for σ² from
0.5 to 1e12 — 5 000 draws take about 13 ms — and about 4 µs for σ² ≪ 1,
where most discrete-Laplace proposals are rejected; about 13 words per
draw. Each call adds about 20 µs (argument checks, one block of words), so
ask for ``size=n`` rather than calling ``n`` times. A call of
:data:`COMPILED_MIN` draws or more makes the same draws from the same words
with numba (:mod:`adversary.noise._exact_kernel`): about 0.17 µs per draw
(20 000 draws in 3.3 ms against 57 ms). Loading it costs about 0.5 s a process
(numba's import and its disk cache; 1.6 s the first time on a machine, which
compiles it), so a process turns to it once its draws have cost Python about
as much; which sampler made them does not change the draws.
"""

from __future__ import annotations

import numbers
import sys
from fractions import Fraction
from math import isqrt

import numpy as np

from .._validation import as_counts, as_generator, as_positive

__all__ = ["COMPILED_MIN", "MAX_SIGMA2", "sample"]

#: Largest σ² accepted: draws must fit in int64, and at σ = 10¹⁵ the
#: probability of ``|Z| ≥ 2⁶³`` is below ``exp(-4·10⁷)``.
MAX_SIGMA2 = 1e30

_TWO64 = 1 << 64
_MASK64 = _TWO64 - 1
# Words fetched from the generator per call to ``rng.integers``. The word
# stream does not depend on the block size, so ``sample(s, 10, seed)`` is a
# prefix of ``sample(s, 1000, seed)``.
_BLOCK = 512
_WORDS_PER_DRAW = 16  # about 13 are used on average
#: From this many draws a call may use the compiled sampler (the same draws, faster: 16
#: draws in 31 µs against 94 µs, an exact measure's pilot releases at every ρ of a scan) ...
COMPILED_MIN = 8
#: ... once the process has drawn this many in Python: loading numba and the compiled
#: sampler costs about 0.5 s, what Python spends on 100 000 to 170 000 draws.
_COMPILE_AFTER = 100_000
_drawn_in_python = 0


def _as_sigma2(sigma2) -> Fraction:
    """σ² as an exact positive fraction; a float converts exactly."""
    if isinstance(sigma2, Fraction):
        value = sigma2
    elif isinstance(sigma2, numbers.Integral) and not isinstance(sigma2, bool | np.bool_):
        value = Fraction(int(sigma2))
    else:
        array = as_positive(sigma2, "sigma2")
        if array.ndim != 0:
            raise ValueError(f"sigma2 must be a scalar, got an array of shape {array.shape}")
        value = Fraction(float(array))
    if value <= 0:
        raise ValueError(f"sigma2 must be finite and > 0, got {sigma2!r}")
    if value > MAX_SIGMA2:
        raise ValueError(f"sigma2 must be at most {MAX_SIGMA2:g} (draws are int64), got {sigma2!r}")
    return value


def _as_size(size) -> tuple[int, ...] | None:
    if size is None:
        return None
    if isinstance(size, float | np.floating) or (
        isinstance(size, tuple | list) and any(isinstance(s, float | np.floating) for s in size)
    ):
        raise TypeError(f"size must be None, an int or a tuple of ints, got {size!r}")
    shape = as_counts(size, "size")
    if shape.ndim > 1:
        raise ValueError(f"size must be None, an int or a tuple of ints, got {size!r}")
    return tuple(int(s) for s in np.atleast_1d(shape))


def _block_size(count: int) -> int:
    """Words fetched at a time for ``count`` draws (the stream does not depend on it)."""
    return min(max(count * _WORDS_PER_DRAW, _BLOCK), 128 * _BLOCK)


def _word_block(rng: np.random.Generator, block: int) -> np.ndarray:
    """The next ``block`` uniform 64-bit words of ``rng``'s stream."""
    return rng.integers(0, _TWO64, size=block, dtype=np.uint64)


def _word_source(rng: np.random.Generator, block: int):
    """An endless iterator of uniform 64-bit words (Python ints) from ``rng``."""
    while True:
        yield from _word_block(rng, block).tolist()


def _bernoulli_refine(w: int, p: int, q: int, next_word) -> bool:
    """Finish ``Bernoulli(p/q)`` when the first word ``w`` of ``U`` left it undecided.

    ``U`` is uniform on [0, 1) and read 64 bits at a time; the answer is
    ``U < p/q``. Called with ``w/2⁶⁴ < p/q < (w+1)/2⁶⁴``.
    """
    shift = 64
    while True:  # p/q lies inside [w, w+1)/2^shift: read 64 more bits of U
        w = (w << 64) | next_word()
        shift += 64
        lo = w * q
        hi = p << shift
        if lo + q <= hi:  # U < (w+1)/2^shift ≤ p/q
            return True
        if lo >= hi:  # U ≥ w/2^shift ≥ p/q
            return False


def _make_bernoulli_exp(next_word):
    """``(bernoulli_exp, bernoulli_exp_minus_one)`` on the word stream ``next_word``.

    ``bernoulli_exp(p, q)`` is ``Bernoulli(exp(-p/q))`` for integers ``p ≥ 0,
    q ≥ 1`` and ``bernoulli_exp_minus_one()`` is ``Bernoulli(exp(-1))``, both
    by CKS Algorithm 1.
    """

    def bernoulli_exp_minus_one() -> bool:
        # Algorithm 1 with γ = 1: A_1 ~ Bernoulli(1) is always 1, so start at K = 2.
        k = 2
        while True:
            w = next_word()  # A_K ~ Bernoulli(1/K): compare one word with 2⁶⁴/K
            if (w + 1) * k <= _TWO64:
                k += 1
            elif w * k >= _TWO64:
                return k & 1 == 1
            elif _bernoulli_refine(w, 1, k, next_word):  # pragma: no cover - probability ≤ 2⁻⁶⁴
                k += 1
            else:  # pragma: no cover
                return k & 1 == 1

    def bernoulli_exp(p: int, q: int) -> bool:
        if p == 0:
            return True
        if p >= q:  # γ > 1: ⌊γ⌋ factors Bernoulli(exp(-1)), stop at the first 0
            whole, p = divmod(p, q)
            if p == 0:  # γ an integer: ⌊γ⌋ - 1 factors here, the last one below
                whole -= 1
                p = q
            for _ in range(whole):
                if not bernoulli_exp_minus_one():
                    return False
        # γ = p/q ≤ 1: A_K ~ Bernoulli(γ/K) = Bernoulli(p/(qK)) until the first
        # A_K = 0; the answer is 1 iff that K is odd.
        hi = p << 64
        qk = q
        odd = True
        while True:
            w = next_word()
            lo = w * qk
            if lo + qk <= hi:
                pass
            elif lo >= hi:
                return odd
            elif not _bernoulli_refine(
                w, p, qk, next_word
            ):  # pragma: no cover - probability ≤ 2⁻⁶⁴
                return odd
            qk += q
            odd = not odd

    return bernoulli_exp, bernoulli_exp_minus_one


def _make_sampler(sigma2: Fraction, next_word):
    """A closure returning one exact ``DG(0, σ²)`` draw per call (CKS Algorithm 3).

    ``next_word()`` must return independent uniform integers in ``[0, 2⁶⁴)``.
    """
    n, d = sigma2.numerator, sigma2.denominator
    t = isqrt(n // d) + 1  # ⌊σ⌋ + 1, since ⌊√x⌋ = ⌊√⌊x⌋⌋
    if t >= _TWO64:  # pragma: no cover - excluded by MAX_SIGMA2
        raise ValueError(f"sigma2 must be at most {MAX_SIGMA2:g}, got {sigma2}")
    # Algorithm 3's acceptance exponent γ(y) = (|y| - σ²/t)² / (2σ²)
    #   = (|y|·d·t - n)² / (2·n·d·t²), a ratio of integers.
    gamma_den = 2 * n * d * t * t
    dt = d * t
    lemire_floor = _TWO64 % t  # a product whose low word is below this is rejected
    bernoulli_exp, bernoulli_exp_minus_one = _make_bernoulli_exp(next_word)

    def draw() -> int:
        while True:
            # Algorithm 2 with s = 1, the discrete Laplace of scale t.
            # U uniform on {0, …, t-1} by Lemire's multiply-and-reject (exact).
            m = next_word() * t
            if m & _MASK64 < lemire_floor:
                continue
            u = m >> 64
            if u and not bernoulli_exp(u, t):  # D ~ Bernoulli(exp(-U/t))
                continue
            v = 0  # V ~ Geometric: count Bernoulli(exp(-1)) successes
            while bernoulli_exp_minus_one():
                v += 1
            y = u + t * v
            negative = next_word() >> 63  # B ~ Bernoulli(1/2), the sign
            if negative and y == 0:
                continue
            # Algorithm 3: accept with probability exp(-(|y| - σ²/t)² / (2σ²)).
            a = y * dt - n
            if bernoulli_exp(a * a, gamma_den):
                return -y if negative else y

    return draw


def sample(sigma2, size=None, rng=None):
    """Exact draws from ``DG(0, σ²)``: ``P[Z = z] ∝ exp(-z²/(2σ²))`` on the integers.

    Canonne, Kamath & Steinke (2020), Algorithm 3 (discrete Gaussian by
    rejection from the discrete Laplace of Algorithm 2, with the
    ``Bernoulli(exp(-γ))`` of Algorithm 1), in exact integer arithmetic.

    Parameters
    ----------
    sigma2
        The scale σ² > 0 (at most :data:`MAX_SIGMA2`): a float — converted
        exactly with ``Fraction(float)``, so the draws follow ``DG`` for
        exactly that binary value — an int, or a :class:`fractions.Fraction`.
    size
        ``None`` for one draw returned as a Python ``int``; otherwise an int
        or tuple of ints, the shape of the returned int64 array.
    rng
        A ``numpy.random.Generator``, an int seed or ``None``. The only source
        of randomness: 64-bit words drawn with ``rng.integers`` in blocks, so
        the same seed gives the same draws, and the draws for a smaller
        ``size`` are a prefix of those for a larger one. A passed Generator is
        advanced by whole blocks (unused words are discarded).

    Notes
    -----
    Cost: about 2.5 µs per draw in CPython 3.12 (4 µs for σ² ≪ 1) plus about
    20 µs per call; about 0.17 µs per draw, the same draws, once compiled (calls
    of :data:`COMPILED_MIN` draws or more); see the module docstring.
    """
    value = _as_sigma2(sigma2)
    shape = _as_size(size)
    generator = as_generator(rng, "rng")
    count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
    block = 64 if shape is None else _block_size(count)
    if shape is None:
        return _make_sampler(value, _word_source(generator, block).__next__)()
    draws = _compiled_draws if _worth_compiling(count) else _python_draws
    return draws(value, count, generator, block).reshape(shape)


def _python_draws(sigma2: Fraction, count: int, rng: np.random.Generator, block: int):
    """``count`` draws of :func:`_make_sampler` on the words of ``_word_source(rng, block)``,
    one at a time in Python."""
    draw = _make_sampler(sigma2, _word_source(rng, block).__next__)
    return np.fromiter((draw() for _ in range(count)), dtype=np.int64, count=count)


def _worth_compiling(count: int) -> bool:
    """Whether ``count`` draws go to the compiled sampler: :data:`COMPILED_MIN` or more,
    once it is loaded or this process's draws reach :data:`_COMPILE_AFTER` (rent or buy)."""
    global _drawn_in_python
    if count >= COMPILED_MIN and (
        "adversary.noise._exact_kernel" in sys.modules or _drawn_in_python + count >= _COMPILE_AFTER
    ):
        return True
    _drawn_in_python += count
    return False


class _WordBuffer:
    """The word stream of :func:`_word_source` as an array (for the compiled sampler) with
    a read position, and one word at a time (for the draws it replays)."""

    def __init__(self, rng: np.random.Generator, block: int):
        self.rng, self.block = rng, block
        self.words = _word_block(rng, block)
        self.pos = 0

    def extend(self) -> None:
        """Keep the words from ``pos`` on and append the stream's next block."""
        self.words = np.concatenate([self.words[self.pos :], _word_block(self.rng, self.block)])
        self.pos = 0

    def next_word(self) -> int:
        if self.pos == self.words.size:
            self.extend()
        self.pos += 1
        return int(self.words[self.pos - 1])


def _compiled_draws(sigma2: Fraction, count: int, rng: np.random.Generator, block: int):
    """``count`` draws of :func:`_make_sampler` on the words of ``_word_source(rng, block)``,
    made by the compiled sampler (:mod:`._exact_kernel`); a draw it cannot decide exactly
    is replayed here from its first word."""
    from . import _exact_kernel as kernel  # numba: imported when first needed

    n, d = sigma2.numerator, sigma2.denominator
    constants = kernel.constants(n, d, isqrt(n // d) + 1)
    buffer = _WordBuffer(rng, block)
    replay = _make_sampler(sigma2, buffer.next_word)
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while True:
        filled, buffer.pos, status = kernel.fill(buffer.words, buffer.pos, out, filled, constants)
        if status == kernel.DONE:
            return out
        if status == kernel.OUT_OF_WORDS:
            buffer.extend()
        else:
            out[filled] = replay()
            filled += 1
