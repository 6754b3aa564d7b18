"""Where a player's games stop short of the next tile: where it builds a tile, and the chain it lines up behind it.

    td2048 train --board 4x3 --seed 1 --out runs/recipe43
    python benchmarks/tile_chain.py --model "the recipe=runs/recipe43/model.td2048" --tile 2048 --games 2000
    python benchmarks/tile_chain.py --model "the recipe, depth 4=runs/recipe43/model.td2048" --tile 2048 \\
        --games 200 --depth 4

With ``--endgame TABLE`` (``td2048 solve --fixed ... --goal ... --out TABLE``, repeatable), it also prints, of
the games that enter each table's endgame (the fixed tiles in place, in some orientation), how often the table
holds the position where they enter, the exact probability that perfect play builds the goal from there (the
mean over those games, and its 10th, 50th and 90th percentiles), and how often the player builds the tile that
follows from the goal::

    td2048 solve --board 4x3 --fixed 0=2048,3=1024,6=512 --goal 6=1024 --out runs/column.endgame
    python benchmarks/tile_chain.py --model "lambda 0.75=runs/lambda43/model.td2048" --tile 2048 \\
        --games 2000 --endgame runs/column.endgame

A tile 2^k is built from a chain 2^(k-1), 2^(k-2), ... of tiles side by side; on a tight board (4x3's 4096
needs 11 of its 12 cells) the chain must run from a corner along the board, each tile beside the one twice
its value. For each model, games of its player (greedy, or searched ``--depth`` moves deep) are played one
move at a time from ``--seed``, and of the games that reach ``--tile`` this prints (a Markdown table):
where the tile first appears (a corner or not), the longest chain that ever runs from it (the tile, then
half its value on a neighbouring cell, and so on), and how often the tile, its half and its quarter stand
in a line along an edge from a corner, the start of the chain that builds the next tile (and, on a board that is
not square, how often of those along one of its long sides).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from td2048.games.shape import FRAME


def neighbours(rows: int, cols: int) -> dict[int, list[int]]:
    """Each cell's neighbours (cells of the 4x4 frame, row-major: cell r * FRAME + c)."""
    return {r * FRAME + c: [rr * FRAME + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                        if 0 <= rr < rows and 0 <= cc < cols]
            for r in range(rows) for c in range(cols)}


def edge_lines(rows: int, cols: int) -> list[tuple[int, int, int]]:
    """Three cells in a line along an edge, the first in a corner: where a chain's first three tiles stand."""
    lines = []
    for r, c in ((0, 0), (0, cols - 1), (rows - 1, 0), (rows - 1, cols - 1)):
        dr, dc = (1 if r == 0 else -1), (1 if c == 0 else -1)
        if cols >= 3:
            lines.append(tuple(r * FRAME + c + i * dc for i in range(3)))
        if rows >= 3:
            lines.append(tuple((r + i * dr) * FRAME + c for i in range(3)))
    return lines


def along_long_side(line: tuple[int, int, int], rows: int, cols: int) -> bool:
    """Whether a line of :func:`edge_lines` runs along one of the board's long sides (False on a square board)."""
    across_a_row = abs(line[1] - line[0]) == 1
    return (cols > rows) if across_a_row else (rows > cols)


def longest_chain(codes: dict[int, int], start: int, near: dict[int, list[int]]) -> int:
    """Tiles in the longest path from ``start`` through neighbouring cells, each code one less than the last."""
    best, stack = 1, [(start, 1, (start,))]
    while stack:
        cell, n, seen = stack.pop()
        best = max(best, n)
        for nb in near[cell]:
            if nb not in seen and codes[nb] == codes[cell] - 1 > 0:
                stack.append((nb, n + 1, (*seen, nb)))
    return best


