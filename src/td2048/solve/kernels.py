"""Compiled per-position work of the solver: canonical keys, the children of a layer, one layer's values.

A position is held by its key (:mod:`td2048.games.keys`: :func:`~td2048.games.keys.canon4` for 2048,
:func:`~td2048.games.keys.canon5` for 2584, both importable from here too). 2584's slides use
:func:`td2048.games.wide.wide_move`.

Every kernel takes both row tables (``table4`` for 2048, ``table5`` for 2584; the unused one may be a
stand-in of the right type) and the flag ``wide``, so that one compiled version serves both games.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import U64, flip, mirror, transpose
from td2048.games.game2048 import P_FOUR, move
from td2048.games.keys import canon4, canon5
from td2048.games.wide import wide_move

_U0 = U64(0)
_U1 = U64(1)
_U15 = U64(15)
_U31 = U64(31)
P_BIG = P_FOUR  # the new tile is code 2 with the games' p (0.1, the same in 2584), else code 1
P_SMALL = 1.0 - P_BIG


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
def count_empty(lo, hi, frame, n):
    """The empty cells of a frame board."""
    empty = 0
    for cell in range(n):
        if is_empty(lo, hi, cell, frame):
            empty += 1
    return empty


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


EMPTY = ~_U0  # an unused slot of a hash set (no key is all ones)
_GOLDEN = U64(0x9E3779B97F4A7C15)


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
def _slot(key, mask):
    return np.int64((key * _GOLDEN) >> U64(32)) & mask


@njit(inline="always")
def set_add(table, key):
    """Add ``key`` to an open-addressing hash set (``EMPTY`` slots); True if it was not there."""
    mask = table.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table[i]
        if k == key:
            return False
        if k == EMPTY:
            table[i] = key
            return True
        i = (i + 1) & mask


@njit
def _grown(table):
    out = np.full(2 * table.shape[0], EMPTY, np.uint64)
    for i in range(table.shape[0]):
        if table[i] != EMPTY:
            set_add(out, table[i])
    return out


@njit
def _members(table, count):
    out = np.empty(count, np.uint64)
    j = 0
    for i in range(table.shape[0]):
        if table[i] != EMPTY:
            out[j] = table[i]
            j += 1
    return radix_sort(out)


@njit(inline="always")
def _key_bits(a):
    """The bits the largest of the keys ``a`` has."""
    top = _U0
    for i in range(a.shape[0]):
        top |= a[i]
    bits = 0
    while bits < 64 and (top >> U64(bits)) != _U0:
        bits += 1
    return bits


@njit(inline="always")
def _bucket_starts(src, shift, counts):
    """``counts[d]``: where the keys of 11-bit digit d (at ``shift``) start in the pass's output."""
    counts[:] = 0
    for i in range(src.shape[0]):
        counts[np.int64((src[i] >> U64(shift)) & U64(2047))] += 1
    total = 0
    for b in range(2048):
        c = counts[b]
        counts[b] = total
        total += c


@njit
def radix_sort(a):
    """``a`` sorted (a new array): least significant digit first, 11 bits a pass, as many passes as the largest
    key has bits (four for a 3x3 board's keys), several times faster than ``np.sort`` on keys."""
    if a.shape[0] < 256:
        return np.sort(a)
    bits = _key_bits(a)
    src = a.copy()
    dst = np.empty_like(a)
    counts = np.zeros(2048, np.int64)
    for shift in range(0, bits, 11):
        _bucket_starts(src, shift, counts)
        for i in range(src.shape[0]):
            d = np.int64((src[i] >> U64(shift)) & U64(2047))
            dst[counts[d]] = src[i]
            counts[d] += 1
        src, dst = dst, src
    return src


@njit
def radix_order(keys):
    """The permutation that sorts ``keys`` (stable; :func:`radix_sort`'s passes, carrying each key's place)."""
    if keys.shape[0] < 256:
        return np.argsort(keys, kind="mergesort")
    return _sorted_carrying(keys, np.arange(keys.shape[0]))[1]


@njit
def _sorted_carrying(keys, payload):
    """(``keys`` sorted, ``payload`` in the same order): :func:`radix_sort`'s passes, stable, each key carrying
    its payload (new arrays)."""
    src, src_p = keys.copy(), payload.copy()
    dst, dst_p = np.empty_like(src), np.empty_like(src_p)
    counts = np.zeros(2048, np.int64)
    for shift in range(0, _key_bits(src), 11):
        _bucket_starts(src, shift, counts)
        for i in range(src.shape[0]):
            d = np.int64((src[i] >> U64(shift)) & U64(2047))
            dst[counts[d]] = src[i]
            dst_p[counts[d]] = src_p[i]
            counts[d] += 1
        src, dst = dst, src
        src_p, dst_p = dst_p, src_p
    return src, src_p


