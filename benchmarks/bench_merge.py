"""Merge benchmark: the time of one merge of two threads' weight copies, on a real state.

    python benchmarks/bench_merge.py                               # 4x6 from zero, 3 s of training first
    python benchmarks/bench_merge.py --weights runs/1-thread/model.td2048
    python benchmarks/bench_merge.py --network 8x6 --seconds 0.5   # 0.5 s between merges

Trains with 2 threads (no merges) for --warmup seconds, then for --seconds (the merge interval),
and times td2048.kernels.merge.merge_regions on one thread over all regions, several times on
fresh copies of that state (caches emptied in between). Prints the chunks merged, the split
between chunks one thread and both threads changed, and milliseconds per merge: with two
threads each merges half, so a merge stops training for about half that time. Not a test:
put the figure in the note of the issue that touched the merge.
"""

import argparse
import statistics
import time

import numpy as np

from td2048.io.model import load_model
from td2048.kernels.merge import merge_regions
from td2048.learn import Learner
from td2048.network import Network, aligned_zeros, parse_network


def _train_for(player: Learner, seconds: float) -> None:
    elapsed = 0.0
    while elapsed < seconds:
        elapsed += player.run(200, 0.1).seconds


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="4x6")
    p.add_argument("--weights", help="start from this model instead of zero weights")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds of training before (merged)")
    p.add_argument("--seconds", type=float, default=0.25, help="seconds of training to merge")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()

    net = load_model(args.weights)[0] if args.weights else Network(parse_network(args.network))
    player = Learner(net, seed=1, threads=2, merge_seconds=1e9)
    _train_for(player, args.warmup)
    player.merge()
    _train_for(player, args.seconds)
    base, copies, dirty = net.weights.copy(), player._copies.copy(), player._dirty.copy()
    both, one = (int(np.bitwise_count(flags).sum()) for flags in (dirty[0] & dirty[1], dirty[0] ^ dirty[1]))

    shared, work = aligned_zeros(base.size), aligned_zeros(*copies.shape)
    flags = dirty.copy()
    evict = np.zeros(64 * 2**20 // 8)  # more than the caches hold
    times = []
    for _ in range(args.runs + 1):  # the first call compiles or loads the kernel
        shared[:] = base
        work[:] = copies
        flags[:] = dirty
        evict += 1.0
        start = time.perf_counter()
        chunks = merge_regions(shared, work, flags, 0, flags.shape[1])
        times.append(time.perf_counter() - start)
    print(f"{net.spec.name}: {chunks:,} chunks merged after {args.seconds} s of 2-thread training "
          f"({both:,} changed by both threads, {one:,} by one)")
    print(f"merge, one thread over all regions: {1000 * min(times[1:]):.1f} ms best, "
          f"{1000 * statistics.median(times[1:]):.1f} ms median of {args.runs}")


if __name__ == "__main__":
    main()
