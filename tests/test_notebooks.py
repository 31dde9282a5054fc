"""Every notebook in notebooks/ runs top to bottom without an error.

Each is executed on a copy in a temporary directory, with a kernel that runs
this interpreter (the project's venv), ``ADVERSARY_FAST=1`` (notebooks shorten
their chains) and PyTensor's cache in the build tree. The stored notebook is
not modified. The kernel is forked from the session's fork server
(tests/forking_kernel.py), which has imported what the notebooks import, so
each starts in a fraction of a second; it is still a fresh process.
"""

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "adversary-venv"


@pytest.fixture(scope="session")  # not module: the notebooks are spread over xdist's workers
def kernel_environment(tmp_path_factory, fork_server):
    """A forking kernel spec, first on JUPYTER_PATH, and the notebooks' env vars (PyTensor's
    and matplotlib's as the fork server imported them)."""
    folder = tmp_path_factory.mktemp("jupyter")
    return {"ADVERSARY_FAST": "1", **fork_server.kernel_variables(folder, KERNEL)}


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
        # Killed, not asked to stop and waited for: every cell has replied by then, and the
        # kernel has nothing left to save (its history is in memory).
        shutdown_kernel="immediate",
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
