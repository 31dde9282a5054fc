"""Every notebook in notebooks/ runs top to bottom without an error.

Each is executed on a copy in a temporary directory, with a kernel that runs
this interpreter (the project's venv), ``ADVERSARY_FAST=1`` (notebooks shorten
their chains) and PyTensor's cache in the build tree. The stored notebook is
not modified.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "adversary-venv"


@pytest.fixture(scope="session")  # not module: the notebooks are spread over xdist's workers
def kernel_environment(tmp_path_factory):
    """A kernel spec for this interpreter, first on JUPYTER_PATH, and the notebooks' env vars."""
    jupyter = tmp_path_factory.mktemp("jupyter")
    spec = jupyter / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "adversary (venv)",
                "language": "python",
            }
        )
    )
    build = ROOT / "build"
    return {
        "JUPYTER_PATH": os.pathsep.join(
            filter(None, [str(jupyter), os.environ.get("JUPYTER_PATH")])
        ),
        "ADVERSARY_FAST": "1",
        "PYTENSOR_FLAGS": f"base_compiledir={build / 'pytensor'}",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(build / "matplotlib"),
    }


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no .ipynb file"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, kernel_environment, monkeypatch):
    for name, value in kernel_environment.items():
        monkeypatch.setenv(name, value)
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:  # the failing cell and its traceback
        pytest.fail(f"{path.name} failed:\n{error}")
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, errors
