"""Exchanging what workers learned: sparse changes since the last sync, merged by one rule.

Workers of one run (td2048.distributed.ray_train) all hold the same ``base``: the weights as they
were at the last sync. Between syncs each learns on its own weights; at a sync each lists the
weights it changed, as (index, new value) pairs sorted by index, cut into one segment per worker
by index range. The worker that owns a range gathers every worker's segment of it and merges them
against the base with :func:`merge_changes`; every worker (and the driver) then writes the merged
values into its weights and its base with :func:`apply_changes`, and all hold the same weights again.

The rule, weight by weight (:func:`merged_value`):

- a weight that one worker changed takes exactly its value;
- one that workers moved both ways takes the base plus the sum of the moves;
- one that several workers moved the same way takes, by TD, the largest of their moves (the rule of
  the threads' copies, td2048.kernels.merge); by temporal coherence, the largest plus ``c`` times
  the mean of the other moves, where ``c = |sum of the errors| / sum of the |errors|`` that the workers
  added to the weight's accumulators since the last sync: TC's own coherence, over everything the
  workers saw of the weight.

Why TC's rule differs: TC's threads share one table, where every update lands, so its rates were
made for the sum of the moves; a weight whose errors kept one sign (c near 1) is still far from its
target, and one learner would have made every worker's steps toward it. A weight whose errors cancel
(c near 0) is near its target, which each worker's move already reached: the sum would overshoot, the
largest does not. Trained side by side, two TC copies learned markedly more per episode by this rule
than by the largest move. Why the mean of the others, not their sum: the workers' moves of one weight
overlap (each corrected the same error from its own copy), and the more workers, the more of the sum
is overlap; four copies merged by the largest plus c times the sum learned less than half of what one
learner did (figures on the docs' Scaling page). TC's accumulators are sums of
evidence: each merged accumulator is the base plus the sum of the workers' additions.

Values, not differences, travel: a weight that one worker changed is merged to exactly its value,
with no float rounding, as a chunk with one writer is in the threads' merge.
"""

import numpy as np

from td2048.config import njit


@njit(inline="always")
def _changed(weights, base, accumulators, accumulator_base, tc, i):
    if weights[i] != base[i]:
        return True
    return tc and (accumulators[2 * i] != accumulator_base[2 * i]
                   or accumulators[2 * i + 1] != accumulator_base[2 * i + 1])


@njit(inline="always")
def _appended(out, count, i, n):
    """``out`` with index i written at ``count``: doubled first when full (at most n long)."""
    if count == out.shape[0]:
        bigger = np.empty(min(n, 2 * count), np.uint32)
        for k in range(count):  # not a slice assignment: that compiles Numba's shape-mismatch error (seconds)
            bigger[k] = out[k]
        out = bigger
    out[count] = i
    return out


@njit
def changed_indices(weights, base, accumulators, accumulator_base):
    """Indices (ascending, ``uint32``) of the weights whose value, or either accumulator, differs from the base.

    ``accumulators`` and ``accumulator_base`` are ``float32[2 n]`` (TC) or empty arrays (no TC); n < 2**32.
    One pass over the arrays (the list grows as it fills)."""
    n = weights.shape[0]
    tc = accumulators.shape[0] == 2 * n
    out = np.empty(min(n, 1 << 20), np.uint32)
    count = 0
    for i in range(n):
        if _changed(weights, base, accumulators, accumulator_base, tc, i):
            out = _appended(out, count, i, n)
            count += 1
    return out[:count]


@njit
def flagged_indices(weights, base, accumulators, accumulator_base, flags, chunk_shift):
    """:func:`changed_indices` over only the chunks of ``2**chunk_shift`` weights whose flag is set (tracked
    TC kernels set it on every change), clearing the flags as it goes."""
    n = weights.shape[0]
    tc = accumulators.shape[0] == 2 * n
    out = np.empty(min(n, 1 << 20), np.uint32)
    count = 0
    for c in range(flags.shape[0]):
        if flags[c] == 0:
            continue
        flags[c] = 0
        for i in range(c << chunk_shift, min(n, (c + 1) << chunk_shift)):
            if _changed(weights, base, accumulators, accumulator_base, tc, i):
                out = _appended(out, count, i, n)
                count += 1
    return out[:count]


@njit
def gather_changes(indices, weights, accumulators):
    """The values at ``indices``: ``(float32[m] weights, float32[m, 2] accumulators or [0, 2])``."""
    m = indices.shape[0]
    values = np.empty(m, np.float32)
    tc = accumulators.shape[0] == 2 * weights.shape[0]
    acc = np.empty((m if tc else 0, 2), np.float32)
    for k in range(m):
        i = indices[k]
        values[k] = weights[i]
        if tc:
            acc[k, 0] = accumulators[2 * i]
            acc[k, 1] = accumulators[2 * i + 1]
    return values, acc


