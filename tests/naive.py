"""Plain, obviously correct references: 2048 rules on lists, n-tuple values from cell lists.

Slow on purpose; every fast kernel is compared with these.
Boards are lists of rows of codes (0 empty, k for the tile 2**k), row 0 on top: 4x4 by default, or any
R rows x C columns (2x2 up to 4x4). A packed board holds cell (r, c) in nibble 4 r + c of the word (the
board sits in the top-left corner of the 4x4 frame), whatever its shape; a board's own cells are
numbered row by row, r C + c.
"""

from __future__ import annotations

import math

import numpy as np

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


def dims(shape=None) -> tuple[int, int]:
    """(rows, cols) of a shape: None (4x4), (R, C), or anything with .rows and .cols (a BoardShape)."""
    if shape is None:
        return 4, 4
    if isinstance(shape, (tuple, list)):
        return int(shape[0]), int(shape[1])
    return int(shape.rows), int(shape.cols)


def to_grid(board: int, shape=None) -> list[list[int]]:
    """The R x C grid of a packed board (4-bit cells): cell (r, c) is nibble 4 r + c."""
    rows, cols = dims(shape)
    return [[(board >> (4 * (4 * r + c))) & 0xF for c in range(cols)] for r in range(rows)]


def from_grid(grid) -> int:
    """The packed board (4-bit cells) of an R x C grid: cell (r, c) to nibble 4 r + c."""
    return sum(grid[r][c] << (4 * (4 * r + c)) for r in range(len(grid)) for c in range(len(grid[r])))


def frame_codes(grid) -> list[int]:
    """The 16 codes of the 4x4 frame an R x C grid sits in (top-left corner; the rest empty)."""
    codes = [0] * 16
    for r in range(len(grid)):
        for c in range(len(grid[r])):
            codes[4 * r + c] = grid[r][c]
    return codes


def grid_of_frame(codes, shape=None) -> list[list[int]]:
    """The R x C grid in the top-left corner of 16 frame codes."""
    rows, cols = dims(shape)
    return [[int(codes[4 * r + c]) for c in range(cols)] for r in range(rows)]


FIB = [0, 1, 2]
while len(FIB) < 40:
    FIB.append(FIB[-1] + FIB[-2])


def fib_value(code: int) -> int:
    """2584 tile value of a code: F(code + 1) with F1 = F2 = 1."""
    return FIB[code]


def slide_line_2584(line: list[int], max_code: int = 31) -> tuple[list[int], int]:
    """2584: neighbours in the Fibonacci sequence merge (and 1 + 1); the result is the larger + 1."""
    tiles = [c for c in line if c]
    out, reward, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles):
            a, b = tiles[i], tiles[i + 1]
            if max(a, b) < max_code and (abs(a - b) == 1 or a == b == 1):
                out.append(max(a, b) + 1)
                reward += fib_value(max(a, b) + 1)
                i += 2
                continue
        out.append(tiles[i])
        i += 1
    return out + [0] * (len(line) - len(out)), reward


