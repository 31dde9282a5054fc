"""The compiled discrete Gaussian sampler makes the Python sampler's draws from the same words.

``exact_sampling.sample`` hands calls of :data:`~adversary.noise.exact_sampling.COMPILED_MIN`
draws or more to :mod:`adversary.noise._exact_kernel` once it is loaded (or the process has
drawn enough for loading it to pay). Its draws must be the one-at-a-time
sampler's (CKS Algorithms 1-3 on Python integers) word for word, including where it runs out
of words and where its float comparisons cannot decide and it replays a draw.
"""

import sys
from fractions import Fraction

import numpy as np
import pytest

from adversary.noise import _exact_kernel as kernel
from adversary.noise import exact_sampling as es

TWO64 = 1 << 64


class _Stream:
    """A stand-in generator: ``integers(0, 2⁶⁴, size)`` returns the given words first, then
    words of a seeded generator."""

    def __init__(self, first, seed):
        self.words = [int(w) for w in first]
        self.rng = np.random.default_rng(seed)

    def integers(self, low, high, size, dtype):
        assert (low, high, dtype) == (0, TWO64, np.uint64)
        taken, self.words = self.words[:size], self.words[size:]
        rest = self.rng.integers(0, TWO64, size=size - len(taken), dtype=np.uint64)
        return np.concatenate([np.array(taken, dtype=np.uint64), rest])


def _python_draws(sigma2, count, stream, block):
    return es._python_draws(Fraction(sigma2), count, stream, block)


# σ² = 2 and 5 are short rationals (Algorithm 3's exponent on 64-bit integers); 1/(2·0.0992)
# has a 2⁵⁰ denominator and 1e24 a huge numerator (the exponent in float64 with a bound);
# 1e-3 and 1e-40 reject almost every proposal.
SIGMA2 = [2, 5, 1 / (2 * 0.0992), 1 / 3, 1e-3, Fraction(1, 10**40), 1e12, 1e24]


@pytest.mark.parametrize("sigma2", SIGMA2)
@pytest.mark.parametrize("block", [16, 4096])  # 16: many refills, mid-draw
def test_compiled_draws_are_the_python_samplers(sigma2, block):
    count = 3000
    compiled = es._compiled_draws(Fraction(sigma2), count, _Stream([], 5), block)
    np.testing.assert_array_equal(compiled, _python_draws(sigma2, count, _Stream([], 5), block))


@pytest.mark.parametrize("count", [16, 1000])  # an exact measure's pilot draws; a simulation
def test_sample_uses_it_and_leaves_the_generator_where_python_would(count):
    assert es.COMPILED_MIN <= 16 and es._worth_compiling(count)
    rng = np.random.default_rng(3)
    draws = es.sample(5.04, count, rng)
    python_rng = np.random.default_rng(3)
    block = es._block_size(count)
    np.testing.assert_array_equal(draws, _python_draws(5.04, count, python_rng, block))
    assert rng.integers(0, 10**9) == python_rng.integers(0, 10**9)


def test_a_trial_the_floats_cannot_decide_is_replayed_exactly():
    # σ² = 2: t = 2, so the first word 2⁶³ + 5 gives U = 1 (its top bit) and D ~
    # Bernoulli(exp(-1/2)) starts with A_1 ~ Bernoulli(1/2), whose word 2⁶³ sits on 1/2:
    # the float comparison cannot tell; the integers can (2⁶³·2 ≥ 2⁶⁴: A_1 = 0).
    first = [2**63 + 5, 2**63]
    words = np.array(first + [0] * 64, dtype=np.uint64)
    constants = kernel.constants(2, 1, 2)
    filled, pos, status = kernel.fill(words, 0, np.empty(1, dtype=np.int64), 0, constants)
    assert (filled, pos, status) == (0, 0, kernel.UNDECIDED)
    compiled = es._compiled_draws(Fraction(2), 500, _Stream(first, 9), 64)
    np.testing.assert_array_equal(compiled, _python_draws(2, 500, _Stream(first, 9), 64))


def test_the_high_word_of_a_product():
    rng = np.random.default_rng(0)
    for a, b in rng.integers(0, TWO64, size=(200, 2), dtype=np.uint64).tolist():
        assert kernel._mulhi(np.uint64(a), np.uint64(b)) == (a * b) >> 64
    top = TWO64 - 1
    assert kernel._mulhi(np.uint64(top), np.uint64(top)) == (top * top) >> 64


def test_a_process_turns_to_it_once_python_has_drawn_about_its_cost(monkeypatch):
    monkeypatch.delitem(sys.modules, "adversary.noise._exact_kernel")  # as if never loaded
    monkeypatch.setattr(es, "_drawn_in_python", 0)
    assert not es._worth_compiling(es.COMPILED_MIN)
    assert es._drawn_in_python == es.COMPILED_MIN  # counted
    assert es._worth_compiling(es._COMPILE_AFTER - es.COMPILED_MIN)  # reaches the limit
    monkeypatch.setitem(sys.modules, "adversary.noise._exact_kernel", kernel)  # loaded
    assert es._worth_compiling(es.COMPILED_MIN)
    assert not es._worth_compiling(es.COMPILED_MIN - 1)  # a short call stays in Python
