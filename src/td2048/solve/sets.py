"""Compiled sets of keys for the solver: hash sets, radix sorts, sorted merges and hash indexes of layers.

A layer of positions is a sorted array of distinct ``uint64`` keys (:mod:`td2048.games.keys`). Its keys are
gathered in open-addressing hash sets (:func:`set_add`; :data:`EMPTY` marks a free slot), sorted by
:func:`radix_sort`, and merged with the other parts' (:func:`merge_unique`). A layer's keys weighted by
probabilities are summed key by key (:func:`accumulate`, :func:`accumulate_part` on threads). Another layer's
values are read through a hash index of its keys (:func:`build_index`, :func:`lookup`) or a hash table of the
keys beside one value each (:func:`value_table`, :func:`table_value`).
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import U64

_U0 = U64(0)
EMPTY = ~_U0  # an unused slot of a hash set (no key is all ones)
_GOLDEN = U64(0x9E3779B97F4A7C15)


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
def grown(table):
    """A hash set twice the size of ``table``, with its keys."""
    out = np.full(2 * table.shape[0], EMPTY, np.uint64)
    for i in range(table.shape[0]):
        if table[i] != EMPTY:
            set_add(out, table[i])
    return out


@njit
def members(table, count):
    """The ``count`` keys of a hash set, sorted."""
    out = np.empty(count, np.uint64)
    j = 0
    for i in range(table.shape[0]):
        if table[i] != EMPTY:
            out[j] = table[i]
            j += 1
    return radix_sort(out)


def table_size(count: int) -> int:
    """A hash table's size for ``count`` keys: a power of two at least twice as large."""
    size = 1024
    while size < 2 * count:
        size *= 2
    return size


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
