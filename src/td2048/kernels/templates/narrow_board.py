"""The board of 4-bit cells in one 64-bit word, as the generated kernels see it.

The kernels of 2048 up to 32768 take this text (:mod:`td2048.kernels.templates`); those of 5-bit
cells take :mod:`~td2048.kernels.templates.wide_board`, which gives the same names:

- the board's type and rules: ``U64``, ``EMPTY_BOARD``, ``move``, ``spawn_tile``, ``new_game``,
  ``P_SECOND_TILE`` (the probability of a new tile of code 2), ``empty_mask``, ``max_code``;
- its symmetries: ``transpose``, ``mirror``, ``flip``, and ``cells_down(b, n)``, every cell moved n
  places toward cell 0 (a symmetric board of a smaller shape, back in the frame's corner);
- ``needs_wide(b)``: whether the board holds two 32768 tiles, whose merge 4-bit cells cannot hold
  (the episode is handed off to the kernels of 5-bit cells);
- ``board_low(b)``: the word of the cells' low 4 bits; ``board_words(b)``: (low word, high word),
  the high word 0 here;
- ``store_board(path, i, b)`` and ``load_board(path, i)``: a board in row i of a uint64 array of
  two columns;
- ``place_tile(b, cell, code)``, ``cell_code(b, cell)``: a tile put on an empty cell, a cell's code;
  ``with_codes(b, codes)``: the board of 16 codes.
"""

import numpy as np

from td2048.config import njit

__all__ = ["EMPTY_BOARD", "P_SECOND_TILE", "U64", "board_low", "board_words", "cell_code", "cells_down", "empty_mask",
           "flip", "load_board", "max_code", "mirror", "move", "needs_wide", "new_game", "place_tile", "spawn_tile",
           "store_board", "transpose", "with_codes"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
from td2048.games.bitboard import U64, empty_mask, flip, max_code, mirror, transpose
from td2048.games.game2048 import P_FOUR as P_SECOND_TILE
from td2048.games.game2048 import move, new_game, spawn_tile

EMPTY_BOARD = U64(0)


@njit(inline='always')
def needs_wide(b):
    # two or more 32768 tiles: a merge that 4-bit cells cannot hold may come (hand off to 5-bit cells)
    m = b & (b >> U64(1)) & (b >> U64(2)) & (b >> U64(3)) & U64(0x1111111111111111)
    return (m & (m - U64(1))) != U64(0)


@njit(inline='always')
def board_low(b):
    return b


@njit(inline='always')
def store_board(path, i, b):
    path[i, 0] = b


@njit(inline='always')
def load_board(path, i):
    return path[i, 0]


@njit(inline='always')
def board_words(b):
    return b, U64(0)


@njit(inline='always')
def place_tile(b, cell, code):
    return b | (U64(code) << U64(4 * cell))


@njit(inline='always')
def cell_code(b, cell):
    return np.int64((b >> U64(4 * cell)) & U64(0xf))


@njit(inline='always')
def with_codes(b, codes):
    out = U64(0)
    for c in range(16):
        out |= U64(codes[c]) << U64(4 * c)
    return out


@njit(inline='always')
def cells_down(b, n):
    # every cell n places toward cell 0 (a symmetric board of a smaller shape, back in the corner)
    return b >> U64(4 * n)
