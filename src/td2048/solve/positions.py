"""Compiled work on one position of the solver: a key's cells and slides, its symmetric images and its children.

A position is held by its key (:mod:`td2048.games.keys`): for 2048 the packed frame board of its least
orientation, for 2584 its cells' 5-bit codes in the board's order. Its moves are slid on the frame board
(:func:`slide`, as the games slide them; 2584's with :func:`td2048.games.wide.wide_move`), which for 2584
carries each cell's fifth bit in a second word (``lo``, ``hi``). An afterstate's children are found
through its images under the board's symmetries (:func:`orientations`, :func:`oriented_child`): the key of
a child is the least image of the afterstate with the new tile at that cell's image.

Every function takes both games' arguments and the flag ``wide`` (2584), so that one compiled version
serves both games.
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import U64, flip, mirror, transpose
from td2048.games.game2048 import move
from td2048.games.keys import canon4, canon5
from td2048.games.wide import wide_move
from td2048.solve.endgame import BROKEN, KEPT, WON

_U0 = U64(0)
_U1 = U64(1)
_U15 = U64(15)
_U31 = U64(31)


@njit(inline="always")
def key_codes(key, wide, frame, n, codes):
    """Fill ``codes[:n]`` with the board cells' codes of a key."""
    for i in range(n):
        if wide:
            codes[i] = np.int64((key >> U64(5 * i)) & _U31)
        else:
            codes[i] = np.int64((key >> U64(4 * frame[i])) & _U15)


@njit(inline="always")
def max_code(key, wide, frame, n):
    """The largest cell code of a key's board."""
    best = 0
    for i in range(n):
        if wide:
            c = np.int64((key >> U64(5 * i)) & _U31)
        else:
            c = np.int64((key >> U64(4 * frame[i])) & _U15)
        if c > best:
            best = c
    return best


@njit(inline="always")
def key_board(key, wide, frame, n):
    """(lo, hi): the frame board of a key (hi, the codes' fifth bits, is 0 for 2048)."""
    if not wide:
        return key, _U0
    lo = _U0
    hi = _U0
    for i in range(n):
        c = (key >> U64(5 * i)) & _U31
        lo |= (c & _U15) << U64(4 * frame[i])
        hi |= (c >> U64(4)) << U64(frame[i])
    return lo, hi


@njit(inline="always")
def slide(key, d, wide, table4, table5, vertical, frame, n):
    """(after lo, after hi, reward, legal) of move ``d`` from a key's board (hi = 0 for 2048)."""
    if wide:
        lo, hi = key_board(key, wide, frame, n)
        after, reward = wide_move(table5, (lo, hi), d, vertical)
        return after[0], after[1], reward, after[0] != lo or after[1] != hi
    after, reward = move(table4, key, d, vertical)
    return after, _U0, reward, after != key


@njit(inline="always")
def is_empty(lo, hi, cell, frame):
    """Whether board cell ``cell`` of a frame board is empty."""
    f = U64(frame[cell])
    return ((lo >> (U64(4) * f)) & _U15) == _U0 and ((hi >> f) & _U1) == _U0


@njit(inline="always")
def orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, out):
    """Fill ``out`` with the board's image under each symmetry (the boards :func:`canon4` and :func:`canon5`
    take the least of) and return how many there are. Each image is linear in the cells: the image of a board
    with one more tile is the board's image with that tile at the cell's image (:func:`cell_shifts`)."""
    if wide:
        m = perms.shape[0]
        for k in range(m):
            out[k] = _U0
        for i in range(n):
            f = U64(frame[i])
            c = ((lo >> (U64(4) * f)) & _U15) | (((hi >> f) & _U1) << U64(4))
            for k in range(m):
                out[k] |= c << U64(5 * perms[k, i])
        return m
    mb = mirror(lo) >> col_shift
    fb = flip(lo) >> row_shift
    mf = mirror(fb) >> col_shift
    out[0] = lo
    out[1] = mb
    out[2] = fb
    out[3] = mf
    if square:
        out[4] = transpose(lo)
        out[5] = transpose(mb)
        out[6] = transpose(fb)
        out[7] = transpose(mf)
        return 8
    return 4


