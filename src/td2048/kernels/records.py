"""TC's records: each weight beside its two accumulators, as temporal coherence learns on them.

Temporal coherence keeps two accumulators per weight, E (the sum of its updates) and A (the sum of
their sizes), and an update writes all three. A :class:`td2048.network.Network` keeps its weights
and its accumulators in two arrays: playing and search read the weights alone, sixteen to a cache
line. While TC learns on local threads, the learner keeps them as one array of records instead::

    weights        w0 w1 w2 ...            (float32, one per weight)
    accumulators   E0 A0 E1 A1 E2 A2 ...   (float32, two per weight)
    records        w0 E0 A0 w1 E1 A1 ...   (float32, RECORD per weight)

so that an update writes one cache line per feature, not two (most records lie within one line;
TDL2048+ lays its TC weights out the same way). The gain is in the lines that threads sharing the
table pass between their cores: on one thread the two layouts train at one speed. The generated
TC kernels that track no changes (:mod:`td2048.kernels.codegen`) index records: feature index
``i`` is at ``RECORD * i``. The learner writes the records back into the network's two arrays
when asked to (``Learner.merge``), before the network is saved or played.
"""

from __future__ import annotations

import numpy as np

from td2048.config import njit
from td2048.spec import RECORD


@njit
def pack_records(weights: np.ndarray, accumulators: np.ndarray, records: np.ndarray) -> None:
    """Write ``weights`` and ``accumulators`` into ``records`` (float32[RECORD * n])."""
    for i in range(weights.size):
        records[RECORD * i] = weights[i]
        records[RECORD * i + 1] = accumulators[2 * i]
        records[RECORD * i + 2] = accumulators[2 * i + 1]


@njit
def unpack_records(records: np.ndarray, weights: np.ndarray, accumulators: np.ndarray) -> None:
    """Write ``records`` back into ``weights`` (float32[n]) and ``accumulators`` (float32[2 n])."""
    for i in range(weights.size):
        weights[i] = records[RECORD * i]
        accumulators[2 * i] = records[RECORD * i + 1]
        accumulators[2 * i + 1] = records[RECORD * i + 2]


__all__ = ["RECORD", "pack_records", "unpack_records"]
