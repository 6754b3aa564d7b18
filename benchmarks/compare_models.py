"""Two models on the same games, cut into sets: in how many sets is the second model ahead?

    python benchmarks/compare_models.py A.td2048 B.td2048 --games 10000 --seed 4096 --sets 10 [--threads 2]

Both models play the same ``--games`` games at depth 1 (each game's random state comes from ``--seed`` and its
index, as in ``td2048 eval``, so the totals are ``td2048 eval MODEL --games G --seed S``'s). Prints each model's
average and ``--tile`` rate over all the games, one row per set of consecutive games (``--sets``: 10 sets of 1,000
of 10,000 games), and in how many sets B is ahead on average, on the ``--tile`` rate, and on both: whether a
difference that shows over all the games also shows on one set of the size a test would use.
"""

from __future__ import annotations

import argparse

import numpy as np

import td2048
from td2048.distributed.shards import plan_shards, play_shard
from td2048.errors import TD2048Error
from td2048.games.tiles import tile_code
from td2048.search_settings import Search
from td2048.threads import run_threads


def play(path: str, games: int, seed: int, threads: int, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of games 0 .. games - 1, in game order, and whether each reached ``tile``."""
    network = td2048.load(path)
    code = tile_code(network.game, tile)
    if code is None:  # before the games, not after them
        raise TD2048Error(f"{tile} is not a tile of {network.game}")
    shards = plan_shards(games, -(-games // threads))
    results = [None] * len(shards)

    def work(k: int) -> None:
        results[k] = play_shard(network, Search(), seed, shards[k])

    run_threads(len(shards), work)
    scores = np.concatenate([r.scores for r in results])
    return scores, np.concatenate([r.max_codes >= code for r in results])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs=2, metavar="MODEL", help="A and B, two .td2048 models of the same game")
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=4096)
    parser.add_argument("--sets", type=int, default=10, help="cut the games into this many sets (default 10)")
    parser.add_argument("--tile", type=int, default=16384, help="the tile whose reach rate counts (default 16384)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.games < args.sets or args.games % args.sets:
        parser.error(f"--games {args.games} does not cut into {args.sets} equal sets")

    names = ("A", "B")
    try:
        played = [play(path, args.games, args.seed, args.threads, args.tile) for path in args.models]
    except TD2048Error as e:  # a model that cannot be read, a tile the game does not have: bad input
        parser.exit(2, f"compare_models.py: {e}\n")
    for name, path, (scores, reached) in zip(names, args.models, played, strict=True):
        print(f"{name} {path}: average {scores.mean():,.0f}, {args.tile} in {reached.mean():.1%} "
              f"of {args.games:,} games (seed {args.seed})")
    size = args.games // args.sets
    averages = [scores.reshape(args.sets, size).mean(axis=1) for scores, _ in played]
    rates = [reached.reshape(args.sets, size).mean(axis=1) for _, reached in played]
    print(f"\n| games | A average | B average | A {args.tile} | B {args.tile} |")
    print("|---|---|---|---|---|")
    for k in range(args.sets):
        print(f"| {k * size:,}-{(k + 1) * size - 1:,} | {averages[0][k]:,.0f} | {averages[1][k]:,.0f} "
              f"| {rates[0][k]:.1%} | {rates[1][k]:.1%} |")
    ahead_average = averages[1] > averages[0]
    ahead_rate = rates[1] > rates[0]
    print(f"\nB ahead in {ahead_average.sum()} of {args.sets} sets of {size:,} games on average, "
          f"{ahead_rate.sum()} on the {args.tile} rate, {(ahead_average & ahead_rate).sum()} on both")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
