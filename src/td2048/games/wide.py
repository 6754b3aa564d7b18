"""Boards of 5-bit cells, for tiles past 32768 and for 2584: a pair of words ``(lo, hi)``.

``lo`` is the board of :mod:`td2048.games.bitboard` holding each cell's low 4 bits; bit i of
``hi`` is bit 4 of cell i's code::

    code of cell i = ((lo >> 4 i) & 0xF) | (((hi >> i) & 1) << 4)          (0 .. 31)

    hi, a 4x4 matrix of bits:  bit  0  1  2  3
                                    4  5  6  7
                                    8  9 10 11
                                   12 13 14 15

The symmetries act on both words (``hi`` with the 16-bit versions of transpose, mirror and
flip). A row is 20 bits (16 from ``lo``, 4 from ``hi``) and slides through tables of 2**20
entries, built, as the 4-bit tables are, from :func:`td2048.games.rules.slide_row_left`.
New tiles are codes 1 and 2 (p = 0.9 / 0.1) in both games, on a uniformly random empty cell.
Other board shapes sit in the frame's corner as in :mod:`td2048.games.game2048`: the table of a
shape whose rows and columns differ has 4 more rows for its columns (``vertical`` = 4).
"""

import functools

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import NIBBLE, U64, count_flags, empty_mask, flip, mirror, nth_flag_shift, transpose
from td2048.games.rules import build_row_table
from td2048.games.shape import FULL, BoardShape
from td2048.games.tiles import GAMES
from td2048.rng import below, uniform

MAX_WIDE_CODE = 31
P_TWO = 0.1  # the new tile is code 2 with p = 0.1, else code 1
_ROW_BITS = 20
_LEFT, _RIGHT = 0, 1  # rows of the row table; their rewards are rows 2 and 3
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


# literal constants as globals: Numba takes them as compile-time constants, while each U64(...)
# call is typed again wherever an inlined function lands (a large share of compile time)
_M3333 = U64(0x3333)
_M5555 = U64(0x5555)
_MFFFF = U64(0xFFFF)
_U0 = U64(0)
_U1 = U64(1)
_U15 = U64(0xF)
_U16 = U64(16)
_U2 = U64(2)
_U204 = U64(0x00CC)
_U255 = U64(0x00FF)
_U2570 = U64(0x0A0A)
_U3 = U64(3)
_U3855 = U64(0x0F0F)
_U4 = U64(4)
_U6 = U64(6)
_U8 = U64(8)


@njit(inline="always")
def transpose16(x):
    """Transpose of a 4x4 bit matrix in 16 bits (bit 4 r + c)."""
    t = (x ^ (x >> _U3)) & _U2570
    x = x ^ t ^ (t << _U3)
    t = (x ^ (x >> _U6)) & _U204
    return x ^ t ^ (t << _U6)


@njit(inline="always")
def mirror16(x):
    """Reverse the 4 bits of each row."""
    x = ((x & _M5555) << _U1) | ((x >> _U1) & _M5555)
    return ((x & _M3333) << _U2) | ((x >> _U2) & _M3333)


@njit(inline="always")
def flip16(x):
    """Reverse the order of the rows."""
    x = ((x & _U255) << _U8) | ((x >> _U8) & _U255)
    return ((x & _U3855) << _U4) | ((x >> _U4) & _U3855)


@njit(inline="always")
def wide_transpose(b):
    return (transpose(b[0]), transpose16(b[1]))


@njit(inline="always")
def wide_mirror(b):
    return (mirror(b[0]), mirror16(b[1]))


@njit(inline="always")
def wide_flip(b):
    return (flip(b[0]), flip16(b[1]))


@njit(inline="always")
def wide_code(b, i):
    return np.int64(((b[0] >> U64(4 * i)) & NIBBLE) | (((b[1] >> U64(i)) & _U1) << _U4))


@njit
def wide_max_code(b):
    best = 0
    for i in range(16):
        c = wide_code(b, i)
        if c > best:
            best = c
    return best


@njit(inline="always")
def wide_empty_mask(b):
    """Bit 4 i set where cell i is empty (both words zero there)."""
    hi = b[1]
    spread = _U0
    for i in range(16):
        spread |= ((hi >> U64(i)) & _U1) << U64(4 * i)
    return empty_mask(b[0]) & ~spread


@functools.cache
def wide_row_table(game: str, shape: BoardShape = FULL) -> np.ndarray:
    """``uint32[4, 2**20]``: left result, right result, left reward, right reward of every 20-bit row
    of the shape's width; for a shape whose rows and columns differ, 4 more rows for its columns."""
    table = _wide_line_table(game, shape.cols)
    if not shape.square:
        table = np.concatenate([table, _wide_line_table(game, shape.rows)])
        table.setflags(write=False)
    return table


