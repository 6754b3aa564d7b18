"""2048 rules on bitboards against the plain reference in naive.py."""

import os
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import UP, from_grid, move, slide_line, to_grid

from td2048.config import njit
from td2048.games import bitboard as bb
from td2048.games.bitboard import LOW_NIBBLES
from td2048.games.game2048 import MAX_CODE, _py_spawn, py_move, row_table
from td2048.games.rules import slide_row_left
from td2048.network import Network, parse_network
from td2048.rng import make_rng_state

codes = st.integers(min_value=0, max_value=15)
boards = st.lists(codes, min_size=16, max_size=16).map(lambda cs: from_grid([cs[4 * r:4 * r + 4] for r in range(4)]))
# boards rich in merges: few distinct codes
merge_boards = st.lists(st.sampled_from([0, 1, 1, 2, 14, 15, 15]), min_size=16, max_size=16).map(
    lambda cs: from_grid([cs[4 * r:4 * r + 4] for r in range(4)]))


@settings(max_examples=2000)
@given(st.one_of(boards, merge_boards), st.integers(0, 3))
def test_moves_and_rewards_match_reference(board, direction):
    after, reward = py_move(board, direction)
    ref_grid, ref_reward = move(to_grid(board), direction)
    assert after == from_grid(ref_grid)
    assert reward == ref_reward


def test_row_table_is_built_from_the_row_function():
    table = row_table()
    rng = np.random.default_rng(1)
    for row in rng.integers(0, 65536, 3000):
        codes = [(int(row) >> (4 * k)) & 0xF for k in range(4)]
        left, reward = slide_row_left(np.array(codes, np.int64), MAX_CODE)
        assert sum(int(c) << (4 * k) for k, c in enumerate(left)) == int(table[row]) & 0xFFFF
        assert reward == int(table[row]) >> 32
        assert (list(left), reward) == tuple(slide_line(codes))


def test_hand_worked_rows():
    assert slide_line([1, 1, 1, 1]) == ([2, 2, 0, 0], 8)
    assert slide_line([2, 1, 1, 0]) == ([2, 2, 0, 0], 4)
    assert slide_line([0, 3, 0, 3]) == ([4, 0, 0, 0], 16)
    # up on a column of 2, 2, 4, 0 gives 4, 4 with reward 4
    grid = [[1, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0]]
    assert py_move(from_grid(grid), UP) == (from_grid([[2, 0, 0, 0], [2, 0, 0, 0], [0] * 4, [0] * 4]), 4)


def test_two_32768_tiles_do_not_merge_or_corrupt():
    row = from_grid([[15, 15, 0, 0], [14, 14, 0, 0], [15, 0, 15, 1], [0] * 4])
    for direction in range(4):
        after, reward = py_move(row, direction)
        grid = to_grid(after)
        assert max(max(r) for r in grid) == 15
        assert sorted(c for r in grid for c in r if c == 15) == [15] * (4 + (direction in (1, 3)))  # 14+14: a 5th
    # left: 14+14 merges into the third 32768; the 15 pairs stay
    after, reward = py_move(row, 3)
    assert to_grid(after) == [[15, 15, 0, 0], [15, 0, 0, 0], [15, 15, 1, 0], [0] * 4]
    assert reward == 32768


@given(boards)
def test_symmetries_match_reference(board):
    grid = np.array(to_grid(board))
    assert to_grid(int(bb.transpose(np.uint64(board)))) == grid.T.tolist()
    assert to_grid(int(bb.mirror(np.uint64(board)))) == grid[:, ::-1].tolist()
    assert to_grid(int(bb.flip(np.uint64(board)))) == grid[::-1, :].tolist()
    syms = bb.symmetric_boards(board)
    expected = [np.rot90(grid, -k) for k in range(4)] + [grid[:, ::-1], grid[::-1, :], grid.T, np.rot90(grid, 2).T]
    assert [to_grid(s) for s in syms] == [e.tolist() for e in expected]


@given(boards)
def test_count_empty(board):
    assert bb.count_empty(np.uint64(board)) == sum(c == 0 for r in to_grid(board) for c in r)
    assert bb.max_code(np.uint64(board)) == max(max(r) for r in to_grid(board))


@njit
def _nth_flag_shift(m, k):
    return bb.nth_flag_shift(m, k)


def _flag_shifts(cells: int) -> list[int]:
    return [4 * i for i in range(16) if cells >> i & 1]


@given(st.integers(min_value=1, max_value=2**16 - 1), st.data())
def test_nth_flag_shift_is_where_the_kth_flag_sits(cells, data):
    shifts = _flag_shifts(cells)
    k = data.draw(st.integers(min_value=0, max_value=len(shifts) - 1))
    assert _nth_flag_shift(np.uint64(sum(1 << s for s in shifts)), k) == shifts[k]


def test_nth_flag_shift_without_pdep_is_the_same():
    """The loop that stands in for pdep (TD2048_PEXT=0, as on CPUs that run it in microcode)."""
    cases = [(cells, k) for cells in (1, 0x8000, 0xFFFF, 0x1234, 0xA5A5) for k in range(len(_flag_shifts(cells)))]
    code = ("import numpy as np; from numba import njit; from td2048.games import bitboard as bb\n"
            "assert not bb._FAST_PDEP\n"
            "nth = njit(lambda m, k: bb.nth_flag_shift(m, k))\n"
            f"print([int(nth(np.uint64(sum(1 << (4 * i) for i in range(16) if c >> i & 1)), k)) for c, k in {cases}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TD2048_PEXT": "0"}).stdout
    assert out.strip() == str([_flag_shifts(c)[k] for c, k in cases])


def test_new_tiles_are_uniform_over_empty_cells_with_one_in_ten_fours():
    rng = make_rng_state(7)
    board = from_grid([[1, 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4], [5, 0, 0, 0]])
    empties = [i for i in range(16) if not (board >> (4 * i)) & 0xF]
    cells = np.zeros(16, int)
    fours = 0
    n = 40000
    for _ in range(n):
        after = int(_py_spawn(np.uint64(board), rng, LOW_NIBBLES))
        diff = after ^ board
        cell = (diff.bit_length() - 1) // 4
        assert cell in empties and after & ~(0xF << (4 * cell)) == board
        code = (after >> (4 * cell)) & 0xF
        assert code in (1, 2)
        fours += code == 2
        cells[cell] += 1
    assert abs(fours / n - 0.1) < 0.01  # 6 standard deviations
    expected = n / len(empties)
    chi2 = sum((cells[i] - expected) ** 2 / expected for i in empties)
    assert chi2 < 40  # 11 degrees of freedom: p < 1e-4


def test_game_over_detection():
    full = from_grid([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]])
    can_move = Network(parse_network("0", isomorphisms=1)).kernels.can_move  # the episode kernels' rule
    assert not can_move(row_table(), np.uint64(full))
    assert can_move(row_table(), np.uint64(from_grid([[1, 1, 2, 3], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]])))
