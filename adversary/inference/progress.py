"""Progress display for :func:`adversary.inference.sample`: one bar per chain and its draw rate.

PyMC's own bar computes a chain's rate only on intermediate updates and only
after 0.25 s, so a chain that finishes sooner is shown at "0.00 draws/s". This
display computes the rate whenever it is drawn, from the chain's own clock
(started at its first draw, so chains waiting for a free core are not charged
for the wait) and stopped at its last draw, so the final figure is the chain's
true rate however short it ran.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ..time_budget import check_time

#: Seconds of sampling after which the whole run is projected and checked against the budget.
SAMPLING_CLOCK_SECONDS = 1.0

#: Gaps between two draws of one chain (each chain's first left out) the clock's median needs.
CLOCK_GAPS = 5


def draw_rate_text(draws: float, seconds: float | None) -> str:
    """Rate of ``draws`` in ``seconds`` as shown: draws/s from 1 up, else s/draw; "-" if unknown."""
    if not seconds or draws <= 0:
        return "- draws/s"
    rate = draws / seconds
    return f"{rate:,.0f} draws/s" if rate >= 1 else f"{1 / rate:.2f} s/draw"


class DrawRateColumn(ProgressColumn):
    """A chain's draws per second since its first draw (frozen when it finishes)."""

    def render(self, task: Task) -> Text:
        seconds = task.finished_time if task.finished else task.elapsed
        # The clock starts at the first draw: the rate is over the draws after it.
        return Text(draw_rate_text(task.completed - 1, seconds), style="progress.data.speed")


class ChainProgress:
    """A :func:`pymc.sample` ``callback`` drawing one progress bar per chain.

    Use as a context manager around the sampling call; each draw PyMC reports
    (tuning included) advances its chain's bar to ``draw_idx + 1`` of
    ``draws_per_chain``. The bars go to ``console``, by default stderr (stdout
    holds a command's results); ``get_time`` is their clock (default
    :func:`time.monotonic`).
    """

    def __init__(
        self,
        chains: int,
        draws_per_chain: int,
        console: Console | None = None,
        get_time: Callable[[], float] | None = None,
    ):
        self._progress = Progress(
            TextColumn("chain {task.fields[chain]}"),
            BarColumn(),
            MofNCompleteColumn(),
            DrawRateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console if console is not None else Console(stderr=True),
            get_time=get_time,
        )
        self._tasks = [
            self._progress.add_task("", total=draws_per_chain, start=False, chain=chain)
            for chain in range(chains)
        ]
        self._started = [False] * chains

    def __enter__(self) -> ChainProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self._progress.__exit__(*exc_info)

    def __call__(self, trace, draw) -> None:
        """Advance ``draw.chain``'s bar (the signature of PyMC's sampling callback)."""
        task = self._tasks[draw.chain]
        if not self._started[draw.chain]:
            self._progress.start_task(task)
            self._started[draw.chain] = True
        self._progress.update(task, completed=draw.draw_idx + 1)


class SamplingClock:
    """A :func:`pymc.sample` ``callback`` refusing a run projected over the time budget.

    After :data:`SAMPLING_CLOCK_SECONDS` of draws it projects the run's time as the draws
    left (``chains × draws_per_chain``, tuning included) at the median time between two
    draws of one chain — each chain's first gap left out — divided by the ``parallel``
    chains sampled at once, once :data:`CLOCK_GAPS` such gaps are in. The median ignores a
    few long gaps: a chain's set-up, or numba compiling a tiered kernel
    (:mod:`~adversary.inference.tiered`) after a sweep. It raises
    :class:`~adversary.time_budget.TimeBudgetError` (stopping the sampler) when the
    elapsed and projected times exceed the budget, and checks once. ``get_time`` is the
    clock (``time.perf_counter``).
    """

    def __init__(
        self,
        chains: int,
        draws_per_chain: int,
        parallel: int = 1,
        get_time: Callable = time.perf_counter,
    ):
        self.total = chains * draws_per_chain
        self.parallel = parallel
        self.times: dict[int, list[float]] = {}  # per chain, until the check
        self.count, self.started, self.checked = 0, None, False
        self._get_time = get_time

    def __call__(self, trace, draw) -> None:
        if self.checked:
            return
        now = self._get_time()
        self.started = now if self.started is None else self.started
        self.count += 1
        self.times.setdefault(draw.chain, []).append(now)
        elapsed = now - self.started
        if elapsed < SAMPLING_CLOCK_SECONDS or self.count - 2 * len(self.times) < CLOCK_GAPS:
            return
        self.checked = True
        gaps = [b - a for times in self.times.values() for a, b in itertools.pairwise(times[1:])]
        self.times = {}  # not needed any more
        per_draw = statistics.median(gaps) / self.parallel
        check_time(
            elapsed + per_draw * (self.total - self.count),
            f"sampling {self.total:,} draws (tuning included, {per_draw * 1e3:.3g} ms each, "
            "measured)",
        )
