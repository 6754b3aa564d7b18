"""How a player chooses moves: the search's depth, transposition table, depth limits and tile downgrading.

:class:`Search` is checked here, before any kernel loads (plain Python and NumPy, as :mod:`td2048.settings` is
for training); :class:`td2048.play.Agent` plays by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td2048.errors import TD2048Error
from td2048.spec import format_bytes, parse_size

MAX_DEPTH = 8  # a depth-8 search of one open board already takes minutes
DEFAULT_TT_SIZE = "64MiB"  # per thread: 2M entries, more than a depth-4 game's searches fill
TT_ENTRY_BYTES = 32  # key (2 words), depth, value: two entries to a cache line


def parse_limits(text: str | None) -> np.ndarray | None:
    """``--limit 9,9,9,9,5,4,3,3,2`` -> int64[17]: the deepest search of an afterstate with 0, 1, 2, ...
    empty cells (TDL2048+'s ``limit=``); the last number holds for every count after it. None: no limit."""
    if text is None:
        return None
    try:  # TDL2048+ writes them as plies, "5p": the same numbers
        numbers = [int(part.removesuffix("p")) for part in text.replace(" ", ",").split(",") if part]
    except ValueError:
        numbers = []
    if not numbers or len(numbers) > 17 or any(n < 1 or n > MAX_DEPTH for n in numbers):
        raise TD2048Error(f"bad --limit {text!r}: 1 to 17 depths from 1 to {MAX_DEPTH}, comma-separated, for "
                          "afterstates with 0, 1, 2, ... empty cells (the last one holds for the rest)")
    return np.array(numbers + [numbers[-1]] * (17 - len(numbers)), np.int64)


@dataclass(frozen=True)
class Search:
    """How moves are chosen: depth, transposition table, depth limits, tile downgrading.

    Parameters
    ----------
    depth : int
        1: greedy (the largest r + V(afterstate)); d > 1: expectimax over the new tiles, d moves deep.
    tt_size : int
        Bytes of transposition table per thread (0: none; used at depth > 1 only).
    limits : str or None
        Depth limits by the afterstate's empty cells (see :func:`parse_limits`); None: none.
    downgrade : int
        A tile value (2048 only): boards holding a tile at or above it are searched downgraded (0: never).
    """

    depth: int = 1
    tt_size: int = 0
    limits: str | None = None
    downgrade: int = 0

    def validate(self, game: str = "2048") -> None:
        """Check the search for a game.

        Parameters
        ----------
        game : str
            ``"2048"`` or ``"2584"`` (which has no downgrading).

        Raises
        ------
        TD2048Error
            A depth, table size, limit or downgrade out of range (one line).
        """
        if not isinstance(self.depth, int) or not 1 <= self.depth <= MAX_DEPTH:
            raise TD2048Error(f"--depth must be from 1 to {MAX_DEPTH}, not {self.depth}")
        if self.tt_size < 0:
            raise TD2048Error(f"--tt-size must be a size (64MiB) or 0, not {self.tt_size}")
        parse_limits(self.limits)
        if self.downgrade:
            if game != "2048":
                raise TD2048Error("--downgrade is for 2048: in 2584 a downgraded board merges other tiles")
            if self.downgrade < 4 or self.downgrade & (self.downgrade - 1):
                raise TD2048Error(f"--downgrade must be a tile of 2048 (a power of two >= 4), not {self.downgrade}")

    def tt_entries(self) -> int:
        """Entries of each thread's transposition table.

        Returns
        -------
        int
            A power of two (buckets of 2), 0 when there is none.
        """
        if self.depth <= 1 or self.tt_size < 2 * TT_ENTRY_BYTES:
            return 0
        return 1 << int(np.log2(self.tt_size // TT_ENTRY_BYTES))

    def describe(self) -> str:
        """The search in words, as ``td2048 eval`` prints it.

        Returns
        -------
        str
            ``depth 1 (greedy)``, or ``depth 3, TT 64 MiB, limit ...``.
        """
        if self.depth == 1 and not self.downgrade:
            return "depth 1 (greedy)"
        parts = [f"depth {self.depth}"]
        if self.depth > 1:
            entries = self.tt_entries()
            parts.append(f"TT {format_bytes(entries * TT_ENTRY_BYTES)}" if entries else "no TT")
        if self.limits:
            parts.append(f"limit {self.limits}")
        if self.downgrade:
            parts.append(f"downgrade at {self.downgrade}")
        return ", ".join(parts)


def parse_search(depth: int = 1, tt_size: str | int | None = None, limits: str | None = None,
                 downgrade: int | None = None, game: str = "2048") -> Search:
    """A Search from command-line values (``tt_size`` "64MiB", "0" for none; None: the default)."""
    text = DEFAULT_TT_SIZE if tt_size is None else str(tt_size).strip()
    size = 0 if text == "0" else parse_size(text)
    search = Search(depth, size, limits, downgrade or 0)
    search.validate(game)
    return search


def search_settings_json(search: Search) -> dict:
    """A search as JSON (``td2048 eval --json``'s ``"search"``): depth, bytes of TT per thread, limits, downgrade."""
    return {"depth": search.depth, "tt_size": search.tt_entries() * TT_ENTRY_BYTES, "limit": search.limits,
            "downgrade": search.downgrade}
