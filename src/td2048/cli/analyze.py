"""``td2048 analyze``: the value of every move of one position, as a chess engine's analysis mode."""

from __future__ import annotations

import argparse
import json

from td2048.cli.options import add_search_arguments
from td2048.errors import TD2048Error
from td2048.io.model import load_model
from td2048.models import model_or_shipped
from td2048.search_settings import parse_search

HELP = "the value of every move of one position (expectimax to --depth)"
DESCRIPTION = """\
Print the board, then each move with its value, best first, illegal moves marked. A move's
value is r + the value of its afterstate at the search depth (--depth 1: r + V(afterstate),
the greedy player's measure). BOARD is the tile values of the model's board in row-major order
(top-left first), comma- or space-separated, 0 for empty: 16 on 4x4,
"0,2,4,8,0,0,0,0,0,0,0,0,0,0,0,2"; 9 on a 3x3 model's board, "2,0,0,0,4,0,0,0,2". The
transposition table and tile downgrading are off unless asked for (--tt-size, --downgrade).
With --json: {"board": [the tile values], "depth": N, "moves": {"up": value or null, ...},
"best": "up"}.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default=None,
                   help="a model file (default: the model that ships with td2048, a 4x5 network for 2048)")
    p.add_argument("--board", required=True, metavar="BOARD",
                   help="the model's board's tile values, row-major, 0 for empty (16 on 4x4, 9 on 3x3, ...)")
    add_search_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def format_grid(tiles: list[int], cols: int = 4) -> str:
    """Tile values, row-major, as lines of ``cols`` right-aligned values, '.' for empty."""
    width = max(4, max(len(str(t)) for t in tiles))
    rows = []
    for r in range(0, len(tiles), cols):
        rows.append(" ".join(f"{(str(t) if t else '.'):>{width}}" for t in tiles[r:r + cols]))
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    network, _ = load_model(model_or_shipped(args.model))
    search = parse_search(args.depth, args.tt_size if args.tt_size is not None else 0, args.limit, args.downgrade,
                          network.game)
    from td2048.play import Agent, parse_board  # the options are good: now the compiled code

    shape = network.board
    count = len(args.board.replace(",", " ").split())
    if count != shape.n_cells:
        raise TD2048Error(f"--board: the model plays the {shape} board, {shape.n_cells} tile values (row-major, "
                          f"0 for empty), not {count}")
    board = parse_board(args.board, network.game, network.wide, shape)
    tiles = [int(p) for p in args.board.replace(",", " ").split()]
    agent = Agent(network, search, memory_limit=args.memory_limit)
    values = agent.analyze(board)
    legal = {name: v for name, v in values.items() if v is not None}
    if not legal:
        raise TD2048Error("the board has no legal move: the game is over")
    ranked = sorted(legal, key=lambda name: -legal[name])
    best = ranked[0]
    if args.json:
        print(json.dumps({"board": tiles, "depth": search.depth, "moves": values, "best": best}))
        return 0
    print(format_grid(tiles, shape.cols))
    print(f"# {network.spec.describe()}, {search.describe()}; value = r + V(afterstate) at that depth")
    for name in ranked:
        print(f"{name:>5}  {legal[name]:.6f}" + ("  best" if name == best else ""))
    for name, v in values.items():
        if v is None:
            print(f"{name:>5}  illegal")
    return 0

