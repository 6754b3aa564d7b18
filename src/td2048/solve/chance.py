"""The chance node of the solver: the new tile after a move, its outcomes and the expectation over them.

After a move the game puts a new tile on one of the afterstate's empty cells, each cell equally likely: the
small tile (code 1: a 2 in 2048, a 1 in 2584) with probability :data:`P_SMALL` (0.9), else the big one (code 2)
with :data:`P_BIG` (0.1). The value of an afterstate is the expectation of its children's values: over the
empty cells, the mean of :func:`tile_mean` of the two children of each cell.

- :func:`chance_scratch`: the scratch arrays the helpers below fill;
- :func:`chance_children`: the outcomes, two children for each empty cell (as keys, or as boards as dealt);
- :func:`child_rows`: where they lie in their layers (the layers' hash indexes, :mod:`td2048.solve.sets`);
- :func:`add_expected_values`: the expectation of the values held in those layers, added to a row of values;
- :func:`expected_table_value`: the expectation of the values held in hash tables of values (a solution's).

Each keeps the order of its floating-point operations, so that every figure is the same to the last bit
wherever it is computed.
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.games.game2048 import P_FOUR
from td2048.solve.positions import is_empty, tracked_child, tracked_images
from td2048.solve.sets import lookup, table_value

P_BIG = P_FOUR  # the new tile is code 2 with the games' p (0.1, the same in 2584), else code 1
P_SMALL = 1.0 - P_BIG


@njit(inline="always")
def tile_mean(small, big):
    """The expectation over the new tile on one cell.

    Parameters
    ----------
    small, big : float
        The value of the child with the small tile (code 1) on the cell, and of the child with the big one.

    Returns
    -------
    float
        ``P_SMALL * small + P_BIG * big``.
    """
    return P_SMALL * small + P_BIG * big


@njit(inline="always")
def chance_scratch():
    """The scratch arrays of the chance node's helpers, for boards of up to 16 cells.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        ``images`` (``uint64[8]``) and ``children`` (``uint64[2, 16]``) for :func:`chance_children`, ``rows``
        (``int64[2, 16]``) for :func:`child_rows`.
    """
    return np.zeros(8, np.uint64), np.zeros((2, 16), np.uint64), np.zeros((2, 16), np.int64)


@njit(inline="always")
def chance_children(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, shifts, images,
                    children):
    """The outcomes of the chance node of an afterstate: its children, two for each empty cell.

    Parameters
    ----------
    lo, hi : numpy.uint64
        The afterstate's frame board (``hi``, the 5-bit codes' fifth bits, 0 for 2048).
    symmetric : bool
        Give each child's key (:func:`~td2048.solve.positions.tracked_child`); False: its board as dealt.
    wide, frame, n, perms, col_shift, row_shift, square : see :attr:`td2048.solve.layers.Rules.args`
        The game and board.
    shifts : numpy.ndarray
        The board cells' bit offsets in each image (:func:`~td2048.solve.positions.cell_shifts`).
    images : numpy.ndarray
        ``uint64[8]``, scratch: the afterstate's images under the board's symmetries.
    children : numpy.ndarray
        ``uint64[2, n]``, filled: ``children[0, k]`` the child with the small tile on the k-th empty cell (in the
        order of the board's cells), ``children[1, k]`` the child with the big tile there.

    Returns
    -------
    int
        The afterstate's empty cells (the children written, in each row).
    """
    m = tracked_images(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, images)
    empty = 0
    for cell in range(n):
        if is_empty(lo, hi, cell, frame):
            children[0, empty] = tracked_child(images, m, shifts, lo, hi, cell, 1, symmetric, wide, frame, n)
            children[1, empty] = tracked_child(images, m, shifts, lo, hi, cell, 2, symmetric, wide, frame, n)
            empty += 1
    return empty


@njit(inline="always")
def child_rows(children, empty, keys_small, index_small, keys_big, index_big, rows):
    """Where the children of a chance node (:func:`chance_children`) lie in their layers.

    Parameters
    ----------
    children : numpy.ndarray
        ``uint64[2, empty]`` (or wider): the children with the small tile, and with the big tile.
    empty : int
        The empty cells.
    keys_small, index_small, keys_big, index_big : numpy.ndarray
        The layers the children with the small (the big) tile lie in, each with its
        :func:`~td2048.solve.sets.build_index`.
    rows : numpy.ndarray
        ``int64[2, empty]`` (or wider), filled: for the j-th cell whose two children are both found, the
        small child's position in its layer (``rows[0, j]``) and the big one's (``rows[1, j]``), in the cells'
        order.

    Returns
    -------
    int
        The cells whose children were both found (``empty`` unless the layers are inconsistent).
    """
    found = 0
    for k in range(empty):
        i1 = lookup(index_small, keys_small, children[0, k])
        i2 = lookup(index_big, keys_big, children[1, k])
        if i1 >= 0 and i2 >= 0:
            rows[0, found] = i1
            rows[1, found] = i2
            found += 1
    return found


@njit(inline="always")
def add_expected_values(out, s, top, rows, found, values_small, values_big, weight, divisor):
    """Add the expectation over the new tile of the children's values to ``out[s]``.

    For each aim (column) that is summed, each cell found adds ``weight * tile_mean(small, big) / divisor``:
    the solver weighs a cell by ``weight`` = 1 / empty (``divisor`` 1), a policy's valuation divides by
    ``divisor`` = empty (``weight`` 1). The two round differently, and each keeps its figures to the bit (a
    weight or divisor of 1 changes nothing and is compiled away).

    Parameters
    ----------
    out : numpy.ndarray
        ``[positions, aims]``: row ``s`` is added to.
    s : int
        The row.
    top : int
        The largest code the afterstate holds: the aims 1 .. ``top`` (tiles it holds) are not summed, only aim 0
        (the expected score) and those above ``top``.
    rows : numpy.ndarray
        The children's positions in their layers (:func:`child_rows`).
    found : int
        The cells whose children were found.
    values_small, values_big : numpy.ndarray
        ``[positions, aims]``: the values of the layers of the children with the small and with the big tile.
    weight, divisor : float or int
        The cells' weight, as above.
    """
    for k in range(found):
        i1 = rows[0, k]
        i2 = rows[1, k]
        out[s, 0] += weight * tile_mean(values_small[i1, 0], values_big[i2, 0]) / divisor
        for a in range(top + 1, out.shape[1]):
            out[s, a] += weight * tile_mean(values_small[i1, a], values_big[i2, a]) / divisor


@njit(inline="always")
def expected_table_value(children, empty, table_small, bits_small, table_big, bits_big):
    """The expectation over the new tile of the children's values held in hash tables of values.

    Parameters
    ----------
    children : numpy.ndarray
        ``uint64[2, empty]`` (or wider): the children's keys (:func:`chance_children`).
    empty : int
        The empty cells.
    table_small, bits_small, table_big, bits_big : numpy.ndarray
        The :func:`~td2048.solve.sets.value_table` of the layer of the children with the small (the big) tile,
        and the same table viewed as float64.

    Returns
    -------
    (float, bool)
        The mean over the empty cells of :func:`tile_mean` of their children's values, each weighed by
        1 / empty and summed in the cells' order (cells with a child not found left out); whether every child
        was found.
    """
    p_cell = 1.0 / empty
    acc = 0.0
    complete = True
    for k in range(empty):
        f1, v1 = table_value(table_small, bits_small, children[0, k])
        f2, v2 = table_value(table_big, bits_big, children[1, k])
        if not (f1 and f2):
            complete = False
            continue
        acc += p_cell * tile_mean(v1, v2)
    return acc, complete
