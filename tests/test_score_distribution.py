"""The exact distribution of the final score (td2048.solve.ScoreDistribution, --score-at-least): against a
plain-Python forward pass over (board, score) pairs, against sampled games, and through the commands."""

from __future__ import annotations

import json
import random

import naive
import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from test_exact import PREFERENCE, preferring

from td2048.games.shape import as_shape
from td2048.solve import PERFECT_PLAY, exact_policy_value, solve
from td2048.solve.distribution import merge_gains

CASES = [("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584"), ("2x3", "2584")]


@pytest.fixture(scope="module")
def solved():
    return {case: solve(*case, keep_values=True) for case in CASES}


def _as_dict(distribution) -> dict:
    return {int(s): float(p) for s, p in zip(distribution.scores, distribution.probabilities, strict=True)}


def _assert_same(got: dict, want: dict, atol=1e-12):
    assert set(got) == {s for s, p in want.items() if p > 0}
    for score, p in want.items():
        assert got.get(score, 0.0) == pytest.approx(p, rel=0, abs=atol), score


def _perfect_choice(solution):
    """Perfect play on a grid as td2048 defines it: the first move (up, right, down, left) of the largest Q*
    (:meth:`~td2048.solve.Solution.move_values`, summed as the solver sums)."""
    memo: dict = {}

    def choose(grid):
        key = tuple(map(tuple, grid))
        if key not in memo:
            q = solution.move_values([c for row in grid for c in row])
            best = np.nanmax(q)
            memo[key] = int(next(d for d in range(4) if q[d] == best))
        return memo[key]

    return choose


@pytest.mark.parametrize("board, game", CASES[:3])
def test_a_fixed_preference_matches_the_plain_forward_pass(solved, board, game):
    shape = as_shape(board)
    def choose(grid):
        return next(d for d in PREFERENCE if naive.move(grid, d, game=game)[0] != grid)

    want = naive.score_distribution(shape.rows, shape.cols, choose, game)
    result = exact_policy_value(solved[(board, game)], preferring(board, game), distribution=True)
    _assert_same(_as_dict(result.score), want)
    assert result.score.mean == pytest.approx(result.expected_score, rel=1e-12)
    assert result.score.dropped < 1e-15


@pytest.mark.parametrize("board, game", [("2x2", "2048"), ("2x2", "2584")])
def test_perfect_play_matches_the_plain_forward_pass(solved, board, game):
    """(On 2x3 the fixed preference above, and perfect play against sampled games below: the plain pass of
    perfect play there takes a quarter of a minute.)"""
    solution = solved[(board, game)]
    shape = as_shape(board)
    want = naive.score_distribution(shape.rows, shape.cols, _perfect_choice(solution), game)
    for symmetric in (False, True):
        result = exact_policy_value(solution, PERFECT_PLAY, symmetric=symmetric, distribution=True)
        _assert_same(_as_dict(result.score), want, atol=1e-9)
        # perfect play's own value is the optimum, and the distribution's mean is it too
        assert result.expected_score == pytest.approx(solution.expected_score, rel=1e-12)
        assert result.score.mean == pytest.approx(solution.expected_score, rel=1e-12)
        assert result.optimal_move_share == 1.0


def test_sampled_games_agree_within_four_standard_errors(solved):
    """Perfect play on 2x3 played 3,000 times in plain Python: each P(score >= X) and the mean within 4 SE."""
    solution = solved[("2x3", "2048")]
    choose = _perfect_choice(solution)
    memo: dict = {}
    rng = random.Random(7)
    scores = []
    for _ in range(3000):
        grid = [[0] * 3 for _ in range(2)]
        for _ in range(2):
            _deal(grid, rng)
        score = 0
        while any(naive.move(grid, d)[0] != grid for d in range(4)):
            key = tuple(map(tuple, grid))
            if key not in memo:
                memo[key] = choose(grid)
            grid, reward = naive.move(grid, memo[key])
            score += reward
            _deal(grid, rng)
        scores.append(score)
    scores = np.array(scores)
    exact = exact_policy_value(solution, PERFECT_PLAY, symmetric=True, distribution=True).score
    for x in (200, 400, 480, 512, 600, 1000):
        sampled = float((scores >= x).mean())
        p = exact.at_least(x)
        se = max(np.sqrt(p * (1 - p) / len(scores)), 1 / len(scores))
        assert abs(sampled - p) <= 4 * se, (x, sampled, p)
    assert abs(scores.mean() - exact.mean) <= 4 * scores.std() / np.sqrt(len(scores))


def _deal(grid, rng):
    empty = [(r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v == 0]
    r, c = empty[rng.randrange(len(empty))]
    grid[r][c] = 2 if rng.random() < 0.1 else 1


def test_the_figures_follow_from_the_probabilities():
    from td2048.solve import ScoreDistribution

    d = ScoreDistribution(np.array([0, 4, 8, 20]), np.array([0.1, 0.4, 0.2, 0.3]))
    assert d.median == 4 and d.mode == 4 and d.mean == pytest.approx(0.4 * 4 + 0.2 * 8 + 0.3 * 20)
    assert d.at_least(5) == pytest.approx(0.5) and d.at_least(0) == 1.0 and d.at_least(21) == 0.0
    assert d.to_json([5, 20]) == {"score_median": 4, "score_mode": 4,
                                  "p_score_at_least": {"5": pytest.approx(0.5), "20": pytest.approx(0.3)}}


def test_a_tile_built_by_merges_scores_its_gain():
    """2048: the tile 2^k scored (k - 1) 2^k; 2584: its value plus what its two parts scored."""
    assert list(merge_gains("2048", 5)) == [0, 0, 4, 16, 48, 128]
    assert list(merge_gains("2584", 5)) == [0, 0, 2, 5, 12, 25]  # 2 = 1+1, 3 = 2+1, 5 = 3+2, 8 = 5+3


def test_solve_prints_and_writes_the_distribution():
    result = td2048("solve", "--board", "2x3", "--score-at-least", "256,512", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["score_median"] == 488 and data["score_mode"] == 496
    assert set(data["p_score_at_least"]) == {"256", "512"}
    assert 0.9 < data["p_score_at_least"]["256"] < 1 and 0 < data["p_score_at_least"]["512"] < 0.1
    assert "P(score >= 512)" in result.stdout and "median 488" in result.stdout
    for bad, fragment in ((["--score-at-least", "lots"], "bad scores"), (["--score-at-least", "-4"], "at least 0"),
                          (["--reach"], "--out")):
        assert_one_line_error(td2048("solve", "--board", "2x2", *bad), fragment)
