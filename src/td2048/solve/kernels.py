"""The solver's layer passes, compiled for each game: a layer's afterstates and children, and its values.

The forward pass (:func:`td2048.solve.layers.enumerate_layers`) makes each layer's afterstates
(``afterstates_part``) and their children (``expand_part``); the backward pass (:mod:`td2048.solve.induction`)
values a layer's afterstates from the layers below (``afterstate_values``: the expectation over the new tile,
:mod:`td2048.solve.chance`) and its positions from their afterstates (``layer_values``). :data:`COMPILED`
holds them for each game. They work on keys (:mod:`td2048.games.keys`) one position at a time
(:mod:`td2048.solve.positions`), and on layers as sorted arrays and hash sets of keys (:mod:`td2048.solve.sets`).

Every kernel takes both row tables (``table4`` for 2048, ``table5`` for 2584; the unused one may be a
stand-in of the right type) and the flag ``wide``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from td2048.config import njit
from td2048.solve.chance import add_expected_values, chance_children, chance_scratch, child_rows
from td2048.solve.endgame import BROKEN, KEPT, WON
from td2048.solve.positions import endgame_state, key_board, least, max_code, orientations, slide
from td2048.solve.sets import EMPTY, grown, lookup, members, set_add

__all__ = ["COMPILED"]


def _compiled(wide_variant: bool) -> SimpleNamespace:
    """The layer kernels compiled for one game: ``wide`` is a constant in them, so that each game's code has no
    branch of the other's (2048's slides and symmetries run about twice as fast). Each kernel still takes the
    ``wide`` argument of :attr:`td2048.solve.layers.Rules.args` (unused)."""
    @njit
    def afterstates_part(first, last, keys, _wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift,
                         square, size, pattern_mask, pattern_bits, goal_mask, goal_bits):
        """The afterstates of positions ``first .. last - 1`` of a layer (every legal move's board), up to symmetry
        and deduplicated: (the largest code those positions hold, their sorted keys). Many positions share an
        afterstate (on 3x3 about four (position, move) pairs each), so the children are made from these.

        Runs on a part of a layer (on threads: :func:`td2048.threads.split_range`); the parts' results are merged
        by :func:`~td2048.solve.sets.merge_unique`. ``size``: the hash set's first size (a power of two; it grows
        at half full). The masks pose an endgame (:meth:`td2048.solve.endgame.Endgame.masks`; all 0 for a whole
        board): a move that moves a fixed tile is not made, and one that builds the goal ends there (no
        afterstate to expand)."""
        wide = wide_variant
        posed = goal_mask != np.uint64(0)  # an endgame (else every move is made, as before)
        table = np.full(size, EMPTY, np.uint64)
        count = 0
        images = np.zeros(8, np.uint64)
        top = 0
        for s in range(first, last):
            key = keys[s]
            c = max_code(key, wide, frame, n)
            if c > top:
                top = c
            for d in range(4):
                lo, hi, reward, legal = slide(key, d, wide, table4, table5, vertical, frame, n)
                if not legal:
                    continue
                m = orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, images)
                if posed and endgame_state(images, m, pattern_mask, pattern_bits, goal_mask, goal_bits) != KEPT:
                    continue
                if set_add(table, least(images, m)):
                    count += 1
                    if 2 * count > table.shape[0]:
                        table = grown(table)
        return top, members(table, count)

    @njit
    def expand_part(first, last, afters, _wide, frame, n, perms, col_shift, row_shift, square, shifts, size):
        """The children of afterstates ``first .. last - 1`` of a layer (:func:`afterstates_part`), deduplicated: (the
        sorted keys of those with a new tile of code 1, those with code 2). Runs on parts of a layer as
        :func:`afterstates_part`."""
        wide = wide_variant
        small = np.full(size, EMPTY, np.uint64)
        big = np.full(size, EMPTY, np.uint64)
        n_small = 0
        n_big = 0
        images, children, _ = chance_scratch()
        for s in range(first, last):
            lo, hi = key_board(afters[s], wide, frame, n)
            empty = chance_children(lo, hi, True, wide, frame, n, perms, col_shift, row_shift, square, shifts, images,
                                    children)
            for k in range(empty):
                if set_add(small, children[0, k]):
                    n_small += 1
                    if 2 * n_small > small.shape[0]:
                        small = grown(small)
                if set_add(big, children[1, k]):
                    n_big += 1
                    if 2 * n_big > big.shape[0]:
                        big = grown(big)
        return members(small, n_small), members(big, n_big)

    @njit
    def afterstate_values(first, last, afters, _wide, frame, n, perms, col_shift, row_shift, square, shifts, keys_small,
                          index_small, values_small, keys_big, index_big, values_big, out):
        """The values of afterstates ``first .. last - 1`` of a layer: the mean over each empty cell and new tile of
        the child position's values (each child layer with its :func:`~td2048.solve.sets.build_index`).
        ``out[s, 0]``: the expected score from there on; ``out[s, c]``: the probability of ever holding a tile of
        code >= c (1 for a code the afterstate holds). Returns the number of children not found (0 unless the
        layers are inconsistent)."""
        wide = wide_variant
        aims = out.shape[1]
        images, children, rows = chance_scratch()
        missing = 0
        for s in range(first, last):
            key = afters[s]
            lo, hi = key_board(key, wide, frame, n)
            top = max_code(key, wide, frame, n)
            empty = chance_children(lo, hi, True, wide, frame, n, perms, col_shift, row_shift, square, shifts, images,
                                    children)
            found = child_rows(children, empty, keys_small, index_small, keys_big, index_big, rows)
            missing += empty - found
            for a in range(aims):
                out[s, a] = 0.0
            add_expected_values(out, s, top, rows, found, values_small, values_big, 1.0 / empty, 1.0)
            for a in range(1, min(top + 1, aims)):
                out[s, a] = 1.0
        return missing

    @njit
    def layer_values(first, last, keys, _wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square,
                     afters, index_afters, values_afters, out, pattern_mask, pattern_bits, goal_mask, goal_bits):
        """The values of positions ``first .. last - 1`` of a layer: for each aim the best legal move's reward (the
        score) plus its afterstate's value (:func:`afterstate_values`, found through its
        :func:`~td2048.solve.sets.build_index`).

        ``out[s, 0]``: the expected score of position s under the play that maximises it; ``out[s, c]`` for
        c >= 1: the probability of ever holding a tile of code >= c under the play that maximises it. A
        position with no legal move scores 0 and reaches only the codes it holds. Returns the number of
        afterstates not found (0 unless the layers are inconsistent).

        An endgame (the masks, as :func:`afterstates_part`) has one aim, the probability of building the goal: a
        move that builds it is worth 1, one that moves a fixed tile is not made, the others are worth their
        afterstate's value (no reward), and a position without an allowed move 0.
        """
        wide = wide_variant
        posed = goal_mask != np.uint64(0)
        aims = out.shape[1]
        images = np.zeros(8, np.uint64)
        missing = 0
        for s in range(first, last):
            key = keys[s]
            top = max_code(key, wide, frame, n)
            for a in range(aims):
                out[s, a] = -1.0
            for d in range(4):
                lo, hi, reward, legal = slide(key, d, wide, table4, table5, vertical, frame, n)
                if not legal:
                    continue
                m = orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, images)
                if posed:
                    state = endgame_state(images, m, pattern_mask, pattern_bits, goal_mask, goal_bits)
                    if state == BROKEN:
                        continue
                    if state == WON:  # the goal built: a sure win (an endgame's only aim)
                        out[s, 0] = 1.0
                        continue
                    reward = 0  # an endgame counts no score
                j = lookup(index_afters, afters, least(images, m))
                if j < 0:
                    missing += 1
                    continue
                q = values_afters[j, 0] + reward
                if q > out[s, 0]:
                    out[s, 0] = q
                for a in range(top + 1, aims):
                    if values_afters[j, a] > out[s, a]:
                        out[s, a] = values_afters[j, a]
            if out[s, 0] < 0.0:  # no legal move: the end of the game
                for a in range(aims):
                    out[s, a] = 0.0
            for a in range(1, min(top + 1, aims)):
                out[s, a] = 1.0
        return missing

    return SimpleNamespace(afterstates_part=afterstates_part, expand_part=expand_part,
                           afterstate_values=afterstate_values, layer_values=layer_values)


COMPILED = {False: _compiled(False), True: _compiled(True)}  # by wide
