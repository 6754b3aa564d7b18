"""The terminal side of ``td2048 watch``: the board in colour (rich), its plain-text form, and keys read
without blocking. Plain text and ANSI-free output go wherever stdout is not a terminal."""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import sys
import termios
import time
import tty
from typing import TYPE_CHECKING

from td2048.cli.analyze import format_grid
from td2048.games.bitboard import grid_from_board
from td2048.games.game2048 import MOVE_NAMES
from td2048.games.shape import FULL, BoardShape
from td2048.games.tiles import tile_value
from td2048.games.wide import wide_to_codes
from td2048.palette import BOARD, tile_colours

if TYPE_CHECKING:
    from rich.console import Group
    from rich.text import Text

KEYS = "space pause/resume   n or right arrow: one move (paused)   q quit"
VALUES_HEADING = "values of the moves from this board"  # the board on screen's, not the last move's


def board_codes(board, shape: BoardShape = FULL) -> list[int]:
    """The codes of a packed board's cells, row-major (``shape.n_cells`` of them: 16 on 4x4).

    Parameters
    ----------
    board : int or tuple of (int, int)
        Packed: an int on 4-bit cells, (lo, hi) on 5-bit ones, in the 4x4 frame's top-left corner.
    shape : BoardShape
        The board's rows and columns.
    """
    frame = wide_to_codes(board) if isinstance(board, tuple) else grid_from_board(board).reshape(16).tolist()
    return [int(frame[i]) for i in shape.frame_cells]


def format_value(value: float) -> str:
    return "illegal" if math.isnan(value) else f"{value:.1f}"


def board_text(board, game: str, shape: BoardShape = FULL) -> str:
    """The board as plain text, one line a row, tile values right-aligned, '.' for empty."""
    return format_grid([tile_value(game, c) for c in board_codes(board, shape)], shape.cols)


def move_header() -> str:
    return f"{'# move':<6} {'dir':<5} {'reward':>7} {'score':>8}  " + " ".join(f"{n:>10}" for n in MOVE_NAMES)


def move_line(number: int, direction: int, reward: int, score: int, values) -> str:
    """One move in plain text, the columns of :func:`move_header`."""
    return (f"{number:>6} {MOVE_NAMES[direction]:<5} {reward:>7} {score:>8}  "
            + " ".join(f"{format_value(v):>10}" for v in values))


def _tile_style(code: int, game: str) -> str:
    background, ink = tile_colours(code, game)
    return f"bold {ink} on {background}"


def board_renderable(board, game: str, shape: BoardShape = FULL) -> Text:
    """Tiles three lines high on the board's brown, in td2048's palette (:mod:`td2048.palette`), ``shape.rows``
    rows of ``shape.cols`` tiles."""
    from rich.text import Text  # rich is imported only when drawn: every td2048 command imports this module
    codes = board_codes(board, shape)
    rows, cols = shape.rows, shape.cols
    width = max(6, max(len(str(tile_value(game, c))) for c in codes) + 2)
    edge = f"on {BOARD}"
    text = Text(" " * (cols * width + cols + 1) + "\n", edge)
    for r in range(rows):
        for line in range(3):
            text.append(" ", edge)
            for code in codes[cols * r:cols * r + cols]:
                label = "" if line != 1 else str(tile_value(game, code)) if code else "."  # legible without colour
                text.append(label.center(width), _tile_style(code, game))
                text.append(" ", edge)
            text.append("\n")
        text.append(" " * (cols * width + cols + 1) + ("\n" if r < rows - 1 else ""), edge)
    return text