@functools.cache
def _wide_line_table(game: str, length: int) -> np.ndarray:
    table = build_row_table(_ROW_BITS, MAX_WIDE_CODE, GAMES[game], length)
    table.setflags(write=False)
    return table


def wide_vertical_offset(shape: BoardShape) -> int:
    """The first row of the columns' table in :func:`wide_row_table`: 0 on a square board."""
    return 0 if shape.square else 4


@njit(inline="always")
def _slide_rows(table, b, side, start):
    lo = b[0]
    hi = b[1]
    out_lo = _U0
    out_hi = _U0
    reward = 0
    for r in range(4):
        row = np.int64(((lo >> U64(16 * r)) & _MFFFF) | (((hi >> U64(4 * r)) & _U15) << _U16))
        result = U64(table[start + side, row])
        out_lo |= (result & _MFFFF) << U64(16 * r)
        out_hi |= (result >> _U16) << U64(4 * r)
        reward += np.int64(table[start + side + 2, row])
    return (out_lo, out_hi), reward


# Inlined by Numba, unlike the new tile below and 4-bit boards' move: as forceinline it trained 2584 ~4% slower.
@njit(inline="always")
def wide_move(table, b, direction, vertical):
    """Afterstate and reward of a slide; illegal if the afterstate equals the board.

    ``vertical``: the first row of the columns' table (0 on a square board)."""
    if direction == LEFT:
        return _slide_rows(table, b, _LEFT, 0)
    if direction == RIGHT:
        return _slide_rows(table, b, _RIGHT, 0)
    t = wide_transpose(b)
    after, reward = _slide_rows(table, t, _LEFT if direction == UP else _RIGHT, vertical)
    return wide_transpose(after), reward


@njit(forceinline=True)
def wide_spawn_tile(b, rng, cells):
    """Code 1 (p = 0.9) or 2 (p = 0.1) on a uniformly random empty cell of ``cells`` (bit 4 i for each
    cell of the board); cell first, then tile."""
    m = wide_empty_mask(b) & cells
    n = count_flags(m)
    if n == 0:
        return b
    k = below(rng, n)
    code = _U2 if uniform(rng) < P_TWO else _U1
    return (b[0] | (code << nth_flag_shift(m, k)), b[1])


@njit(forceinline=True)
def wide_new_game(rng, cells):
    return wide_spawn_tile(wide_spawn_tile((_U0, _U0), rng, cells), rng, cells)


# Python-facing helpers (tests, tools)
def wide_from_codes(codes) -> tuple[int, int]:
    codes = [int(c) for c in np.asarray(codes).reshape(16)]
    if min(codes) < 0 or max(codes) > MAX_WIDE_CODE:
        raise ValueError("cell codes must be in 0..31")
    return (sum((c & 0xF) << (4 * i) for i, c in enumerate(codes)), sum((c >> 4) << i for i, c in enumerate(codes)))


def wide_to_codes(b) -> list[int]:
    lo, hi = int(b[0]), int(b[1])
    return [((lo >> (4 * i)) & 0xF) | (((hi >> i) & 1) << 4) for i in range(16)]


def py_wide_move(game: str, b, direction: int, shape: BoardShape = FULL):
    after, reward = _py_wide_move(wide_row_table(game, shape), (U64(b[0]), U64(b[1])), direction,
                                  wide_vertical_offset(shape))
    return (int(after[0]), int(after[1])), int(reward)


@njit
def _py_wide_move(table, b, direction, vertical):
    return wide_move(table, b, direction, vertical)


def py_wide_symmetries(b):
    out = _py_wide_symmetries((U64(b[0]), U64(b[1])))
    return [(int(x[0]), int(x[1])) for x in out]


@njit
def _py_wide_symmetries(b):
    m = wide_mirror(b)
    f = wide_flip(b)
    mf = wide_mirror(f)
    return (b, wide_transpose(f), mf, wide_transpose(m), m, f, wide_transpose(b), wide_transpose(mf))


def py_wide_spawn(b, rng_state, shape: BoardShape = FULL):
    out = _py_wide_spawn((U64(b[0]), U64(b[1])), rng_state, U64(shape.cells_mask))
    return (int(out[0]), int(out[1]))


@njit
def _py_wide_spawn(b, rng, cells):
    return wide_spawn_tile(b, rng, cells)
