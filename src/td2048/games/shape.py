"""A board's shape: R rows and C columns, 2 <= R, C <= 4 and R x C <= 16, in the 4x4 frame of one word.

Every shape lives in the top-left corner of the 4x4 bitboard (:mod:`td2048.games.bitboard`): cell
(r, c) of the board is cell 4 r + c of the frame, and the frame's other cells stay empty for ever.
A 3x3 board::

    board cells       frame cells (nibbles of the uint64)
    0 1 2             0 1 2 .
    3 4 5             4 5 6 .
    6 7 8             8 9 a .
                      . . . .

So the bit tricks of the 4x4 board serve every shape: a row of the frame is a row of the board,
sliding through a table built for its length (C cells; the columns, read as rows of the transposed
frame, have R), a new tile lands only on the shape's cells (:attr:`BoardShape.cells_mask`), and a
symmetry of the shape is one of the frame followed by a shift back into the corner.

Larger boards (5x5, 6x6) do not fit one word: they would take a board of two words (like the 5-bit
cells of :mod:`td2048.games.wide`) or one row per word; the shape value carries them unchanged, and
only the frame would grow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from td2048.errors import TD2048Error

FRAME = 4  # the frame's side: rows and columns of the one-word board
MIN_SIDE = 2
MAX_CELLS = FRAME * FRAME

# The kernels' order of symmetries, as maps (r, c) -> (r', c') on a rows x cols board.
# A square has all 8 (4 rotations, then 4 reflections); a rectangle the 4 that keep its shape.
_SQUARE = (
    ("identity", lambda r, c, n, m: (r, c)),
    ("rotation by 90 degrees", lambda r, c, n, m: (c, n - 1 - r)),
    ("rotation by 180 degrees", lambda r, c, n, m: (n - 1 - r, m - 1 - c)),
    ("rotation by 270 degrees", lambda r, c, n, m: (m - 1 - c, r)),
    ("mirror (left-right)", lambda r, c, n, m: (r, m - 1 - c)),
    ("flip (top-bottom)", lambda r, c, n, m: (n - 1 - r, c)),
    ("transpose", lambda r, c, n, m: (c, r)),
    ("anti-transpose", lambda r, c, n, m: (m - 1 - c, n - 1 - r)),
)
_RECTANGLE = (_SQUARE[0], _SQUARE[2], _SQUARE[4], _SQUARE[5])


@dataclass(frozen=True)
class BoardShape:
    """R rows and C columns of cells, numbered row by row from the top-left corner.

    Parameters
    ----------
    rows, cols : int
        From 2 to 4 each, at most 16 cells (2x2, 2x3, 3x2, 2x4, 3x3, 3x4, 4x3, 4x4, ...).

    Raises
    ------
    TD2048Error
        For a shape that is not supported, in one line that says what is.
    """

    rows: int = FRAME
    cols: int = FRAME

    def __post_init__(self):
        if not (MIN_SIDE <= self.rows <= FRAME and MIN_SIDE <= self.cols <= FRAME):
            raise TD2048Error(f"a {self.rows}x{self.cols} board is not supported: boards have 2 to 4 rows and "
                              f"2 to 4 columns (2x2 up to 4x4, at most {MAX_CELLS} cells)")

    @classmethod
    def parse(cls, text: str) -> BoardShape:
        """A shape from text.

        Parameters
        ----------
        text : str
            ``RxC``, rows by columns (``3x3``, ``2x4``), or one number for a square (``3``).

        Returns
        -------
        BoardShape

        Raises
        ------
        TD2048Error
            For text that is not a shape, or a shape that is not supported.
        """
        match = re.fullmatch(r"\s*(\d+)\s*(?:[xX×]\s*(\d+))?\s*", str(text))
        if not match:
            raise TD2048Error(f"a board is written RxC, rows by columns (2x2 up to 4x4), not {text!r}")
        rows = int(match.group(1))
        return cls(rows, int(match.group(2) or rows))

    @property
    def name(self) -> str:
        """``"3x3"``: rows x columns."""
        return f"{self.rows}x{self.cols}"

    def __str__(self) -> str:
        return self.name

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def largest_code(self, game: str = "2048") -> int:
        """The largest tile code a board of this shape can ever hold (past the cells' bits or not).

        Parameters
        ----------
        game : str
            ``"2048"``: n cells hold at most code n + 1 (2^(n+1): 1024 on 3x3, 131072 on 4x4): a tile of code k
            is made of two of k - 1, the second built while the first holds a cell, so each code past 2 (a new
            4) takes one cell more; ``"2584"``: at most code 2 n (34 on 2x2): code k is made of k - 1 and
            k - 2, the second built while the first holds a cell, so each cell buys two codes.

        Returns
        -------
        int
            The code (the solver's largest on the boards it solves).
        """
        return 2 * self.n_cells if game == "2584" else self.n_cells + 1

    @property
    def square(self) -> bool:
        return self.rows == self.cols

    @property
    def full(self) -> bool:
        """The 4x4 board: the frame itself."""
        return self.rows == FRAME and self.cols == FRAME

    @cached_property
    def frame_cells(self) -> tuple[int, ...]:
        """Frame cell (0..15) of each board cell, in the board's order."""
        return tuple(FRAME * r + c for r in range(self.rows) for c in range(self.cols))

    @cached_property
    def corner_cells(self) -> tuple[int, ...]:
        """Frame cells of the board's four corners, in row-major order."""
        last_row, last_col = FRAME * (self.rows - 1), self.cols - 1
        return (0, last_col, last_row, last_row + last_col)

    def frame_cell(self, cell: int) -> int:
        """Where a board cell sits in the 4x4 frame.

        Parameters
        ----------
        cell : int
            A cell of the board, 0 .. n_cells - 1, row by row.

        Returns
        -------
        int
            Its frame cell, 4 r + c.
        """
        return self.frame_cells[cell]

    @cached_property
    def cells_mask(self) -> int:
        """Bit 4 i set for each frame cell i of the board: where a new tile may land."""
        return sum(1 << (4 * i) for i in self.frame_cells)

    @cached_property
    def cells_mask16(self) -> int:
        """Bit i set for each frame cell i of the board (the high word of 5-bit cells)."""
        return sum(1 << i for i in self.frame_cells)

    @property
    def n_symmetries(self) -> int:
        """8 for a square, 4 for a rectangle (identity, half turn, mirror, flip)."""
        return len(self._maps)

    @property
    def _maps(self):
        return _SQUARE if self.square else _RECTANGLE

    @property
    def symmetry_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self._maps)

    @cached_property
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        """``[k][i]``: the board cell where board cell i lands on the k-th symmetric board.

        For 4x4 these are the kernels' 8 (identity, the rotations by 90, 180 and 270 degrees, mirror,
        flip, transpose, anti-transpose); a rectangle has identity, the half turn, mirror and flip.
        """
        n, m = self.rows, self.cols
        out = []
        for _, f in self._maps:
            perm = []
            for i in range(self.n_cells):
                r, c = f(i // m, i % m, n, m)
                perm.append(r * m + c)
            out.append(tuple(perm))
        return tuple(out)

    def frame_symmetries(self) -> list[list[int]]:
        """The symmetries as maps of frame cells (cells off the board map to themselves).

        Returns
        -------
        list of list of int
            ``[k][c]``: the frame cell where frame cell c lands on the k-th symmetric board.
        """
        out = []
        for perm in self.symmetries:
            frame = list(range(MAX_CELLS))
            for i, j in enumerate(perm):
                frame[self.frame_cells[i]] = self.frame_cells[j]
            out.append(frame)
        return out


FULL = BoardShape(FRAME, FRAME)
SHAPES = tuple(BoardShape(r, c) for r in range(MIN_SIDE, FRAME + 1) for c in range(MIN_SIDE, FRAME + 1))


def as_shape(board) -> BoardShape:
    """A shape from a :class:`BoardShape`, ``"3x3"``, ``3``, ``(2, 4)`` or None (4x4)."""
    if board is None:
        return FULL
    if isinstance(board, BoardShape):
        return board
    if isinstance(board, int):
        return BoardShape(board, board)
    if isinstance(board, (tuple, list)) and len(board) == 2:
        return BoardShape(int(board[0]), int(board[1]))
    return BoardShape.parse(board)