def view(title: str, board, game: str, score: int, number: int, direction: int, reward: int, values,
         state: str, choice: int = -1, shape: BoardShape = FULL) -> Group:
    """The live screen: title, the board beside the score, the move that made it and the values of the moves
    from it, then the keys.

    Parameters
    ----------
    title : str
        The first line.
    board : int or tuple of (int, int)
        The board on screen, packed: an int on 4-bit cells, (lo, hi) on 5-bit ones.
    game : str
        ``"2048"`` or ``"2584"``: how codes show as tiles.
    score : int
        The score so far.
    number : int
        The moves played so far.
    direction : int
        The move that made the board (0 up, 1 right, 2 down, 3 left; -1: none yet).
    reward : int
        That move's reward.
    values : sequence of float
        The values of the four moves from the board (NaN: illegal).
    state : str
        ``"playing"``, ``"paused"``, ``"game over"``, ...
    choice : int
        The move the model plays from the board next, marked with ``>`` (-1: none).
    shape : BoardShape
        The board's rows and columns (the model's ``network.board``).

    Returns
    -------
    rich.console.Group
        The screen, for rich's ``Live``.
    """
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold")
    info.add_column(justify="right")
    info.add_row("score", f"{score:,}")
    info.add_row("move", f"{number:,}")
    info.add_row("last move", f"{MOVE_NAMES[direction]} +{reward}" if direction >= 0 else "-")
    info.add_row("largest", f"{tile_value(game, max(board_codes(board, shape))):,}")
    moves = Table.grid(padding=(0, 2))
    moves.add_column(style="bold")
    moves.add_column(justify="right")
    moves.add_column(style="green")
    for d, name in enumerate(MOVE_NAMES):
        chosen = d == choice
        moves.add_row(("> " if chosen else "  ") + name, Text(format_value(values[d]), "bold green" if chosen else
                                                              "dim" if math.isnan(values[d]) else ""),
                      "next" if chosen else "")
    side = Group(info, Text(""), Text(VALUES_HEADING, "bold"), moves, Text(""), Text(state, "reverse"))
    layout = Table.grid(padding=(0, 3))
    layout.add_row(board_renderable(board, game, shape), side)
    return Group(Text(title, "bold"), layout, Text(KEYS, "dim"))


class Keys:
    """Keys from a terminal on stdin, one at a time without blocking (cbreak: no echo, no Enter needed;
    Ctrl-C still interrupts). Without a terminal on stdin, :meth:`read` only waits.

    A wait for a key also watches a pipe that every signal writes to (``signal.set_wakeup_fd``): the
    kernel may hand Ctrl-C's SIGINT to another thread of the process (NumPy's BLAS starts some), and
    then a wait on stdin alone would not end until its timeout, which at ``--delay 1000`` is long."""

    def __init__(self):
        self.fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
        self.pending = b""
        self.wake = None  # (read end, write end, the wakeup fd before) while entered

    def __enter__(self) -> Keys:
        if self.fd is not None:
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        os.set_blocking(write_end, False)
        self.wake = (read_end, write_end, signal.set_wakeup_fd(write_end))
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
        read_end, write_end, before = self.wake
        signal.set_wakeup_fd(before)
        os.close(read_end)
        os.close(write_end)
        self.wake = None

    def _wait(self, fds: list[int], timeout: float | None) -> list[int]:
        """The ones of ``fds`` ready within ``timeout`` seconds (None: no limit). A signal ends the select
        through its pipe: its Python handler runs then (KeyboardInterrupt for SIGINT), and the wait goes on."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([*fds, self.wake[0]], [], [], left)
            if self.wake[0] not in ready:
                return ready
            with contextlib.suppress(BlockingIOError):
                while os.read(self.wake[0], 64):
                    pass
            mine = [fd for fd in ready if fd != self.wake[0]]
            if mine or (deadline is not None and time.monotonic() >= deadline):
                return mine

    def read(self, timeout: float | None) -> str | None:
        """The next key ('q', ' ', 'right', ...) within ``timeout`` seconds (None: wait for one), or None."""
        if self.fd is None:  # no keys, so never paused: timeout is a number
            self._wait([], max(0.0, timeout))
            return None
        if not self.pending:
            if not self._wait([self.fd], None if timeout is None else max(0.0, timeout)):
                return None
            self.pending = os.read(self.fd, 32)
            if not self.pending:  # the terminal went away
                return "q"
        if self.pending[:1] == b"\x1b" and self.pending[1:2] in (b"[", b"O") and len(self.pending) >= 3:
            key, self.pending = ("right" if self.pending[2:3] == b"C" else "escape"), self.pending[3:]
        else:
            key, self.pending = self.pending[:1].decode("latin-1").lower(), self.pending[1:]
        return key
