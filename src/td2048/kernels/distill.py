"""Distillation kernels: V moves toward perfect play's exact values, read from a solution.

Like :mod:`td2048.kernels.episode`, this file is not imported as it is: its text from the marker on
is appended to each network's generated module (:mod:`td2048.kernels.codegen`), after the episode
kernels, whose greedy play (``ask_for_candidates``, ``best_candidate``), exact step (``exact_share``)
and results (``store_result``) it uses. The imports above the marker name, for a linter and a reader,
what the generated module defines (:mod:`td2048.kernels.interface`); they are not copied.

A solution of a small board (``td2048 solve``) holds V*, perfect play's expected score, of every
position it reaches, and :func:`td2048.teacher.teacher_arrays` hands it to the kernels as arrays;
``distill_block`` plays episodes and moves each position's afterstates (with state values: the
position) toward their values under perfect play (``--teacher``).
"""

import numpy as np

from td2048.config import njit
from td2048.kernels.episode import ask_for_candidates, best_candidate, scratch, store_result
from td2048.kernels.interface import CELLS, STATE_VALUES, feature_indices, update_of
from td2048.kernels.params import ALPHA_SPLIT, TEACHER_LOSS, TEACHER_MOVES
from td2048.kernels.tables import teacher_after_value, teacher_value
from td2048.kernels.targets import exact_share, regret_update
from td2048.kernels.templates.narrow_board import (
    load_board,
    new_game,
    spawn_tile,
)
from td2048.rng import uniform


# ---- distillation kernels (shared by every network) ----
@njit
def distill_block(table, w, dirty, rng, params, teacher, stop, out):
    """Up to len(out[0]) episodes of distillation: V moves toward perfect play's exact values.

    At every position played, each legal move's afterstate (with state values: the position itself) moves
    toward its value under perfect play, read from a solution (``teacher``, see teacher_value), by exactly
    alpha x the error (exact_share): the network learns how the moves of a position rank, which is what its
    greedy player needs, and not only the value of the one it plays. A share params[TEACHER_MOVES] of the
    episodes follows perfect play's moves (the move with the largest r + V*(s')), the others the network's
    own greedy moves: the network learns the positions perfect play meets and those its own play meets.
    With params[TEACHER_LOSS] 1 (afterstate values only), regret_update replaces the moves' values: only
    how the network ranks the moves is learned. ``out`` and ``stop`` as in run_block. Returns (episodes
    finished, False)."""
    alpha_split = params[ALPHA_SPLIT]
    share = params[TEACHER_MOVES]
    regret = params[TEACHER_LOSS] == 1.0
    work = scratch()
    xs, afters, rewards = work
    codes = np.zeros(16, np.int64)
    targets = np.zeros(4)
    r = np.int64(12)
    for e in range(out[0].shape[0]):
        if stop[0]:
            return e, False
        follow = share > 0.0 and uniform(rng) < share
        board = new_game(rng, CELLS)
        score = np.int64(0)
        steps = np.int64(0)
        bank = np.int64(0)
        while True:
            ask_for_candidates(table, w, board, work, bank)
            d, after, reward, v = best_candidate(w, board, work, bank)
            if STATE_VALUES:
                feature_indices(board, xs, r)
                update_of(w, dirty, xs, r, teacher_value(teacher, board, codes) if d >= 0 else 0.0,
                          exact_share(xs, r, alpha_split))
            if d < 0:
                break
            if not STATE_VALUES or follow or regret:
                best = -np.inf
                for m in range(4):
                    a = load_board(afters, m)
                    if a != board:
                        targets[m] = teacher_after_value(teacher, a, codes)
                        if follow and rewards[m] + targets[m] > best:  # perfect play's move instead
                            best, d = rewards[m] + targets[m], m
                after, reward = load_board(afters, d), rewards[d]
            if regret:
                regret_update(w, dirty, work, bank, board, targets, alpha_split)
            elif not STATE_VALUES:
                for m in range(4):
                    if load_board(afters, m) != board:
                        row = 4 * bank + m
                        update_of(w, dirty, xs, row, targets[m], exact_share(xs, row, alpha_split))
            score += reward
            steps += 1
            bank = (bank + 1) % 3
            board = spawn_tile(after, rng, CELLS)
        store_result(out, e, score, steps, board)
    return out[0].shape[0], False
