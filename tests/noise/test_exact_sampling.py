"""Exact discrete Gaussian sampling (Canonne, Kamath & Steinke 2020, Algorithms 1–3)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from adversary.noise import discrete_gaussian as dg
from adversary.noise.exact_sampling import (
    MAX_SIGMA2,
    _bernoulli_refine,
    _make_bernoulli_exp,
    _word_source,
    sample,
)

TWO64 = 1 << 64
N_DRAWS = 20_000


def chi_square_pvalue(draws, sigma2, min_expected=5.0):
    """Pearson chi-square p-value of integer draws against the DG(0, σ²) pmf.

    Cells: each integer in ``(-h, h)`` and the two tails ``Z ≤ -h``, ``Z ≥ h``,
    with ``h`` the largest value for which every cell expects ``min_expected`` draws.
    """
    n = draws.size
    h = int(dg.cutoff(sigma2, 1e-12)) + 1
    while True:
        inner = np.arange(-h + 1, h)
        tail = 0.5 * (1.0 - math.fsum(dg.pmf(inner, sigma2)))  # P[Z ≥ h] by symmetry
        if n * min(tail, float(dg.pmf(h - 1, sigma2))) >= min_expected:
            break
        h -= 1
    observed = np.concatenate(
        [
            [np.sum(draws <= -h)],
            np.bincount(draws[np.abs(draws) < h] + h - 1, minlength=2 * h - 1),
            [np.sum(draws >= h)],
        ]
    )
    expected = n * np.concatenate([[tail], dg.pmf(inner, sigma2), [tail]])
    assert expected.min() >= min_expected
    return stats.chisquare(observed, expected).pvalue


# σ² = 5.04 is 1/(2·0.0992) rounded (block GVHR, paper convention); the float
# 1/(2·0.0992) itself has a 2⁵⁰-denominator, not a short rational.
GOF_CASES = [
    (0.5, 11),
    (Fraction(126, 25), 12),
    (1 / (2 * 0.0992), 13),
    (50, 14),
]


@pytest.mark.parametrize(("sigma2", "seed"), GOF_CASES)
def test_draws_fit_the_pmf(sigma2, seed):
    draws = sample(sigma2, N_DRAWS, seed)
    assert draws.dtype == np.int64
    assert chi_square_pvalue(draws, float(sigma2)) > 1e-3


def test_goodness_of_fit_test_has_power():
    # The same draws tested against a 10 % larger σ² must be rejected, so the
    # tests above would catch a sampler with the wrong scale.
    draws = sample(Fraction(126, 25), N_DRAWS, 12)
    assert chi_square_pvalue(draws, 1.1 * 5.04) < 1e-6
    assert chi_square_pvalue(draws, 5.04 / 1.1) < 1e-6


@pytest.mark.parametrize(("sigma2", "seed"), [(50.0, 21), (1e12, 22), (1 / 3, 23)])
def test_sample_mean_and_variance(sigma2, seed):
    draws = sample(sigma2, N_DRAWS, seed)
    var = float(dg.variance(sigma2))
    # Standard errors: sd(mean) = √(var/n); sd(sample variance) ≈ √((μ₄ - var²)/n),
    # μ₄ ≤ 3σ⁴ for the discrete Gaussian as for the Gaussian it rounds.
    assert abs(draws.mean()) < 4.5 * math.sqrt(var / N_DRAWS)
    fourth = 3.0 * sigma2**2
    assert abs(draws.astype(float).var() - var) < 4.5 * math.sqrt((fourth - var**2) / N_DRAWS)


def test_tiny_sigma2_draws_zero():
    # P[Z ≠ 0] = 2e^{-500}/Z for σ² = 1e-3.
    assert not np.any(sample(1e-3, 2000, 0))
    assert sample(Fraction(1, 10**40), rng=1) == 0


def test_large_draws_are_exact_int64():
    draws = sample(1e24, 1000, 5)
    assert draws.dtype == np.int64
    assert 0.5e12 < np.abs(draws).mean() < 1.1e12  # E|Z| ≈ σ √(2/π) = 0.80e12


def test_same_seed_same_draws():
    first = sample(5.04, 500, 42)
    np.testing.assert_array_equal(first, sample(5.04, 500, 42))
    np.testing.assert_array_equal(first, sample(5.04, 500, np.random.default_rng(42)))
    assert not np.array_equal(first, sample(5.04, 500, 43))
    # Words come from one stream, so a smaller size gives a prefix.
    np.testing.assert_array_equal(first[:7], sample(5.04, 7, 42))
    assert sample(5.04, rng=42) == first[0]


def test_generator_is_advanced():
    rng = np.random.default_rng(7)
    a = sample(50, 100, rng)
    b = sample(50, 100, rng)
    assert not np.array_equal(a, b)


def test_shapes():
    assert isinstance(sample(2.0, rng=0), int)
    assert sample(2.0, (3, 4), 0).shape == (3, 4)
    assert sample(2.0, 0, 0).shape == (0,)
    assert sample(2.0, np.int64(5), 0).shape == (5,)
    assert sample(2, [2, 1], 0).shape == (2, 1)


@pytest.mark.parametrize(
    "sigma2",
    [0.0, -1.0, np.nan, np.inf, -3, 0, Fraction(-1, 2), Fraction(0), 10 * MAX_SIGMA2, [1.0, 2.0]],
)
def test_bad_sigma2_raises_value_error(sigma2):
    with pytest.raises(ValueError, match=r"^sigma2 "):
        sample(sigma2, 3, 0)


@pytest.mark.parametrize("sigma2", ["5", True, None, 1 + 2j])
def test_non_numeric_sigma2_raises_type_error(sigma2):
    with pytest.raises(TypeError, match=r"^sigma2 "):
        sample(sigma2, 3, 0)


@pytest.mark.parametrize(
    ("size", "error"),
    [(-1, ValueError), ((2, -1), ValueError), ([[1, 2]], ValueError), (2.0, TypeError)],
)
def test_bad_size_names_the_argument(size, error):
    with pytest.raises(error, match=r"^size "):
        sample(1.0, size, 0)


def test_string_size_names_the_argument():
    with pytest.raises(TypeError, match=r"^size "):
        sample(1.0, "3", 0)


@pytest.mark.parametrize(
    ("rng", "error"),
    [
        (-1, ValueError),
        ("seed", TypeError),
        (1.5, TypeError),
        (True, TypeError),
        (np.random.RandomState(0), TypeError),
    ],
)
def test_bad_rng_names_the_argument(rng, error):
    with pytest.raises(error, match=r"^rng "):
        sample(1.0, 3, rng)


# --- the building blocks ------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "q"), [(0, 1), (1, 3), (1, 1), (5, 2), (3, 1), (7, 1000), (10**30 + 1, 10**30)]
)
def test_bernoulli_exp_frequency(p, q):
    # CKS Algorithm 1: P[1] = exp(-p/q), for γ = 0, 1/3, 1, 2.5 (two branches),
    # an integer γ, a small one and a big-integer ratio.
    bernoulli_exp, _ = _make_bernoulli_exp(
        _word_source(np.random.default_rng(p + q), 4096).__next__
    )
    hits = sum(bernoulli_exp(p, q) for _ in range(N_DRAWS))
    prob = math.exp(-p / q)
    assert abs(hits / N_DRAWS - prob) <= 4.5 * math.sqrt(prob * (1 - prob) / N_DRAWS) + 1e-12


def test_bernoulli_exp_minus_one_frequency():
    _, bernoulli_e = _make_bernoulli_exp(_word_source(np.random.default_rng(3), 4096).__next__)
    hits = sum(bernoulli_e() for _ in range(N_DRAWS))
    prob = math.exp(-1)
    assert abs(hits / N_DRAWS - prob) <= 4.5 * math.sqrt(prob * (1 - prob) / N_DRAWS)


def test_refinement_decides_with_more_bits():
    # 1/3 lies strictly inside [w, w+1)/2⁶⁴ for w = ⌊2⁶⁴/3⌋; the next word decides.
    w = TWO64 // 3
    assert w * 3 < TWO64 < (w + 1) * 3
    assert _bernoulli_refine(w, 1, 3, iter([0]).__next__) is True
    assert _bernoulli_refine(w, 1, 3, iter([TWO64 - 1]).__next__) is False
    # 1/3 = 0.010101…₂: with the next word equal to w again, U = 0.0101…01|0101…01
    # is still below 1/3 by less than 2⁻¹²⁸, so a third word is read.
    assert _bernoulli_refine(w, 1, 3, iter([w, TWO64 - 1]).__next__) is False
    assert _bernoulli_refine(w, 1, 3, iter([w, 0]).__next__) is True


def test_bernoulli_exp_minus_one_uses_refinement():
    # Words: A_2 = 1 (0 < 2⁶³), A_3 undecided at ⌊2⁶⁴/3⌋ and refined to 1 by a
    # 0 word, then A_4 = 0 (top word): K = 4 is even, so the answer is 0.
    w3 = TWO64 // 3
    _, bernoulli_e = _make_bernoulli_exp(iter([0, w3, 0, TWO64 - 1]).__next__)
    assert bernoulli_e() is False
    # A_3 refined to 0 instead: K = 3 is odd, the answer is 1.
    _, bernoulli_e = _make_bernoulli_exp(iter([0, w3, TWO64 - 1]).__next__)
    assert bernoulli_e() is True
