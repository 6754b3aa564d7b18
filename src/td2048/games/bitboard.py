"""A 4x4 board in one ``uint64``: 4 bits a cell, cell 0 in the lowest nibble, row-major.

::

    cell index            bits of the uint64 (nibble = 4 bits)
    +----+----+----+----+
    |  0 |  1 |  2 |  3 |  row 0 = bits  0..15   (cell 0 = bits 0..3)
    +----+----+----+----+
    |  4 |  5 |  6 |  7 |  row 1 = bits 16..31
    +----+----+----+----+
    |  8 |  9 | 10 | 11 |  row 2 = bits 32..47
    +----+----+----+----+
    | 12 | 13 | 14 | 15 |  row 3 = bits 48..63
    +----+----+----+----+

A cell holds a *code*: 0 for empty, k for the tile 2**k in 2048.

The 8 symmetries of the square are built from three cheap bit operations::

    board        transpose      mirror         flip
    0 1 2 3      0 4 8 c        3 2 1 0        c d e f
    4 5 6 7      1 5 9 d        7 6 5 4        8 9 a b
    8 9 a b      2 6 a e        b a 9 8        4 5 6 7
    c d e f      3 7 b f        f e d c        0 1 2 3
"""

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from td2048.config import njit
from td2048.intrinsics import fast_pext, pdep

U64 = np.uint64
NIBBLE = U64(0xF)
ROW_MASK = U64(0xFFFF)
LOW_NIBBLES = U64(0x1111111111111111)


# literal constants as globals: Numba takes them as compile-time constants, while each U64(...)
# call is typed again wherever an inlined function lands (a large share of compile time)
_MF0F00000F0F0 = U64(0x0000F0F00000F0F0)
_MF0F00000F0F0000 = U64(0x0F0F00000F0F0000)
_MF0F00F0FF0F00F0F = U64(0xF0F00F0FF0F00F0F)
_MF0F0F0F0F0F0F0F = U64(0x0F0F0F0F0F0F0F0F)
_MF0F0F0F0F0F0F0F0 = U64(0xF0F0F0F0F0F0F0F0)
_MFF00FF00 = U64(0x00000000FF00FF00)
_MFF00FF00000000 = U64(0x00FF00FF00000000)
_MFF00FF0000FF00FF = U64(0xFF00FF0000FF00FF)
_MFF00FF00FF00FF = U64(0x00FF00FF00FF00FF)
_MFF00FF00FF00FF00 = U64(0xFF00FF00FF00FF00)
_MFFFF0000FFFF = U64(0x0000FFFF0000FFFF)
_MFFFF0000FFFF0000 = U64(0xFFFF0000FFFF0000)
_U1 = U64(1)
_U12 = U64(12)
_U16 = U64(16)
_U2 = U64(2)
_U24 = U64(24)
_U32 = U64(32)
_U4 = U64(4)
_U60 = U64(60)
_U8 = U64(8)


@njit(forceinline=True)
def transpose(x):
    """Reflect across the main diagonal: cell (r, c) goes to (c, r)."""
    a1 = x & _MF0F00F0FF0F00F0F
    a2 = x & _MF0F00000F0F0
    a3 = x & _MF0F00000F0F0000
    a = a1 | (a2 << _U12) | (a3 >> _U12)
    b1 = a & _MFF00FF0000FF00FF
    b2 = a & _MFF00FF00000000
    b3 = a & _MFF00FF00
    return b1 | (b2 >> _U24) | (b3 << _U24)


@njit(forceinline=True)
def mirror(x):
    """Reverse each row: cell (r, c) goes to (r, 3 - c)."""
    x = ((x & _MF0F0F0F0F0F0F0F) << _U4) | ((x & _MF0F0F0F0F0F0F0F0) >> _U4)
    return ((x & _MFF00FF00FF00FF) << _U8) | ((x & _MFF00FF00FF00FF00) >> _U8)


@njit(forceinline=True)
def flip(x):
    """Reverse the order of the rows: cell (r, c) goes to (3 - r, c)."""
    x = ((x & _MFFFF0000FFFF) << _U16) | ((x & _MFFFF0000FFFF0000) >> _U16)
    return (x << _U32) | (x >> _U32)


