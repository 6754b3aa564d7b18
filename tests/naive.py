"""Plain, obviously correct references: 2048 rules on lists, n-tuple values from cell lists.

Slow on purpose; every fast kernel is compared with these.
Boards are 4x4 lists of codes (0 empty, k for the tile 2**k), row 0 on top.
"""

from __future__ import annotations

import numpy as np

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3


def to_grid(board: int) -> list[list[int]]:
    return [[(board >> (4 * (4 * r + c))) & 0xF for c in range(4)] for r in range(4)]


def from_grid(grid) -> int:
    return sum(grid[r][c] << (4 * (4 * r + c)) for r in range(4) for c in range(4))


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
    return out + [0] * (4 - len(out)), reward


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
    return out + [0] * (4 - len(out)), reward


def move(grid, direction: int, max_code: int = 15, game: str = "2048") -> tuple[list[list[int]], int]:
    """(new grid, reward); the grid is unchanged for an illegal move."""
    slide = slide_line if game == "2048" else slide_line_2584
    g = [row[:] for row in grid]
    total = 0
    for k in range(4):
        if direction == LEFT:
            line = g[k][:]
        elif direction == RIGHT:
            line = g[k][::-1]
        elif direction == UP:
            line = [g[r][k] for r in range(4)]
        else:
            line = [g[r][k] for r in range(3, -1, -1)]
        new, reward = slide(line, max_code)
        total += reward
        for j in range(4):
            if direction == LEFT:
                g[k][j] = new[j]
            elif direction == RIGHT:
                g[k][3 - j] = new[j]
            elif direction == UP:
                g[j][k] = new[j]
            else:
                g[3 - j][k] = new[j]
    return g, total


def rotate_cw(grid):
    return [[grid[3 - c][r] for c in range(4)] for r in range(4)]


def mirror(grid):
    return [row[::-1] for row in grid]


def all_symmetries(grid) -> list:
    """The 8 boards of the dihedral group, in no particular order."""
    out, g = [], grid
    for _ in range(4):
        out.append(g)
        out.append(mirror(g))
        g = rotate_cw(g)
    return out


def tuple_index(grid, cells) -> int:
    """The course demo's index: sum of code(cell_i) << (4 i)."""
    return sum(grid[c // 4][c % 4] << (4 * i) for i, c in enumerate(cells))


def network_value(tables: list[np.ndarray], tuples, grid, isomorphic_boards) -> float:
    return sum(float(tables[t][tuple_index(b, cells)]) for b in isomorphic_boards for t, cells in enumerate(tuples))


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
