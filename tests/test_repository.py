"""The repository stands alone, keeps its layers and says how to cite and reuse it.

Nothing in it refers to files outside it, each layer of the package imports
only the layers before it (the order of ``adversary/__init__.py``), no module
of the package is over :data:`MAX_MODULE_LINES` lines, and its licence and
citation file agree with ``pyproject.toml``.
"""

import ast
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "adversary"

#: The package's layers in order; a module may import only from its own layer or earlier ones.
LAYERS = [
    {
        "_validation",
        "_output",
        "_limits",
        "_lazy",
        "_numba_cache",
        "memory",
        "time_budget",
        "noise",
        "accounting",
        "budget",
        "budget_files",
        "paper_setting",
        "empirical",
    },
    {"distributions"},
    {"inference"},
    {"measures"},
    # topdown's query matrices use the classifications of scenarios.reconstruction, and
    # scenarios.published_tables uses topdown's solver: one layer
    {"scenarios", "model_files", "topdown"},
    {"analyses", "population", "swapping"},
    # Faces, and the shipped case files (users' files: they may use anything).
    {"reports", "plots", "cli", "reproduction", "models", "__main__", "__init__"},
]


def _tracked_text_files():
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in listed:
        path = ROOT / name
        if path.is_file() and not path.is_symlink() and path.suffix not in (".png", ".parquet"):
            try:
                yield name, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


def test_nothing_refers_to_files_outside_the_repository():
    outside = "../" + "shared"  # written apart so that this file does not match itself
    offenders = [name for name, text in _tracked_text_files() if outside in text]
    assert not offenders, offenders


def _layer(top: str) -> int:
    """The layer of a first component; a name of no module (``__version__``) is the root's."""
    return next((i for i, names in enumerate(LAYERS) if top in names), len(LAYERS) - 1)


def _imported_tops(path: Path) -> set[str]:
    """First components below ``adversary`` of what a module imports from the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    tops = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = [*base, *(node.module.split(".") if node.module else [])]
            else:
                parts = (node.module or "").split(".")
            names = [parts] if node.module or node.level == 0 else []
            if not node.module:  # "from .. import x": each x is a module of the base
                names = [[*parts, alias.name] for alias in node.names]
            for full in names:
                if full and full[0] == "adversary" and len(full) > 1:
                    tops.add(full[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                full = alias.name.split(".")
                if full[0] == "adversary" and len(full) > 1:
                    tops.add(full[1])
    return tops


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_each_module_imports_only_its_layer_and_those_before(path):
    top = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    own = _layer(top)
    later = sorted(t for t in _imported_tops(path) if _layer(t) > own)
    assert not later, f"{path.relative_to(ROOT)} (layer {own + 1}) imports {later}"


#: The longest a Python file may be (small modules with one job).
MAX_MODULE_LINES = 600


def test_no_module_is_over_the_line_limit():
    """Every tracked Python file: the package's modules, its tests, the benchmarks, the docs'."""
    counts = {
        name: len(text.splitlines()) for name, text in _tracked_text_files() if name.endswith(".py")
    }
    assert "adversary/__init__.py" in counts and "tests/conftest.py" in counts
    over = {name: count for name, count in counts.items() if count > MAX_MODULE_LINES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines (split them): {over}"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_declared_licence_is_in_the_repository():
    project = _pyproject()
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2025–2026 The adversary developers" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_citation_file_is_cff_1_2_and_matches_pyproject():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    # The keys CFF 1.2.0 requires, and those a software citation should have.
    for key in ("cff-version", "message", "title", "authors", "version", "license", "abstract"):
        assert citation.get(key), key
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == _pyproject()["version"]
    assert citation["license"] == _pyproject()["license"]
    assert citation["authors"] == [{"name": "The adversary developers"}]
    assert citation["keywords"] and all(isinstance(k, str) for k in citation["keywords"])
    (paper,) = citation["references"]
    assert paper["type"] == "article" and paper["year"] == 2023
    assert [a["family-names"] for a in paper["authors"]] == ["Kazan", "Reiter"]
    assert paper["title"].startswith("Assessing Statistical Disclosure Risk for Differentially")
