"""``td2048 solve``: exact perfect play on a small board."""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from td2048.cli.options import SCORES_HELP, board_arg, scores_arg, size_arg
from td2048.machine import machine_memory

HELP = "solve a small board exactly: every position's value under perfect play"
DESCRIPTION = """\
Enumerate every position reachable from the start (up to the board's symmetries), layer by layer of
tile sum, then value each from the largest sum down under perfect play, for two aims: the expected
score, and for every tile the probability of ever holding it (each tile its own optimal play).

Prints the start's optimal expected score and each tile's reach probability, the number of positions,
the seconds and the peak memory; --json prints them as one JSON object on the last line. --out writes
every position's values to a solution file (see docs/guides/solve.md). A board whose solve would not
fit --memory-limit is refused before it starts, with its estimate (3x4, 4x3 and 4x4 are far too large).

--fixed and --goal solve an endgame instead of the whole game: the tiles of --fixed stay in place (a move
that shifts one is not allowed), and each position's value is the probability of building the tile of
--goal at its cell with the others in place, from the fixed tiles and two new tiles on the free cells.
On 4x3, --fixed 0=2048,3=1024,6=512 --goal 6=1024 is the last step to a 4096 along the left column.
Endgames have no size estimate: --count tells their size first.
"""


# bytes a position takes in a solution file: its key and expected score; with --reach about ten reach
# probabilities more; and while solving, its key in the forward pass's temporary file (which the backward pass
# gives back layer by layer as it writes the solution: the disk needed is about the larger of the two)
FILE_BYTES_PER_POSITION = 16
REACH_BYTES_PER_POSITION = 96
WORK_BYTES_PER_POSITION = 14  # 8 a position and 8 an afterstate (about 0.65 a position)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--board", type=board_arg, required=True, metavar="RxC",
                   help="the board, RxC: 2x2, 2x3, 3x2, 2x4, 4x2, 3x3 (an endgame: any of at most 12 cells)")
    p.add_argument("--game", choices=("2048", "2584"), default="2048", help="the game (default 2048)")
    p.add_argument("--out", metavar="FILE", help="write the solution file (every position's expected score)")
    p.add_argument("--reach", action="store_true",
                   help="with --out: write each position's tile reach probabilities too (a file about 6 times larger)")
    p.add_argument("--from", dest="source", metavar="FILE",
                   help="read a solution file instead of solving (refused if of another board or game, or altered)")
    p.add_argument("--memory-limit", type=size_arg, metavar="SIZE",
                   help="refuse a solve estimated to need more (default: the machine's memory, else 2GiB; "
                        "a whole board's, endgames have no estimate)")
    p.add_argument("--score-at-least", type=scores_arg, default=None, metavar="X[,X...]",
                   help=f"under perfect play (the expected score's aim), {SCORES_HELP}")
    p.add_argument("--fixed", metavar="CELL=TILE[,...]",
                   help="an endgame: tiles fixed in place (board cells row by row from 0 at the top left), "
                        "such as 0=2048,3=1024,6=512; with --goal")
    p.add_argument("--goal", metavar="CELL=TILE",
                   help="the endgame's goal: the tile to build and its cell, such as 6=1024 (the tile the fixed "
                        "chain then merges into); with --fixed")
    p.add_argument("--count", action="store_true",
                   help="only count the positions (the forward pass, keeping no keys): a line every 100 layers, "
                        "then the total; for a board too large to solve here")
    p.add_argument("--json", action="store_true", help="end with one JSON line of the results")


