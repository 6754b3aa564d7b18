"""2048 rules on the bitboard of :mod:`td2048.games.bitboard`.

One episode, in the notation of the course demo::

    s0 --(a0, r0)--> s0' --(new tile)--> s1 --(a1, r1)--> s1' --(new tile)--> s2 ...

``s'`` is the *afterstate*: the board right after the slide, before the new tile.

Moves are numbered as in the course: 0 = up, 1 = right, 2 = down, 3 = left. A row slide
comes from a 65536-entry table built once from :func:`td2048.games.rules.slide_row_left`,
the one definition of how tiles slide and merge; up and down are row slides of the transposed
board. A move that changes nothing is illegal; the game ends when no move is legal.

Cells hold 4 bits, so the largest tile is 32768 (code 15): two 32768 tiles do not merge
until the game gets wider cells (they stay as they are; the board is never corrupted).
"""

import functools

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import ROW_MASK, U64, count_empty, empty_mask, transpose
from td2048.games.rules import build_row_table
from td2048.games.tiles import GAME_2048
from td2048.rng import below, uniform

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
MOVE_NAMES = ("up", "right", "down", "left")
MAX_CODE = 15  # 4-bit cells: 32768 is the largest tile that fits
P_FOUR = 0.1  # a new tile is a 4 (code 2) with p = 0.1, else a 2 (code 1)

_LEFT, _RIGHT = 0, 16  # where a row's left and right results sit in its table word


@functools.cache
def row_table() -> np.ndarray:
    """The ``uint64[65536]`` row table, one word per row: left result (bits 0-15), right result
    (bits 16-31), reward (bits 32-63; in 2048 a row pays the same either way, as each run of equal
    tiles merges into as many pairs from either end). One load per row and move, 512 KiB: half the
    cache lines of four separate tables, which on large networks compete with the weights."""
    rows = build_row_table(16, MAX_CODE, GAME_2048).astype(np.uint64)
    if not np.array_equal(rows[2], rows[3]):  # pragma: no cover - a property of 2048's rule
        raise AssertionError("2048 rows pay the same sliding left and right")
    table = rows[0] | (rows[1] << np.uint64(16)) | (rows[2] << np.uint64(32))
    table.setflags(write=False)
    return table


# literal constants as globals: Numba takes them as compile-time constants, while each U64(...)
# call is typed again wherever an inlined function lands (a large share of compile time)
_U0 = U64(0)
_U1 = U64(1)
_U2 = U64(2)
_U32 = U64(32)


@njit(inline="always")
def _slide_rows(table, x, side):
    out = _U0
    reward = 0
    for r in range(4):
        shift = U64(16 * r)
        entry = table[np.int64((x >> shift) & ROW_MASK)]
        out |= ((entry >> U64(side)) & ROW_MASK) << shift
        reward += np.int64(entry >> _U32)
    return out, reward


@njit(inline="always")
def move(table, board, direction):
    """Afterstate and reward of sliding ``board`` in ``direction``; illegal if after == board."""
    if direction == LEFT:
        return _slide_rows(table, board, _LEFT)
    if direction == RIGHT:
        return _slide_rows(table, board, _RIGHT)
    t = transpose(board)
    side = _LEFT if direction == UP else _RIGHT
    after, reward = _slide_rows(table, t, side)
    return transpose(after), reward


@njit(inline="always")
def spawn_tile(board, rng):
    """Put a 2 (p = 0.9) or a 4 (p = 0.1) on a uniformly random empty cell.

    Draws the cell first, then the tile. A full board is returned unchanged.
    """
    n = count_empty(board)
    if n == 0:
        return board
    k = below(rng, n)
    code = _U2 if uniform(rng) < P_FOUR else _U1
    m = empty_mask(board)
    for i in range(16):
        if (m >> U64(4 * i)) & _U1:
            if k == 0:
                return board | (code << U64(4 * i))
            k -= 1
    return board


@njit(inline="always")
def new_game(rng):
    """The start of an episode: an empty board with two new tiles."""
    return spawn_tile(spawn_tile(_U0, rng), rng)


# Python-facing wrappers (tests, environments, tools); the kernels call the functions above.
def py_move(board: int, direction: int) -> tuple[int, int]:
    """(afterstate, reward) of one move, as Python ints."""
    after, reward = _py_move(row_table(), U64(board), direction)
    return int(after), int(reward)


@njit
def _py_move(table, board, direction):
    return move(table, board, direction)


def py_spawn_tile(board: int, rng_state: np.ndarray) -> int:
    return int(_py_spawn(U64(board), rng_state))


@njit
def _py_spawn(board, rng):
    return spawn_tile(board, rng)
