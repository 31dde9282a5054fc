"""one_measure: a scenario's single-measure functions from its ``marginals``."""

import inspect

import pytest

from adversary.measures.marginal import one_measure
from adversary.scenarios import multi_level as ml


def test_one_measure_returns_the_field_with_the_signature_of_marginals():
    risk = one_measure(ml.marginals, "marginal_risk", "Marginal risk (3.4)")
    assert risk.__name__ == "marginal_risk"
    assert "``marginal_risk`` of :func:`marginals`" in risk.__doc__
    expected = inspect.signature(ml.marginals).replace(return_annotation=inspect.Signature.empty)
    assert inspect.signature(risk) == expected
    assert risk(0.5, [0.0992, 0.2465]) == pytest.approx(
        float(ml.marginals(0.5, [0.0992, 0.2465]).marginal_risk), rel=0, abs=0
    )
