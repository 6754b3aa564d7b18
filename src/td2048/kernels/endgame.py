"""Endgame kernels: games played by a network, and by an endgame's table wherever the table holds the position.

Like :mod:`td2048.kernels.search`, this file is not imported as it is: its text below the marker is appended to
each network's generated module (:mod:`td2048.kernels.codegen`), after the search kernels, whose choices it
plays with. The imports above the marker name, for a linter and a reader, what the generated module defines.

An endgame (``td2048 solve --fixed ... --goal ...``, :mod:`td2048.solve.endgame`) is a solution of the
positions that keep some tiles fixed in place, valued by the probability of building a goal tile. Its table
reaches the kernels as ``endgame = (teacher, masks)``: the solution's keys and values as ``teacher_value`` reads
them (:func:`td2048.teacher.endgame_arrays`), and ``masks[k]`` = (pattern mask, pattern codes, goal mask, goal
codes) of the frame board in each orientation k (:meth:`td2048.solve.endgame.Endgame.oriented_masks`); with the
points that building its goal adds to a game, ``boundary = (endgame, worth)`` (None: no worth).

A game is played by the network (greedily or by search, as ``search_play_from``), but for its positions that
keep the fixed tiles (in some orientation) and that the table holds with a probability above 0 of building the
goal: there the table chooses the move, the one that builds the goal, else the one that keeps the fixed tiles
with the greatest probability of building it (the mean over the new tile, as ``chance_mean`` takes it; the
first of equals). New tiles are drawn as in every game, from the game's random state. With a ``boundary`` the
network's search values the positions where the table would take over by the table's chance of the goal
(:mod:`td2048.kernels.search`: the search's boundary), at depth 1 too.
"""

import numpy as np

from td2048.config import njit
from td2048.kernels.episode import best_move, hand_off, scratch, store_result
from td2048.kernels.interface import CELLS, VERTICAL
from td2048.kernels.search import search_scratch, search_values, start_game
from td2048.kernels.tables import endgame_choice
from td2048.kernels.templates.narrow_board import load_board, max_code, move, needs_wide, new_game, spawn_tile

# ---- endgame kernels (shared by every network) ----
EG_GAMES, EG_ENTRIES, EG_WINS, EG_MOVES = 5, 6, 7, 8  # counters: games that entered, entries, goals built, moves


@njit
def endgame_play_from(table, w, rng, board, score, steps, depth, downgrade, tt, ttv, limits, counters, endgame,
                      boundary):
    """Play on from ``board`` as search_play_from, the table choosing the moves of its endgame while its goal
    can be built (see the module's docstring). Returns (score, steps, final board, handed off)."""
    searched = depth > 1 or downgrade != 0 or boundary is not None
    work = search_scratch()
    greedy = scratch()
    values = np.empty(4)
    codes = np.zeros(16, np.int64)
    playing = False  # the table chose the last move
    entered = False  # the table played in this game
    while True:
        if needs_wide(board):
            return score, steps, board, True
        d, won = endgame_choice(table, board, endgame, codes)
        if d >= 0:
            if not playing:
                counters[EG_ENTRIES] += 1
                if not entered:
                    counters[EG_GAMES] += 1
                entered = True
            counters[EG_MOVES] += 1
            if won:
                counters[EG_WINS] += 1
        playing = d >= 0
        if playing:
            after, r = move(table, board, d, VERTICAL)
        elif searched:
            d = search_values(table, w, board, depth, downgrade, work, tt, ttv, limits, counters, values, boundary)
            if d < 0:
                break
            after, r = move(table, board, d, VERTICAL)
        else:
            d, after, r, _ = best_move(table, w, board, greedy)
            if d < 0:
                break
        score += r
        steps += 1
        board = spawn_tile(after, rng, CELLS)
    return score, steps, board, False


@njit
def endgame_block(table, w, rng, starts, depth, downgrade, tt, ttv, limits, counters, out, handoff, endgame,
                  boundary):
    """search_block (greedy_block at depth 1), with an endgame's table (endgame_play_from)."""
    for e in range(out[0].shape[0]):
        start_game(rng, starts, e, counters)
        score, steps, final, handed = endgame_play_from(table, w, rng, new_game(rng, CELLS), np.int64(0),
                                                        np.int64(0), depth, downgrade, tt, ttv, limits, counters,
                                                        endgame, boundary)
        if handed:
            hand_off(handoff, final, score, steps)
            return e, True
        store_result(out, e, score, steps, final)
    return out[0].shape[0], False


@njit
def endgame_finish(table, w, rng, depth, downgrade, tt, ttv, limits, counters, handoff, endgame, boundary):
    """search_finish with an endgame's table: play on from ``handoff``'s board."""
    boards, counts = handoff
    score, steps, board, handed = endgame_play_from(table, w, rng, load_board(boards, 0), counts[0], counts[1], depth,
                                                    downgrade, tt, ttv, limits, counters, endgame, boundary)
    hand_off(handoff, board, score, steps)
    return max_code(board), handed
