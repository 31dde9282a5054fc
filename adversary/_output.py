"""Output folders: checked before any work, held by one run, filled through a staging folder.

A command that writes files (the command line's ``--out``, the population
engine's ``out``) checks its folder first (:func:`checked_folder`: not a file,
inside a folder it can create things in), holds it for the whole run
(:func:`locked`: a second run into the same folder is refused in one line
while the first runs), writes into a staging folder beside it (:func:`staged`)
and moves what it wrote into place only when everything succeeded. A failure
leaves the folder as it found it.

Progress on stderr: rich bars (:func:`progress_bar`, :func:`progress_task`) on a
terminal; in a log, a line begun before the work and ended after it
(:func:`begin_line`, :func:`end_line`), which the command line also ends before
it reports an error or an interruption, whenever that comes.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["begin_line", "checked_folder", "end_line", "locked", "staged"]

#: A lock file that names no process (being written, or corrupt) is stale after this long.
UNNAMED_LOCK_SECONDS = 10.0


def checked_folder(folder, name: str = "out") -> Path:
    """``folder`` as a :class:`~pathlib.Path` that is, or can be made, a folder to write into.

    Raises ``ValueError`` naming ``name`` when it is an existing file or lies
    below one, or when a folder cannot be created where the run would create
    one (in ``folder`` and beside it, or in its nearest existing ancestor):
    tried by creating and removing an empty folder there, so that a read-only
    or virtual file system (``/proc``) is refused before any work.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name}: {folder} exists and is not a folder")
    ancestor = folder.resolve()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{name}: {folder} lies below {ancestor}, which is not a folder")
    where = [ancestor.parent, ancestor] if ancestor == folder.resolve() else [ancestor]
    for place in where:
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".adversary-probe-", dir=place))
        except OSError as error:
            what = "write into" if place == ancestor and folder.exists() else "create"
            raise ValueError(
                f"{name}: cannot {what} output folder {folder}: {error.strerror or error}"
            ) from None
    return folder


def _cannot_create(folder: Path, name: str, error: OSError) -> ValueError:
    """The one-line error for an output folder the system would not let this run create."""
    return ValueError(f"{name}: cannot create output folder {folder}: {error.strerror}")


def _lock_path(folder: Path) -> Path:
    """The lock file of ``folder``: ``.<name>.lock`` beside it."""
    resolved = folder.resolve()
    return resolved.parent / f".{resolved.name}.lock"


def _holder(lock: Path) -> str | None:
    """Who holds ``lock`` (``"process N"``), or None when it is stale (its process is gone)."""
    try:
        text = lock.read_text().strip()
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return None
    if not text.isdigit():  # being written this instant, or left corrupt
        return "a run starting now" if age < UNNAMED_LOCK_SECONDS else None
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return f"process {text}"


@contextmanager
def locked(folder, name: str = "out") -> Iterator[Path | None]:
    """``folder`` (checked) held by this run: a second run into it is refused while it runs.

    The lock is a file ``.<folder name>.lock`` beside the folder, created
    exclusively and holding this process's id, removed on leaving; a lock whose
    process is gone (a run that was killed) is stale and taken over. Raises
    ``ValueError`` naming ``name`` when another live process holds the folder.
    ``folder`` ``None`` (nothing to write) holds nothing and yields ``None``.
    """
    if folder is None:
        yield None
        return
    folder = checked_folder(folder, name)
    lock = _lock_path(folder)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _cannot_create(folder, name, error) from None
    for _ in range(3):  # a stale lock removed, then taken (another run may take it first)
        try:
            descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(lock)
            if holder is None:
                lock.unlink(missing_ok=True)
                continue
            raise ValueError(
                f"{name}: {folder} is being written by another run ({holder}); wait for it "
                "to finish or choose another folder"
            ) from None
        except OSError as error:
            raise _cannot_create(folder, name, error) from None
        with os.fdopen(descriptor, "w") as handle:
            handle.write(str(os.getpid()))
        break
    else:
        raise ValueError(f"{name}: {folder} is being written by another run; try again")
    try:
        yield folder
    finally:
        lock.unlink(missing_ok=True)


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
        raise _cannot_create(folder, name, error) from None
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


#: Whether a line :func:`begin_line` began on stderr is still open.
_line = {"open": False}


def begin_line(text: str) -> None:
    """Print ``text`` on stderr without ending the line (a log's progress line)."""
    _line["open"] = True
    print(text, end="", file=sys.stderr, flush=True)


def end_line(text: str = "") -> None:
    """End with ``text`` the line :func:`begin_line` began on stderr; nothing if none is open."""
    if _line["open"]:
        _line["open"] = False
        print(text, file=sys.stderr, flush=True)


def progress_bar(unit: str = ""):
    """A rich progress bar on stderr: description, bar, done/total ``unit``, elapsed, remaining."""
    from rich.progress import TextColumn

    return _progress([TextColumn(unit)] if unit else [])


def _progress(unit_columns: list):
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
    columns += [*unit_columns, TimeElapsedColumn(), TimeRemainingColumn()]
    return Progress(*columns, console=Console(stderr=True))


#: The display the bars of :func:`progress_task` share (rich shows one live display at once).
_shared: dict = {"display": None, "bars": 0}


@contextmanager
def progress_task(description: str, total: int, unit: str = "") -> Iterator:
    """A progress bar on stderr, one line of a display shared by nested work (a sweep and the
    grid of one of its points); yields ``advance(completed)``. The display stops with its
    last bar."""
    if _shared["display"] is None:
        from rich.progress import TextColumn

        display = _progress([TextColumn("{task.fields[unit]}")])
        display.start()
        _shared["display"] = display
    display = _shared["display"]
    _shared["bars"] += 1
    task = display.add_task(description, total=total, unit=unit)
    try:
        yield lambda completed: display.update(task, completed=completed)
    finally:
        _shared["bars"] -= 1
        if _shared["bars"] == 0:
            display.stop()
            _shared["display"] = None
        else:
            display.remove_task(task)