def merge_changes(indices, values, acc, base, accumulator_base):
    """Merge the changes of several workers, concatenated, against the base.

    ``indices`` may repeat (one entry per worker that changed the weight); they need not be sorted
    (the workers' lists, each ascending, one after another, sort fastest: NumPy's stable sort finds the runs).
    Returns ``(uint32[u] indices ascending, float32[u] merged weights, float32[u, 2] merged accumulators
    or [0, 2])``, one entry per distinct index."""
    return _merge_sorted(indices, values, acc, base, accumulator_base, np.argsort(indices, kind="stable"))


@njit(inline="always")
def merged_value(b, highest, lowest, total, movers, error, absolute, tc):
    """The merged value of a weight: ``b`` its base; of the workers' values ``highest`` and ``lowest``
    (each counting ``b`` too), ``total`` the sum of their moves and ``movers`` how many moved it;
    ``error`` and ``absolute`` what they added to its accumulators (``tc``). See the module's rule."""
    if lowest != b and highest != b:  # moved both ways
        return b + total
    largest = highest if lowest == b else lowest
    if not tc or movers < 2:
        return largest
    coherence = min(abs(error) / absolute, np.float32(1.0)) if absolute > 0 else np.float32(1.0)
    return largest + ((b + total) - largest) * coherence / (movers - 1)


@njit
def _merge_sorted(indices, values, acc, base, accumulator_base, order):
    m = indices.shape[0]
    tc = acc.shape[0] == m and m > 0
    distinct = 0
    for k in range(m):
        if k == 0 or indices[order[k]] != indices[order[k - 1]]:
            distinct += 1
    out_indices = np.empty(distinct, indices.dtype)
    out_values = np.empty(distinct, np.float32)
    out_acc = np.empty((distinct if tc else 0, 2), np.float32)
    k = 0
    u = 0
    while k < m:
        i = indices[order[k]]
        b = base[i]
        highest = b
        lowest = b
        total = np.float32(0.0)
        movers = 0
        error = np.float32(0.0)
        absolute = np.float32(0.0)
        while k < m and indices[order[k]] == i:
            v = values[order[k]]
            total += v - b
            movers += v != b
            highest = max(highest, v)
            lowest = min(lowest, v)
            if tc:
                error += acc[order[k], 0] - accumulator_base[2 * i]
                absolute += acc[order[k], 1] - accumulator_base[2 * i + 1]
            k += 1
        out_indices[u] = i
        out_values[u] = merged_value(b, highest, lowest, total, movers, error, absolute, tc)
        if tc:
            out_acc[u, 0] = accumulator_base[2 * i] + error
            out_acc[u, 1] = accumulator_base[2 * i + 1] + absolute
        u += 1
    return out_indices, out_values, out_acc


@njit
def apply_merged(indices, values, acc, weights, base, accumulators, accumulator_base, listed, listed_values,
                 listed_acc):
    """Write merged values into a worker that may have learned on since it listed its changes.

    ``listed`` (ascending), ``listed_values`` and ``listed_acc`` (``float32[m, 2]``, or ``[0, 2]`` when listed
    before the worker's TC phase): what the worker listed for this sync, which the merge took into account;
    a merged weight it did not list was taken at its base. Each weight becomes the merged value plus what
    the worker changed since (exactly the merged value when it changed nothing), and its base the merged
    value, so that the next sync lists only what was learned after this one. Both lists ascend: one pass."""
    tc = acc.shape[0] == indices.shape[0] and accumulators.shape[0] == 2 * weights.shape[0]
    listed_tc = listed_acc.shape[0] == listed.shape[0]
    j = 0
    for k in range(indices.shape[0]):
        i = indices[k]
        while j < listed.shape[0] and listed[j] < i:
            j += 1
        found = j < listed.shape[0] and listed[j] == i
        then = listed_values[j] if found else base[i]
        since = weights[i] - then
        weights[i] = values[k] if since == 0 else values[k] + since
        base[i] = values[k]
        if tc:
            for a in range(2):
                then = listed_acc[j, a] if found and listed_tc else accumulator_base[2 * i + a]
                since = accumulators[2 * i + a] - then
                accumulators[2 * i + a] = acc[k, a] if since == 0 else acc[k, a] + since
                accumulator_base[2 * i + a] = acc[k, a]


@njit
def apply_changes(indices, values, acc, weights, base, accumulators, accumulator_base):
    """Write merged values into the weights and the base (and the accumulators, when both have them)."""
    tc = acc.shape[0] == indices.shape[0] and accumulators.shape[0] == 2 * weights.shape[0]
    for k in range(indices.shape[0]):
        i = indices[k]
        weights[i] = values[k]
        if base.shape[0] == weights.shape[0]:
            base[i] = values[k]
        if tc:
            accumulators[2 * i] = acc[k, 0]
            accumulators[2 * i + 1] = acc[k, 1]
            if accumulator_base.shape[0] == accumulators.shape[0]:
                accumulator_base[2 * i] = acc[k, 0]
                accumulator_base[2 * i + 1] = acc[k, 1]
