"""The filler of a one-tuple network's table from another network's values (``--pretrain``).

:func:`td2048.kernels.transfer.one_tuple_filler` writes one module a pair of networks: a header that
imports the source network's ``value`` as ``source_value`` and the one-tuple network's ``EMPTY_BOARD``,
``index_row`` and ``with_codes`` from their generated modules, then this text.
"""

import numpy as np
from numba import prange

from td2048.config import njit
from td2048.kernels.interface import index_row
from td2048.kernels.interface import value as source_value
from td2048.kernels.templates.narrow_board import EMPTY_BOARD, with_codes

__all__ = ["fill", "spell"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
@njit  # not inlined: inside the parallel loop its digit loop reads as an overwrite of the loop's index
def spell(codes, frame_cells, first, end, number, base):
    """Cells ``first .. end - 1`` of a board (at their frame cells) given the digits of ``number`` in ``base``."""
    rest = number
    for i in range(first, end):
        codes[frame_cells[i]] = rest % base
        rest //= base


@njit(parallel=True)
def fill(weights, source_weights, frame_cells, values_per_cell, n_features):
    """Every combination of codes of the tuple's cells: the weight its board's first feature reads, set to the
    source's value of that board (the other cells empty) / ``n_features``."""
    n = len(frame_cells)
    split = min(n, 4)  # the first cells' codes are shared out over the threads
    outer, inner = values_per_cell ** split, values_per_cell ** (n - split)
    for high in prange(outer):
        codes = np.zeros(16, np.int64)
        x = np.empty((1, n_features), np.uint64)
        spell(codes, frame_cells, 0, split, high, values_per_cell)
        for low in range(inner):
            spell(codes, frame_cells, split, n, low, values_per_cell)
            b = with_codes(EMPTY_BOARD, codes)
            index_row(b, x, np.int64(0))
            weights[x[0, 0]] = np.float32(source_value(source_weights, b) / n_features)
