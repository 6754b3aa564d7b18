"""2048 rules on the bitboard of :mod:`td2048.games.bitboard`.

One episode, in the notation of the course demo::

    s0 --(a0, r0)--> s0' --(new tile)--> s1 --(a1, r1)--> s1' --(new tile)--> s2 ...

``s'`` is the *afterstate*: the board right after the slide, before the new tile.

Moves are numbered as in the course: 0 = up, 1 = right, 2 = down, 3 = left. A row slide
comes from a 65536-entry table built once from :func:`td2048.games.rules.slide_row_left`,
the one definition of how tiles slide and merge; up and down are row slides of the transposed
board. A move that changes nothing is illegal; the game ends when no move is legal.

A board of another shape (:mod:`td2048.games.shape`) sits in the frame's top-left corner: its
rows slide through a table for rows of its width, its columns (rows of the transposed frame)
through a table for its height, placed after the first when the two differ (``vertical``: where
the second starts, 0 on a square board), and new tiles land on its ``cells`` only.

Cells hold 4 bits, so the largest tile is 32768 (code 15): two 32768 tiles do not merge
until the game gets wider cells (they stay as they are; the board is never corrupted).
"""

import functools

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import ROW_MASK, U64, count_flags, empty_mask, nth_flag_shift, transpose
from td2048.games.rules import build_row_table
from td2048.games.shape import FULL, BoardShape
from td2048.games.tiles import GAME_2048
from td2048.rng import below, uniform

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
MOVE_NAMES = ("up", "right", "down", "left")
MAX_CODE = 15  # 4-bit cells: 32768 is the largest tile that fits
P_FOUR = 0.1  # a new tile is a 4 (code 2) with p = 0.1, else a 2 (code 1)

_LEFT, _RIGHT = 0, 16  # where a row's left and right results sit in its table word


ROW_ENTRIES = 1 << 16  # a table's rows: every 16-bit row of 4 cells


@functools.cache
def _line_table(length: int) -> np.ndarray:
    rows = build_row_table(16, MAX_CODE, GAME_2048, length).astype(np.uint64)
    if not np.array_equal(rows[2], rows[3]):  # pragma: no cover - a property of 2048's rule
        raise AssertionError("2048 rows pay the same sliding left and right")
    return rows[0] | (rows[1] << np.uint64(16)) | (rows[2] << np.uint64(32))


@functools.cache
def row_table(shape: BoardShape = FULL) -> np.ndarray:
    """The row table of a board shape, one ``uint64`` per 16-bit row: left result (bits 0-15), right
    result (bits 16-31), reward (bits 32-63; in 2048 a row pays the same either way, as each run of
    equal tiles merges into as many pairs from either end). One load per row and move, 512 KiB
    (4x4): half the cache lines of four separate tables, which on large networks compete with the
    weights. A board whose rows and columns differ in length has a second table for its columns,
    from :func:`vertical_offset` on."""
    table = _line_table(shape.cols)
    if not shape.square:
        table = np.concatenate([table, _line_table(shape.rows)])
    table.setflags(write=False)
    return table


def vertical_offset(shape: BoardShape) -> int:
    """Where the table of a shape's columns starts in :func:`row_table`: 0 on a square board."""
    return 0 if shape.square else ROW_ENTRIES


# literal constants as globals: Numba takes them as compile-time constants, while each U64(...)
# call is typed again wherever an inlined function lands (a large share of compile time)
_U0 = U64(0)
_U1 = U64(1)
_U2 = U64(2)
_U32 = U64(32)


@njit(inline="always")
def _slide_rows(table, x, side, start):
    out = _U0
    reward = 0
    for r in range(4):
        shift = U64(16 * r)
        entry = table[start + np.int64((x >> shift) & ROW_MASK)]
        out |= ((entry >> U64(side)) & ROW_MASK) << shift
        reward += np.int64(entry >> _U32)
    return out, reward


@njit(forceinline=True)
def move(table, board, direction, vertical):
    """Afterstate and reward of sliding ``board`` in ``direction``; illegal if after == board.

    ``vertical``: where the table of the columns starts in ``table`` (0 on a square board)."""
    if direction == LEFT:
        return _slide_rows(table, board, _LEFT, 0)
    if direction == RIGHT:
        return _slide_rows(table, board, _RIGHT, 0)
    t = transpose(board)
    side = _LEFT if direction == UP else _RIGHT
    after, reward = _slide_rows(table, t, side, vertical)
    return transpose(after), reward


@njit(forceinline=True)
def spawn_tile(board, rng, cells):
    """Put a 2 (p = 0.9) or a 4 (p = 0.1) on a uniformly random empty cell of ``cells`` (bit 4 i
    for each cell of the board: :attr:`~td2048.games.shape.BoardShape.cells_mask`).

    Draws the cell first, then the tile. A full board is returned unchanged.
    """
    m = empty_mask(board) & cells
    n = count_flags(m)
    if n == 0:
        return board
    k = below(rng, n)
    code = _U2 if uniform(rng) < P_FOUR else _U1
    return board | (code << nth_flag_shift(m, k))


@njit(forceinline=True)
def new_game(rng, cells):
    """The start of an episode: an empty board with two new tiles on ``cells``."""
    return spawn_tile(spawn_tile(_U0, rng, cells), rng, cells)


# Python-facing wrappers (tests, environments, tools); the kernels call the functions above.
def py_move(board: int, direction: int, shape: BoardShape = FULL) -> tuple[int, int]:
    """(afterstate, reward) of one move, as Python ints."""
    after, reward = _py_move(row_table(shape), U64(board), direction, vertical_offset(shape))
    return int(after), int(reward)


@njit
def _py_move(table, board, direction, vertical):
    return move(table, board, direction, vertical)


def py_spawn_tile(board: int, rng_state: np.ndarray, shape: BoardShape = FULL) -> int:
    return int(_py_spawn(U64(board), rng_state, U64(shape.cells_mask)))


@njit
def _py_spawn(board, rng, cells):
    return spawn_tile(board, rng, cells)
