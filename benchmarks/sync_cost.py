"""What a sync of Ray workers (``td2048 train --ray``) costs: weights changed per sync, bytes, kernel seconds.

    python benchmarks/sync_cost.py                          # 4x6 and 8x6, TC, after 5,000 and 40,000 episodes
    python benchmarks/sync_cost.py --networks 4x6 --stages 20000 --moves 1e6 4e6 16e6

For each network: trains from zero by TC (forward updates, one thread) to each stage, then, from a copy of
the weights at that stage, learns on for M moves (each of --moves) and counts the distinct weights that changed:
what one worker making M moves between two syncs would send (16 bytes a weight with TC: a 4-byte index, the
weight, its two accumulators). Since a weight changed by several workers counts once in the merge, the union of
K workers' changes is about what one learner changes in K x M moves: the same curve read further out. Also
times, on this machine and one thread, the steps of one sync of two workers of that many changes: scanning
the weights for changes, merging two lists, writing the merged list in.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from td2048 import Network, parse_network
from td2048.kernels.exchange import apply_changes, changed_indices, gather_changes, merge_changes
from td2048.learn import Learner
from td2048.learning_options import LearningOptions


def learn_moves(learner: Learner, moves: float, first: int) -> int:
    """Learn by TC until at least ``moves`` moves are made; returns the episodes played."""
    made, played = 0, 0
    while made < moves:
        block = learner.run(50, 1.0, LearningOptions(update="forward"), first_episode=first + played, tc=True)
        made += int(block.moves.sum())
        played += 50
    return played


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--networks", nargs="+", default=["4x6", "8x6"])
    p.add_argument("--stages", nargs="+", type=int, default=[5000, 40000], help="episodes trained before measuring")
    p.add_argument("--moves", nargs="+", type=float, default=[1e6, 4e6, 16e6, 64e6])
    args = p.parse_args()
    tiny, tiny_acc = np.zeros(64, np.float32), np.zeros(128, np.float32)
    warm = changed_indices(tiny, tiny, tiny_acc, tiny_acc)  # compiled (or loaded) before anything is timed
    merge_changes(warm, *gather_changes(warm, tiny, tiny_acc), tiny, tiny_acc)
    print("| network (weights) | trained episodes | moves since the last sync | weights changed | share of the "
          "weights | bytes to send (TC) | scan s | merge of two s | write s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.networks:
        spec = parse_network(name)
        net = Network(spec)
        learner = Learner(net, seed=0)
        done = 0
        for stage in args.stages:
            while done < stage:
                learner.run(min(1000, stage - done), 1.0, LearningOptions(update="forward"), done, tc=True)
                done = min(stage, done + 1000)
            base, acc_base = net.weights.copy(), net.accumulators.copy()
            for moves in args.moves:
                trial = Network(spec, base.copy(), accumulators=acc_base.copy())
                learn_moves(Learner(trial, seed=1), moves, done)
                start = time.perf_counter()
                indices = changed_indices(trial.weights, base, trial.accumulators, acc_base)
                scan = time.perf_counter() - start
                values, acc = gather_changes(indices, trial.weights, trial.accumulators)
                start = time.perf_counter()
                merged = merge_changes(np.concatenate([indices, indices]), np.concatenate([values, values]),
                                       np.concatenate([acc, acc]), base, acc_base)
                merge = time.perf_counter() - start
                weights, new_base = base.copy(), base.copy()
                acc_now, acc_new_base = trial.accumulators.copy(), acc_base.copy()
                start = time.perf_counter()
                apply_changes(*merged, weights, new_base, acc_now, acc_new_base)
                write = time.perf_counter() - start
                n = len(indices)
                print(f"| {name} ({spec.nbytes / 2**20:,.0f} MiB) | {done:,} | {moves / 1e6:g}M | {n:,} | "
                      f"{n / spec.n_weights:.1%} | {16 * n / 1e6:,.1f} MB | {scan:.3f} | {merge:.3f} | {write:.3f} |",
                      flush=True)
                del trial
    return 0


if __name__ == "__main__":
    sys.exit(main())
