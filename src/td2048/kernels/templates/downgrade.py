"""Tile downgrading (Guei et al.): ``downgraded(b, top)``, the board that search values in place of b.

Every generated module takes this text (:mod:`td2048.kernels.templates`), after its board's helpers
``cell_code`` and ``with_codes`` (:mod:`~td2048.kernels.templates.narrow_board` or
:mod:`~td2048.kernels.templates.wide_board`); ``search_values`` (:mod:`td2048.kernels.search`)
calls it.
"""

import numpy as np

from td2048.config import njit
from td2048.kernels.templates.narrow_board import cell_code, with_codes

__all__ = ["downgraded"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
@njit
def downgraded(b, top):
    """b with its highest gaps closed while it holds a code >= top (Guei et al.'s tile downgrading).

    A gap is a code missing from b below its largest one; every tile above the highest gap
    drops one code (2048 ... 8192 16384 65536 -> 2048 ... 8192 16384 32768), which keeps
    the order and adjacency of the tiles, so the same moves are legal and merge the same
    tiles. Stops when no gap is left."""
    codes = np.empty(16, np.int64)
    for c in range(16):
        codes[c] = cell_code(b, c)
    while True:
        present = 0
        largest = 0
        for c in range(16):
            present |= 1 << codes[c]
            largest = max(largest, codes[c])
        if largest < top:
            break
        gap = largest - 1
        while gap >= 1 and (present >> gap) & 1:
            gap -= 1
        if gap < 1:
            break
        for c in range(16):
            if codes[c] > gap:
                codes[c] -= 1
    return with_codes(b, codes)
