"""The draws' numba implementations (``adversary.distributions._numba``) register when
PyTensor's numba backend is imported, not when the distributions are: numba and that
backend take seconds to import, and an exact answer never compiles with numba."""

import subprocess
import sys
import textwrap

from adversary._lazy import after_import

#: In a fresh interpreter: the distributions first, then a numba compile of their draws.
DRAWS_UNDER_NUMBA = textwrap.dedent(
    """
    import sys
    import warnings

    import pymc as pm

    from adversary.distributions import DiscreteGaussian, FinitePmf

    assert "numba" not in sys.modules and "adversary.distributions._numba" not in sys.modules
    cell = FinitePmf.dist(support=[0, 1, 2], probs=[0.5, 0.3, 0.2])
    release = DiscreteGaussian.dist(mu=cell + 5, rho=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTensor's object-mode fallback warns
        draws = pm.draw([cell, release], draws=200, random_seed=1, mode="NUMBA")
    assert "adversary.distributions._numba" in sys.modules
    assert set(draws[0].tolist()) == {0, 1, 2}, draws[0]
    print("ok")
    """
)


def test_the_numba_draws_register_when_the_numba_backend_is_imported():
    result = subprocess.run(
        [sys.executable, "-c", DRAWS_UNDER_NUMBA], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_after_import_calls_back_once_the_module_is_imported(tmp_path, monkeypatch):
    (tmp_path / "late_module.py").write_text("VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []
    try:
        after_import("late_module", lambda: calls.append(sys.modules["late_module"].VALUE))
        assert calls == []
        import late_module  # noqa: F401

        assert calls == [7]
        after_import("late_module", lambda: calls.append("now"))  # already imported
        assert calls == [7, "now"]
    finally:
        sys.modules.pop("late_module", None)
