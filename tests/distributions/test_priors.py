"""Count priors: log-p, support points, draws, support bounds, argument checks."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

from adversary.distributions import (
    BernoulliCount,
    BoundedUniform,
    DiscreteGaussian,
    FinitePmf,
    ImproperDistributionError,
    ImproperUniform,
    PointMass,
    support_bounds,
)

NEG_INF = -np.inf


def logp(dist, values):
    return pm.logp(dist, np.asarray(values, dtype=np.int64)).eval()


def bounds(dist):
    lower, upper = support_bounds(dist)
    return (
        None if lower is None else int(lower.eval()),
        None if upper is None else int(upper.eval()),
    )


def test_bernoulli_count_is_the_target_prior():
    # X1 in {x_{1,-t}, x_{1,-t}+1} with P[X1 = x_{1,-t}+1] = p (Sec. 3.1).
    x = BernoulliCount.dist(known=3, p=0.3)
    np.testing.assert_allclose(
        logp(x, [2, 3, 4, 5]), [NEG_INF, np.log(0.7), np.log(0.3), NEG_INF], rtol=1e-15
    )
    assert bounds(x) == (3, 4)
    draws = pm.draw(x, 4000, random_seed=11)
    assert set(np.unique(draws)) == {3, 4}
    assert stats.binomtest(int((draws == 4).sum()), 4000, 0.3).pvalue > 1e-3


@pytest.mark.parametrize(("p", "mode"), [(0.3, 3), (0.5, 3), (0.8, 4)])
def test_bernoulli_count_support_point_is_a_mode(p, mode):
    with pm.Model() as model:
        BernoulliCount("x", known=3, p=p)
    assert model.initial_point()["x"] == mode


def test_improper_uniform_is_flat_above_its_tensor_lower_bound():
    # X2 | X1 = k1 ~ Uniform{k1, k1+1, ...} (S3.4).
    with pm.Model() as model:
        x1 = BernoulliCount("x1", known=2, p=0.5)
        ImproperUniform("x2", lower=x1)
    fn = model.compile_fn(model.logp(vars=[model["x2"]]), point_fn=False, inputs=model.value_vars)
    assert fn(np.array(3), np.array(3)) == 0.0
    assert fn(np.array(3), np.array(100)) == 0.0
    assert fn(np.array(3), np.array(2)) == NEG_INF
    point = model.initial_point()
    assert point["x2"] == point["x1"] == 2
    assert np.isfinite(model.compile_logp()(point))
    assert bounds(ImproperUniform.dist(lower=4)) == (4, None)


def test_improper_uniform_cannot_be_drawn():
    with pytest.raises(ImproperDistributionError, match="infinite total mass"):
        pm.draw(ImproperUniform.dist(lower=0), random_seed=1)


def test_bounded_uniform():
    x = BoundedUniform.dist(lower=1, upper=10)
    np.testing.assert_allclose(logp(x, [0, 1, 5, 10, 11]), [NEG_INF, *[-np.log(10)] * 3, NEG_INF])
    assert bounds(x) == (1, 10)
    draws = pm.draw(x, 5000, random_seed=5)
    counts = np.array([(draws == k).sum() for k in range(1, 11)])
    assert counts.sum() == 5000
    assert stats.chisquare(counts).pvalue > 1e-3


def test_bounded_uniform_with_empty_tensor_support_has_zero_probability():
    # X2 ~ Uniform{X1..10}: a value of X1 above 10 leaves no feasible X2.
    lower = pt.lscalar("lower")
    value = pt.lscalar("value")
    fn = pytensor.function([lower, value], pm.logp(BoundedUniform.dist(lower, 10), value))
    assert fn(11, 11) == NEG_INF
    assert fn(3, 4) == pytest.approx(-np.log(8))


def test_point_mass():
    x = PointMass.dist(25)
    np.testing.assert_array_equal(logp(x, [24, 25, 26]), [NEG_INF, 0.0, NEG_INF])
    assert bounds(x) == (25, 25)
    np.testing.assert_array_equal(pm.draw(x, 3, random_seed=1), [25, 25, 25])


def test_finite_pmf_from_mapping_and_lists():
    a = FinitePmf.dist({5: 0.6, 2: 0.4, 9: 0.0})
    b = FinitePmf.dist([2, 5, 9], [0.4, 0.6, 0.0])
    expected = [NEG_INF, np.log(0.4), NEG_INF, np.log(0.6), NEG_INF]
    for x in (a, b):
        np.testing.assert_allclose(logp(x, [1, 2, 3, 5, 9]), expected)
        assert bounds(x) == (2, 9)
    draws = pm.draw(a, 4000, random_seed=9)
    assert set(np.unique(draws)) == {2, 5}
    assert stats.binomtest(int((draws == 5).sum()), 4000, 0.6).pvalue > 1e-3


def test_finite_pmf_support_point_is_a_mode():
    with pm.Model() as model:
        FinitePmf("x", {1: 0.2, 4: 0.5, 7: 0.3})
        FinitePmf("y", [0, 3], [0.5, 0.5], shape=(2,))
    point = model.initial_point()
    assert point["x"] == 4
    np.testing.assert_array_equal(point["y"], [3, 3])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 2], [0.5, 0.6]), "probs must sum to 1"),
        (([1, 2], [-0.5, 1.5]), "probs must be finite, >= 0"),
        (([1, 1], [0.5, 0.5]), "support must not repeat"),
        (([1, 2, 3], [0.5, 0.5]), "probs must have one entry per support value"),
        (([1.5, 2], [0.5, 0.5]), "support must be integer-valued"),
        (([], []), "support must be a non-empty"),
    ],
)
def test_finite_pmf_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        FinitePmf.dist(*args)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: BernoulliCount.dist(known=2, p=0.0), "p must lie strictly between 0 and 1"),
        (lambda: BernoulliCount.dist(known=2, p=1.5), "p must lie strictly between 0 and 1"),
        (lambda: BernoulliCount.dist(known=2.5, p=0.5), "known must be integer-valued"),
        (lambda: ImproperUniform.dist(lower=0.5), "lower must be integer-valued"),
        (lambda: BoundedUniform.dist(lower=5, upper=4), "upper must be >= lower"),
        (lambda: PointMass.dist(np.nan), "value must be integer-valued"),
    ],
)
def test_bad_prior_arguments_name_the_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_every_prior_is_int64_with_a_feasible_initial_point():
    with pm.Model() as model:
        x1 = BernoulliCount("x1", known=0, p=0.5)
        ImproperUniform("x2", lower=x1)
        BoundedUniform("x3", lower=x1, upper=10)
        PointMass("x4", 1)
        FinitePmf("x5", {1: 0.5, 25: 0.5})
        DiscreteGaussian("obs", mu=x1, sigma2=2.0, observed=1)
    assert all(rv.dtype == "int64" for rv in model.free_RVs)
    assert all(np.isfinite(v) for v in model.point_logps().values())


def test_support_bounds_of_pymc_distributions():
    assert bounds(pm.Bernoulli.dist(0.3)) == (0, 1)
    assert bounds(pm.Categorical.dist(p=[0.2, 0.3, 0.5])) == (0, 2)
    assert bounds(pm.DiscreteUniform.dist(2, 7)) == (2, 7)
    assert bounds(pm.Binomial.dist(n=12, p=0.3)) == (0, 12)
    assert bounds(pm.Poisson.dist(3.0)) == (0, None)
    assert bounds(pm.Geometric.dist(0.3)) == (1, None)
    assert bounds(DiscreteGaussian.dist(mu=0, sigma2=1.0)) == (None, None)


def test_support_points_follow_the_parents_support_points_not_prior_draws():
    # Regression: a support point that is another variable unchanged (lower=X1) made
    # PyMC's initial point draw X1 from its prior (P[X1 = 3] = 0.45 here) instead.
    for _ in range(10):
        with pm.Model() as model:
            x1 = BernoulliCount("x1", known=2, p=0.45)
            ImproperUniform("x2", lower=x1)
            PointMass("x3", x1)
            DiscreteGaussian("x4", mu=x1, sigma2=1.0)
        point = model.initial_point()
        assert [int(point[k]) for k in ("x1", "x2", "x3", "x4")] == [2, 2, 2, 2]
