"""A live progress bar for terminals (rich): episodes, ETA, moves/s, current avg and win-tile rate."""

from __future__ import annotations

import atexit
import sys
import time


class Progress:
    """Shown between the blocks' tables: ``update`` after a table draws it, ``clear`` before the next
    takes it away, so the tables stay plain lines. Off (prints nothing) unless ``stream`` is a terminal."""

    def __init__(self, total: int, done: int = 0, enabled: bool = True, stream=None, win_tile: int = 2048):
        self.win_tile = win_tile
        self.total, self.start_done = total, done
        self.stream = stream or sys.stdout
        self.enabled = enabled and self.stream.isatty()
        self.started = time.monotonic()
        if self.enabled:  # rich is imported only for a terminal: pipes and CI start faster
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(BarColumn(), MofNCompleteColumn(), TextColumn("episodes  {task.fields[line]}"),
                                     console=Console(file=self.stream), transient=True, auto_refresh=False)
            self._task = self._bar.add_task("train", total=total, completed=done, line="")

    def update(self, stats) -> None:
        if not self.enabled:
            return
        done = stats.episodes
        elapsed = time.monotonic() - self.started
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        line = (f"ETA {format_duration(eta)}  {stats.moves_per_s / 1e6:.2f}M moves/s  avg {stats.avg:.0f}  "
                f"{self.win_tile} {100 * stats.reach_rate(self.win_tile):.1f}%")
        self._bar.update(self._task, completed=done, line=line, refresh=True)
        if not self._bar.live.is_started:
            atexit.register(self.clear)  # an error that skips clear() must not leave the cursor hidden
            self._bar.start()

    def clear(self) -> None:
        if self.enabled and self._bar.live.is_started:
            self._bar.stop()
            atexit.unregister(self.clear)


def format_duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "--:--"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
