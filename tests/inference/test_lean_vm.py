"""The kernels' Python tier calls elementwise nodes directly, with PyTensor's results."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.conditional.op import ifelse
from pytensor.link.vm import VMLinker

from adversary.inference._conditional import one_shot
from adversary.inference.safe import safe_mode
from adversary.inference.tiered import python_vm_mode


def plain_python_vm() -> Mode:
    """The same rewrites on PyTensor's own Python VM."""
    linker = VMLinker(use_cloop=False, c_thunks=False)
    return Mode(linker=linker, optimizer=python_vm_mode().provided_optimizer)


def lean_thunks(fn) -> int:
    return sum(thunk.__name__ == "lean" for thunk in fn.vm.thunks)


def counting_graph():
    """Persons' cells counted by a sum of comparisons (a variadic add of booleans, cast), a
    float of integers (a ufunc with a signature), in-place updates, a log-sum-exp and a lazy
    branch (run by PyTensor's lazy VM, which reads which nodes have been computed)."""
    persons = pt.lvector("persons")
    weights = pt.dvector("weights")
    scale = pt.dscalar("scale")
    cells = pt.arange(4)
    counts = sum(pt.eq(persons[i], cells) for i in range(5))
    score = pt.exp(counts) * weights + scale * counts - pt.log1p(weights**2)
    branch = ifelse(scale > 0, pt.exp(score) - 1, score**2)
    outputs = [counts, score, pt.logsumexp(score), counts.astype("float64"), branch]
    return [persons, weights, scale], outputs


def assert_same_results(lean, plain, seed: int) -> None:
    """The two functions of :func:`counting_graph` agree to the bit, dtypes too, on 20 inputs."""
    rng = np.random.default_rng(seed)
    for _ in range(20):
        args = (rng.integers(0, 4, 5), rng.normal(size=4), rng.normal())
        for got, expected in zip(lean(*args), plain(*args), strict=True):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


def test_the_lean_nodes_compute_what_pytensors_perform_computes():
    inputs, outputs = counting_graph()
    lean = pytensor.function(inputs, outputs, mode=python_vm_mode())
    plain = pytensor.function(inputs, outputs, mode=plain_python_vm())
    assert lean_thunks(lean) >= 5 and lean_thunks(plain) == 0
    assert_same_results(lean, plain, seed=3)


def test_one_shot_functions_are_fast_compile_with_the_lean_nodes():
    """The exact measures' tables, once per rho of a scan: PyTensor's FAST_COMPILE, whose
    Elemwise.perform bookkeeping was most of a small attack's evaluation, with the same
    results; a mode the caller chose is kept."""
    inputs, outputs = counting_graph()
    lean = pytensor.function(inputs, outputs, **one_shot(None))
    plain = pytensor.function(inputs, outputs, mode=safe_mode("FAST_COMPILE"))
    assert lean_thunks(lean) >= 5 and lean_thunks(plain) == 0
    assert_same_results(lean, plain, seed=5)
    chosen = one_shot({"mode": "FAST_RUN"})["mode"]
    assert not isinstance(chosen.linker, type(one_shot(None)["mode"].linker))


def test_runtime_broadcasting_is_refused_as_pytensor_refuses_it():
    x, y = pt.dvector("x"), pt.dvector("y")
    fn = pytensor.function([x, y], x * y + 1.0, mode=python_vm_mode())
    assert lean_thunks(fn) >= 1
    np.testing.assert_array_equal(fn(np.ones(3), np.full(3, 2.0)), np.full(3, 3.0))
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
        fn(np.ones(1), np.ones(3))
