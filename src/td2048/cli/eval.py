"""``td2048 eval``: play a model's games without learning and print their statistics."""

from __future__ import annotations

import argparse
import json
import sys

from td2048.cli.options import nonnegative_int_arg, positive_int_arg
from td2048.cli.progress import format_duration
from td2048.io.model import load_model
from td2048.io.records import parse_names, record_games
from td2048.run import evaluate

HELP = "evaluate a model: play games without learning"
DESCRIPTION = """\
Play --games games greedily (argmax over legal moves of reward + V(afterstate)) with a
model, without learning, and print the statistics block of all of them (see td2048 train
--help for its columns). With --threads N, N games are played at once; with one thread the
games are reproducible from --seed.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="a .td2048 model file (a run's model.td2048 or snapshot.td2048)")
    p.add_argument("--game", choices=("2048", "2584"), default=None,
                   help="refuse a model of another game (default: play the model's own game)")
    p.add_argument("--games", type=positive_int_arg, default=1000, help="games to play (default 1000)")
    p.add_argument("--seed", type=nonnegative_int_arg, default=None, help="random seed (default: fresh)")
    p.add_argument("--threads", type=positive_int_arg, default=1, help="games played at once (default 1)")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="write every game as one line of the course's record grammar (one thread)")
    p.add_argument("--names", default="td2048:random", metavar="PLAYER:ENV",
                   help="player and environment names in the records (default td2048:random)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def run(args: argparse.Namespace) -> int:
    network, header = load_model(args.model, game=args.game)
    show = sys.stderr.isatty() and not args.json

    def on_progress(done):
        if show:
            sys.stderr.write(f"\r{done}/{args.games} games\x1b[K")

    if args.record is not None:
        names = parse_names(args.names)
        stats = record_games(network, args.record, args.games, args.seed, names)
    else:
        stats = evaluate(network, args.games, args.seed, args.threads, on_progress)
    if show:
        sys.stderr.write("\r\x1b[K")
    if args.json:
        print(json.dumps({"model": args.model, "network": network.spec.name, "method": network.method,
                          **stats.to_json()}))
    else:
        trained = header.get("training", {}).get("episodes")
        method = ", state values (moves by the expectation over new tiles)" if network.state_values else ""
        print(f"# {args.model}: {network.spec.describe()}{method}"
              + (f", trained {trained} episodes" if trained else ""))
        print(stats.table(), end="")
        print(f"# {stats.moves:,} moves in {format_duration(stats.seconds)} ({stats.moves_per_s:,.0f} moves/s, "
              f"{args.threads} thread(s))")
    return 0