@njit
def _sorted_sums(keys, weights):
    """(the distinct ``keys``, sorted; the sum of each one's ``weights``, added in the order given): a stable radix
    sort carrying the weights (:func:`radix_sort`'s passes), then each run of equal keys summed."""
    if keys.shape[0] < 256:
        order = np.argsort(keys, kind="mergesort")
        src, src_w = keys[order], weights[order]
    else:
        src, src_w = _sorted_carrying(keys, weights)
    count = 0
    for i in range(src.shape[0]):
        if i == 0 or src[i] != src[count - 1]:
            src[count] = src[i]
            src_w[count] = src_w[i]
            count += 1
        else:
            src_w[count - 1] += src_w[i]
    return src[:count].copy(), src_w[:count].copy()


@njit
def accumulate(keys, weights):
    """(the distinct keys of ``keys``, sorted, ``EMPTY`` left out; the sum of each one's weights, added in the order
    given)."""
    return accumulate_part(0, 1, keys, weights, 1)


@njit(inline="always")
def _share(key, parts):
    return np.int64((key * _GOLDEN) >> U64(56)) % parts


@njit
def accumulate_part(first, last, keys, weights, parts):
    """:func:`accumulate` of the keys of shares ``first .. last - 1`` of ``parts`` (a key's share is fixed by its
    hash), so that threads can each take shares: (their distinct keys, sorted; their sums, each added in the
    order given, as :func:`accumulate` adds it)."""
    count = 0
    for j in range(keys.shape[0]):
        share = _share(keys[j], parts)
        if first <= share < last and keys[j] != EMPTY:
            count += 1
    mine = np.empty(count, np.uint64)
    mine_weights = np.empty(count, np.float64)
    k = 0
    for j in range(keys.shape[0]):
        share = _share(keys[j], parts)
        if first <= share < last and keys[j] != EMPTY:
            mine[k] = keys[j]
            mine_weights[k] = weights[j]
            k += 1
    return _sorted_sums(mine, mine_weights)


@njit
def merge_disjoint(keys_a, sums_a, keys_b, sums_b):
    """The sorted union of two sorted arrays of keys that share none, each key with its sum."""
    keys = np.empty(keys_a.shape[0] + keys_b.shape[0], np.uint64)
    sums = np.empty(keys.shape[0], np.float64)
    i = 0
    j = 0
    for k in range(keys.shape[0]):
        if j >= keys_b.shape[0] or (i < keys_a.shape[0] and keys_a[i] < keys_b[j]):
            keys[k] = keys_a[i]
            sums[k] = sums_a[i]
            i += 1
        else:
            keys[k] = keys_b[j]
            sums[k] = sums_b[j]
            j += 1
    return keys, sums


def table_size(count: int) -> int:
    """A hash table's size for ``count`` keys: a power of two at least twice as large."""
    size = 1024
    while size < 2 * count:
        size *= 2
    return size


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
def least(images, m):
    best = images[0]
    for k in range(1, m):
        if images[k] < best:
            best = images[k]
    return best


