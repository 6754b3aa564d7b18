"""Merging the weight copies of threads that trained at once.

Threads that write the same weights slow each other down more than they help: on the
2-core development machine, two threads updating one shared 4x6 table trained at 0.75-1.0x
the speed of one (2.3-3.1M moves/s against 3.0M; the frequently used weights bounce between
the cores' caches), while two threads on copies of their own, never merged, run at 1.8-1.9x,
as two separate processes do. So each thread trains on its own copy, marking the regions it
changed (one flag per 2**DIRTY_SHIFT weights), and the copies are merged region by region
(see td2048.learn for how often): a weight that every thread that changed it moved the same
way takes the largest of their moves (exactly that copy's value); one they moved in opposite
directions takes the sum of the moves.

Why that rule: a weight that two threads each pushed toward the same target would, trained
by one thread, have moved by somewhere between the larger move (both had nearly reached the
target) and the sum (small steps far from it); the mean is below both. Measured on 4x6,
100,000 episodes, 2 threads, 2048 reached in the last block (single thread 91.1%):

    rule            merges                                   2048 rate   moves/s vs 1 thread
    mean            every 1 s (at block ends)                87.7%       1.75x
    sum             every 1 s                                79.6%       (overshoots; degrades after 50k)
    sum             every block                              86.8%
    sum             every 0.1 s, checked every 250 episodes  86.1%       1.3x
    largest/sum     every 1 s                                87.8%
    largest/sum     after every 250 episodes                 89.4%       1.27x
    largest/sum     0.25 s, checked every 250 episodes       90.9%       1.5x
    largest/sum     0.25 s, threads wait for each other      90.5%       1.53x
    largest/sum     0.5 s, threads wait for each other       89.2-90.5%  1.77x  <- the default
    largest/sum     0.75 s, threads wait for each other      88.3%       1.79x
    largest + half the smaller / sum, 0.5 s                  89.2-89.6%  (no better)

("threads wait for each other": the threads no longer end at a batch of 250 episodes to be
started again; they stop at a barrier, merge their halves of the regions, and go on.)
Merging more often lets the threads see each other's updates sooner, which is what learning
per episode needs most early on (at 20,000 episodes: one thread 66.4%, mean every 1 s 44.9%,
sum every 0.1 s 64.8%, largest/sum every 0.5 s 50%), but each merge reads every changed
region of every copy: about 30% of a 4x6 table's regions every 0.5 s, three quarters of them
changed by both threads. A merge takes 3-4% of the training time at 0.5 s.

Region size (DIRTY_SHIFT): 16 weights merged 2.5x more regions in more time than 64; 256
weights (a 256 KB flag array per thread) merge as fast as 64 and flag a little faster.
"""

import numpy as np

from td2048.config import njit

DIRTY_SHIFT = 8  # one flag per 256 weights (1 KB): a 4x6 copy's flags are 256 KB, they stay in cache


def dirty_size(n_weights: int) -> int:
    return (n_weights >> DIRTY_SHIFT) + 1


@njit
def merge_regions(shared, copies, dirty, first, last):
    """Merge regions [first, last) of the threads' ``copies`` into ``shared``, then refresh the copies.

    ``copies`` is ``float32[threads, n]``, ``dirty`` is ``uint8[threads, regions]``; both are
    cleared for the merged regions. Returns the number of regions merged.

    A region that one thread alone changed is that thread's copy, exactly: it is copied, without
    reading the base or the other copies (most regions, once boards spread over the tables).
    """
    threads = copies.shape[0]
    n = shared.shape[0]
    merged = 0
    for r in range(first, last):
        writers = 0
        writer = 0
        for t in range(threads):
            if dirty[t, r]:
                writers += 1
                writer = t
        if writers == 0:
            continue
        merged += 1
        lo = r << DIRTY_SHIFT
        hi = min(n, lo + (1 << DIRTY_SHIFT))
        if writers == 1:
            source = copies[writer]
            for i in range(lo, hi):
                shared[i] = source[i]
            for t in range(threads):
                if t != writer:
                    target = copies[t]
                    for i in range(lo, hi):
                        target[i] = source[i]
        elif threads == 2:
            _merge_two(shared, copies[0], copies[1], lo, hi)
        else:
            _merge_many(shared, copies, lo, hi)
        for t in range(threads):
            dirty[t, r] = 0
    return merged


@njit(inline="always")
def _merged_value(base, highest, lowest, total):
    """The rule: all moves up (or none): the largest; all down: the lowest; mixed: base + their sum."""
    if lowest == base:
        return highest
    if highest == base:
        return lowest
    return base + total


@njit(inline="always")
def _merge_two(shared, first, second, lo, hi):
    for i in range(lo, hi):  # straight-line per weight, so the loop vectorises
        base = shared[i]
        a = first[i]
        b = second[i]
        value = _merged_value(base, max(base, max(a, b)), min(base, min(a, b)), (a - base) + (b - base))
        shared[i] = value
        first[i] = value
        second[i] = value


@njit(inline="always")
def _merge_many(shared, copies, lo, hi):
    threads = copies.shape[0]
    for i in range(lo, hi):
        base = shared[i]
        highest = base
        lowest = base
        total = np.float32(0.0)
        for t in range(threads):
            value = copies[t, i]
            total += value - base
            highest = max(highest, value)
            lowest = min(lowest, value)
        value = _merged_value(base, highest, lowest, total)
        shared[i] = value
        for t in range(threads):
            copies[t, i] = value


NO_TRACKING = np.zeros(1, np.uint8)  # the ``dirty`` placeholder of single-thread training: nothing marked
