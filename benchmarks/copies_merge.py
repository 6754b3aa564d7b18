"""What learning on copies costs per episode, by merge rule and by the episodes between merges (no timing).

    python benchmarks/copies_merge.py --copies 1 --seed 0                          # the one-learner baseline
    python benchmarks/copies_merge.py --copies 2 --every 100 --rule coherence --seed 0

K copies of a network learn by TC in turn, each ``--every`` episodes on its own weights and accumulators, then
all are merged against the weights of the last merge and go on from the merged weights: the learning of K Ray
workers (td2048.distributed.ray_train) with the timing taken out, so that every run is deterministic and can
share the machine with others. Rules, for a weight several copies moved the same way (a weight one copy
changed always takes its value, one moved both ways the sum of the moves, accumulators always add up):

- ``coherence``: td2048's rule for TC (td2048.kernels.exchange.merged_value): the largest move plus the mean
  of the others' moves times TC's coherence of the copies' errors since the last merge;
- ``summed``: the largest move plus the sum of the others' moves times that coherence (td2048's rule before:
  the same for two copies);
- ``largest``: the largest move (the rule of TD's thread copies);
- ``sum``: the sum of the moves (what one table would take if no update changed another's error);
- ``mean``: the mean of the moves of the copies that moved it.

Prints the average of the last five blocks and the learning curve (every fifth block). Compare a run with the
one-learner run of the same seed (``--copies 1``): the difference is what learning on copies cost.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from td2048.config import njit
from td2048.kernels.exchange import merged_value
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import Network, aligned_zeros, fresh_accumulators
from td2048.rng import thread_rng_states
from td2048.spec import parse_network

RULES = {"coherence": 0, "largest": 1, "sum": 2, "mean": 3, "summed": 4}


@njit
def merge_copies(weights, accumulators, base, accumulator_base, rule):
    """Merge every copy's changes against the base, by ``rule``; write the result into the base and every copy."""
    copies, n = weights.shape
    for i in range(n):
        b = base[i]
        highest = b
        lowest = b
        total = np.float32(0.0)
        movers = 0
        error = np.float32(0.0)
        absolute = np.float32(0.0)
        for k in range(copies):
            v = weights[k, i]
            total += v - b
            movers += v != b
            highest = max(highest, v)
            lowest = min(lowest, v)
            error += accumulators[k, 2 * i] - accumulator_base[2 * i]
            absolute += accumulators[k, 2 * i + 1] - accumulator_base[2 * i + 1]
        if movers == 0 and absolute == 0 and error == 0:
            continue
        if rule <= 1 or movers < 2 or (lowest != b and highest != b):
            out = merged_value(b, highest, lowest, total, movers, error, absolute, rule == 0)
        elif rule == 2:
            out = b + total
        elif rule == 3:
            out = b + total / movers
        else:
            largest = highest if lowest == b else lowest
            c = min(abs(error) / absolute, np.float32(1.0)) if absolute > 0 else np.float32(1.0)
            out = largest + ((b + total) - largest) * c
        base[i] = out
        accumulator_base[2 * i] += error
        accumulator_base[2 * i + 1] += absolute
        for k in range(copies):
            weights[k, i] = out
            accumulators[k, 2 * i] = accumulator_base[2 * i]
            accumulators[k, 2 * i + 1] = accumulator_base[2 * i + 1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="4x6")
    p.add_argument("--episodes", type=int, default=20_000, help="episodes in all (default 20,000)")
    p.add_argument("--copies", type=int, default=2)
    p.add_argument("--every", type=int, default=100, help="episodes each copy learns between merges (default 100)")
    p.add_argument("--rule", choices=list(RULES), default="coherence")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--block", type=int, default=1000)
    args = p.parse_args()

    spec = parse_network(args.network)
    weights = aligned_zeros(args.copies, spec.n_weights)
    accumulators = np.repeat(fresh_accumulators(spec.n_weights)[None], args.copies, axis=0)
    networks = [Network(spec, weights[k], accumulators=accumulators[k]) for k in range(args.copies)]
    states = thread_rng_states(args.seed, args.copies)  # copy k plays as thread k of one run would
    learners = [Learner(networks[k], rng_states=states[k:k + 1]) for k in range(args.copies)]
    base, accumulator_base = weights[0].copy(), accumulators[0].copy()
    scores: list[int] = []
    start = time.perf_counter()
    while len(scores) < args.episodes:
        for learner in learners:
            block = learner.run(args.every, 1.0, LearningOptions(update="forward"), first_episode=len(scores), tc=True)
            scores.extend(block.scores.tolist())
        if args.copies > 1:
            merge_copies(weights, accumulators, base, accumulator_base, RULES[args.rule])
    blocks = np.array(scores[:args.episodes // args.block * args.block]).reshape(-1, args.block).mean(axis=1)
    curve = " ".join(f"{x:,.0f}" for x in blocks[4::5])
    print(f"{args.network}, {args.copies} cop{'y' if args.copies == 1 else 'ies'}, merged every {args.every} "
          f"episodes each by {args.rule}, seed {args.seed}: last five blocks {blocks[-5:].mean():,.0f}; "
          f"every fifth block {curve} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
