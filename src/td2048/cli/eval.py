"""``td2048 eval``: play a model's games without learning, greedily or by expectimax search."""

from __future__ import annotations

import argparse
import json
import sys

from td2048.cli.options import (
    SCORES_HELP,
    add_search_arguments,
    nonnegative_float_arg,
    nonnegative_int_arg,
    positive_int_arg,
    require_4x4,
    scores_arg,
)
from td2048.cli.progress import Progress, format_duration
from td2048.config import DEFAULT_SHARD_SIZE
from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.io.model import load_model
from td2048.search_settings import parse_search, search_settings_json

HELP = "evaluate a model: play games without learning (greedy, or expectimax with --depth)"
DESCRIPTION = f"""\
Play --games games with a model, without learning, and print the statistics block of all of
them (see td2048 train --help for its columns). Moves are chosen greedily (argmax over legal
moves of reward + V(afterstate)), or with --depth N > 1 by expectimax search N moves deep
over every new tile (TDL2048+'s plies: its -d 2p is --depth 2). For state-value models depth
1 already takes the expectation over the new tile. With --threads N, N games are played at
once.

Every game is played from its own random state, derived from --seed and the game's index
alone, and with an empty transposition table: the games, the statistics, --json (but for the
seconds and how the games were split) and --record (in game order) are the same with one
thread or N, with --shard-size K (the games cut into shards of K games), and with --ray
[ADDRESS], which plays the shards as Ray tasks (default shard size {DEFAULT_SHARD_SIZE}) on a new local Ray
instance or on the cluster at ADDRESS ("auto": the one this machine is in). Without --seed,
the seed drawn is printed, to play the same games again.

With --endgame TABLE (an endgame's table, td2048 solve --fixed ... --goal ... --out TABLE; boards of
up to 12 cells), the table chooses the moves wherever a game keeps its fixed tiles (in any
orientation) and the goal can still be built, the model everywhere else; the table's games,
entries, goals built and moves are printed after the statistics (in --json, "endgame"). With
--endgame-worth POINTS as well, the model's search (greedy at depth 1) values a position where the table
would take over as the model's value plus POINTS times the table's chance of building the goal from it, so
that the model steers into the endgame where the table wins it most often.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="a .td2048 model file (a run's model.td2048 or snapshot.td2048)")
    p.add_argument("--game", choices=("2048", "2584"), default=None,
                   help="refuse a model of another game (default: play the model's own game)")
    p.add_argument("--games", type=positive_int_arg, default=1000, help="games to play (default 1000)")
    p.add_argument("--seed", type=nonnegative_int_arg, default=None, help="random seed (default: fresh)")
    p.add_argument("--threads", type=positive_int_arg, default=None,
                   help="games played at once (default 1); with --exact, boards searched at once (default: every core)")
    add_search_arguments(p)
    p.add_argument("--record", default=None, metavar="FILE",
                   help="write every game as one line of the course's record grammar, in game order (at depth > 1 "
                        "each decision carries the milliseconds it took)")
    p.add_argument("--names", default="td2048:random", metavar="PLAYER:ENV",
                   help="player and environment names in the records (default td2048:random)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--shard-size", type=positive_int_arg, default=None, metavar="K",
                   help="play in shards of K games (the same games and results as without: a unit of work for "
                        "--threads and --ray)")
    p.add_argument("--endgame", default=None, metavar="TABLE",
                   help="an endgame's table (td2048 solve --fixed ... --goal ... --out TABLE) of the model's board: it "
                        "chooses the moves wherever a game keeps its fixed tiles and the goal can still be built")
    p.add_argument("--endgame-worth", type=nonnegative_float_arg, default=0.0, metavar="POINTS",
                   help="with --endgame, the points that building the table's goal adds to a game: the model's search "
                        "values the positions where the table takes over as their value plus POINTS times the table's "
                        "chance of the goal (default 0: the model's values alone)")
    p.add_argument("--exact", default=None, metavar="SOLUTION",
                   help="instead of playing games, compute the agent's exact expected score, tile reach, share of "
                        "optimal moves and score lost by stage against a solution file of the model's board and game "
                        "(td2048 solve --out; see docs/guides/solve.md)")
    p.add_argument("--symmetric", action="store_true",
                   help="with --exact, value the agent up to the board's symmetries: each class of symmetric boards "
                        "once, in its least orientation (about 8 times faster on a square board); the same figures for "
                        "a network with all the board's isomorphisms up to its choice between moves of equal value")
    p.add_argument("--score-at-least", type=scores_arg, default=None, metavar="X[,X...]",
                   help=f"with --exact, {SCORES_HELP}")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="play the shards as Ray tasks: on a new local instance (--threads N: N CPUs), or on the "
                        "cluster at ADDRESS ('auto', host:6379, ray://host:10001); needs pip install 'td2048[ray]'")


def run(args: argparse.Namespace) -> int:
    network, header = load_model(args.model, game=args.game)
    if args.record is not None:
        require_4x4(network, "--record writes the course's record files, which hold games")
    search = parse_search(args.depth, args.tt_size, args.limit, args.downgrade, network.game)
    if args.exact is not None:
        if args.endgame is not None:
            raise TD2048Error("--exact values the model's own play: leave out --endgame")
        return _run_exact(args, network, search)
    args.threads = args.threads or 1
    if args.symmetric:
        raise TD2048Error("--symmetric values the agent against a solution: give it with --exact SOLUTION")
    if args.score_at_least is not None:
        raise TD2048Error("--score-at-least gives the exact distribution of the score: give a solution with "
                          "--exact SOLUTION")
    endgame = _endgame_table(args, network)
    from td2048.io.records import parse_names  # the options are good: now the compiled code
    from td2048.play import Agent
    from td2048.recording import record_games

    sharded = None
    shards_asked = args.ray is not None or args.shard_size is not None
    by_shards = shards_asked or (args.record is not None and args.threads > 1)  # records on threads: shard by shard
    # the games done and the time left, on stderr if it is a terminal (stdout, what a script reads, stays the same)
    progress = Progress(args.games, enabled=not args.json, stream=sys.stderr, unit="games")
    progress.count(0)
    try:
        if by_shards:
            sharded = _play_sharded(args, network, search, progress.count)
            stats, counts, seed = sharded.stats, sharded.search_counts, sharded.seed
        elif args.record is not None:
            names = parse_names(args.names)
            agent = Agent(network, search, args.seed, 1, memory_limit=args.memory_limit)
            stats = record_games(agent, args.record, args.games, names, progress.count)
        else:
            agent = Agent(network, search, args.seed, args.threads, memory_limit=args.memory_limit, endgame=endgame,
                          endgame_worth=args.endgame_worth)
            stats = agent.play(args.games, progress.count)
    finally:
        progress.clear()
    if sharded is None:
        counts, seed = agent.search_counts(), agent.seed
    if args.json:
        print(json.dumps({"model": args.model, "network": network.spec.name, "board": network.board.name,
                          "method": network.method,
                          "search": search_settings_json(search), "seed": seed, "threads": args.threads,
                          **stats.to_json(), **({"search_counts": counts} if search.depth > 1 else {}),
                          **({"endgame": {"table": args.endgame, "worth": args.endgame_worth,
                                          **endgame.endgame.to_json(), **agent.endgame_counts()}}
                             if endgame is not None else {}),
                          **(_sharded_json(args, sharded) if shards_asked else {})}))
    else:
        trained = header.get("training", {}).get("episodes")
        method = ", state values (moves by the expectation over new tiles)" if network.state_values else ""
        print(f"# {args.model}: {network.spec.describe()}{method}"
              + (f", trained {trained} episodes" if trained else ""))
        print(f"# {search.describe()}, seed {seed}")
        if shards_asked:
            print(f"# {sharded.shards} shard(s) of {sharded.shard_size} games")
        print(stats.table(), end="")
        if stats.games > 1:
            print(f"# mean {stats.avg:,.0f} +- {1.96 * stats.stderr:,.0f} (95% interval; standard error "
                  f"{stats.stderr:,.1f})")
        if endgame is not None:
            print(_endgame_line(args.endgame, endgame, agent.endgame_counts(), stats.games, args.endgame_worth))
        where = (f"{sum(sharded.nodes.values())} Ray task(s) on {len(sharded.nodes)} node(s)" if args.ray is not None
                 else f"{args.threads} thread(s)")
        print(f"# {stats.moves:,} moves in {format_duration(stats.seconds)} ({stats.moves_per_s:,.0f} moves/s, "
              f"{where})")
    return 0


def _endgame_table(args, network):
    """``--endgame TABLE``: the endgame's solution, checked against the other options and the model (None
    without)."""
    if args.endgame is None:
        if args.endgame_worth:
            raise TD2048Error("--endgame-worth is the worth of an endgame's goal: give its table with --endgame")
        return None
    for given, option in ((args.record, "--record"), (args.ray, "--ray"), (args.shard_size, "--shard-size")):
        if given is not None:
            raise TD2048Error(f"--endgame plays its games on --threads: leave out {option}")
    from td2048.solve import load_solution

    return load_solution(args.endgame, board=network.board, game=network.game, endgame=True)


def _endgame_line(path, solution, counts, games, worth) -> str:
    """The table's share of the games: ``# endgame TABLE (...): played in N games (x%), ...``."""
    share = counts["games"] / games if games else 0.0
    built = counts["goals"] / counts["entries"] if counts["entries"] else 0.0
    return (f"# endgame {path} ({solution.endgame.describe()}): the table played in {counts['games']:,} games "
            f"({share:.1%}), entered {counts['entries']:,} times, built the goal {counts['goals']:,} times "
            f"({built:.1%} of entries), {counts['moves']:,} moves"
            + (f"; its goal worth {worth:,g} points to the search" if worth else ""))


