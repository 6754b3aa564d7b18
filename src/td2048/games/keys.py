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