def slide_line(line: list[int], max_code: int = 15) -> tuple[list[int], int]:
    """Slide toward index 0: the leading equal pair merges first, a merged tile does not merge again."""
    tiles = [c for c in line if c]
    out, reward, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < max_code:
            out.append(tiles[i] + 1)
            reward += 2 ** (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (len(line) - len(out)), reward


def move(grid, direction: int, max_code: int = 15, game: str = "2048") -> tuple[list[list[int]], int]:
    """(new grid, reward) of a move on an R x C grid; the grid is unchanged for an illegal move."""
    slide = slide_line if game == "2048" else slide_line_2584
    rows, cols = len(grid), len(grid[0])
    g = [row[:] for row in grid]
    total = 0
    if direction in (LEFT, RIGHT):  # each row, read from the side the tiles slide toward
        for r in range(rows):
            order = list(range(cols)) if direction == LEFT else list(range(cols - 1, -1, -1))
            new, reward = slide([g[r][c] for c in order], max_code)
            total += reward
            for j, c in enumerate(order):
                g[r][c] = new[j]
    else:  # each column
        for c in range(cols):
            order = list(range(rows)) if direction == UP else list(range(rows - 1, -1, -1))
            new, reward = slide([g[r][c] for r in order], max_code)
            total += reward
            for j, r in enumerate(order):
                g[r][c] = new[j]
    return g, total


def rotate_cw(grid):
    """A quarter turn clockwise: an R x C grid becomes C x R, its top-left cell top-right."""
    rows, cols = len(grid), len(grid[0])
    return [[grid[rows - 1 - c][r] for c in range(rows)] for r in range(cols)]


def mirror(grid):
    """Left-right."""
    return [row[::-1] for row in grid]


def flip(grid):
    """Top-bottom."""
    return [row[:] for row in grid[::-1]]


def transpose(grid):
    return [[grid[r][c] for r in range(len(grid))] for c in range(len(grid[0]))]


def symmetries(grid) -> list:
    """The grid's symmetric grids of its own shape, in the kernels' order: a square's 8 (identity, clockwise
    quarter, half and three-quarter turns, mirror, flip, transpose, anti-transpose), a rectangle's 4
    (identity, half turn, mirror, flip)."""
    half = rotate_cw(rotate_cw(grid))
    if len(grid) != len(grid[0]):
        return [[row[:] for row in grid], half, mirror(grid), flip(grid)]
    quarter = rotate_cw(grid)
    return [[row[:] for row in grid], quarter, half, rotate_cw(half), mirror(grid), flip(grid), transpose(grid),
            transpose(half)]


def all_symmetries(grid) -> list:
    """The symmetric grids of the grid's shape (8 for a square, 4 for a rectangle), in no particular order."""
    if len(grid) != len(grid[0]):
        return symmetries(grid)
    out, g = [], grid
    for _ in range(4):
        out.append(g)
        out.append(mirror(g))
        g = rotate_cw(g)
    return out


def tuple_index(grid, cells) -> int:
    """The course demo's index: sum of code(cell_i) << (4 i); cells numbered row by row on the grid's shape."""
    cols = len(grid[0])
    return sum(grid[c // cols][c % cols] << (4 * i) for i, c in enumerate(cells))


def network_value(tables: list[np.ndarray], tuples, grid, isomorphic_boards) -> float:
    """V as afterstate kernels add float32 weights: each symmetric board's in float32, tuple by tuple, then the
    boards' sums in float64."""
    total = 0.0
    for b in isomorphic_boards:
        part = np.float32(0.0)
        for t, cells in enumerate(tuples):
            part = np.float32(part + np.float32(tables[t][tuple_index(b, cells)]))
        total += float(part)
    return total


def short_td_update(weights: list[int], indices: list[int], target: float, alpha_split: float, step: float,
                    limit: int, word: int, lcg: tuple[int, int], offsets: list[int]) -> tuple[float, int]:
    """A TD step on 16-bit weights, in plain integers: each feature (in order) moves by alpha_split * (target - V)
    / step steps, in 2**-32 steps rounded down or up by the update's draw (the high half of the word one LCG step
    on from ``word``) plus the feature's offset, mod 2**32; each weight held within +-limit. Returns V after it
    (each weight read as written) and the new word."""
    q = alpha_split * (target - sum(weights[i] for i in indices) * step) / step
    fixed = math.floor(min(max(q, -2.0 * limit), 2.0 * limit) * 2.0 ** 32)
    z = (word * lcg[0] + lcg[1]) % 2 ** 64
    total = 0
    for f, i in enumerate(indices):
        d = (fixed + ((z >> 32) + offsets[f]) % 2 ** 32) >> 32
        weights[i] = min(max(weights[i] + d, -limit), limit)
        total += weights[i]
    return total * step, z


def merged_weight(base: float, values: list[float], errors: list[float], absolutes: list[float], tc: bool) -> float:
    """A sync's merged value of one weight (td2048.kernels.exchange), from the workers that changed it: their
    values, and what each added to the weight's TC accumulators (error, |error|)."""
    moves = [v - base for v in values if v != base]
    if len(moves) == 1:
        return next(v for v in values if v != base)
    if not moves:
        return base
    if min(moves) < 0 < max(moves):
        return base + sum(moves)
    largest = max(moves, key=abs)
    if not tc:
        return base + largest
    absolute = sum(absolutes)
    coherence = min(abs(sum(errors)) / absolute, 1.0) if absolute > 0 else 1.0
    return base + largest + (sum(moves) - largest) * coherence / (len(moves) - 1)


def solve_board(rows: int, cols: int, game: str = "2048", max_code: int = 15):
    """Perfect play on an R x C grid by memoised recursion: the reference of :mod:`td2048.solve`.

    Returns ``(values, start)``: ``values`` maps each reachable position (the least of its symmetric grids,
    as a tuple of row tuples) to ``[expected score, reach of code 1, ..., reach of code max_code]`` (each
    aim its own best play), and ``start`` is the mean of those over the start positions, by probability.
    New tiles: code 1 with p 0.9, code 2 with p 0.1, on a uniformly random empty cell."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    aims = 1 + max_code
    memo: dict = {}

    def canon(grid):
        return min(tuple(tuple(row) for row in g) for g in symmetries(grid))

    def value(key):
        if key in memo:
            return memo[key]
        grid = [list(row) for row in key]
        top = max(max(row) for row in grid)
        best = None
        for d in (UP, RIGHT, DOWN, LEFT):
            after, reward = move(grid, d, game=game)
            if after == grid:
                continue
            empty = [(r, c) for r in range(rows) for c in range(cols) if after[r][c] == 0]
            acc = [0.0] * aims
            for r, c in empty:
                for code, p in ((1, 0.9), (2, 0.1)):
                    child = [row[:] for row in after]
                    child[r][c] = code
                    v = value(canon(child))
                    for a in range(aims):
                        acc[a] += p / len(empty) * v[a]
            acc[0] += reward
            best = acc if best is None else [max(x, y) for x, y in zip(best, acc)]
        if best is None:
            best = [0.0] * aims
        for a in range(1, aims):
            if a <= top:
                best[a] = 1.0
        memo[key] = best
        return best

    start = [0.0] * aims
    for grid, p in start_grids(rows, cols):
        v = value(canon(grid))
        for k in range(aims):
            start[k] += p * v[k]
    return memo, start


def solve_endgame(rows: int, cols: int, fixed: dict, goal: tuple):
    """An endgame by memoised recursion: the reference of :mod:`td2048.solve.endgame`.

    ``fixed`` maps board cells (row-major) to codes that must stay in place, ``goal`` is (cell, code). A move that
    leaves the goal's code at its cell and every other fixed code in place (in some symmetric grid) wins (1); a
    move that leaves a fixed code out of place in every symmetric grid is not made; a grid with no other move is
    lost (0). Returns ``(values, start)``: ``values`` maps each position met (the least of its symmetric grids)
    to its probability of winning, ``start`` the mean over the fixed codes with two new tiles on the free cells."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    won_codes = {**fixed, goal[0]: goal[1]}
    memo: dict = {}

    def canon(grid):
        return min(tuple(tuple(row) for row in g) for g in symmetries(grid))

    def shows(grid, wanted):
        return any(all(g[c // cols][c % cols] == v for c, v in wanted.items()) for g in symmetries(grid))

    def value(key):
        if key in memo:
            return memo[key]
        grid = [list(row) for row in key]
        best = 0.0
        for d in (UP, RIGHT, DOWN, LEFT):
            after, _ = move(grid, d)
            if after == grid:
                continue
            if shows(after, won_codes):
                best = 1.0
                continue
            if not shows(after, fixed):
                continue
            empty = [(r, c) for r in range(rows) for c in range(cols) if after[r][c] == 0]
            q = 0.0
            for r, c in empty:
                for code, p in ((1, 0.9), (2, 0.1)):
                    child = [row[:] for row in after]
                    child[r][c] = code
                    q += p / len(empty) * value(canon(child))
            best = max(best, q)
        memo[key] = best
        return best

    start = sum(p * value(canon(grid)) for grid, p in start_grids(rows, cols, fixed))
    return memo, start


def policy_value(rows: int, cols: int, choose, game: str = "2048", max_code: int = 15):
    """A policy's exact value on an R x C grid by memoised recursion over the grids themselves (no symmetry):
    the reference of :func:`td2048.solve.exact_policy_value`.

    ``choose(grid)`` gives the move of a grid that has a legal move. Returns ``(start, optimal_share,
    moves)``: ``start`` = [expected score, reach of code 1, ..., reach of code max_code] over the start
    positions by probability, ``optimal_share`` the share of the policy's moves that ``solve_board``'s values
    call optimal (within 1e-9 relative), each position weighted by its probability of being met, and
    ``moves`` the expected number of moves of a game."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    aims = 1 + max_code
    optimum, _ = solve_board(rows, cols, game, max_code)
    memo: dict = {}

    def children(grid, d):
        after, reward = move(grid, d, game=game)
        empty = [(r, c) for r in range(rows) for c in range(cols) if after[r][c] == 0]
        out = []
        for r, c in empty:
            for code, p in ((1, 0.9), (2, 0.1)):
                child = [row[:] for row in after]
                child[r][c] = code
                out.append((p / len(empty), child))
        return reward, after != grid, out

    def value(key):
        if key in memo:
            return memo[key]
        grid = [list(row) for row in key]
        top = max(max(row) for row in grid)
        acc = [0.0] * aims
        if any(move(grid, d, game=game)[0] != grid for d in (UP, RIGHT, DOWN, LEFT)):
            reward, legal, kids = children(grid, choose(grid))
            assert legal
            for p, child in kids:
                v = value(tuple(map(tuple, child)))
                for a in range(aims):
                    acc[a] += p * v[a]
            acc[0] += reward
        for a in range(1, aims):
            if a <= top:
                acc[a] = 1.0
        memo[key] = acc
        return acc

    def q_star(grid, d):
        reward, legal, kids = children(grid, d)
        if not legal:
            return None
        canon = [min(tuple(tuple(row) for row in g) for g in symmetries(child)) for _, child in kids]
        return reward + sum(p * optimum[k][0] for (p, _), k in zip(kids, canon))

    start = [0.0] * aims
    reach: dict = {}
    for grid, p in start_grids(rows, cols):
        key = tuple(map(tuple, grid))
        reach[key] = reach.get(key, 0.0) + p
        v = value(key)
        for k in range(aims):
            start[k] += p * v[k]
    # the probability of meeting each grid, in order of tile sum (a move keeps it, a new tile adds to it)
    tile = (lambda c: 2 ** c if c else 0) if game == "2048" else fib_value
    order = sorted(memo, key=lambda k: sum(tile(c) for row in k for c in row))
    met_all, met_optimal = 0.0, 0.0
    for key in order:
        p = reach.get(key, 0.0)
        grid = [list(row) for row in key]
        qs = [q_star(grid, d) for d in (UP, RIGHT, DOWN, LEFT)]
        if all(q is None for q in qs) or p == 0.0:
            continue
        d = choose(grid)
        best = max(q for q in qs if q is not None)
        met_all += p
        if qs[d] >= best - 1e-9 * abs(best):
            met_optimal += p
        for q, child in children(grid, d)[2]:
            ck = tuple(map(tuple, child))
            reach[ck] = reach.get(ck, 0.0) + p * q
    return start, met_optimal / met_all, met_all


def expected_target(grid, value, game: str = "2048", p_second: float = 0.1) -> float:
    """The expected target of an afterstate grid (``--target expected``): over each empty cell, all equally likely,
    and each new tile (code 1, or code 2 with ``p_second``), the best legal move's reward + ``value(afterstate
    grid)``, 0 where no move is legal; the mean of those."""
    max_code = 15 if game == "2048" else 31
    rows, cols = len(grid), len(grid[0])
    empty = [(r, c) for r in range(rows) for c in range(cols) if grid[r][c] == 0]
    total = 0.0
    for r, c in empty:
        for code, p in ((1, 1.0 - p_second), (2, p_second)):
            placed = [row[:] for row in grid]
            placed[r][c] = code
            best = None
            for d in (UP, RIGHT, DOWN, LEFT):
                after, reward = move(placed, d, max_code, game)
                if after != placed:
                    best = max(best if best is not None else -np.inf, reward + value(after))
            total += p * (best if best is not None else 0.0)
    return total / len(empty) if empty else 0.0


def start_grids(rows: int, cols: int, fixed: dict | None = None):
    """Every way the game deals its start, as (grid, probability): two new tiles on distinct cells, code 1 with
    p 0.9 and code 2 with p 0.1 each; with ``fixed`` (board cell: code), on the other cells of a grid holding those."""
    fixed = fixed or {}
    cells = [(r, c) for r in range(rows) for c in range(cols) if r * cols + c not in fixed]
    for i in cells:
        for j in cells:
            if i == j:
                continue
            for a, pa in ((1, 0.9), (2, 0.1)):
                for b, pb in ((1, 0.9), (2, 0.1)):
                    grid = [[fixed.get(r * cols + c, 0) for c in range(cols)] for r in range(rows)]
                    grid[i[0]][i[1]], grid[j[0]][j[1]] = a, b
                    yield grid, pa * pb / (len(cells) * (len(cells) - 1))


def score_distribution(rows: int, cols: int, choose, game: str = "2048") -> dict:
    """The exact distribution of a policy's final score on an R x C grid, forward over (grid, score so far)
    pairs in order of tile sum, with no symmetry and no count of dealt tiles: the reference of
    :class:`td2048.solve.ScoreDistribution`. ``choose(grid)`` gives the move of a grid that has a legal move.
    Returns {score: probability}. New tiles: code 1 with p 0.9, code 2 with p 0.1, on a uniformly random empty
    cell."""
    tile = (lambda c: 2 ** c if c else 0) if game == "2048" else fib_value
    by_sum: dict = {}

    def add(grid, score, p):
        key = tuple(map(tuple, grid))
        layer = by_sum.setdefault(sum(tile(c) for row in grid for c in row), {})
        layer[key, score] = layer.get((key, score), 0.0) + p

    for grid, p in start_grids(rows, cols):
        add(grid, 0, p)
    steps: dict = {}  # grid: None at the end of the game, else (reward, [(child, probability), ...])

    def step(key):
        if key not in steps:
            grid = [list(row) for row in key]
            if all(move(grid, d, game=game)[0] == grid for d in (UP, RIGHT, DOWN, LEFT)):
                steps[key] = None
            else:
                after, reward = move(grid, choose(grid), game=game)
                assert after != grid, "the policy chose an illegal move"
                empty = [(r, c) for r in range(rows) for c in range(cols) if after[r][c] == 0]
                children = []
                for r, c in empty:
                    for code, pc in ((1, 0.9), (2, 0.1)):
                        child = [row[:] for row in after]
                        child[r][c] = code
                        children.append((child, pc / len(empty)))
                steps[key] = (reward, children)
        return steps[key]

    final: dict = {}
    while by_sum:
        layer = by_sum.pop(min(by_sum))
        for (key, score), p in layer.items():
            taken = step(key)
            if taken is None:
                final[score] = final.get(score, 0.0) + p
                continue
            reward, children = taken
            for child, pc in children:
                add(child, score + reward, p * pc)
    return final


def endgame_chance(solution, cells) -> float:
    """An endgame's table's chance of its goal from an afterstate (``cells``: its codes): the mean over its empty
    cells, in turn, of 0.9 times the value with a 2 there and 0.1 with a 4 (as the kernels take the mean); NaN
    where the table lacks a position. ``solution``: read with ``td2048.solve.load_solution(path, endgame=True)``."""
    from td2048.errors import TD2048Error
    from td2048.games.game2048 import P_FOUR

    def value(position):
        try:
            return float(solution.value(list(position))[0])
        except TD2048Error:  # a position the table does not hold
            return float("nan")

    empty = [i for i, c in enumerate(cells) if c == 0]
    total = 0.0
    for i in empty:
        small, big = list(cells), list(cells)
        small[i], big[i] = 1, 2
        total += (1.0 - P_FOUR) * value(small) + P_FOUR * value(big)
    return total / len(empty)


def endgame_table_move(solution, board: int, codes) -> int | None:
    """An endgame's table's move on a packed board (``codes``: its cells' codes), where the table plays (the
    fixed tiles in place, a position it holds, the goal still possible), else None: the move that builds the
    goal, else the largest mean over the new tile of the table's values (endgame_chance), the first of equals.
    ``solution``: the table, read with ``td2048.solve.load_solution(path, endgame=True)``."""
    from td2048.errors import TD2048Error
    from td2048.games.board import Board
    from td2048.games.game2048 import py_move

    shape, endgame = solution.board, solution.endgame
    try:
        here = float(solution.value(list(codes))[0])
    except TD2048Error:  # a position the table does not hold
        here = float("nan")
    if not endgame.met_by(codes, shape) or not here > 0:
        return None
    best, best_q = None, -1.0
    for d in range(4):
        after, _ = py_move(board, d, shape)
        if after == board:
            continue
        cells = list(Board.from_packed(after, "2048", shape).codes)
        if endgame.met_by(cells, shape, goal=True):
            return d
        if not endgame.met_by(cells, shape):
            continue
        q = endgame_chance(solution, cells)
        if q > best_q:
            best, best_q = d, q
    return best


def repeated_tuples(tuples, rows: int, cols: int, isomorphisms: int) -> list[tuple[int, int]]:
    """(later, earlier) for each tuple whose cells, marked on an R x C grid, are a symmetric grid (of the first
    ``isomorphisms`` of :func:`symmetries`) of an earlier tuple's: the first such earlier tuple."""
    def marks(cells):
        return [[int(r * cols + c in cells) for c in range(cols)] for r in range(rows)]

    out = []
    for k, cells in enumerate(tuples):
        for j in range(k):
            if marks(cells) in symmetries(marks(tuples[j]))[:isomorphisms]:
                out.append((k, j))
                break
    return out
