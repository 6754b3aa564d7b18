"""Merging the weight copies of threads that trained at once.

Threads that write the same weights slow each other down more than they help: on the
2-core development machine, two threads updating one shared 4x6 table trained at 0.75-1.0x
the speed of one (2.3-3.1M moves/s against 3.0M; the frequently used weights bounce between
the cores' caches), while two threads on copies of their own, never merged, run at 1.85-1.9x,
as two separate processes do. So each thread trains on its own copy, marking the chunks of
CHUNK weights it changed, and the copies are merged chunk by chunk (see td2048.learn for
how often): a weight that every thread that changed it moved the same way takes the largest
of their moves (exactly that copy's value); one they moved in opposite directions takes the
sum of the moves.

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
    largest/sum     0.25 s, threads wait for each other      88.8-90.5%  1.53x
    largest/sum     0.5 s, threads wait for each other       88.5-90.5%  1.67x
    largest/sum     0.75 s, threads wait for each other      88.3%       1.79x
    largest + half the smaller / sum, 0.5 s                  89.2-89.6%  (no better)
    largest/sum     0.25 s, stop flag, chunks, prefetch      89.1-89.8%  1.72x  <- the default
    largest/sum     0.4 / 0.5 s, the same                    89.9 / 90.2% 1.76x (last 5 blocks 88.8 / 88.5%)

("threads wait for each other": the threads no longer end at a batch of 250 episodes to be
started again; they stop at a barrier, merge their shares of the regions, and go on. "stop
flag": the kernels return before their next episode when a merge is asked for, instead of
the threads playing batches of about 2 ms and asking between them: 8,000 fewer returns to
Python every 8 s, which had cost 6% of the threads' time.)
Merging more often lets the threads see each other's updates sooner, which is what learning
per episode needs most early on (at 20,000 episodes: one thread 66.4%, mean every 1 s 44.9%,
sum every 0.1 s 64.8%, largest/sum every 0.25 s 52-54%), but each merge reads and writes
every changed chunk of every copy and of the base: every 0.25 s about 250,000 of a 4x6
table's 2.1 million chunks, 60% of them changed by both threads.

How a merge is made fast (4x6 from a trained model, 0.25 s of 2-thread training, one thread
merging everything): 256-weight regions, a flag byte each, took 33 ms; flagging 32-weight
chunks (a bit each in the region's byte, so the flags stay 256 KB a thread and in the
core's cache) moves a third of the bytes but took as long, the chunks being scattered and
each waiting on memory in turn; listing the changed chunks first, then merging each with
the lines of the chunk AHEAD places on already asked for (software prefetch), takes 17 ms.
Merges now take 3.7% of the threads' time at 0.25 s (6.5% before). A flag byte per chunk
(2 MB a thread, more than the core's cache) made training 5% slower; a bit costs 2%.

Tried and left out (players alternating blocks in one process, so that the machine's drift
cancels; 2 threads at 1.68-1.75x one thread's moves/s): each thread writing only its own copy
(merge into the base, then each copies the base's merged chunks), so that no core writes
lines the other trains on: no faster. Merging only the chunks both threads changed, leaving
one writer's chunks for a later merge: at most 3% faster even when never merged, 1% when
merged every 4th time. Flags stored before the weights instead of after, or a plain byte
store per region instead of a bit: within the noise (flagging costs 2-4% of one thread's
speed either way); testing the bit and storing only when unset (a branch per weight): 0.75x.
Chunks of one cache line (16 weights): 360,000 chunks instead of 239,000, one merge 19 ms
either way. Two threads on one shared table, still: 0.78x one thread.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from td2048.config import njit

DIRTY_SHIFT = 8  # one flag byte per 256 weights (1 KB): a 4x6 copy's flags are 256 KB, they stay in cache
CHUNK_SHIFT = 5  # bit b of a region's byte flags its chunk b of 32 weights (two 64-byte cache lines)
CHUNK = 1 << CHUNK_SHIFT
LINE_WEIGHTS = 16  # float32 weights in a 64-byte cache line
BATCH = 2048  # chunks listed before they are merged
AHEAD = 8  # chunks between a chunk's prefetch and its merge (4, 16 and 32 measured slower)


def _prefetch_intrinsic(for_write: int, locality: int = 3):
    """An intrinsic ``(array, index)`` that asks for the cache line of array[index] (LLVM's llvm.prefetch;
    Numba has none). ``for_write`` 1 compiles to prefetchw, 0 to a plain read prefetch: into every level
    with ``locality`` 3 (prefetcht0), into L2 and below with 2 (prefetcht1)."""
    def prefetch(typingctx, array, index):
        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            address = builder.gep(data, [args[1]])
            i32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]), "llvm.prefetch.p0")
            # (read 0 / write 1, locality, 1: the data cache)
            builder.call(function, [address, ir.Constant(i32, for_write), ir.Constant(i32, locality),
                                    ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.void(array, index), codegen

    return intrinsic(prefetch)


# Kept in this module: Numba's cache of the merge kernels is invalidated by changes of this file only
# (the generated network kernels fingerprint it too).
prefetch_write = _prefetch_intrinsic(1)  # ask for a line that will be written soon
prefetch_read = _prefetch_intrinsic(0)  # ask for a line that will be read soon
# ... into L2, not L1: the weights of networks far larger than the caches (see td2048.kernels.codegen)
prefetch_far = _prefetch_intrinsic(0, locality=2)


def dirty_size(n_weights: int) -> int:
    """Flag bytes for n weights: one a region of 2**DIRTY_SHIFT weights, a bit a chunk."""
    return (n_weights >> DIRTY_SHIFT) + 1


@njit
def merge_regions(shared, copies, dirty, first, last):
    """Merge regions [first, last) of the threads' ``copies`` into ``shared``, then refresh the copies.

    ``copies`` is ``float32[threads, n]``, ``dirty`` is ``uint8[threads, regions]`` (a bit per
    chunk of CHUNK weights); both are cleared for the merged regions. Returns the number of
    chunks merged.

    The changed chunks are listed first, a batch at a time, then merged with the lines of the
    chunk AHEAD places on already asked for (the chunks are scattered: without it every chunk
    waits on memory in turn).
    """
    threads = copies.shape[0]
    starts = np.empty(BATCH, np.int64)
    writers = np.empty(BATCH, np.int64)  # the one thread that changed the chunk, or -1: several
    listed = 0
    merged = 0
    for r in range(first, last):
        union = 0
        for t in range(threads):
            union |= dirty[t, r]
        if union == 0:
            continue
        for b in range(8):
            bit = 1 << b
            if not union & bit:
                continue
            writer = -1
            for t in range(threads):
                if dirty[t, r] & bit:
                    writer = t if writer == -1 else -2
            starts[listed] = (r << DIRTY_SHIFT) + (b << CHUNK_SHIFT)
            writers[listed] = max(writer, -1)
            listed += 1
        for t in range(threads):
            dirty[t, r] = 0
        if listed > BATCH - 8:
            _merge_chunks(shared, copies, starts, writers, listed)
            merged += listed
            listed = 0
    _merge_chunks(shared, copies, starts, writers, listed)
    return merged + listed


@njit(inline="always")
def _prefetch_chunk(weights, start):
    """Ask for the cache lines of the chunk of weights at ``start``."""
    for line in range(start, min(weights.shape[0], start + CHUNK), LINE_WEIGHTS):
        prefetch_write(weights, line)


@njit
def _merge_chunks(shared, copies, starts, writers, count):
    """Merge the listed chunks: one writer's chunk is its copy, exactly (copied without reading the
    base or the other copies); a chunk several threads changed goes by the rule of _merged_value."""
    if copies.shape[0] == 2:
        _merge_chunks_two(shared, copies[0], copies[1], starts, writers, count)
        return
    threads = copies.shape[0]
    n = shared.shape[0]
    for k in range(count):
        if k + AHEAD < count:
            ahead = starts[k + AHEAD]
            _prefetch_chunk(shared, ahead)
            for t in range(threads):
                _prefetch_chunk(copies[t], ahead)
        lo = starts[k]
        hi = min(n, lo + CHUNK)
        writer = writers[k]
        if writer >= 0:
            source = copies[writer]
            for i in range(lo, hi):
                shared[i] = source[i]
            for t in range(threads):
                if t != writer:
                    target = copies[t]
                    for i in range(lo, hi):
                        target[i] = source[i]
        else:
            _merge_many(shared, copies, lo, hi)


@njit
def _merge_chunks_two(shared, first, second, starts, writers, count):
    """_merge_chunks for two threads, with straight loops the compiler vectorises."""
    n = shared.shape[0]
    for k in range(count):
        if k + AHEAD < count:
            ahead = starts[k + AHEAD]
            _prefetch_chunk(shared, ahead)
            _prefetch_chunk(first, ahead)
            _prefetch_chunk(second, ahead)
        lo = starts[k]
        hi = min(n, lo + CHUNK)
        writer = writers[k]
        if writer == 0:
            for i in range(lo, hi):
                value = first[i]
                shared[i] = value
                second[i] = value
        elif writer == 1:
            for i in range(lo, hi):
                value = second[i]
                shared[i] = value
                first[i] = value
        else:
            _merge_two(shared, first, second, lo, hi)


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
