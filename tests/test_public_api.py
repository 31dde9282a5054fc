"""The top-level API: every advertised name resolves, and the noise layer stays PyMC-free."""

import subprocess
import sys

import pytest

import adversary
from adversary.scenarios import single_block


@pytest.mark.parametrize("name", adversary.__all__)
def test_every_advertised_name_resolves(name):
    assert getattr(adversary, name) is not None


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nonsense'"):
        adversary.nonsense  # noqa: B018


def test_the_noise_layer_does_not_load_pymc():
    code = "import sys, adversary.noise, adversary.accounting; print('pymc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_top_level_enumerate_matches_the_closed_form():
    case = adversary.load_case("dare_county")
    table = adversary.enumerate_posterior(case.model("1/5"))
    exact = single_block.posterior(case.observed_release, 1 / 5, case.rho)
    assert adversary.posterior_probability(table, {"X1": 1}) == pytest.approx(float(exact))


def test_every_public_module_is_reached_from_the_package_alone():
    # `import adversary`, then `adversary.<module>` for each, in a process that imported nothing
    # else: each module's first access goes through the package's __getattr__ unless an
    # earlier one imported it already
    code = (
        "import adversary\n"
        "for name in adversary.MODULES:\n"
        "    print(name, getattr(adversary, name).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    reached = dict(line.split() for line in out.stdout.splitlines())
    assert reached == {name: f"adversary.{name}" for name in adversary.MODULES}
    assert set(adversary.MODULES) <= set(dir(adversary))
