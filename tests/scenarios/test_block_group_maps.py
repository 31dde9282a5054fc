"""One decision map per d gives every truth's block-group measures: equal to the per-truth sums."""

import numpy as np
import pytest

from adversary.scenarios.block_group.maps import MAX_SPAN, measures_by_truth
from adversary.scenarios.block_group.prior import bounded_uniform, improper_uniform
from adversary.scenarios.block_group.releases import release_measures

RHOS = dict(rho1=0.0992, rho2=0.2465)


@pytest.mark.parametrize("sum_noise", ["approximate", "exact"])
@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize("d", [1, 4, 27])
def test_every_truth_equals_its_own_release_sums(d, tie_rule, sum_noise):
    # Truths (m + 1, m + t) for several m: the measures depend on t = x2 - m alone.
    setting = dict(**RHOS, d=d, convention="paper", sum_noise=sum_noise, tail_mass=1e-13)
    offsets, priors = np.array([1, 2, 5, 3, 60]), [0.5, 0.1, 1 / 864]
    maps = measures_by_truth(offsets, priors=priors, tie_rule=tie_rule, **setting)
    for i, p in enumerate(priors):
        for j, t in enumerate(offsets):
            for m in (0, 4):
                one = release_measures(
                    (m + 1, m + t), prior=p, known_count=m, tie_rule=tie_rule, **setting
                )
                for key in ("marginal_posterior", "marginal_risk", "correct_decision_probability"):
                    assert maps[key][i, j] == pytest.approx(one[key], rel=0, abs=1e-12), key
                assert maps["omitted_mass"][j] == pytest.approx(one["omitted_mass"], rel=1e-12)


def test_truths_far_apart_use_separate_maps_with_the_same_results():
    # One map per span of MAX_SPAN offsets: a far truth gets its own, and the same numbers.
    setting = dict(**RHOS, d=3, tail_mass=1e-13)
    apart = measures_by_truth([2, 2 + 3 * MAX_SPAN], priors=[0.5], **setting)
    alone = measures_by_truth([2 + 3 * MAX_SPAN], priors=[0.5], **setting)
    assert (
        apart["correct_decision_probability"][0, 1] == alone["correct_decision_probability"][0, 0]
    )


def test_settings_one_map_cannot_serve_are_refused():
    with pytest.raises(ValueError, match="only under the improper uniform prior of X2"):
        measures_by_truth([1, 2], priors=[0.5], **RHOS, d=3, x2_prior=bounded_uniform(10))
    with pytest.raises(ValueError, match="offsets must be a 1-d sequence of x2 - m >= 1"):
        measures_by_truth([0, 2], priors=[0.5], **RHOS, d=3)
    assert measures_by_truth([1], priors=[0.5], **RHOS, d=3, x2_prior=improper_uniform())
