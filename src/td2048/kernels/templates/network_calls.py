"""A network's value and update, called one board at a time, off the hot path.

Every generated module takes this text (:mod:`td2048.kernels.templates`) after its feature functions
(``feature_indices``, ``value_of`` and ``update_of``, written for the network's tuples by
:mod:`td2048.kernels.codegen`): ``value`` and ``td_update`` for tests and tools, and the ``*_row``
functions, not inlined, for callers that would otherwise pay an inlined copy's compile time.
"""

import numpy as np

from td2048.config import njit
from td2048.kernels.interface import N_FEATURES, feature_indices, update_of, value_of

__all__ = ["index_row", "td_update", "update_row", "value", "value_row"]

# ---- text of the generated module (td2048.kernels.codegen copies what follows) ----
@njit
def value(w, b):
    """V(b): every tuple on each symmetric board the network reads (for tests and tools)."""
    x = np.empty((1, N_FEATURES), np.uint64)
    r = np.int64(0)
    index_row(b, x, r)
    return value_row(w, x, r)


@njit
def index_row(b, x, r):
    """feature_indices, not inlined: for the callers off the hot path (each inlined copy costs compile time)."""
    feature_indices(b, x, r)


@njit
def value_row(w, x, r):
    """value_of, not inlined (see index_row)."""
    return value_of(w, x, r)


@njit
def update_row(w, dirty, x, r, target, alpha_split):
    """update_of, not inlined (see index_row)."""
    return update_of(w, dirty, x, r, target, alpha_split)


@njit
def td_update(w, dirty, b, target, alpha_split):
    """Move V(b) toward target (see update_of); returns V(b) after the update (for tests and tools)."""
    x = np.empty((1, N_FEATURES), np.uint64)
    r = np.int64(0)
    index_row(b, x, r)
    return update_row(w, dirty, x, r, target, alpha_split)