def _play_sharded(args, network, search, on_progress):
    from td2048.distributed.ray_eval import play_on_ray
    from td2048.distributed.shards import play_sharded
    from td2048.io.records import parse_names

    names = parse_names(args.names) if args.record is not None else None
    common = {"seed": args.seed, "names": names, "on_progress": on_progress, "memory_limit": args.memory_limit}
    if args.ray is None:
        # records on threads without --shard-size: shards small enough to keep every thread busy to the end
        size = args.shard_size or max(1, min(DEFAULT_SHARD_SIZE, args.games // (4 * args.threads)))
        run = play_sharded(network, search, args.games, shard_size=size, threads=args.threads, **common)
    else:
        if args.ray and args.threads != 1:
            raise TD2048Error("--threads sets the CPUs of a new local Ray instance: leave it out with an ADDRESS")
        run = play_on_ray(network, search, args.games, shard_size=args.shard_size or DEFAULT_SHARD_SIZE,
                          address=args.ray or None, num_cpus=args.threads if args.threads > 1 else None, **common)
    if args.record is not None:
        with atomic_open(args.record, "w") as f:
            f.writelines(line + "\n" for line in run.records)
    return run


def _sharded_json(args, run) -> dict:
    out = {"shard_size": run.shard_size, "shards": run.shards}
    if args.ray is not None:
        out["ray"] = {"address": args.ray or "local", "nodes": len(run.nodes)}
    return out


def _run_exact(args, network, search) -> int:
    """``--exact SOLUTION``: the agent's exact figures on a solved board, beside the optimum's."""
    import time

    from td2048.solve import agent_policy, exact_policy_value, load_solution

    for given, option in ((args.record, "--record"), (args.ray, "--ray"), (args.shard_size, "--shard-size")):
        if given is not None:
            raise TD2048Error(f"--exact plays no games: leave out {option}")
    solution = load_solution(args.exact)
    if args.symmetric and not network.spec.symmetric:
        raise TD2048Error(f"--symmetric: {network.spec.name} reads {network.spec.isomorphisms} of the board's "
                          f"{network.board.n_symmetries} symmetries, so its moves are not symmetric")
    if solution.board != network.board or solution.game != network.game:
        raise TD2048Error(f"{args.exact} solves {solution.game} on {solution.board.name}, but the model plays "
                          f"{network.game} on {network.board.name}")
    from td2048.play import Agent

    started = time.perf_counter()
    from td2048.threads import solver_threads

    agent = Agent(network, search, 0, args.threads or solver_threads(), memory_limit=args.memory_limit)
    thresholds = args.score_at_least
    result = exact_policy_value(solution, agent_policy(agent), symmetric=args.symmetric,
                                distribution=thresholds is not None)
    seconds = time.perf_counter() - started
    if args.json:
        score = result.score.to_json(thresholds) if result.score is not None else {}
        print(json.dumps({"model": args.model, "solution": args.exact, "network": network.spec.name,
                          "method": network.method, "search": search_settings_json(search), **result.to_json(),
                          **score, "seconds": seconds}))
    else:
        print(f"# {args.model}: {network.spec.describe()}, exact against {args.exact}")
        print(f"# {search.describe()}, {result.game} on {result.board}")
        print(result.table(), end="")
        if result.score is not None:
            print("\n".join(result.score.lines(thresholds)))
        print(f"# {format_duration(seconds)}")
    return 0
