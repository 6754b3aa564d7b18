"""``td2048 eval --endgame TABLE``: games whose endgame an endgame's table plays, in compiled code, against the
same games played a move at a time in Python (the network's moves by ``Agent.step``, the table's from its values)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from naive import endgame_chance, endgame_table_move

from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.games.game2048 import py_move
from td2048.io.model import load_model
from td2048.play import Agent, Search
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


def boundary_chance(solution, cells):
    """The table's chance of its goal from an afterstate where the table takes over, else -1 (the search's
    boundary, td2048.kernels.search)."""
    if solution.endgame.met_by(cells, solution.board, goal=True):
        return 1.0
    if not solution.endgame.met_by(cells, solution.board):
        return -1.0
    p = endgame_chance(solution, cells)
    return p if p > 0 else -1.0


def boundary_move(network, solution, worth, board, depth):
    """The move of a plain expectimax at ``depth`` over the network's values, where an afterstate at which the
    table takes over is a leaf worth V + worth * (the table's chance): (move or -1, its reward)."""
    shape = solution.board

    def codes(b):
        return list(Board.from_packed(b, "2048", shape).codes)

    def afterstate(after, depth):
        cells = codes(after)
        p = boundary_chance(solution, cells)
        if p >= 0:
            return network.value(after) + worth * p
        empty = [i for i, c in enumerate(cells) if c == 0]
        if depth <= 1 or not empty:
            return network.value(after)
        total = 0.0
        for i in empty:
            for code, chance in ((1, 0.9), (2, 0.1)):
                placed = list(cells)
                placed[i] = code
                total += chance * best(Board(tuple(placed), "2048", shape).packed(), depth - 1)[2]
        return total / len(empty)

    def best(b, depth):
        choice, reward, value = -1, 0, -np.inf
        for d in range(4):
            after, r = py_move(b, d, shape)
            if after != b and r + afterstate(after, depth) > value:
                choice, reward, value = d, r, r + afterstate(after, depth)
        return choice, reward, (0.0 if choice < 0 else value)

    return best(board, depth)[:2]


def boundary_games(agent, network, solution, worth, depth, games):
    """Each game's score, the table choosing its endgame's moves and boundary_move the others."""
    scores = []
    for g in range(games):
        agent.start_game(g)
        board = agent.spawn(agent.spawn(agent.empty_board))
        score = 0
        while True:
            d = endgame_table_move(solution, board, list(Board.from_packed(board, "2048", solution.board).codes))
            if d is None:
                d, _ = boundary_move(network, solution, worth, board, depth)
                if d < 0:
                    break
            after, reward = py_move(board, d, solution.board)
            board = agent.spawn(after)
            score += reward
        scores.append(score)
    return scores


@pytest.mark.parametrize("depth,games", [(1, 200), (2, 30)])
def test_the_search_stops_at_the_tables_boundary_as_the_reference(model_2x3, endgame_2x3, depth, games):
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(endgame_2x3, endgame=True)
    worth = 300.0
    # no transposition table: it would give mirror images one value, where the plain recursion sums their new
    # tiles in another order
    agent = Agent(network, Search(depth), 7, endgame=solution, endgame_worth=worth)
    scores, max_codes, moves = (np.zeros(games, np.int64) for _ in range(3))
    agent.play_into(scores, max_codes, moves)
    assert scores.tolist() == boundary_games(Agent(network, None, 7), network, solution, worth, depth, games)
    plain = Agent(network, Search(depth), 7, endgame=solution)
    alone = np.zeros(games, np.int64)
    plain.play_into(alone, max_codes.copy(), moves.copy())
    assert (alone != scores).any()  # the boundary changes games


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


def test_eval_endgame_worth(model_2x3, endgame_2x3):
    model = model_2x3 / "run" / "model.td2048"
    data = json.loads(td2048("eval", str(model), "--games", "100", "--seed", "3", "--depth", "2", "--endgame",
                             str(endgame_2x3), "--endgame-worth", "300", "--json").stdout)
    assert data["endgame"]["worth"] == 300 and data["endgame"]["games"] > 0
    text = td2048("eval", str(model), "--games", "20", "--seed", "3", "--endgame", str(endgame_2x3), "--endgame-worth",
                  "250.5")
    assert text.returncode == 0 and "its goal worth 250.5 points to the search" in text.stdout
    assert_one_line_error(td2048("eval", str(model), "--endgame-worth", "300"), "give its table with --endgame")
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(endgame_2x3), "--endgame-worth", "-1"),
                          "--endgame-worth")
    network, _ = load_model(model)
    with pytest.raises(TD2048Error, match="needs its table"):
        Agent(network, endgame_worth=10)
    with pytest.raises(TD2048Error, match="0 or more"):
        Agent(network, endgame=load_solution(endgame_2x3, endgame=True), endgame_worth=float("nan"))


def test_a_table_that_is_no_endgame_of_the_board_is_refused(model_2x3, endgame_2x3, tmp_path):
    model = model_2x3 / "run" / "model.td2048"
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(model_2x3 / "2x3.solution")),
                          "the whole game's solution, not an endgame's table")
    other = tmp_path / "3x2.solution"
    assert td2048("solve", "--board", "3x2", "--fixed", "0=64", "--goal", "0=128", "--out", str(other)).returncode == 0
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(other)), "on 3x2, not 2x3")
    assert_one_line_error(td2048("eval", str(model), "--endgame", str(tmp_path / "missing")), "cannot read")
