"""Position keys: one ``uint64`` per position, the same for a board and each of its symmetric images.

A position's key is the least of the board's symmetric images (as unsigned 64-bit integers), so that
boards that differ only by a symmetry of the board share one key:

- 2048 (4-bit cells, :func:`canon4`): the packed frame board itself (cell (r, c) in nibble 4 r + c) and
  its images made with the frame's ``mirror``, ``flip`` and ``transpose`` (:mod:`td2048.games.bitboard`),
  each shifted back into the corner;
- 2584 (5-bit cells, :func:`canon5`): the board's own cells, 5 bits each in the board's order (cell i at
  bit 5 i; at most 12 cells), and its images made with the cell permutations of
  :attr:`~td2048.games.shape.BoardShape.symmetries`.

The exact solver (:mod:`td2048.solve`) keeps its positions by these keys, and the compiled TD kernels
compute them to look positions up in a solution.
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import U64, flip, mirror, transpose

_U0 = U64(0)


@njit(inline="always")
def canon4(b, col_shift, row_shift, square):
    """The key of a 2048 position: the least of its 4-bit frame board's symmetric boards.

    Parameters
    ----------
    b : numpy.uint64
        The packed frame board (cell (r, c) in nibble 4 r + c).
    col_shift : numpy.uint64
        The right shift that brings a mirrored frame board back into the corner: 4 (4 - columns).
    row_shift : numpy.uint64
        The right shift that brings a flipped frame board back into the corner: 16 (4 - rows).
    square : bool
        Whether the board is square (then its transposed images count too: 8 symmetries, else 4).

    Returns
    -------
    numpy.uint64
    """
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
    """The key of a 2584 position: the least of its boards of 5-bit cells over the board's symmetries.

    Parameters
    ----------
    codes : numpy.ndarray
        The board's cell codes (``codes[:n]``, in the board's order).
    perms : numpy.ndarray
        ``[symmetries, n]``: ``perms[k, i]``, the cell that cell i goes to under symmetry k.
    n : int
        The board's cells.

    Returns
    -------
    numpy.uint64
    """
    best = ~_U0
    for k in range(perms.shape[0]):
        key = _U0
        for i in range(n):
            key |= U64(codes[i]) << U64(5 * perms[k, i])
        if key < best:
            best = key
    return best


EMPTY_SLOT = 0xFFFFFFFF  # a slot of a key index that holds no position
_HASH = U64(0x9E3779B97F4A7C15)  # Fibonacci hashing: a key times 2**64 / golden ratio, its top bits


@njit(inline="always")
def key_slot(key, mask, bits):
    """The first slot of ``key`` in a key index of ``mask + 1`` = 2**bits slots (:func:`index_keys`)."""
    return (key * _HASH) >> U64(64 - bits) & mask


@njit
def index_keys(keys, slots, bits):
    """Fill ``slots`` (uint32[2**bits], every one EMPTY_SLOT) with a hash index of ``keys`` (distinct, fewer than
    EMPTY_SLOT, at most 3 in 4 slots): slot ``key_slot(key)`` holds the key's position in ``keys``, or the next
    free slot on (linear probing). A lookup then reads a slot or two and one key, where a binary search reads
    about log2 of the keys: on a table larger than the caches, a few memory reads in place of twenty or more."""
    mask = U64(slots.shape[0] - 1)
    for i in range(keys.shape[0]):
        s = key_slot(keys[i], mask, bits)
        while slots[s] != EMPTY_SLOT:
            s = (s + U64(1)) & mask
        slots[s] = i


@njit(inline="always")
def indexed_position(keys, slots, bits, key):
    """Where ``key`` is in ``keys``, through their index ``slots`` (:func:`index_keys`); -1 where it is not."""
    mask = U64(slots.shape[0] - 1)
    s = key_slot(key, mask, bits)
    while slots[s] != EMPTY_SLOT:
        i = slots[s]
        if keys[i] == key:
            return np.int64(i)
        s = (s + U64(1)) & mask
    return np.int64(-1)
