"""Progress of a population run's phases on stderr: a bar on a terminal, one line in a log."""

from __future__ import annotations

import sys
import time

from .._output import begin_line, end_line, progress_bar

__all__ = ["PhaseProgress", "wait_for"]


class PhaseProgress:
    """What a phase has done, on stderr: a bar on a terminal, one line in a log.

    ``total`` ``unit`` (records, tuples) over ``tasks`` tasks. On a terminal the
    bar shows the time elapsed and an estimate of the time remaining; in a log
    the line gives the totals and, at the end, the seconds taken.
    """

    def __init__(self, label: str, enabled: bool, total: int, unit: str, tasks: int):
        self.label, self.enabled, self.total, self.unit = label, enabled, total, unit
        self.what = f"{label} ({total:,} {unit}, {tasks} tasks)"
        self.bar = self.task = None

    def __enter__(self):
        self.start = time.perf_counter()
        if not self.enabled:
            return self
        if not sys.stderr.isatty():
            begin_line(f"{self.what} ...")
            return self
        self.bar = progress_bar(self.unit)
        self.bar.start()
        self.task = self.bar.add_task(self.label, total=self.total)
        return self

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, done)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.enabled and exc[0] is None:
            end_line(f" {time.perf_counter() - self.start:.1f} s")
        elif self.enabled:  # the line ends, so that the error or interruption has its own
            end_line()


def wait_for(futures, label: str, progress: bool, sizes=None, unit: str = "tasks") -> None:
    """Wait for ``futures``, each covering ``sizes`` ``unit`` (default 1 task each)."""
    from distributed import as_completed

    sizes = [1] * len(futures) if sizes is None else [int(n) for n in sizes]
    size_of = {future.key: n for future, n in zip(futures, sizes, strict=True)}
    with PhaseProgress(label, progress and bool(futures), sum(sizes), unit, len(futures)) as bar:
        for future in as_completed(futures):
            bar.advance(size_of[future.key])