def follow(model: str, tile: int, games: int, depth: int, seed: int, endgames=(), play_endgames: bool = False,
           first_game: int = 0) -> dict[str, float]:
    """Play ``games`` games and count, over those that reach ``tile``, where it appears and what lines up behind;
    and for each endgame table (a :class:`td2048.solve.Solution` of an endgame), the games that enter it
    (``entered i``), those whose entry the table holds (``held i``), the sum of perfect play's probability of
    the goal there (``perfect i``) and its 10th, 50th and 90th percentiles (``perfect i p10`` ...), and those
    that go on to build the tile after the goal's largest fixed one (``built i``: a 4096 for a 2048 chain).
    ``play_endgames``: in a position of a table's endgame that the table holds and from which the goal can still
    be built, the table chooses the move (its most likely to build the goal), the player everywhere else. Games
    ``first_game`` .. ``first_game + games - 1`` of the seed are played (parts of one set of games run as separate
    processes)."""
    import numpy as np

    from td2048.api import load
    from td2048.errors import TD2048Error
    from td2048.games.game2048 import py_move
    from td2048.games.wide import wide_to_codes
    from td2048.play import Agent

    net = load(model)
    rows, cols = net.board.rows, net.board.cols
    cells = net.board.frame_cells
    corners = {0, cols - 1, (rows - 1) * FRAME, (rows - 1) * FRAME + cols - 1}
    near, lines = neighbours(rows, cols), edge_lines(rows, cols)
    code = int(math.log2(tile))
    agent = Agent(net, seed=seed, depth=depth)
    values = np.zeros(4)
    counts = {"reached": 0, "in a corner": 0, "chain 1": 0, "chain 2": 0, "chain 3": 0,
              "chain 4+": 0, "on an edge line": 0, "on a long side": 0, "score": 0.0, "score squared": 0.0,
              "table moves": 0}
    for i in range(len(endgames)):
        counts.update({f"entered {i}": 0, f"held {i}": 0, f"perfect {i}": 0.0, f"built {i}": 0})
    next_code = [max(c for _, c in table.endgame.fixed) + 1 for table in endgames]
    chances = [[] for _ in endgames]  # perfect play's probability of the goal at each entry the table holds

    def in_endgame(i, row):
        """Whether a board (its cells' codes) is in table i's endgame: its largest tile the chain's, in place."""
        return max(row) == next_code[i] - 1 and endgames[i].endgame.met_by(row, endgames[i].board)

    def table_move(row):
        """The move of the first table whose endgame holds the position with the goal still to win, else None."""
        for i, table in enumerate(endgames):
            if in_endgame(i, row):
                try:
                    q = table.move_values(row)
                except TD2048Error:
                    continue
                if np.nanmax(q, initial=0.0) > 0:
                    return int(np.nanargmax(q))
        return None

    for g in range(first_game, first_game + games):
        agent.start_game(g)
        board = agent.spawn(agent.spawn(agent.empty_board))
        first, chain, lined, long_side = None, 0, False, False
        entered = [False] * len(endgames)
        built = [False] * len(endgames)
        score = 0
        while True:
            frame = wide_to_codes(board if isinstance(board, tuple) else (board, 0))  # 4- or 5-bit cells
            codes = {i: frame[i] for i in cells}
            row = [codes[c] for c in cells]
            for i, table in enumerate(endgames):
                if not entered[i] and in_endgame(i, row):
                    entered[i] = True
                    counts[f"entered {i}"] += 1
                    try:
                        chances[i].append(float(table.value(row)[0]))
                        counts[f"perfect {i}"] += chances[i][-1]
                        counts[f"held {i}"] += 1
                    except TD2048Error:  # a position the endgame's start does not reach
                        pass
                if entered[i] and not built[i] and max(row) >= next_code[i]:
                    built[i] = True
                    counts[f"built {i}"] += 1
            at = [i for i in cells if codes[i] == code]
            if at:
                first = first if first is not None else at[0] in corners
                chain = max(chain, *(longest_chain(codes, i, near) for i in at))
                chained = [line for line in lines if codes[line[0]] == code and codes[line[1]] == code - 1
                           and codes[line[2]] == code - 2]
                lined = lined or bool(chained)
                long_side = long_side or any(along_long_side(line, rows, cols) for line in chained)
            d = table_move(row) if play_endgames and not isinstance(board, tuple) else None
            if d is not None:
                after, reward = py_move(board, d, net.board)
                board = agent.spawn(after)
                counts["table moves"] += 1
            else:
                d, reward, _, board = agent.step(board, values)
                if d < 0:
                    break
            score += reward
        counts["score"] += score
        counts["score squared"] += float(score) ** 2
        if first is not None:
            counts["reached"] += 1
            counts["in a corner"] += first
            counts[f"chain {chain}" if chain < 4 else "chain 4+"] += 1
            counts["on an edge line"] += lined
            counts["on a long side"] += long_side
    for i, held in enumerate(chances):
        for q in (10, 50, 90):
            counts[f"perfect {i} p{q}"] = float(np.percentile(held, q)) if held else math.nan
    counts["score"] /= games
    counts["score squared"] /= games  # the mean of the squares: with the mean, the scores' spread
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True, metavar="LABEL=PATH", help="a model (repeatable)")
    parser.add_argument("--tile", type=int, required=True, help="the tile to follow, such as 2048")
    parser.add_argument("--games", type=int, default=1000, help="games per model (default 1000)")
    parser.add_argument("--depth", type=int, default=1, help="search depth (default 1: greedy)")
    parser.add_argument("--seed", type=int, default=2026, help="the games' seed (default 2026)")
    parser.add_argument("--endgame", action="append", default=[], metavar="TABLE",
                        help="an endgame's table (td2048 solve --fixed --goal --out; repeatable)")
    parser.add_argument("--first-game", type=int, default=0, help="the first game's number (default 0)")
    parser.add_argument("--json", action="store_true", help="also print each model's counts as a JSON line")
    parser.add_argument("--play-endgame", action="store_true",
                        help="the tables choose the moves in their endgames while the goal can be built")
    args = parser.parse_args(argv)
    if args.tile < 8 or args.tile & (args.tile - 1):
        parser.error(f"--tile must be a power of two from 8, not {args.tile}")
    from td2048.solve import load_solution

    endgames = [load_solution(path, endgame=True, verify=False) for path in args.endgame]
    found = []
    print(f"| player | games | average (95%) | reach {args.tile} | first in a corner | longest chain behind it: 1 | 2 "
          f"| 3 | 4+ | {args.tile}, {args.tile // 2}, {args.tile // 4} along an edge | of them along a long side |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for item in args.model:
        label, _, path = item.rpartition("=")
        c = follow(path, args.tile, args.games, args.depth, args.seed, endgames, args.play_endgame, args.first_game)
        found.append((label or path, c))
        if args.json:
            print(json.dumps({"label": label or path, "games": args.games, **c}))
        n = max(c["reached"], 1)
        share = [f"{100 * c[k] / n:.1f}%" for k in ("in a corner", "chain 1", "chain 2", "chain 3", "chain 4+",
                                                      "on an edge line")]
        spread = 1.96 * math.sqrt(max(c["score squared"] - c["score"] ** 2, 0.0) / max(args.games - 1, 1))
        long_share = f"{100 * c['on a long side'] / c['on an edge line']:.1f}%" if c["on an edge line"] else "-"
        print(f"| {label or path} | {args.games:,} | {c['score']:,.0f} (+- {spread:,.0f}) | "
              f"{100 * c['reached'] / args.games:.1f}% | "
              + " | ".join(share) + f" | {long_share} |")
    if endgames:
        print()
        print("| player | endgame | games that enter it | its table holds the entry | perfect play builds the goal "
              "(10th, 50th, 90th percentile) | the player builds the next tile |")
        print("|---|---|---:|---:|---:|---:|")
        for label, c in found:
            for i, table in enumerate(endgames):
                entered, held = c[f"entered {i}"], c[f"held {i}"]
                quantiles = ", ".join(f"{100 * c[f'perfect {i} p{q}']:.1f}" for q in (10, 50, 90))
                perfect = f"{100 * c[f'perfect {i}'] / held:.1f}% ({quantiles})" if held else "-"
                built = f"{100 * c[f'built {i}'] / entered:.1f}%" if entered else "-"
                print(f"| {label} | {table.endgame.describe()} | {100 * entered / args.games:.1f}% | "
                      f"{100 * held / max(entered, 1):.1f}% | {perfect} | {built} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
