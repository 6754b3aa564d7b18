"""``td2048 train --endgame TABLE``: training games whose endgame an endgame's table plays, learned from as played,
against the same episodes played a move at a time (the table's moves from its values in Python, the network's by
its compiled greedy choice, the updates by the compiled backward pass)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from naive import endgame_table_move

from td2048.games.board import Board
from td2048.games.game2048 import py_move
from td2048.io.model import load_model
from td2048.kernels.merge import NO_TRACKING
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.rng import below, uniform
from td2048.solve import load_solution


def reference_episodes(network, weights, rng, solution, params, episodes, starts=0.0):
    """Each episode's (score, moves), and the table's counts, as ``Learner.run`` with the table plays and learns
    them (backward TD(0); a share ``starts`` of the episodes from the endgame's start), on ``weights`` and ``rng``
    (changed in place)."""
    k = network.kernels
    table = network.row_table()
    work = k.scratch()
    path_after = np.zeros((1000, 1), np.uint64)
    path_steps = np.zeros((1000, 2), np.float64)
    index_rows = np.empty((3, network.spec.n_features), np.uint64)
    masks = solution.endgame.oriented_masks(network.board)
    results, counts = [], {"moves": 0, "episodes": 0, "starts": 0}
    for _ in range(episodes):
        if starts > 0 and uniform(rng) < starts:  # the fixed tiles in an orientation, two new tiles
            board = np.uint64(masks[below(rng, len(masks)), 1])
            board = k.spawn_tile(k.spawn_tile(board, rng, k.CELLS), rng, k.CELLS)
            counts["starts"] += 1
        else:
            board = k.new_game(rng, k.CELLS)
        score = steps = 0
        entered = False
        while True:
            d, after, reward, _ = k.best_move(table, weights, board, work)
            if d < 0:
                break
            chosen = endgame_table_move(solution, board, list(Board.from_packed(board, "2048", network.board).codes))
            if chosen is not None:
                after, reward = py_move(board, chosen, network.board)
                counts["moves"] += 1
                counts["episodes"] += not entered
                entered = True
            path_after[steps, 0] = after
            path_steps[steps, 0] = reward
            score += reward
            steps += 1
            board = k.spawn_tile(np.uint64(after), rng, k.CELLS)
        k.backward_updates(weights, NO_TRACKING, params, (path_after, path_steps), steps, index_rows)
        results.append((score, steps))
    return results, counts


@pytest.mark.parametrize("starts", [0.0, 0.3])
def test_training_with_the_table_is_the_reference(model_2x3, endgame_2x3, starts):
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(endgame_2x3, endgame=True)
    learner = Learner(network, seed=9)
    weights, rng = network.weights.copy(), learner.rng_state.copy()
    options = LearningOptions(endgame_starts=starts)
    block = learner.run(150, 0.1, options, endgame=learner.endgame_of(solution))
    want, counts = reference_episodes(network, weights, rng, solution, learner._params(0.1, options), 150, starts)
    assert list(zip(block.scores.tolist(), block.moves.tolist(), strict=True)) == want
    assert block.info == {"endgame": counts}
    assert counts["episodes"] > 15 and counts["moves"] > counts["episodes"]  # the table played, in many episodes
    assert (counts["starts"] > 20) == (starts > 0) and block.restarted.sum() == counts["starts"]
    np.testing.assert_array_equal(weights, network.weights)
    assert np.array_equal(rng, learner.rng_state)
    plain = learner.run(20, 0.1)
    assert plain.info is None  # no table: nothing counted


def test_train_endgame_logs_the_table_and_resumes_with_it(endgame_2x3, tmp_path):
    out = tmp_path / "run"
    result = td2048("train", "--board", "2x3", "--network", "2x3", "--episodes", "2000", "--block", "1000",
                    "--seed", "4", "--endgame", str(endgame_2x3), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"the endgame's table {endgame_2x3} playing its endgame" in result.stdout
    assert "\nendgame = " in result.stdout and " episodes (" in result.stdout
    blocks = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert len(blocks) == 2 and all(b["endgame"]["moves"] > b["endgame"]["episodes"] > 0 for b in blocks)
    assert all(b["endgame"]["starts"] == 0 and b["games"] == 1000 for b in blocks)
    assert json.loads((out / "settings.json").read_text())["endgame"] == str(endgame_2x3)
    result = td2048("train", "--resume", str(out), "--episodes", "3000", "--endgame-starts", "0.5")
    assert result.returncode == 0, result.stderr
    assert " from its start" in result.stdout
    blocks = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    last = blocks[-1]
    assert len(blocks) == 3 and last["endgame"]["episodes"] > 0  # the table reopened, and playing
    assert 400 < last["endgame"]["starts"] < 600 and last["games"] + last["restarted"] == 1000


@pytest.mark.parametrize("extra,fragment", [
    (["--teacher", "{whole}"], "give one of them"),
    (["--ray", "2"], "it takes no --ray"),
    (["--game", "2584"], "endgame tables are of 2048"),
    (["--endgame-starts", "1"], "--endgame-starts must be a share of episodes in [0, 1)"),
])
def test_train_endgame_refusals(model_2x3, endgame_2x3, tmp_path, extra, fragment):
    extra = [e.format(whole=model_2x3 / "2x3.solution") for e in extra]
    result = td2048("train", "--board", "2x3", "--episodes", "10", "--endgame", str(endgame_2x3), *extra,
                    "--out", str(tmp_path / "run"))
    assert_one_line_error(result, fragment)
    assert not (tmp_path / "run").exists()  # nothing written


def test_train_refuses_a_table_of_another_board_or_a_whole_game(model_2x3, endgame_2x3, tmp_path):
    def train(*args):
        return td2048("train", "--episodes", "10", *args, "--out", str(tmp_path / "run"))

    assert_one_line_error(train("--board", "3x3", "--endgame", str(endgame_2x3)), "solves 2048 on 2x3",
                          "trains 2048 on 3x3")
    assert_one_line_error(train("--board", "2x3", "--endgame", str(model_2x3 / "2x3.solution")), "not an endgame")
    assert_one_line_error(train("--board", "2x3", "--endgame", str(tmp_path / "missing")), "cannot read")
    assert_one_line_error(train("--board", "2x3", "--endgame-starts", "0.2"), "it needs --endgame")
    assert not (tmp_path / "run").exists()


def test_train_in_memory_opens_the_table(endgame_2x3):
    from td2048.settings import TrainSettings
    from td2048.training import train

    _, stats = train(TrainSettings(board="2x3", network="2x3", episodes=2000, block=1000, seed=2,
                                   endgame=endgame_2x3, endgame_starts=0.1))
    assert [s.extra["endgame"]["starts"] > 50 for s in stats] == [True, True]
    assert all(s.games + s.extra["restarted"] == 1000 for s in stats)
