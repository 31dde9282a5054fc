"""Output folders: checked before any work, filled through a staging folder, changed on success.

A command that writes files (the command line's ``--out``, the population
engine's ``out``) checks its folder first (:func:`checked_folder`: not a file,
inside a folder it may write to), writes into a staging folder beside it
(:func:`staged`) and moves what it wrote into place only when everything
succeeded. A failure leaves the folder as it found it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["checked_folder", "staged"]


def checked_folder(folder, name: str = "out") -> Path:
    """``folder`` as a :class:`~pathlib.Path` that is, or can be made, a folder to write into.

    Raises ``ValueError`` naming ``name`` when it is an existing file or lies
    below one, or when its nearest existing ancestor cannot be written to.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name}: {folder} exists and is not a folder")
    ancestor = folder.resolve()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{name}: {folder} lies below {ancestor}, which is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: cannot write into {ancestor} (permission denied)")
    return folder


@contextmanager
def staged(folder, name: str = "out", owned: tuple[str, ...] = ()) -> Iterator[Path]:
    """A staging folder beside ``folder`` to write into; on success its entries replace its own.

    On leaving without an error, each file or folder written into the staging
    folder replaces the entry of the same name in ``folder`` (created), and
    each entry named in ``owned`` that was not written is removed (a command's
    own subfolder it did not produce this time); other entries of ``folder``
    are kept. On an error nothing in ``folder`` changes. Either way the
    staging folder is removed.
    """
    folder = checked_folder(folder, name)
    parent = folder.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-", dir=parent))
    except OSError as error:
        raise ValueError(f"{name}: cannot write into {parent}: {error.strerror}") from None
    try:
        yield stage
        folder.mkdir(exist_ok=True)
        written = {entry.name for entry in stage.iterdir()}
        for entry in [*written, *(n for n in owned if n not in written)]:
            target = folder / entry
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            if entry in written:
                os.replace(stage / entry, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_figures(figures: dict, folder, dpi: int) -> list[Path]:
    """Write each matplotlib figure of ``figures`` (file name → figure) as ``folder/name``.

    ``folder`` is created if needed; returns the paths in the order given.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in figures]
    for path, figure in zip(paths, figures.values(), strict=True):
        figure.savefig(path, dpi=dpi)
    return paths


def package_version() -> str:
    """The installed package's version (``"unknown"`` when run from an uninstalled tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("adversary")
    except PackageNotFoundError:
        return "unknown"


def progress_bar(unit: str = ""):
    """A rich progress bar on stderr: description, bar, done/total ``unit``, elapsed, remaining."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    columns += [TextColumn(unit)] if unit else []
    columns += [TimeElapsedColumn(), TimeRemainingColumn()]
    return Progress(*columns, console=Console(stderr=True))