@njit
def merge_unique(a, b):
    """The sorted union of two sorted arrays of distinct keys."""
    out = np.empty(a.shape[0] + b.shape[0], np.uint64)
    i = 0
    j = 0
    k = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] < b[j]:
            out[k] = a[i]
            i += 1
        elif b[j] < a[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
            j += 1
        k += 1
    while i < a.shape[0]:
        out[k] = a[i]
        i += 1
        k += 1
    while j < b.shape[0]:
        out[k] = b[j]
        j += 1
        k += 1
    return out[:k].copy()


@njit
def build_index(keys):
    """A hash index of a layer's sorted keys: ``index[slot] = (key, its position)``, ``EMPTY`` keys where empty, so
    that a lookup reads one slot (:func:`lookup`)."""
    size = 1024
    while size < 2 * keys.shape[0]:
        size *= 2
    index = np.full((size, 2), EMPTY, np.uint64)
    mask = size - 1
    for j in range(keys.shape[0]):
        i = _slot(keys[j], mask)
        while index[i, 0] != EMPTY:
            i = (i + 1) & mask
        index[i, 0] = keys[j]
        index[i, 1] = U64(j)
    return index


@njit
def value_table(keys, values):
    """A hash table of a layer's keys with one value each (``values[:, 0]``), side by side in one slot:
    ``table[slot] = (key, the value's bits)``, ``EMPTY`` keys where empty; read with :func:`table_value` (one
    cache line a lookup, where :func:`lookup` reads three)."""
    size = 1024
    while size < 2 * keys.shape[0]:
        size *= 2
    table = np.full((size, 2), EMPTY, np.uint64)
    bits = table.view(np.float64)
    mask = size - 1
    for j in range(keys.shape[0]):
        i = _slot(keys[j], mask)
        while table[i, 0] != EMPTY:
            i = (i + 1) & mask
        table[i, 0] = keys[j]
        bits[i, 1] = values[j, 0]
    return table


@njit(inline="always")
def table_value(table, bits, key):
    """(found, value) of ``key`` in a :func:`value_table` (``bits``: the table viewed as float64)."""
    mask = table.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table[i, 0]
        if k == key:
            return True, bits[i, 1]
        if k == EMPTY:
            return False, 0.0
        i = (i + 1) & mask


@njit(inline="always")
def lookup(index, keys, key):
    """The position of ``key`` in the layer ``keys`` through its :func:`build_index` (-1 if absent; the index holds
    the keys beside their positions, so ``keys`` itself is not read)."""
    mask = index.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = index[i, 0]
        if k == key:
            return np.int64(index[i, 1])
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


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


def _compiled(wide_variant: bool) -> SimpleNamespace:
    """The layer kernels compiled for one game: ``wide`` is a constant in them, so that each game's code has no
    branch of the other's (2048's slides and symmetries run about twice as fast). Each kernel still takes the
    ``wide`` argument of :attr:`td2048.solve.layers.Rules.args` (unused)."""
    @njit
    def afterstates_part(first, last, keys, _wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift,
                         square, size):
        """The afterstates of positions ``first .. last - 1`` of a layer (every legal move's board), up to symmetry
        and deduplicated: (the largest code those positions hold, their sorted keys). Many positions share an
        afterstate (on 3x3 about four (position, move) pairs each), so the children are made from these.

        Runs on a part of a layer (on threads: :func:`td2048.threads.split_range`); the parts' results are merged
        by :func:`merge_unique`. ``size``: the hash set's first size (a power of two; it grows at half full)."""
        wide = wide_variant
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
                if set_add(table, least(images, m)):
                    count += 1
                    if 2 * count > table.shape[0]:
                        table = _grown(table)
        return top, _members(table, count)

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
        images = np.zeros(8, np.uint64)
        for s in range(first, last):
            lo, hi = key_board(afters[s], wide, frame, n)
            m = orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, images)
            for cell in range(n):
                if not is_empty(lo, hi, cell, frame):
                    continue
                if set_add(small, oriented_child(images, m, shifts, cell, 1)):
                    n_small += 1
                    if 2 * n_small > small.shape[0]:
                        small = _grown(small)
                if set_add(big, oriented_child(images, m, shifts, cell, 2)):
                    n_big += 1
                    if 2 * n_big > big.shape[0]:
                        big = _grown(big)
        return _members(small, n_small), _members(big, n_big)

    @njit
    def afterstate_values(first, last, afters, _wide, frame, n, perms, col_shift, row_shift, square, shifts, keys_small,
                          index_small, values_small, keys_big, index_big, values_big, out):
        """The values of afterstates ``first .. last - 1`` of a layer: the mean over each empty cell and new tile of
        the child position's values (each child layer with its :func:`build_index`). ``out[s, 0]``: the expected
        score from there on; ``out[s, c]``: the probability of ever holding a tile of code >= c (1 for a code the
        afterstate holds). Returns the number of children not found (0 unless the layers are inconsistent)."""
        wide = wide_variant
        aims = out.shape[1]
        images = np.zeros(8, np.uint64)
        missing = 0
        for s in range(first, last):
            key = afters[s]
            lo, hi = key_board(key, wide, frame, n)
            top = max_code(key, wide, frame, n)
            m = orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, images)
            empty = count_empty(lo, hi, frame, n)
            p_cell = 1.0 / empty
            for a in range(aims):
                out[s, a] = 0.0
            for cell in range(n):
                if not is_empty(lo, hi, cell, frame):
                    continue
                i1 = lookup(index_small, keys_small, oriented_child(images, m, shifts, cell, 1))
                i2 = lookup(index_big, keys_big, oriented_child(images, m, shifts, cell, 2))
                if i1 < 0 or i2 < 0:
                    missing += 1
                    continue
                out[s, 0] += p_cell * (P_SMALL * values_small[i1, 0] + P_BIG * values_big[i2, 0])
                for a in range(top + 1, aims):  # the reach of a code the afterstate holds is 1: not summed
                    out[s, a] += p_cell * (P_SMALL * values_small[i1, a] + P_BIG * values_big[i2, a])
            for a in range(1, min(top + 1, aims)):
                out[s, a] = 1.0
        return missing

    @njit
    def layer_values(first, last, keys, _wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift, square,
                     afters, index_afters, values_afters, out):
        """The values of positions ``first .. last - 1`` of a layer: for each aim the best legal move's reward (the
        score) plus its afterstate's value (:func:`afterstate_values`, found through its :func:`build_index`).

        ``out[s, 0]``: the expected score of position s under the play that maximises it; ``out[s, c]`` for
        c >= 1: the probability of ever holding a tile of code >= c under the play that maximises it. A
        position with no legal move scores 0 and reaches only the codes it holds. Returns the number of
        afterstates not found (0 unless the layers are inconsistent).
        """
        wide = wide_variant
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
