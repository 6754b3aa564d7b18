"""The board of 5-bit cells in a pair of words ``(lo, hi)``, as the generated kernels see it.

The kernels of 2584, and of 2048 past two 32768 tiles, take this text (:mod:`td2048.kernels.templates`);
it gives the names of :mod:`~td2048.kernels.templates.narrow_board`, for boards of
:mod:`td2048.games.wide`: ``lo`` holds each cell's low 4 bits, bit i of ``hi`` bit 4 of cell i's code.
``needs_wide`` is always false (these cells hold every tile), and ``board_words`` is the pair itself.
"""

import numpy as np

from td2048.config import njit

__all__ = ["EMPTY_BOARD", "P_SECOND_TILE", "U64", "board_low", "board_words", "cell_code", "cells_down", "empty_mask",
           "flip", "load_board", "max_code", "mirror", "move", "needs_wide", "new_game", "place_tile", "spawn_tile",
           "store_board", "transpose", "with_codes"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
from td2048.games.bitboard import U64
from td2048.games.wide import P_TWO as P_SECOND_TILE
from td2048.games.wide import wide_empty_mask as empty_mask
from td2048.games.wide import wide_flip as flip
from td2048.games.wide import wide_max_code as max_code
from td2048.games.wide import wide_mirror as mirror
from td2048.games.wide import wide_move as move
from td2048.games.wide import wide_new_game as new_game
from td2048.games.wide import wide_spawn_tile as spawn_tile
from td2048.games.wide import wide_transpose as transpose

EMPTY_BOARD = (U64(0), U64(0))


@njit(inline='always')
def needs_wide(b):
    return False


@njit(inline='always')
def board_low(b):
    return b[0]


@njit(inline='always')
def store_board(path, i, b):
    path[i, 0] = b[0]
    path[i, 1] = b[1]


@njit(inline='always')
def load_board(path, i):
    return (path[i, 0], path[i, 1])


@njit(inline='always')
def board_words(b):
    return b[0], b[1]


@njit(inline='always')
def place_tile(b, cell, code):
    return (b[0] | (U64(code) << U64(4 * cell)), b[1])


@njit(inline='always')
def cell_code(b, cell):
    return np.int64(((b[0] >> U64(4 * cell)) & U64(0xf)) | (((b[1] >> U64(cell)) & U64(1)) << U64(4)))


@njit(inline='always')
def with_codes(b, codes):
    lo = U64(0)
    hi = U64(0)
    for c in range(16):
        lo |= (U64(codes[c]) & U64(0xf)) << U64(4 * c)
        hi |= (U64(codes[c]) >> U64(4)) << U64(c)
    return (lo, hi)


@njit(inline='always')
def cells_down(b, n):
    # every cell n places toward cell 0 (a symmetric board of a smaller shape, back in the corner)
    return (b[0] >> U64(4 * n), b[1] >> U64(n))
