"""Output folders: checked first, written through a staging folder, unchanged by a failure."""

import os

import pytest

from adversary._output import checked_folder, locked, staged


def contents(folder):
    files = [p for p in folder.rglob("*") if p.is_file()]
    return {p.relative_to(folder).as_posix(): p.read_text() for p in files}


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "table.csv").write_text("old table")
    (out / "plots" / "a.png").write_text("old plot")
    (out / "notes.txt").write_text("the user's")
    return out


def test_a_success_replaces_what_was_written_and_keeps_the_rest(folder):
    with staged(folder) as stage:
        (stage / "table.csv").write_text("new table")
        (stage / "plots").mkdir()
        (stage / "plots" / "b.png").write_text("new plot")
    assert contents(folder) == {
        "table.csv": "new table",
        "plots/b.png": "new plot",
        "notes.txt": "the user's",
    }
    assert [p.name for p in folder.parent.iterdir()] == ["out"]  # no staging folder left


def test_a_failure_leaves_the_folder_as_it_was(folder):
    before = contents(folder)
    with pytest.raises(RuntimeError, match="half way"), staged(folder) as stage:
        (stage / "table.csv").write_text("new table")
        raise RuntimeError("half way")
    assert contents(folder) == before
    assert [p.name for p in folder.parent.iterdir()] == ["out"]


def test_an_owned_entry_not_written_this_time_is_removed(folder):
    with staged(folder, owned=("plots",)) as stage:
        (stage / "table.csv").write_text("new table")
    assert contents(folder) == {"table.csv": "new table", "notes.txt": "the user's"}


def test_a_new_folder_is_made_with_its_parents(tmp_path):
    with staged(tmp_path / "a" / "b") as stage:
        (stage / "x.csv").write_text("x")
    assert contents(tmp_path / "a" / "b") == {"x.csv": "x"}


def test_a_file_or_a_path_below_a_file_is_refused_naming_the_option(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(ValueError, match=r"^--out: .*afile exists and is not a folder$"):
        checked_folder(tmp_path / "afile", "--out")
    with pytest.raises(ValueError, match=r"^--out: .*afile/sub lies below .*afile, which is not"):
        checked_folder(tmp_path / "afile" / "sub", "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_folder_that_cannot_be_written_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    message = r"^out: cannot create output folder .*locked/out: Permission denied"
    with pytest.raises(ValueError, match=message):
        checked_folder(locked / "out")


def test_locked_holds_the_folder_and_releases_it(tmp_path):
    out = tmp_path / "out"
    with locked(out, "--out") as held:
        assert held == out and (tmp_path / ".out.lock").read_text() == str(os.getpid())
        with pytest.raises(ValueError, match=r"^--out: .*out is being written by another run"):
            with locked(out, "--out"):
                pass
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError), locked(out, "--out"):  # released after a failure too
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []
    with locked(None) as nothing:
        assert nothing is None


def test_a_lock_naming_no_process_is_held_while_new_and_stale_when_old(tmp_path):
    lock = tmp_path / ".out.lock"
    lock.write_text("")  # another run between creating the file and writing its pid
    with pytest.raises(ValueError, match=r"another run \(a run starting now\)"):
        with locked(tmp_path / "out", "--out"):
            pass
    old = lock.stat().st_mtime - 60
    os.utime(lock, (old, old))
    with locked(tmp_path / "out", "--out"):
        assert lock.read_text() == str(os.getpid())


def test_an_interruption_ends_a_progress_line_its_phase_never_closed(monkeypatch, capsys):
    """Ctrl-C right after a log's progress line was printed, before its phase could close it
    (a population run's first phase, interrupted at once): the message has a line of its own."""
    import adversary.cli.risk as risk
    from adversary._output import begin_line
    from adversary.cli import main

    def interrupted(args):
        begin_line("counting cells (20 records, 1 tasks) ...")
        raise KeyboardInterrupt

    monkeypatch.setattr(risk, "run", interrupted)
    assert main(["risk", "dare_county"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        "counting cells (20 records, 1 tasks) ...",
        "adversary risk: interrupted",
    ]
