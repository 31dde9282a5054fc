"""A factory's float arguments as shared scalars for a scan (adversary/scenarios/parametric.py).

From the second request with the same other arguments, a ModelAttack's measures
come from one model whose float arguments are shared variables: the factory is
no longer called, and the measures equal those of the factory's own model at
each value. A factory that needs numbers, or whose model with shared arguments
differs from its own, is called at every value as before.
"""

import numpy as np
import pymc as pm
import pytest

import adversary
from adversary.analyses.choose_rho import with_rho
from adversary.distributions import BernoulliCount, DiscreteGaussian
from adversary.measures.exact import exact_measures
from adversary.measures.structure import model_structure


class Counted:
    """A single-block factory that counts its calls; ``style`` how it treats ρ."""

    def __init__(self, style="plain"):
        self.calls, self.style = 0, style

    def __call__(self, prior=0.5, rho=0.1, release=2):
        self.calls += 1
        if self.style == "needs a number":
            rho = float(rho)
        sigma2 = 1 / (2 * rho)
        if self.style == "branches on the type" and not isinstance(rho, float):
            sigma2 = sigma2 * 2  # a different model when ρ is not a float
        with pm.Model() as model:
            x1 = BernoulliCount("X1", known=0, p=prior)
            DiscreteGaussian("x1_release", mu=x1, sigma2=sigma2, observed=release)
        return model


def _scan(factory, rhos, priors=None):
    attack = adversary.attack(factory, priors=priors or {"1/2": 0.5}, truth={"X1": 1})
    return [with_rho(attack, rho).marginal_measures() for rho in rhos]


def _plain(factory, rho, prior=0.5):
    return exact_measures(factory(prior=prior, rho=rho), {"X1": 1})


def test_a_scan_builds_the_model_once_more_and_then_not_at_all():
    factory = Counted()
    rhos = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6]
    measures = _scan(factory, rhos)
    # the attack's own validation, one call at each of the first two values, then the
    # shared model's build (checked against the second value's model); none after
    assert factory.calls == 4
    for rho, result in zip(rhos, measures, strict=True):
        expected = _plain(Counted(), rho)
        assert result.marginal_risk == pytest.approx(expected.marginal_risk, rel=1e-12)
        assert result.correct_decision_probability == pytest.approx(
            expected.correct_decision_probability, rel=1e-12
        )


def test_a_float_prior_is_shared_too_and_its_prior_of_the_event_follows_it():
    """Two priors, the same argument: one shared model, the prior of the event recomputed
    for each value (kept by the values it reads, not once)."""
    factory = Counted()
    attack = adversary.attack(factory, priors={"low": 0.2, "high": 0.7}, truth={"X1": 1})
    for _ in range(3):
        for label, p in (("low", 0.2), ("high", 0.7)):
            result = attack.marginal_measures(label)
            assert result.prior_of_truth == pytest.approx(p, rel=1e-12)
            expected = _plain(Counted(), 0.1, prior=p)
            assert result.marginal_risk == pytest.approx(expected.marginal_risk, rel=1e-12)
    assert factory.calls <= 4


@pytest.mark.parametrize("style", ["needs a number", "branches on the type"])
def test_a_factory_that_needs_numbers_is_called_at_every_value(style):
    factory = Counted(style)
    rhos = [0.1, 0.2, 0.4, 0.8]
    measures = _scan(factory, rhos)
    assert factory.calls >= len(rhos)
    for rho, result in zip(rhos, measures, strict=True):
        expected = _plain(Counted(style), rho)
        assert result.marginal_risk == pytest.approx(expected.marginal_risk, rel=1e-12)


def test_the_users_model_is_always_the_factorys_own():
    factory = Counted()
    attack = adversary.attack(factory, priors={"1/2": 0.5}, truth={"X1": 1})
    _scan(factory, [0.1, 0.2, 0.3])
    model = with_rho(attack, 0.3).model()
    shared = [
        v for v in model.basic_RVs[1].owner.inputs if getattr(v.tag, "shared_argument", False)
    ]
    assert not shared
    assert factory.calls >= 4


def test_a_shared_argument_keeps_its_structure_as_its_value_changes():
    import pytensor

    rho = pytensor.shared(np.float64(0.1), name="rho")
    rho.tag.shared_argument = True
    model = Counted()(rho=rho)
    first = model_structure(model)
    rho.set_value(np.float64(0.7))
    assert model_structure(model) is first
    other = pytensor.shared(np.float64(0.1), name="rho")  # not an argument: by its value
    plain = Counted()(rho=other)
    before = model_structure(plain)
    other.set_value(np.float64(0.7))
    assert model_structure(plain) is not before


def test_a_scans_shared_model_is_keyed_once_and_another_model_at_every_call(monkeypatch):
    """The structure's key walks the whole graph (0.25 ms a Granville evaluation): the shared
    model of a scan changes only through its shared arguments, so it is keyed once."""
    from adversary.measures import structure

    keyed = []
    original = structure._key
    monkeypatch.setattr(structure, "_key", lambda model: keyed.append(model) or original(model))
    rhos = [0.05, 0.1, 0.2, 0.4, 0.8]
    measures = _scan(Counted(), rhos)
    shared = [m for m in keyed if m in structure._FIXED]
    assert len(shared) == 1 and len(keyed) <= 3  # the shared model once, the first two plain
    for rho, result in zip(rhos, measures, strict=True):
        assert result.marginal_risk == pytest.approx(_plain(Counted(), rho).marginal_risk)
    keyed.clear()
    plain = Counted()(rho=0.3)
    model_structure(plain)
    model_structure(plain)
    assert keyed == [plain, plain]  # a model the user holds may change between calls
