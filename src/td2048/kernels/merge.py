"""Merging the weight copies of threads that trained at once.

Threads that write the same weights slow each other down more than they help: the frequently
used weights bounce between the cores' caches, and two threads on one shared table train no
faster than one. So each thread trains on its own copy, marking the chunks of CHUNK weights it
changed, and the copies are merged chunk by chunk (see td2048.learn for how often): a weight that
every thread that changed it moved the same way takes the largest of their moves (exactly that
copy's value); one they moved in opposite directions takes the sum of the moves.

Why that rule: a weight that two threads each pushed toward the same target would, trained by
one thread, have moved by somewhere between the larger move (both had nearly reached the target)
and the sum (small steps far from it); the mean is below both, and the sum overshoots. Of the
rules tried (mean, sum, largest/sum, at several intervals), largest/sum every quarter second
learned the most per episode at nearly the speed of copies never merged. Merging more often
lets the threads see each other's updates sooner, which is what learning per episode needs most
early on, but each merge reads and writes every changed chunk of every copy and of the base.

How a merge is made fast: the threads do not end their kernels at fixed batches to be started
again; every merge interval a stop flag makes each kernel return before its next episode, the
threads meet at a barrier, each merges its share of the regions, and all go on. A region of
256 weights has one flag byte per thread, a bit for each of its 8 chunks of 32 weights (two
cache lines), so the flags stay small enough for the core's cache; a merge first lists the
changed chunks, then merges each with the lines of the chunk AHEAD places on already asked for
(software prefetch), so that the scattered chunks do not wait on memory one after the other.
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
AHEAD = 8  # chunks between a chunk's prefetch and its merge


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
# ... into L2, not L1: the weights of networks far larger than the caches (see td2048.kernels.features)
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
