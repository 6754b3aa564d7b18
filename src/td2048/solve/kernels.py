"""Compiled per-position work of the solver: canonical keys, the children of a layer, one layer's values.

A key is one ``uint64`` per position, the least over the board's symmetries:

- 2048 (4-bit cells): the packed frame board itself (cell (r, c) in nibble 4 r + c), its symmetric boards
  made with the frame's ``mirror``, ``flip`` and ``transpose`` (:mod:`td2048.games.bitboard`) and shifted
  back into the corner;
- 2584 (5-bit cells): the board's own cells, 5 bits each in the board's order (cell i at bit 5 i; at most
  12 cells), its symmetric boards made with the cell permutations of
  :attr:`~td2048.games.shape.BoardShape.symmetries`. Slides use :func:`td2048.games.wide.wide_move`.

Every kernel takes both row tables (``table4`` for 2048, ``table5`` for 2584; the unused one may be a
stand-in of the right type) and the flag ``wide``, so that one compiled version serves both games.
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import U64, flip, mirror, transpose
from td2048.games.game2048 import P_FOUR, move
from td2048.games.wide import wide_move

_U0 = U64(0)
_U1 = U64(1)
_U15 = U64(15)
_U31 = U64(31)
P_BIG = P_FOUR  # the new tile is code 2 with the games' p (0.1, the same in 2584), else code 1
P_SMALL = 1.0 - P_BIG


@njit(inline="always")
def canon4(b, col_shift, row_shift, square):
    """The least of a 4-bit frame board's symmetric boards (its key)."""
    m = mirror(b) >> col_shift
    f = flip(b) >> row_shift
    mf = mirror(f) >> col_shift
    best = b
    if m < best:
        best = m
    if f < best:
        best = f
    if mf < best:
        best = mf
    if square:
        t = transpose(b)
        if t < best:
            best = t
        t = transpose(m)
        if t < best:
            best = t
        t = transpose(f)
        if t < best:
            best = t
        t = transpose(mf)
        if t < best:
            best = t
    return best


@njit(inline="always")
def canon5(codes, perms, n):
    """The least 5-bit key of a board's cell codes over the permutations ``perms[k][i]``."""
    best = ~_U0
    for k in range(perms.shape[0]):
        key = _U0
        for i in range(n):
            key |= U64(codes[i]) << U64(5 * perms[k, i])
        if key < best:
            best = key
    return best


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
def slide(key, d, wide, table4, table5, vertical, frame, n):
    """(after lo, after hi, reward, legal) of move ``d`` from a key's board (hi = 0 for 2048)."""
    if wide:
        lo = _U0
        hi = _U0
        for i in range(n):
            c = (key >> U64(5 * i)) & _U31
            lo |= (c & _U15) << U64(4 * frame[i])
            hi |= (c >> U64(4)) << U64(frame[i])
        after, reward = wide_move(table5, (lo, hi), d, vertical)
        return after[0], after[1], reward, after[0] != lo or after[1] != hi
    after, reward = move(table4, key, d, vertical)
    return after, _U0, reward, after != key


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
def is_empty(lo, hi, cell, frame):
    f = U64(frame[cell])
    return ((lo >> (U64(4) * f)) & _U15) == _U0 and ((hi >> f) & _U1) == _U0


@njit(inline="always")
def find(keys, key):
    """Index of ``key`` in the sorted ``keys`` (-1 if absent)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < keys.shape[0] and keys[lo] == key:
        return lo
    return -1


@njit
def _expand_one(key, base, wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square, small, big):
    codes = np.zeros(16, np.int64)
    for d in range(4):
        lo, hi, reward, legal = slide(key, d, wide, table4, table5, vertical, frame, n)
        for cell in range(n):
            j = base + d * n + cell
            if legal and is_empty(lo, hi, cell, frame):
                small[j] = child_key(lo, hi, cell, 1, wide, frame, n, perms, col_shift, row_shift, square, codes)
                big[j] = child_key(lo, hi, cell, 2, wide, frame, n, perms, col_shift, row_shift, square, codes)
            else:
                small[j] = ~_U0
                big[j] = ~_U0
    return max_code(key, wide, frame, n)


@njit
def expand(first, last, keys, wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square, small,
           big):
    """The children of positions ``first .. last - 1`` of a layer: keys of each position's moves with a new tile
    of code 1 (``small``, ``[len(keys) * 4 * n]``) and of code 2 (``big``); unused slots are ~0. Returns the
    largest code among those positions (run over parts of a layer on threads: :func:`td2048.threads.split_range`)."""
    best = 0
    for s in range(first, last):
        top = _expand_one(keys[s], s * 4 * n, wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift,
                          square, small, big)
        if top > best:
            best = top
    return best


@njit
def _value_one(s, key, wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square,
               keys_small, values_small, keys_big, values_big, out):
    aims = out.shape[1]
    codes = np.zeros(16, np.int64)
    acc = np.zeros(aims, np.float64)
    best = np.full(aims, -1.0)
    missing = 0
    for d in range(4):
        lo, hi, reward, legal = slide(key, d, wide, table4, table5, vertical, frame, n)
        if not legal:
            continue
        empty = 0
        for cell in range(n):
            if is_empty(lo, hi, cell, frame):
                empty += 1
        for a in range(aims):
            acc[a] = 0.0
        p_cell = 1.0 / empty
        for cell in range(n):
            if not is_empty(lo, hi, cell, frame):
                continue
            k1 = child_key(lo, hi, cell, 1, wide, frame, n, perms, col_shift, row_shift, square, codes)
            i1 = find(keys_small, k1)
            k2 = child_key(lo, hi, cell, 2, wide, frame, n, perms, col_shift, row_shift, square, codes)
            i2 = find(keys_big, k2)
            if i1 < 0 or i2 < 0:
                missing += 1
                continue
            for a in range(aims):
                acc[a] += p_cell * (P_SMALL * values_small[i1, a] + P_BIG * values_big[i2, a])
        acc[0] += reward
        for a in range(aims):
            if acc[a] > best[a]:
                best[a] = acc[a]
    top = max_code(key, wide, frame, n)
    if best[0] < 0.0:  # no legal move: the end of the game
        for a in range(aims):
            best[a] = 0.0
    for a in range(1, aims):
        if a <= top:
            best[a] = 1.0
    for a in range(aims):
        out[s, a] = best[a]
    return missing


@njit
def layer_values(first, last, keys, wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square,
                 keys_small, values_small, keys_big, values_big, out):
    """The values of positions ``first .. last - 1`` of a layer from those of the layers their children lie in.

    ``out[s, 0]``: the expected score of position s under the play that maximises it; ``out[s, c]`` for
    c >= 1: the probability of ever holding a tile of code >= c under the play that maximises it. A
    position with no legal move scores 0 and reaches only the codes it holds. Returns the number of
    children not found (0 unless the layers are inconsistent).
    """
    missing = 0
    for s in range(first, last):
        missing += _value_one(s, keys[s], wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift,
                              square, keys_small, values_small, keys_big, values_big, out)
    return missing


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
