"""Endgames (td2048 solve --fixed --goal): the compiled solver against a plain recursion, the file, the command."""

from __future__ import annotations

import json

import naive
import numpy as np
import pytest
from commands import assert_one_line_error, td2048

from td2048.errors import TD2048Error
from td2048.solve import exact_policy_value, load_solution, solve
from td2048.solve.endgame import Endgame
from td2048.solve.layers import Rules

# (board, --fixed, --goal): a goal on a fixed cell (the chain's merge), one beside the fixed tiles, one in a corner
ENDGAMES = [("2x3", "0=32,1=16", "1=32"), ("2x3", "0=32", "3=16"), ("3x2", "0=64", "0=128")]


@pytest.fixture(scope="module")
def endgames():
    return {e: solve(e[0], keep_values=True, endgame=Endgame.parse(*e)) for e in ENDGAMES}


@pytest.mark.parametrize("posed", ENDGAMES)
def test_every_value_matches_the_plain_recursion(endgames, posed):
    solution = endgames[posed]
    board, fixed, goal = posed
    rows, cols = (int(x) for x in board.split("x"))
    endgame = Endgame.parse(*posed)
    reference, start = naive.solve_endgame(rows, cols, dict(endgame.fixed), endgame.goal)
    assert solution.positions == len(reference)
    rules = Rules(board, "2048", endgame)
    for keys, values in zip(solution.keys, solution.values, strict=True):
        assert values.shape[1] == 1  # one aim: the goal's probability
        for codes, got in zip(rules.codes_of(keys), values[:, 0], strict=True):
            grid = [list(codes[r * cols:(r + 1) * cols]) for r in range(rows)]
            want = reference[min(tuple(map(tuple, g)) for g in naive.symmetries(grid))]
            assert got == pytest.approx(want, abs=1e-12)
    assert solution.goal_probability == pytest.approx(start, abs=1e-12) and 0 < start < 1


def test_a_position_and_its_moves_are_valued_as_the_rules_say(endgames):
    solution = endgames[("2x3", "0=32,1=16", "1=32")]
    rules = solution.rules
    wins = 0
    for keys, values in zip(solution.keys, solution.values, strict=True):
        for codes, value in zip(rules.codes_of(keys), values[:, 0], strict=True):
            q = solution.move_values(codes)
            assert (np.isnan(q).all() and value == 0) or np.nanmax(q) == pytest.approx(value, abs=1e-12)
            wins += bool((q == 1.0).any())
            turned = list(codes[3:]) + list(codes[:3])  # the board flipped top to bottom: the same endgame
            assert solution.value(turned)[0] == value
    assert wins > 0


def test_the_file_round_trips_and_is_refused_where_a_whole_board_is_needed(endgames, tmp_path):
    solution = endgames[("2x3", "0=32,1=16", "1=32")]
    path = tmp_path / "endgame.solution"
    result = td2048("solve", "--board", "2x3", "--fixed", "0=32,1=16", "--goal", "1=32", "--out", str(path),
                    "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["endgame"] == {"fixed": [[0, 32], [1, 16]], "goal": [1, 32]}
    assert data["goal_probability"] == pytest.approx(solution.goal_probability, abs=1e-12)
    assert "probability of the goal under perfect play" in result.stdout
    back = load_solution(path, endgame=True)
    assert back.endgame == solution.endgame and back.positions == solution.positions
    for a, b in zip(back.values, solution.values, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TD2048Error, match="endgame's table .*not the whole game's solution"):
        load_solution(path)
    with pytest.raises(TD2048Error, match="values the goal"):
        exact_policy_value(back, None)
    again = td2048("solve", "--board", "2x3", "--from", str(path))
    assert again.returncode == 0 and "32, 16 fixed at cells 0, 1; goal 32 at cell 1" in again.stdout
    model = tmp_path / "m.td2048"
    assert td2048("train", "--board", "2x3", "--network", "012,345", "--episodes", "10", "--block", "10",
                  "--out", str(tmp_path / "run")).returncode == 0
    model = tmp_path / "run" / "model.td2048"
    assert_one_line_error(td2048("eval", str(model), "--exact", str(path)), "endgame's table")


@pytest.mark.parametrize("args, fragment", [
    (["--fixed", "0=32"], "--fixed and --goal go together"),
    (["--fixed", "0=32", "--goal", "9=64"], "cell 9 is off the 2x3 board"),
    (["--fixed", "0=33", "--goal", "0=64"], "33 is no tile"),
    (["--fixed", "0=32", "--goal", "0=16"], "does not grow the 32"),
    (["--fixed", "0=32,0=16", "--goal", "1=16"], "names a cell twice"),
    (["--fixed", "0=32,1=16,2=8,3=4,4=2", "--goal", "5=2"], "fewer than two free cells"),
    (["--fixed", "0:32", "--goal", "0x64"], "--goal takes CELL=TILE"),
    (["--fixed", "0=21", "--goal", "0=34", "--game", "2584"], "2048 (4-bit cells), not 2584"),
    (["--fixed", "0=32", "--goal", "0=64", "--reach", "--out", "x.solution"], "--reach is of the whole game"),
])
def test_bad_endgames_are_refused_in_one_line(args, fragment):
    assert_one_line_error(td2048("solve", "--board", "2x3", *args), "td2048 solve: error:", fragment)


def test_count_poses_the_endgame():
    result = td2048("solve", "--board", "2x3", "--fixed", "0=32,1=16", "--goal", "1=32", "--count")
    assert result.returncode == 0, result.stderr
    assert "(32, 16 fixed at cells 0, 1; goal 32 at cell 1)" in result.stdout
