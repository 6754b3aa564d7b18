"""Table kernels: a solution's values read by the kernels, and an endgame table's choice of move.

Like :mod:`td2048.kernels.episode`, this file is not imported as it is: its text below the marker is appended to
each network's generated module (:mod:`td2048.kernels.codegen`), before the episode kernels, which let an
endgame's table choose the moves of its endgame in training games (``play_from``); distillation
(:mod:`td2048.kernels.distill`) and the endgame's games (:mod:`td2048.kernels.endgame`) read solutions here too.
The imports above the marker name, for a linter and a reader, what the generated module defines.

A solution reaches the kernels as the arrays of :func:`td2048.teacher.teacher_arrays` (``teacher``), an
endgame's table as ``(teacher, masks)`` (:func:`td2048.teacher.endgame_arrays`): ``masks[k]`` = (pattern mask,
pattern codes, goal mask, goal codes) of the frame board in each orientation k
(:meth:`td2048.solve.endgame.Endgame.oriented_masks`); no orientation (``masks`` of 0 rows) is no table.
"""

import numpy as np

from td2048.config import njit
from td2048.games.keys import canon4, canon5, indexed_position
from td2048.kernels.interface import CELLS, VERTICAL
from td2048.kernels.targets import chance_mean
from td2048.kernels.templates.narrow_board import (
    EMPTY_BOARD,
    U64,
    board_low,
    cell_code,
    move,
    place_tile,
    spawn_tile,
)
from td2048.rng import below

# ---- table kernels (shared by every network) ----
EG_PATTERN, EG_GOAL = 0, 2  # the columns of an orientation's masks: (mask, codes) of the pattern, of the goal


@njit
def teacher_value(teacher, b, codes):
    """V*(b): perfect play's expected score from the position b (a state, the new tile placed), read from a
    solution's layers (``teacher``, see td2048.teacher.teacher_arrays); NaN for a position it does not hold.

    The position's key is the solver's (td2048.games.keys): its least symmetric board, as a 4-bit frame
    board or as 5-bit codes of the board's own cells; its layer is its tile sum, and the key is found by
    binary search in the layer's sorted keys, or through the keys' hash index where ``teacher`` has one
    (td2048.games.keys.indexed_position). ``codes``: int64 scratch of 16."""
    keys, values, starts, tile_values, frame, perms, shape, slots = teacher
    n = frame.shape[0]
    total = 0
    for i in range(n):
        codes[i] = cell_code(b, frame[i])
        total += tile_values[codes[i]]
    if shape[3]:  # 5-bit keys (2584)
        key = canon5(codes, perms, n)
    else:
        key = canon4(board_low(b), U64(shape[0]), U64(shape[1]), shape[2] != 0)
    if slots.shape[0] > 0:  # the keys' hash index
        i = indexed_position(keys, slots, shape[4], key)
        return values[i] if i >= 0 else np.nan
    if total + 1 >= starts.shape[0]:
        return np.nan
    lo = starts[total]
    hi = starts[total + 1]
    i = lo + np.searchsorted(keys[lo:hi], key)
    if i < hi and keys[i] == key:
        return values[i]
    return np.nan


@njit(inline='always')
def teacher_value_at(position, state):
    """teacher_value of ``position`` with ``state`` = (teacher, codes): chance_mean's form of it."""
    teacher, codes = state
    return teacher_value(teacher, position, codes)


@njit
def teacher_after_value(teacher, after, codes):
    """V*(s'): the mean over every empty cell and both new tiles of perfect play's value of the position they
    make (an afterstate's exact value; see teacher_value)."""
    return chance_mean(after, teacher_value_at, (teacher, codes))


@njit(inline='always')
def endgame_holds(b, masks, column):
    """Whether ``b`` keeps the fixed tiles (``column`` EG_PATTERN) or shows the goal (EG_GOAL) in some
    orientation."""
    for k in range(masks.shape[0]):
        if board_low(b) & masks[k, column] == masks[k, column + 1]:
            return True
    return False


@njit
def endgame_move(table, board, teacher, masks, codes):
    """The table's move on a position that keeps the fixed tiles: (direction, its probability of building the
    goal, whether it builds it); direction -1 where every legal move moves a fixed tile (or leaves the table).
    ``codes``: int64 scratch of 16."""
    best, best_value = -1, -1.0
    for d in range(4):
        after, r = move(table, board, d, VERTICAL)
        if after == board:
            continue
        if endgame_holds(after, masks, EG_GOAL):
            return d, 1.0, True
        if not endgame_holds(after, masks, EG_PATTERN):
            continue
        v = teacher_after_value(teacher, after, codes)
        if v > best_value:  # NaN (a position the table lacks) never
            best, best_value = d, v
    return best, best_value, False


@njit(inline='always')
def endgame_choice(table, board, endgame, codes):
    """The move that an endgame's table (``endgame`` = (teacher, masks)) plays on ``board``: (direction, whether
    it builds the goal), direction -1 where the table plays none: the board does not keep the fixed tiles, the
    table gives it no chance of the goal, or every legal move leaves the table (see endgame_move). ``codes``:
    int64 scratch of 16."""
    teacher, masks = endgame
    if masks.shape[0] == 0 or not endgame_holds(board, masks, EG_PATTERN) \
            or not teacher_value(teacher, board, codes) > 0.0:
        return -1, False
    d, _, won = endgame_move(table, board, teacher, masks, codes)
    return d, won


@njit(inline='always')
def endgame_start(masks, rng):
    """An endgame's start, as its solver starts it: the fixed tiles (``masks``: see endgame_holds) in an
    orientation drawn at random, and two new tiles on the free cells."""
    fixed = masks[below(rng, masks.shape[0]), EG_PATTERN + 1]
    board = EMPTY_BOARD
    for cell in range(16):
        code = (fixed >> U64(4 * cell)) & U64(0xF)
        if code:
            board = place_tile(board, cell, code)
    return spawn_tile(spawn_tile(board, rng, CELLS), rng, CELLS)
