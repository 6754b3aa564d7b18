"""Solution.move_values: every move's exact value Q*(s, a) on a solved board, against the solution's own values
(the best move's Q* is the position's value) and against the plain recursion of tests/naive.py, on boards in the
orientation a game shows them (not only the solution's least symmetric ones)."""

from __future__ import annotations

import math

import naive
import numpy as np
import pytest

from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.solve import solve

CASES = [("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584")]


@pytest.fixture(scope="module")
def solved():
    """Compiled solutions with every value kept, by (board, game)."""
    return {case: solve(*case, keep_values=True) for case in CASES}


def positions(solution, limit=4000):
    """The solution's positions as cell codes, row-major: every one, or every k-th past ``limit``."""
    codes = np.concatenate([solution.rules.codes_of(keys) for keys in solution.keys])
    return codes[::max(1, len(codes) // limit)]


def mirrored(codes, rows, cols):
    """The board mirrored left to right: its left and right moves swap."""
    return [codes[r * cols + cols - 1 - c] for r in range(rows) for c in range(cols)]


@pytest.mark.parametrize("board, game", CASES)
def test_the_best_move_is_worth_the_position(solved, board, game):
    solution = solved[(board, game)]
    rows, cols = solution.board.rows, solution.board.cols
    checked = ended = 0
    for codes in positions(solution):
        codes = [int(c) for c in codes]
        q = solution.move_values(codes)
        value = solution.value(codes)[0]
        assert q.shape == (4,) and q.dtype == np.float64
        if np.isnan(q).all():  # no legal move: the end of the game, worth 0
            assert value == 0
            ended += 1
            continue
        assert np.nanmax(q) == pytest.approx(value, rel=1e-9, abs=1e-9)
        legal = Board(tuple(codes), game, solution.board).legal_moves()
        assert [name for name, v in zip(("up", "right", "down", "left"), q, strict=True) if not np.isnan(v)] == legal
        flipped = solution.move_values(mirrored(codes, rows, cols))  # the same position, shown mirrored
        np.testing.assert_allclose(flipped, q[[0, 3, 2, 1]], rtol=1e-12, atol=1e-9)
        checked += 1
    assert checked >= min(1000, solution.positions // 2) and ended > 0


@pytest.mark.parametrize("board, game", CASES)
def test_every_move_value_is_the_plain_recursions(solved, board, game):
    solution = solved[(board, game)]
    rows, cols = solution.board.rows, solution.board.cols
    reference, _ = naive.solve_board(rows, cols, game)

    def canon(grid):
        return min(tuple(map(tuple, g)) for g in naive.symmetries(grid))

    def q_star(grid, d):
        after, reward = naive.move(grid, d, game=game)
        if after == grid:
            return math.nan
        empty = [(r, c) for r in range(rows) for c in range(cols) if after[r][c] == 0]
        total = 0.0
        for r, c in empty:
            for code, p in ((1, 0.9), (2, 0.1)):
                child = [row[:] for row in after]
                child[r][c] = code
                total += p / len(empty) * reference[canon(child)][0]
        return reward + total

    for codes in positions(solution, limit=1500):
        for shown in (list(codes), mirrored(list(codes), rows, cols)):
            grid = [shown[r * cols:(r + 1) * cols] for r in range(rows)]
            want = [q_star(grid, d) for d in range(4)]
            np.testing.assert_allclose(solution.move_values(shown), want, rtol=0, atol=1e-9)


def test_a_board_the_solution_does_not_hold_is_refused(solved):
    solution = solved[("2x3", "2048")]
    for codes in ([1, 0, 0, 0, 0, 0],  # one tile: the start deals two
                  [8, 1, 0, 0, 0, 1],  # 256: past any tile the start reaches on 2x3
                  [15, 15, 15, 15, 15, 15]):
        with pytest.raises(TD2048Error, match="does not reach"):
            solution.move_values(codes)
    with pytest.raises(TD2048Error, match="2x2"):
        solution.move_values(Board((1, 1, 0, 0), "2048", "2x2"))
    with pytest.raises(TD2048Error, match="6 cells"):
        solution.move_values([1, 1, 0, 0])
    without_values = solve("2x2")
    with pytest.raises(TD2048Error, match="holds no values"):
        without_values.move_values([1, 1, 0, 0])
