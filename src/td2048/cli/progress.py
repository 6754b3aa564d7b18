"""A one-line live progress bar for terminals: episodes, ETA, moves/s, current avg and 2048 rate."""

from __future__ import annotations

import shutil
import sys
import time


class Progress:
    def __init__(self, total: int, done: int = 0, enabled: bool = True, stream=None, win_tile: int = 2048):
        self.win_tile = win_tile
        self.total, self.start_done = total, done
        self.enabled = enabled
        self.stream = stream or sys.stdout
        self.started = time.monotonic()
        self.shown = False

    def update(self, stats) -> None:
        if not self.enabled:
            return
        done = stats.episodes
        elapsed = time.monotonic() - self.started
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        width = max(10, min(40, shutil.get_terminal_size((100, 20)).columns - 90))
        filled = int(width * done / self.total)
        bar = "#" * filled + "-" * (width - filled)
        line = (f"[{bar}] {done}/{self.total} episodes  ETA {format_duration(eta)}  "
                f"{stats.moves_per_s / 1e6:.2f}M moves/s  avg {stats.avg:.0f}  "
                f"{self.win_tile} {100 * stats.reach_rate(self.win_tile):.1f}%")
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.enabled and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def format_duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "--:--"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