def peak_memory_bytes() -> int:
    """This process's peak resident memory (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def run(args: argparse.Namespace) -> int:
    from td2048.errors import TD2048Error
    from td2048.games.shape import BoardShape
    board = BoardShape.parse(args.board)
    endgame = _endgame(args, board)
    if args.source:
        from td2048.solve import load_solution

        if endgame is not None:
            raise TD2048Error("--from reads the endgame from its file: give --fixed and --goal only to solve one")
        started = time.perf_counter()
        solution = load_solution(args.source, board, args.game, endgame=None)
        if args.out:
            solution.save(args.out, reach=args.reach)
        return _report(args, board, solution, time.perf_counter() - started)
    if args.count:
        return _count(args, board, endgame)
    if args.reach and not args.out:
        raise TD2048Error("--reach writes the reach probabilities in the solution file: give it with --out FILE")
    if endgame is not None and (args.reach or args.score_at_least is not None):
        raise TD2048Error(f"{'--reach' if args.reach else '--score-at-least'} is of the whole game: an endgame's one "
                          "value is the probability of its goal")
    limit = args.memory_limit or machine_memory()
    from td2048.solve import estimate_bytes, estimate_positions

    need = estimate_bytes(board, args.game) if endgame is None else 0
    from td2048.spec import format_bytes

    if need > limit:
        raise TD2048Error(f"solving {args.game} on {board.name} needs about {format_bytes(need)} "
                          f"(about {estimate_positions(board, args.game):.3g} positions), more than the memory "
                          f"limit of {format_bytes(limit)}")
    out = Path(args.out) if args.out else None
    if out is not None and not out.parent.is_dir():
        raise TD2048Error(f"cannot write {out}: no directory {out.parent}")
    if out is not None and endgame is None:  # the keys the forward pass keeps beside the file, given back as it grows
        per_position = max(REACH_BYTES_PER_POSITION if args.reach else FILE_BYTES_PER_POSITION,
                           WORK_BYTES_PER_POSITION) + 2
        file_bytes = per_position * estimate_positions(board, args.game)
        free = shutil.disk_usage(out.parent).free
        if file_bytes > free:
            raise TD2048Error(f"the solution of {args.game} on {board.name} takes about {format_bytes(file_bytes)} "
                              f"of disk while it is written, more than the {format_bytes(free)} free at {out.parent}")

    from td2048.cli.progress import Progress
    from td2048.solve import solve

    bars: list[Progress] = []  # the bar of the backward pass, once the forward pass has counted the layers

    def on_progress(done, total):
        if total:
            if not bars:
                bars.append(Progress(total, done=done - 1, unit="layers", stream=sys.stderr))
            bars[0].count(done)

    started = time.perf_counter()
    scratch = None
    if out is None and args.score_at_least is not None:  # the distribution reads every position's value
        scratch = tempfile.TemporaryDirectory(prefix="td2048-solve-")
        out = Path(scratch.name) / f"{board.name}.solution"
    try:
        solution = solve(board, args.game, out=out, reach=args.reach, on_progress=on_progress, endgame=endgame)
        seconds = time.perf_counter() - started
        return _report(args, board, solution, seconds)
    finally:
        for bar in bars:
            bar.clear()
        if scratch is not None:
            scratch.cleanup()


def _endgame(args, board):
    """The endgame of --fixed and --goal, or None."""
    from td2048.errors import TD2048Error

    if (args.fixed is None) != (args.goal is None):
        raise TD2048Error("--fixed and --goal go together: the tiles that stay in place and the tile to build")
    if args.fixed is None:
        return None
    from td2048.solve.endgame import Endgame

    return Endgame.parse(board, args.fixed, args.goal, args.game)


def _count(args, board, endgame=None) -> int:
    """``--count``: the forward pass alone, printing as it goes (what it prints holds if it is stopped)."""
    from td2048.solve.layers import LayerStore, Rules, enumerate_layers
    from td2048.spec import format_bytes

    started = time.perf_counter()
    rules = Rules(board, args.game, endgame)
    total = [0, 0]

    def on_layer(tile_sum, positions):
        total[0] += positions
        total[1] += 1
        if total[1] % 100 == 0:
            print(f"tile sum {tile_sum}: {positions:,} positions, {total[0]:,} so far "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)

    layers = enumerate_layers(rules, on_layer=on_layer, store=LayerStore(count_only=True))
    seconds = time.perf_counter() - started
    peak = peak_memory_bytes()
    posed = "" if endgame is None else f" ({endgame.describe()})"
    print(f"{args.game} on {board.name}{posed}: {layers.positions:,} positions (up to symmetry), "
          f"{len(layers.sums)} layers of tile sum, the largest {max(layers.counts):,}; counted in {seconds:.2f} s, "
          f"peak memory {format_bytes(peak)}")
    if args.json:
        print(json.dumps({"board": board.name, "game": args.game, "positions": layers.positions,
                          "layers": len(layers.sums), "largest_layer": max(layers.counts), "seconds": seconds,
                          "peak_memory_bytes": peak}))
    return 0


def _report(args, board, solution, seconds: float) -> int:
    from td2048.spec import format_bytes

    out = args.out
    reach = {str(t): p for t, p in solution.reach.items()}
    endgame = solution.endgame
    posed = "" if endgame is None else f" ({endgame.describe()})"
    print(f"{args.game} on {board.name}{posed}: {solution.positions:,} positions (up to symmetry), "
          f"{len(solution.sums)} layers of tile sum")
    if endgame is None:
        print(f"optimal expected score from the start: {solution.expected_score:.6f}")
        print("reach probability under perfect play (each tile its own play):")
        for tile, p in solution.reach.items():
            print(f"  {tile:>6}  {p:.6f}")
        results = {"expected_score": solution.expected_score, "reach": reach}
    else:
        print(f"probability of the goal under perfect play, from the fixed tiles and two new tiles: "
              f"{solution.goal_probability:.6f}")
        results = {"endgame": endgame.to_json(), "goal_probability": solution.goal_probability}
    score = {}
    if args.score_at_least is not None:
        from td2048.solve import PERFECT_PLAY, exact_policy_value

        started = time.perf_counter()
        distribution = exact_policy_value(solution, PERFECT_PLAY, symmetric=True, distribution=True).score
        print("perfect play's final score (the expected score's aim), exactly:")
        for line in distribution.lines(args.score_at_least):
            print(f"  {line}")
        print(f"  ({time.perf_counter() - started:.2f} s)")
        score = distribution.to_json(args.score_at_least)
    peak = peak_memory_bytes()
    print(f"{seconds:.2f} s ({solution.positions / max(seconds, 1e-9):,.0f} positions/s), "
          f"peak memory {format_bytes(peak)}")
    if out is not None:
        print(f"wrote {out}")
    if args.json:
        print(json.dumps({"board": board.name, "game": args.game, "positions": solution.positions,
                          **results, **score, "seconds": seconds, "peak_memory_bytes": peak}))
    return 0
