"""A board as people write it: its tile values, row-major, 0 for empty; for the public API.

The kernels keep boards packed (:mod:`td2048.games.bitboard`, :mod:`td2048.games.wide`); a
:class:`Board` holds the cell codes and the game, packs itself for them, and slides by the same
row tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.bitboard import board_from_grid, grid_from_board
from td2048.games.game2048 import MOVE_NAMES
from td2048.games.shape import FULL, BoardShape, as_shape
from td2048.games.tiles import tile_value
from td2048.games.wide import py_wide_move, wide_from_codes, wide_to_codes

MAX_CODE = 31  # 5-bit cells: 2048 to 2**31, 2584 to F(32)


@dataclass(frozen=True)
class Board:
    """A board of a game (``"2048"`` or ``"2584"``) as its cell codes, row-major::

        Board.from_tiles([0, 2, 4, 8,  0, 0, 2, 16,  ...])   # tile values, 0 for empty
        Board.from_tiles([[2, 0, 0], [0, 4, 0], [0, 0, 2]])  # a 3x3 board: its rows give its shape
        board.tiles        # [[0, 2, 4, 8], [0, 0, 2, 16], ...]
        board.slide("left")  # (the board after the slide, its reward), before the new tile

    Cells are numbered row by row from the top-left corner (4x4; a 3x3 board has 0..8)::

         0  1  2  3
         4  5  6  7
         8  9 10 11
        12 13 14 15

    Parameters
    ----------
    codes : tuple of int
        The cell codes, row-major: 0 for empty, k for the tile ``2**k`` (2048) or the (k+1)-th
        Fibonacci number (2584); at most 31.
    game : {"2048", "2584"}, optional
        The game whose tiles the codes stand for.
    shape : BoardShape, optional
        The board's rows and columns (:mod:`td2048.games.shape`); 4x4 by default.

    Raises
    ------
    TD2048Error
        For another game, or codes that are not one number from 0 to 31 per cell of the shape.
    """

    codes: tuple[int, ...]
    game: str = "2048"
    shape: BoardShape = FULL

    def __post_init__(self):
        if self.game not in ("2048", "2584"):
            raise TD2048Error(f"game must be 2048 or 2584, not {self.game!r}")
        object.__setattr__(self, "shape", as_shape(self.shape))
        n = self.shape.n_cells
        if len(self.codes) != n or any(not 0 <= c <= MAX_CODE for c in self.codes):
            raise TD2048Error(f"a {self.shape} board is {n} cell codes from 0 to 31")

    @classmethod
    def from_tiles(cls, tiles, game: str = "2048", shape=None) -> Board:
        """A board from its tile values.

        Parameters
        ----------
        tiles : sequence of int
            The tile values, row-major, 0 for an empty cell: rows (their count and length give the
            shape), or a flat list (16 values: 4x4; other counts need ``shape``).
        game : {"2048", "2584"}, optional
            The game the values are tiles of.
        shape : BoardShape, str or None, optional
            The board's shape (``"3x3"``); None: from the rows, else 4x4.

        Returns
        -------
        Board

        Raises
        ------
        TD2048Error
            For a count that does not fit the shape, rows of unequal length, or a value that is not a tile
            of the game.
        """
        rows = None
        if shape is None and len(tiles) and all(isinstance(r, (list, tuple, np.ndarray)) for r in tiles):
            lengths = {len(r) for r in tiles}
            if len(lengths) != 1:
                raise TD2048Error("the rows of a board have the same length")
            rows = (len(tiles), lengths.pop())
        shape = as_shape(shape if shape is not None else rows)
        values = [int(v) for v in np.asarray(tiles).reshape(-1)]
        if len(values) != shape.n_cells:
            raise TD2048Error(f"a {shape} board is {shape.n_cells} tile values (row-major, 0 for empty), "
                              f"not {len(values)}")
        codes = {tile_value(game, c): c for c in range(MAX_CODE + 1)}
        bad = [v for v in values if v not in codes]
        if bad:
            raise TD2048Error(f"{bad[0]} is not a tile of {game}")
        return cls(tuple(codes[v] for v in values), game, shape)

    @classmethod
    def from_packed(cls, board, game: str = "2048", shape=None) -> Board:
        """A board from the kernels' packed form.

        Parameters
        ----------
        board : int or tuple of int
            An int on 4-bit cells, ``(lo, hi)`` on 5-bit cells (the board in the 4x4 frame's corner).
        game : {"2048", "2584"}, optional
            The game.
        shape : BoardShape, str or None, optional
            The board's shape; None: 4x4.

        Returns
        -------
        Board
        """
        shape = as_shape(shape)
        frame = wide_to_codes(board) if isinstance(board, tuple) else grid_from_board(board).reshape(16).tolist()
        return cls(tuple(int(frame[i]) for i in shape.frame_cells), game, shape)

    def _frame_codes(self) -> list[int]:
        frame = [0] * 16
        for i, c in zip(self.shape.frame_cells, self.codes, strict=True):
            frame[i] = c
        return frame

    def packed(self, wide: bool = False):
        """The board in the kernels' packed form.

        Parameters
        ----------
        wide : bool, optional
            False: one int of 4-bit cells (tiles up to 32768); True: ``(lo, hi)`` of 5-bit cells.

        Returns
        -------
        int or tuple of int

        Raises
        ------
        TD2048Error
            When the board holds a tile past 4-bit cells and ``wide`` is False.
        """
        frame = self._frame_codes()
        if wide:
            return wide_from_codes(frame)
        if max(self.codes) > 15:
            raise TD2048Error("this board holds a tile past 4-bit cells: use a model on 5-bit cells")
        return board_from_grid(frame)

    @property
    def tiles(self) -> list[list[int]]:
        """The tile values, row by row (0 for empty)."""
        values = [tile_value(self.game, c) for c in self.codes]
        cols = self.shape.cols
        return [values[r:r + cols] for r in range(0, len(values), cols)]

    @property
    def max_tile(self) -> int:
        """The largest tile's value."""
        return tile_value(self.game, max(self.codes))

    @property
    def empty_cells(self) -> list[int]:
        """Indices (the board's cells, row-major) of the empty cells."""
        return [i for i, c in enumerate(self.codes) if c == 0]

    def slide(self, move: str | int) -> tuple[Board, int]:
        """Slide the tiles, before the new tile appears.

        Parameters
        ----------
        move : str or int
            ``"up"``, ``"right"``, ``"down"``, ``"left"``, or 0..3 in that order.

        Returns
        -------
        tuple of (Board, int)
            The board after the slide (the afterstate) and the move's reward. An illegal move returns the
            same board and 0.

        Raises
        ------
        TD2048Error
            For anything that is not a move.
        """
        direction = MOVE_NAMES.index(move) if isinstance(move, str) and move in MOVE_NAMES else move
        if direction not in (0, 1, 2, 3):
            raise TD2048Error(f"a move is one of {', '.join(MOVE_NAMES)} (or 0..3), not {move!r}")
        after, reward = py_wide_move(self.game, wide_from_codes(self._frame_codes()), direction, self.shape)
        return Board.from_packed(after, self.game, self.shape), reward

    def legal_moves(self) -> list[str]:
        """The moves that change the board.

        Returns
        -------
        list of str
            In the order up, right, down, left.
        """
        return [name for name in MOVE_NAMES if self.slide(name)[0] != self]

    def __str__(self) -> str:
        return "\n".join(" ".join(f"{v if v else '.':>6}" for v in row) for row in self.tiles)
