"""A live progress bar for terminals (rich): done of total, time left (ETA) and, in training, moves/s, the
current avg and the win-tile rate. One bar for every command that counts long work: training's episodes,
``td2048 eval``'s games."""

from __future__ import annotations

import atexit
import sys
import time


class Progress:
    """Shown between the blocks' tables: ``update`` after a table draws it, ``clear`` before the next
    takes it away, so the tables stay plain lines. Off (prints nothing) unless ``stream`` is a terminal.

    Parameters
    ----------
    total : int
        The count at the end (episodes, games).
    done : int
        The count already done at the start (a resumed run's episodes); the time left is reckoned from the
        rate since the start.
    enabled : bool
        False: never shown.
    stream : file or None
        Where the bar goes (default stdout); shown only if it is a terminal.
    win_tile : int
        The tile whose rate :meth:`update` shows.
    unit : str
        What is counted, after the count: ``"episodes"``, ``"games"``.
    """

    MIN_REFRESH_S = 0.1  # count() redraws at most this often (a few times a second is enough for a person)

    def __init__(self, total: int, done: int = 0, enabled: bool = True, stream=None, win_tile: int = 2048,
                 unit: str = "episodes"):
        self.win_tile = win_tile
        self.total, self.start_done = total, done
        self.stream = stream or sys.stdout
        self.enabled = enabled and self.stream.isatty()
        self.started = time.monotonic()
        self._drawn = float("-inf")
        self._counting = False  # count() has seen work done: the rate is reckoned from then
        if self.enabled:  # rich is imported only for a terminal: pipes and CI start faster
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(BarColumn(), MofNCompleteColumn(), TextColumn(f"{unit}  {{task.fields[line]}}"),
                                     console=Console(file=self.stream), transient=True, auto_refresh=False)
            self._task = self._bar.add_task(unit, total=total, completed=done, line="")

    def update(self, stats) -> None:
        """Training's bar after a block: episodes, ETA, moves/s, average score and win-tile rate.

        Parameters
        ----------
        stats : BlockStats
            The block just done (its ``episodes`` are the run's so far).
        """
        if not self.enabled:
            return
        self._draw(stats.episodes, f"{stats.moves_per_s / 1e6:.2f}M moves/s  avg {stats.avg:.0f}  "
                                   f"{self.win_tile} {100 * stats.reach_rate(self.win_tile):.1f}%")

    def count(self, done: int) -> None:
        """A plain count (games of ``td2048 eval``) with its ETA, redrawn at most every :attr:`MIN_REFRESH_S`
        seconds (and always at the start and the end): fit for an ``on_progress`` callback.

        The rate is reckoned from the first count above the start, so that what came before it (compiling or
        loading the kernels, starting Ray) does not slow the estimate down; the ETA is ``--:--`` until then.

        Parameters
        ----------
        done : int
            The count done so far.
        """
        if not self.enabled:
            return
        now = time.monotonic()
        if not self._counting and done > self.start_done:
            self._counting, self.started, self.start_done = True, now, done
        elif now - self._drawn < self.MIN_REFRESH_S and self.start_done < done < self.total:
            return
        self._draw(done, "")

    def _draw(self, done: int, extra: str) -> None:
        elapsed = time.monotonic() - self.started
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = 0.0 if done >= self.total else (self.total - done) / rate if rate > 0 else float("inf")
        line = f"ETA {format_duration(eta)}" + (f"  {extra}" if extra else "")
        self._bar.update(self._task, completed=done, line=line, refresh=True)
        self._drawn = time.monotonic()
        if not self._bar.live.is_started:
            atexit.register(self.clear)  # an error that skips clear() must not leave the cursor hidden
            self._bar.start()

    def clear(self) -> None:
        """Take the bar away (until the next :meth:`update` or :meth:`count`)."""
        if self.enabled and self._bar.live.is_started:
            self._bar.stop()
            atexit.unregister(self.clear)


def format_duration(seconds: float) -> str:
    """``mm:ss``, or ``h:mm:ss`` from an hour; ``--:--`` for an unknown (infinite) time.

    Parameters
    ----------
    seconds : float
        The duration.

    Returns
    -------
    str
        The duration as text.
    """
    if seconds == float("inf"):
        return "--:--"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
