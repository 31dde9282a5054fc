"""Every random-variable op of the package is importable by its class name (``integer_rv``).

Sampling processes receive the ops pickled by reference, and the numba and
support dispatches register their classes: a class not bound in its module
under its own name would break both.
"""

import pickle
import sys

import pytest

from adversary.distributions import discrete_gaussian, priors

OPS = [
    discrete_gaussian.discrete_gaussian,
    priors.bernoulli_count,
    priors.improper_uniform,
    priors.bounded_uniform,
    priors.point_mass,
    priors.finite_pmf,
]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_class_is_bound_in_its_module_and_pickles_by_reference(op):
    op_type = type(op)
    assert getattr(sys.modules[op_type.__module__], op_type.__name__) is op_type
    assert op_type.dtype == "int64"
    assert type(pickle.loads(pickle.dumps(op))) is op_type
