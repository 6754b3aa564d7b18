"""``td2048 eval --endgame TABLE``: games whose endgame an endgame's table plays, in compiled code, against the
same games played a move at a time in Python (the network's moves by ``Agent.step``, the table's from its values)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048

from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.games.game2048 import P_FOUR, py_move
from td2048.io.model import load_model
from td2048.play import Agent
from td2048.solve import load_solution

FIXED, GOAL = "0=32,1=16", "1=32"  # 32 and 16 side by side from a corner; a 32 to build where the 16 stands


@pytest.fixture(scope="module")
def table(model_2x3):
    path = model_2x3 / "endgame.solution"
    if not path.exists():
        result = td2048("solve", "--board", "2x3", "--fixed", FIXED, "--goal", GOAL, "--out", str(path))
        assert result.returncode == 0, result.stderr
    return path


def table_move(solution, board: int, codes) -> int | None:
    """The table's move where it plays (the fixed tiles in place, a position it holds, the goal still possible),
    else None: the move that builds the goal, else the largest mean over the new tile, the first of equals."""
    shape, endgame = solution.board, solution.endgame

    def value(cells):
        try:
            return float(solution.value(list(cells))[0])
        except TD2048Error:  # a position the table does not hold
            return float("nan")

    if not endgame.met_by(codes, shape) or not value(codes) > 0:
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
        empty = [i for i, c in enumerate(cells) if c == 0]
        total = 0.0
        for i in empty:  # in the kernel's order: the cells in turn, each tile's value weighted
            small, big = list(cells), list(cells)
            small[i], big[i] = 1, 2
            total += (1.0 - P_FOUR) * value(small) + P_FOUR * value(big)
        q = total / len(empty)
        if q > best_q:
            best, best_q = d, q
    return best


def reference_games(agent, solution, games):
    """Each game's score, and the table's counts, played a move at a time."""
    scores = []
    counts = {"games": 0, "entries": 0, "goals": 0, "moves": 0}
    values = np.empty(4)
    for g in range(games):
        agent.start_game(g)
        board = agent.spawn(agent.spawn(agent.empty_board))
        score, playing, entered = 0, False, False
        while True:
            codes = list(Board.from_packed(board, "2048", solution.board).codes)
            d = table_move(solution, board, codes)
            if d is not None:
                counts["entries"] += not playing
                counts["games"] += not entered
                entered = playing = True
                counts["moves"] += 1
                after, reward = py_move(board, d, solution.board)
                counts["goals"] += solution.endgame.met_by(Board.from_packed(after, "2048", solution.board).codes,
                                                            solution.board, goal=True)
                board = agent.spawn(after)
            else:
                playing = False
                d, reward, _, board = agent.step(board, values)
                if d < 0:
                    break
            score += reward
        scores.append(score)
    return scores, counts


@pytest.mark.parametrize("depth,games", [(1, 300), (2, 40)])
def test_the_compiled_games_are_the_reference_games(model_2x3, table, depth, games):
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(table, endgame=True)
    agent = Agent(network, None, 7, depth=depth, endgame=solution)
    scores, max_codes, moves = (np.zeros(games, np.int64) for _ in range(3))
    agent.play_into(scores, max_codes, moves)
    compiled = agent.endgame_counts()
    want, counts = reference_games(Agent(network, None, 7, depth=depth), solution, games)
    assert scores.tolist() == want
    assert compiled == counts
    assert counts["games"] > games // 20 and counts["goals"] > 0  # the table plays, and wins some
    plain = Agent(network, None, 7, depth=depth)
    alone = np.zeros(games, np.int64)
    plain.play_into(alone, max_codes.copy(), moves.copy())
    assert plain.endgame_counts() == {"games": 0, "entries": 0, "goals": 0, "moves": 0}
    assert (alone != scores).any()  # the table changes games


def test_eval_endgame_prints_what_the_table_did(model_2x3, table):
    model = model_2x3 / "run" / "model.td2048"
    result = td2048("eval", str(model), "--games", "200", "--seed", "3", "--threads", "2", "--endgame", str(table),
                    "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    endgame = data["endgame"]
    assert endgame["table"] == str(table) and endgame["fixed"] == [[0, 32], [1, 16]] and endgame["goal"] == [1, 32]
    assert 0 < endgame["goals"] <= endgame["entries"] and endgame["games"] <= 200
    one = json.loads(td2048("eval", str(model), "--games", "200", "--seed", "3", "--endgame", str(table),
                            "--json").stdout)
    assert one["avg"] == data["avg"] and one["endgame"] == endgame  # the same games on one thread or two
    text = td2048("eval", str(model), "--games", "50", "--seed", "3", "--endgame", str(table))
    assert text.returncode == 0 and "# endgame " in text.stdout and "32, 16 fixed at cells 0, 1" in text.stdout


@pytest.mark.parametrize("extra,fragment", [
    (["--exact", "{whole}"], "leave out --endgame"),
    (["--ray"], "leave out --ray"),
    (["--shard-size", "10"], "leave out --shard-size"),
])
def test_endgame_refusals(model_2x3, table, extra, fragment):
    model = model_2x3 / "run" / "model.td2048"
    extra = [e.format(whole=model_2x3 / "2x3.solution") for e in extra]
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(table), *extra), fragment)


def test_a_table_that_is_no_endgame_of_the_board_is_refused(model_2x3, table, tmp_path):
    model = model_2x3 / "run" / "model.td2048"
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(model_2x3 / "2x3.solution")),
                          "the whole game's solution, not an endgame's table")
    other = tmp_path / "3x2.solution"
    assert td2048("solve", "--board", "3x2", "--fixed", "0=64", "--goal", "0=128", "--out", str(other)).returncode == 0
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(other)), "on 3x2, not 2x3")
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(tmp_path / "missing")), "cannot read")
