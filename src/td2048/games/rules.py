"""The merge rules of the games, in one row function that every move table is built from.

A row of 4 codes slides toward index 0: scan from that side, merge the leading mergeable
pair first; a tile made by a merge does not merge again in the same move. The reward is the
sum of the new tiles' values.

- 2048: codes are log2 of the tile (1 = 2, 2 = 4, ...); two equal codes merge into code + 1.
- 2584 (Fibonacci): code i holds F(i+1) with F1 = F2 = 1 (1 = 1, 2 = 2, 3 = 3, 4 = 5, 5 = 8,
  ...; 17 = 2584); two codes merge when they differ by exactly 1, or are both 1 (1 + 1 = 2);
  the result is max(a, b) + 1. Equal codes >= 2 do not merge.

Codes of ``max_code`` never merge: their result would not fit in the cell.
"""

import numpy as np

from td2048.config import njit
from td2048.games.tiles import GAME_2048


@njit(inline="always")
def _merges(rule, a, b):
    if rule == GAME_2048:
        return a == b
    return (a == 1 and b == 1) or a - b == 1 or b - a == 1


@njit
def slide_row_left(codes, max_code, rule=GAME_2048):
    """Slide 4 codes toward index 0 and merge by ``rule``; returns (new codes, reward)."""
    fib = np.zeros(40, np.int64)
    fib[1], fib[2] = 1, 2
    for i in range(3, 40):
        fib[i] = fib[i - 1] + fib[i - 2]
    tiles = np.zeros(4, np.int64)
    count = 0
    for c in codes:
        if c != 0:
            tiles[count] = c
            count += 1
    out = np.zeros(4, np.int64)
    reward = 0
    i = 0
    j = 0
    while i < count:
        a = tiles[i]
        if i + 1 < count and a < max_code and tiles[i + 1] < max_code and _merges(rule, a, tiles[i + 1]):
            made = max(a, tiles[i + 1]) + 1
            out[j] = made
            reward += (1 << made) if rule == GAME_2048 else fib[made]
            i += 2
        else:
            out[j] = a
            i += 1
        j += 1
    return out, reward


@njit
def build_row_table(row_bits, max_code, rule, length=4):
    """``uint32[4, 2**row_bits]``: left result, right result, left reward, right reward of every row.

    A row packs 4 cells: cell k's low 4 bits at bit 4 k and, in 20-bit rows (5-bit cells), its
    bit 4 at bit 16 + k; a 16-bit row is the same with that bit always 0. ``length``: the board's
    line has that many cells (a 3-column board's rows, a 3-row board's columns); tiles slide and
    merge within them, and the cells past them (always empty on the board) stay as they are.
    """
    table = np.zeros((4, 1 << row_bits), np.uint32)
    codes = np.zeros(4, np.int64)
    for row in range(1 << row_bits):
        for k in range(4):
            codes[k] = ((row >> (4 * k)) & 0xF) | (((row >> (16 + k)) & 1) << 4)
        line = codes.copy()
        line[length:] = 0
        left, left_reward = slide_row_left(line, max_code, rule)
        right_reversed, right_reward = slide_row_left(line[length - 1::-1].copy(), max_code, rule)
        packed_left = 0
        packed_right = 0
        for k in range(4):
            a = left[k] if k < length else codes[k]
            b = right_reversed[length - 1 - k] if k < length else codes[k]
            packed_left |= ((a & 0xF) << (4 * k)) | ((a >> 4) << (16 + k))
            packed_right |= ((b & 0xF) << (4 * k)) | ((b >> 4) << (16 + k))
        table[0, row] = packed_left
        table[1, row] = packed_right
        table[2, row] = left_reward
        table[3, row] = right_reward
    return table

