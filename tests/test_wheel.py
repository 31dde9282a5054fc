"""The package installs from a wheel and runs outside the source tree.

The wheel of a copy of the working tree is built (no network: no build
isolation, setuptools from the project's environment), installed with no
dependencies into a fresh virtual environment in a temporary folder, and run
from there: the dependencies come from the project's environment through a
``.pth`` path line (a path line only extends ``sys.path``; the project's
editable-install hook is not run), so ``adversary`` is the installed copy.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import adversary
from adversary.model_files import load_case
from adversary.reports.single_block import marginal_table

ROOT = Path(__file__).resolve().parent.parent
_SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python, adversary script, working folder)`` of a fresh venv holding the wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=_SKIP, symlinks=True)
    dist = tmp / "dist"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--quiet", "--wheel-dir", str(dist), str(source)),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("adversary-*.whl")
    environment = tmp / "venv"
    venv.create(environment, with_pip=False)
    python = environment / "bin" / "python"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--quiet", "--no-deps", "--no-index", str(wheel)),
        ],
        check=True,
        capture_output=True,
    )
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(target, "project_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    work = tmp / "elsewhere"
    work.mkdir()
    return {
        "python": python,
        "script": environment / "bin" / "adversary",
        "cwd": work,
        "wheel": wheel,
    }


def _run(installed, *argv) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=installed["cwd"],
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_wheel_holds_every_subpackage_and_the_case_studies(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for expected in (
        "adversary/__main__.py",
        "adversary/models/dare_county.py",
        "adversary/noise/mechanisms/base.py",
        "adversary/measures/exact.py",
        "adversary/scenarios/unknown_attribute/case.py",
        "adversary/analyses/compare.py",
    ):
        assert expected in names, expected
    assert not any(name.startswith(("models/", "tests/", "docs/")) for name in names)


def test_the_wheel_carries_the_licence(installed):
    wheel = zipfile.ZipFile(installed["wheel"])
    (info,) = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" in name}
    licence = wheel.read(f"{info}/licenses/LICENSE").decode("utf-8")
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    metadata = wheel.read(f"{info}/METADATA").decode("utf-8").splitlines()
    assert "License-Expression: MIT" in metadata
    assert "License-File: LICENSE" in metadata


def test_the_installed_package_is_the_wheel_not_the_source_tree(installed):
    location = _run(
        installed, installed["python"], "-c", "import adversary; print(adversary.__file__)"
    )
    assert Path(location.strip()).is_relative_to(installed["python"].parent.parent)
    assert not Path(location.strip()).is_relative_to(ROOT)


def test_version_from_the_script_and_from_python_dash_m(installed):
    expected = f"adversary {adversary.__version__}"
    assert _run(installed, installed["script"], "--version").strip() == expected
    assert _run(installed, installed["python"], "-m", "adversary", "--version").strip() == expected


def test_demo_and_run_from_the_installed_package(installed, tmp_path):
    demo = json.loads(_run(installed, installed["script"], "demo", "--json", "--out", tmp_path))
    table5 = marginal_table(load_case("dare_county"))
    for row in demo["table5"]:
        assert row["marginal_risk"] == pytest.approx(table5.loc[row["prior"], "marginal_risk"])
    assert all(Path(path).is_file() for path in demo["figures"])
    run = json.loads(_run(installed, installed["script"], "run", "dare_county", "--json"))
    assert run["model"] == "Dare County ED 28-21 (1940)"
    assert set(run["marginals"]["X1"]) == {"0", "1"}
