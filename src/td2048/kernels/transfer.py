"""One network's weights started from another's values: a large table from a smaller network.

A network of one tuple (the whole board, or most of it) can start where a smaller, generalising network has
got to: each weight is the smaller network's value of the position that reads it (the tuple's cells as the
weight's codes say, every other cell empty), split over the features. Every combination of codes of the table
is visited once, in compiled code, on the threads Numba has (see :func:`td2048.network.Network.start_from`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_fillers: dict[tuple[str, str], object] = {}


@njit
def _spell(codes, frame_cells, first, end, number, base):
    """Cells ``first .. end - 1`` of a board (at their frame cells) given the digits of ``number`` in ``base``."""
    rest = number
    for i in range(first, end):
        codes[frame_cells[i]] = rest % base
        rest //= base


def one_tuple_filler(source_kernels, kernels):
    """The compiled filler of a one-tuple network's table from another network's values.

    Parameters
    ----------
    source_kernels : module
        The kernels of the network whose values are copied (:func:`td2048.kernels.kernels_for`).
    kernels : module
        The kernels of the one-tuple network, of the same cells (4 or 5 bits).

    Returns
    -------
    callable
        ``fill(weights, source_weights, frame_cells, values_per_cell, n_features)``: for every combination of
        codes 0 .. values_per_cell - 1 of the tuple's cells (their 4x4-frame cells ``frame_cells``; the other
        cells empty), the weight the board's first feature reads is set to the source's value of the board /
        ``n_features``.
    """
    key = (source_kernels.__name__, kernels.__name__)
    if key not in _fillers:
        source_value, index_row = source_kernels.value, kernels.index_row
        with_codes, empty = kernels.with_codes, kernels.EMPTY_BOARD

        @njit(parallel=True)
        def fill(weights, source_weights, frame_cells, values_per_cell, n_features):
            n = len(frame_cells)
            split = min(n, 4)  # the first cells' codes are shared out over the threads
            outer, inner = values_per_cell ** split, values_per_cell ** (n - split)
            for high in prange(outer):
                codes = np.zeros(16, np.int64)
                x = np.empty((1, n_features), np.uint64)
                _spell(codes, frame_cells, 0, split, high, values_per_cell)
                for low in range(inner):
                    _spell(codes, frame_cells, split, n, low, values_per_cell)
                    b = with_codes(empty, codes)
                    index_row(b, x, np.int64(0))
                    weights[x[0, 0]] = np.float32(source_value(source_weights, b) / n_features)

        _fillers[key] = fill
    return _fillers[key]
