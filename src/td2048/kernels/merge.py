"""Merging the weight copies of threads that trained at once.

Threads that write the same weights slow each other down more than they help: on the
2-core development machine, two threads updating one shared 4x6 table trained at 0.7x the
speed of one (measured again after the threads' random states got cache lines of their own:
the frequently used weights bounce between the cores' caches), while two threads on copies
of their own ran at 2.1x. So each thread trains on its own copy, marking the regions it
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
    largest/sum     0.25 s, checked every 250 episodes       90.9%       1.5x   <- the default

Merging more often lets the threads see each other's updates sooner, which is what learning
per episode needs most early on (at 20,000 episodes: one thread 66.4%, mean every 1 s 44.9%,
sum every 0.1 s 64.8%), but each merge reads every changed region of every copy.
"""

import numpy as np

from td2048.config import njit

DIRTY_SHIFT = 6  # one flag per 64 weights (256 bytes): small enough to stay in cache


def dirty_size(n_weights: int) -> int:
    return (n_weights >> DIRTY_SHIFT) + 1


@njit
def merge_regions(shared, copies, dirty, first, last):
    """Merge regions [first, last) of the threads' ``copies`` into ``shared``, then refresh the copies.

    ``copies`` is ``float32[threads, n]``, ``dirty`` is ``uint8[threads, regions]``; both are
    cleared for the merged regions. Returns the number of regions merged.
    """
    threads = copies.shape[0]
    n = shared.shape[0]
    merged = 0
    for r in range(first, last):
        touched = False
        for t in range(threads):
            if dirty[t, r]:
                touched = True
        if not touched:
            continue
        merged += 1
        lo = r << DIRTY_SHIFT
        hi = min(n, lo + (1 << DIRTY_SHIFT))
        for i in range(lo, hi):
            base = shared[i]
            highest = base  # the copy that moved the weight up the most
            lowest = base  # and down the most
            total = np.float32(0.0)
            for t in range(threads):
                value = copies[t, i]
                total += value - base
                highest = max(highest, value)
                lowest = min(lowest, value)
            if lowest == base:  # all moved up (or one thread alone): the largest move, exactly
                shared[i] = highest
            elif highest == base:
                shared[i] = lowest
            else:  # the threads disagree: their changes add up (and partly cancel)
                shared[i] = base + total
            for t in range(threads):
                copies[t, i] = shared[i]
        for t in range(threads):
            dirty[t, r] = 0
    return merged


NO_TRACKING = np.zeros(1, np.uint8)  # the ``dirty`` placeholder of single-thread training: nothing marked
