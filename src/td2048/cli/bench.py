"""``td2048 bench``: training and testing moves per second, single thread, compiled code warmed."""

from __future__ import annotations

import argparse
import json

from td2048.cli.options import (
    add_board_argument,
    add_game_argument,
    add_network_arguments,
    nonnegative_int_arg,
    positive_float_arg,
    positive_int_arg,
)
from td2048.games.shape import BoardShape
from td2048.learning_options import TARGETS, LearningOptions
from td2048.presets import default_network
from td2048.spec import METHODS, WEIGHT_BITS

HELP = "measure training and testing speed (moves/s)"
DESCRIPTION = """\
Measure moves per second (one thread unless --threads): first training from zero weights for --seconds,
then playing without updates with the weights just trained for --seconds. With --episodes N: training
exactly N episodes, then playing N (the same work as TDL2048+'s `-t N/1000 -e N/1000`). The kernels are
compiled (or loaded from Numba's cache) before timing; compile_s says how long that took.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_game_argument(p)
    add_board_argument(p)
    add_network_arguments(p, default=None)
    p.add_argument("--seconds", type=positive_float_arg, default=5.0, help="seconds for each measure (default 5)")
    p.add_argument("--episodes", type=positive_int_arg, default=None,
                   help="train exactly this many episodes, then test as many (instead of --seconds)")
    p.add_argument("--update", choices=("backward", "forward"), default="backward",
                   help="update mode while training (default backward)")
    p.add_argument("--method", choices=METHODS, default="afterstate",
                   help="afterstate values (default) or state values with the expectation over new tiles")
    p.add_argument("--tc", action="store_true",
                   help="train with temporal coherence (meta rate 1.0; threads share one table, as in training)")
    p.add_argument("--target", choices=TARGETS, default="sample",
                   help="what training updates move V toward: sample (default) or expected (td2048 train --target)")
    p.add_argument("--seed", type=nonnegative_int_arg, default=0, help="random seed (default 0)")
    p.add_argument("--weights", default=None, metavar="MODEL",
                   help="start from a trained model (.td2048) instead of zero weights")
    p.add_argument("--threads", type=positive_int_arg, default=1, help="threads playing at once (default 1)")
    p.add_argument("--merge-every", type=positive_float_arg, default=None, metavar="SECONDS",
                   help="with --threads, TD on copies merged every SECONDS, as td2048 train --merge-every "
                        "(default: the threads share one table)")
    p.add_argument("--tc-records", action="store_true",
                   help="with --tc, TC on records, each weight beside its accumulators (td2048 train --tc-records)")
    p.add_argument("--weight-bits", type=int, choices=WEIGHT_BITS, default=32,
                   help="32 (default) or 16: weights in 16 bits, as td2048 train --weight-bits 16")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of text")


def run(args: argparse.Namespace) -> int:
    from td2048.bench import benchmark

    network = args.network or default_network(BoardShape.parse(args.board))
    options = LearningOptions(update=args.update, target=args.target)
    result = benchmark(network, args.seconds, isomorphisms=args.isomorphisms, seed=args.seed, options=options,
                       memory_limit=args.memory_limit, weights=args.weights, threads=args.threads, game=args.game,
                       clamp=args.clamp, cells=args.cells, method=args.method, episodes=args.episodes, tc=args.tc,
                       merge_seconds=args.merge_every, tc_records=args.tc_records, board=args.board,
                       weight_bits=args.weight_bits)
    if args.json:
        print(json.dumps(result))
    else:
        start = f"from {result['weights']}" if result["weights"] else "from zero weights"
        copies = "" if args.merge_every is None or args.tc else f" on copies merged every {args.merge_every:g} s"
        board = "" if result["board"] == "4x4" else f"{result['board']} board, "
        print(f"{result['game']}, {board}network {result['network']} ({result['isomorphisms']} isomorphisms), "
              f"{result['method']} values, {result['update']} updates{' with TC' if result['tc'] else ''}"
              f"{', targets ' + result['target'] if result['target'] != 'sample' else ''}"
              f"{' on records' if result['tc_records'] else ''}"
              f"{', 16-bit weights' if result['weight_bits'] == 16 else ''}, "
              f"{result['threads']} thread(s){copies}, {start}")
        print(f"  train: {result['train_moves_per_s']:>12,.0f} moves/s  ({result['train_moves']:,} moves "
              f"in {result['train_s']:.2f} s)")
        print(f"  test:  {result['test_moves_per_s']:>12,.0f} moves/s  ({result['test_moves']:,} moves "
              f"in {result['test_s']:.2f} s)")
        print(f"  compile/cache load: {result['compile_s']:.2f} s")
    return 0