@njit(inline="always")
def endgame_state(images, m, pattern_mask, pattern_bits, goal_mask, goal_bits):
    """Where a move leaves an endgame (:mod:`td2048.solve.endgame`), from the images of its afterstate: ``WON`` when
    it builds the goal, ``KEPT`` when it keeps the fixed tiles, ``BROKEN`` when it moves one (not made); each in some
    orientation. A whole board's solve has all four masks 0: every move keeps its (no) fixed tiles, none wins."""
    if goal_mask != _U0:
        for k in range(m):
            if images[k] & goal_mask == goal_bits:
                return WON
    for k in range(m):
        if images[k] & pattern_mask == pattern_bits:
            return KEPT
    return BROKEN


@njit(inline="always")
def least(images, m):
    """The least of the images ``images[:m]`` (the key of the board they are the images of)."""
    best = images[0]
    for k in range(1, m):
        if images[k] < best:
            best = images[k]
    return best


@njit
def cell_shifts(wide, frame, n, perms, col_shift, row_shift, square):
    """``[8, n]``: the bit offset of board cell i in the board's image under symmetry k (:func:`orientations`)."""
    out = np.zeros((8, n), np.uint64)
    images = np.zeros(8, np.uint64)
    for cell in range(n):
        m = orientations(_U1 << U64(4 * frame[cell]), _U0, wide, frame, n, perms, col_shift, row_shift, square,
                         images)
        for k in range(m):
            bit = 0
            while (images[k] >> U64(bit)) != _U1:
                bit += 1
            out[k, cell] = U64(bit)
    return out


@njit(inline="always")
def oriented_child(images, m, shifts, cell, code):
    """The key of an afterstate (its images ``images[:m]``) with a new tile ``code`` on empty board cell ``cell``:
    the least image, as :func:`child_key`, at the cost of ``m`` ORs."""
    best = images[0] | (U64(code) << shifts[0, cell])
    for k in range(1, m):
        c = images[k] | (U64(code) << shifts[k, cell])
        if c < best:
            best = c
    return best


@njit(inline="always")
def board_child(lo, hi, cell, code, wide, frame, n):
    """The board (in its own orientation, as a key is laid out) of an afterstate with tile ``code`` on empty board
    cell ``cell``."""
    if wide:
        key = _U0
        for i in range(n):
            f = U64(frame[i])
            c = ((lo >> (U64(4) * f)) & _U15) | (((hi >> f) & _U1) << U64(4))
            if i == cell:
                c = U64(code)
            key |= c << U64(5 * i)
        return key
    return lo | (U64(code) << U64(4 * frame[cell]))


@njit(inline="always")
def child_key(lo, hi, cell, code, wide, frame, n, perms, col_shift, row_shift, square, codes):
    """The key of an afterstate with a new tile ``code`` on board cell ``cell`` (empty)."""
    if wide:
        for i in range(n):
            f = U64(frame[i])
            codes[i] = np.int64(((lo >> (U64(4) * f)) & _U15) | (((hi >> f) & _U1) << U64(4)))
        codes[cell] = code
        return canon5(codes, perms, n)
    return canon4(lo | (U64(code) << U64(4 * frame[cell])), col_shift, row_shift, square)


@njit(inline="always")
def tracked_images(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, out):
    """What :func:`tracked_child` needs of an afterstate: its images (:func:`orientations`) and their number where
    ``symmetric``, else nothing (0): a child as dealt is read off the board itself."""
    if symmetric:
        return orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, out)
    return 0


@njit(inline="always")
def tracked_child(images, m, shifts, lo, hi, cell, code, symmetric, wide, frame, n):
    """A child as a policy's valuation tracks it: its key (``symmetric``), else its board as dealt."""
    if symmetric:
        return oriented_child(images, m, shifts, cell, code)
    return board_child(lo, hi, cell, code, wide, frame, n)


@njit
def canonical_keys(boards, wide, frame, n, perms, col_shift, row_shift, square):
    """The keys of boards given as cell codes (``boards[j, i]``: code of board cell i of board j)."""
    out = np.empty(boards.shape[0], np.uint64)
    codes = np.zeros(16, np.int64)
    for j in range(boards.shape[0]):
        if wide:
            for i in range(n):
                codes[i] = boards[j, i]
            out[j] = canon5(codes, perms, n)
        else:
            b = _U0
            for i in range(n):
                b |= U64(boards[j, i]) << U64(4 * frame[i])
            out[j] = canon4(b, col_shift, row_shift, square)
    return out