@njit(inline="always")
def empty_mask(x):
    """A uint64 with bit 4*i set exactly where cell i is empty."""
    y = x | (x >> _U2)
    y = y | (y >> _U1)
    return ~y & LOW_NIBBLES


@njit(inline="always")
def count_flags(m):
    """Number of cells flagged in a mask of bit 4 i per cell (0..16)."""
    if m == LOW_NIBBLES:
        return 16
    # summing the 16 flag bits into the top nibble with one multiplication
    return np.int64((m * LOW_NIBBLES) >> _U60)


# BMI2's pdep where the CPU runs it in hardware (as pext: fast_pext), read when a kernel compiles
_FAST_PDEP = fast_pext()


@njit(forceinline=True)
def nth_flag_shift(m, k):
    """Where the k-th lowest flag of a mask sits (its bit's position; k from 0, below the mask's flags).

    One ``pdep`` where the CPU runs it fast (it deposits the bit 1 << k at m's k-th flag), else the k flags
    below it cleared one by one (a loop that mispredicts its exit). The same answer either way."""
    if _FAST_PDEP:
        return U64(trailing_zeros(pdep(_U1 << U64(k), m)))
    for _ in range(k):
        m &= m - _U1
    return U64(trailing_zeros(m))


@njit(inline="always")
def count_empty(x):
    """Number of empty cells of the 4x4 frame (0..16)."""
    return count_flags(empty_mask(x))


@njit(inline="always")
def cell(x, i):
    """Code of cell ``i``."""
    return np.int64((x >> U64(4 * i)) & NIBBLE)


@njit
def max_code(x):
    """Largest code on the board."""
    best = 0
    for i in range(16):
        c = np.int64((x >> U64(4 * i)) & NIBBLE)
        if c > best:
            best = c
    return best


def symmetric_boards(board: int) -> list[int]:
    """The 8 isomorphic boards in the kernels' order: 4 rotations, then 4 reflections.

    Order: identity, rot90 (clockwise), rot180, rot270, mirror, flip, transpose, anti-transpose.
    A network with ``isomorphisms=4`` uses the first four, ``isomorphisms=1`` the first.
    """
    return [int(v) for v in _symmetric_boards(U64(board))]


@njit
def _symmetric_boards(b):
    m = mirror(b)
    f = flip(b)
    mf = mirror(f)
    return (b, transpose(f), mf, transpose(m), m, f, transpose(b), transpose(mf))


def board_from_grid(grid) -> int:
    """Pack a 4x4 grid (or 16 codes, row-major) into a bitboard integer."""
    codes = np.asarray(grid, dtype=np.int64).reshape(16)
    if codes.min() < 0 or codes.max() > 15:
        raise ValueError("cell codes must be in 0..15")
    return sum(int(c) << (4 * i) for i, c in enumerate(codes))


def grid_from_board(board: int) -> np.ndarray:
    """Unpack a bitboard into a 4x4 array of codes."""
    return np.array([(int(board) >> (4 * i)) & 0xF for i in range(16)], dtype=np.int64).reshape(4, 4)


def largest_cells(boards: np.ndarray) -> np.ndarray:
    """The frame cell (0..15) of each packed board's largest tile, the first in row-major order of equal ones.

    Parameters
    ----------
    boards : numpy.ndarray
        ``uint64[n]`` on 4-bit cells, or ``uint64[n, 2]``, (lo, hi) words on 5-bit cells (the hi word's bit i
        is cell i's fifth bit).

    Returns
    -------
    numpy.ndarray
        ``int64[n]``.
    """
    boards = np.asarray(boards, np.uint64)
    lo = boards if boards.ndim == 1 else boards[:, 0]
    shifts = np.arange(16, dtype=np.uint64)
    codes = (lo[:, None] >> (U64(4) * shifts)) & U64(0xF)
    if boards.ndim == 2:
        codes |= ((boards[:, 1][:, None] >> shifts) & U64(1)) << U64(4)
    return codes.argmax(axis=1).astype(np.int64)


def format_board(board: int, values: bool = True) -> str:
    """A small text picture of the board (tile values, or codes with ``values=False``)."""
    grid = grid_from_board(board)
    lines = []
    for row in grid:
        cells = [(str(1 << int(c)) if c else ".") if values else str(int(c)) for c in row]
        lines.append(" ".join(f"{c:>6}" for c in cells))
    return "\n".join(lines)
