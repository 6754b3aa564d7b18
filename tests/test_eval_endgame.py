"""``td2048 eval --endgame TABLE``: games whose endgame an endgame's table plays, in compiled code, against the
same games played a move at a time in Python (the network's moves by ``Agent.step``, the table's from its values)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from naive import endgame_table_move

from td2048.games.board import Board
from td2048.games.game2048 import py_move
from td2048.io.model import load_model
from td2048.play import Agent
from td2048.solve import load_solution


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
            d = endgame_table_move(solution, board, codes)
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
def test_the_compiled_games_are_the_reference_games(model_2x3, endgame_2x3, depth, games):
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(endgame_2x3, endgame=True)
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


def test_eval_endgame_prints_what_the_table_did(model_2x3, endgame_2x3):
    model = model_2x3 / "run" / "model.td2048"
    result = td2048("eval", str(model), "--games", "200", "--seed", "3", "--threads", "2", "--endgame",
                    str(endgame_2x3), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    endgame = data["endgame"]
    assert endgame["table"] == str(endgame_2x3)
    assert endgame["fixed"] == [[0, 32], [1, 16]] and endgame["goal"] == [1, 32]
    assert 0 < endgame["goals"] <= endgame["entries"] and endgame["games"] <= 200
    one = json.loads(td2048("eval", str(model), "--games", "200", "--seed", "3", "--endgame", str(endgame_2x3),
                            "--json").stdout)
    assert one["avg"] == data["avg"] and one["endgame"] == endgame  # the same games on one thread or two
    text = td2048("eval", str(model), "--games", "50", "--seed", "3", "--endgame", str(endgame_2x3))
    assert text.returncode == 0 and "# endgame " in text.stdout and "32, 16 fixed at cells 0, 1" in text.stdout


@pytest.mark.parametrize("extra,fragment", [
    (["--exact", "{whole}"], "leave out --endgame"),
    (["--ray"], "leave out --ray"),
    (["--shard-size", "10"], "leave out --shard-size"),
])
def test_endgame_refusals(model_2x3, endgame_2x3, extra, fragment):
    model = model_2x3 / "run" / "model.td2048"
    extra = [e.format(whole=model_2x3 / "2x3.solution") for e in extra]
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(endgame_2x3), *extra), fragment)


def test_a_table_that_is_no_endgame_of_the_board_is_refused(model_2x3, endgame_2x3, tmp_path):
    model = model_2x3 / "run" / "model.td2048"
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(model_2x3 / "2x3.solution")),
                          "the whole game's solution, not an endgame's table")
    other = tmp_path / "3x2.solution"
    assert td2048("solve", "--board", "3x2", "--fixed", "0=64", "--goal", "0=128", "--out", str(other)).returncode == 0
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(other)), "on 3x2, not 2x3")
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(tmp_path / "missing")), "cannot read")
