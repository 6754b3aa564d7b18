"""Distillation (``td2048 train --teacher SOLUTION``): the kernels read perfect play's values as the solution holds
them, a whole-board network distilled plays perfectly, the distilled model is a model like any other, and
the refusals."""

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048

from td2048 import TrainSettings, train
from td2048.games.shape import BoardShape
from td2048.network import Network
from td2048.solve import load_solution
from td2048.spec import parse_network
from td2048.teacher import teacher_arrays


@pytest.fixture(scope="module")
def solution_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("solutions")
    out = {}
    for game in ("2048", "2584"):
        path = folder / f"2x3-{game}.solution"
        r = td2048("solve", "--board", "2x3", "--game", game, "--out", path)
        assert r.returncode == 0, r.stderr
        out[game] = path
    return out


def frame_board(codes, shape, wide):
    """A packed board of the shape's cells (row-major codes): one word, or (low nibbles, high bits) on 5-bit cells."""
    lo = hi = 0
    for i, code in enumerate(codes):
        cell = shape.frame_cells[i]
        lo |= (code & 15) << (4 * cell)
        hi |= (code >> 4) << cell
    return (np.uint64(lo), np.uint64(hi)) if wide else np.uint64(lo)


@pytest.mark.parametrize("game", ["2048", "2584"])
@pytest.mark.parametrize("index", [False, True])  # binary search in the layer, or the keys' hash index
def test_the_kernels_read_each_positions_value_as_the_solution_holds_it(solution_files, game, index):
    solution = load_solution(solution_files[game])
    shape = BoardShape.parse("2x3")
    network = Network(parse_network("2x3", board=shape), game=game)
    teacher = teacher_arrays(solution, shape, game, index=index)
    assert (len(teacher[7]) >= 4 * solution.positions / 3) == index
    scratch = np.zeros(16, np.int64)
    for held_not in ([11, 10, 9, 8, 7, 6], [5, 5, 5, 5, 5, 5]):  # tiles the start never makes; six equal tiles
        assert np.isnan(network.kernels.teacher_value(teacher, frame_board(held_not, shape, network.wide), scratch))
    codes_of = solution.rules.codes_of
    rng = np.random.default_rng(1)
    for layer, values in zip(solution.keys, solution.values, strict=True):
        for i in rng.choice(len(layer), size=min(6 if index else 3, len(layer)), replace=False):
            codes = codes_of(layer[i:i + 1])[0]
            for sym in shape.symmetries:  # every orientation of the position has its value
                turned = [0] * len(codes)
                for cell, to in enumerate(sym):
                    turned[to] = int(codes[cell])
                board = frame_board(turned, shape, network.wide)
                assert network.kernels.teacher_value(teacher, board, scratch) == values[i, 0]


def test_a_whole_board_network_distilled_plays_perfectly_and_is_a_model_like_any_other(solution_files, tmp_path):
    run = tmp_path / "run"
    r = td2048("train", "--board", "2x3", "--network", "1x6", "--teacher", solution_files["2048"], "--alpha", 1,
               "--episodes", 30000, "--block", 10000, "--seed", 1, "--exact", solution_files["2048"], "--out", run)
    assert r.returncode == 0, r.stderr
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert log[-1]["exact"]["loss_share"] < 0.005
    assert log[-1]["exact"]["loss_share"] <= log[0]["exact"]["loss_share"]
    r = td2048("eval", run / "model.td2048", "--exact", solution_files["2048"], "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["loss"] == pytest.approx(log[-1]["exact"]["loss"])


def test_the_regret_loss_learns_perfect_plays_ranking_on_its_own_games(solution_files, tmp_path):
    run = tmp_path / "run"
    r = td2048("train", "--board", "2x3", "--network", "1x6", "--teacher", solution_files["2048"], "--teacher-loss",
               "regret", "--teacher-moves", 0, "--alpha", 0.5, "--episodes", 20000, "--block", 10000, "--seed", 1,
               "--exact", solution_files["2048"], "--out", run)
    assert r.returncode == 0, r.stderr
    assert "the regret loss (0 of the episodes perfect play's)" in r.stdout
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert log[-1]["exact"]["loss_share"] < 0.005


def test_2584_distils_on_5_bit_cells(solution_files):
    settings = TrainSettings(board="2x3", game="2584", network="2x3", teacher=solution_files["2584"], episodes=500,
                             block=500, seed=2, alpha=0.5)
    network, stats = train(settings)
    assert stats[0].avg > 0
    assert np.isfinite(network.weights).all() and np.count_nonzero(network.weights) > 0


@pytest.mark.parametrize("args, message", [
    (("--target", "expected"), "--teacher gives every position its exact value"),
    (("--explore", "const:0.1"), "--teacher chooses the moves itself"),
    (("--teacher-moves", "1.5"), "--teacher-moves must be a share"),
    (("--teacher-loss", "regret", "--method", "state"), "--teacher-loss regret ranks the moves' afterstates"),
])
def test_distillation_refuses_what_it_does_not_take(solution_files, tmp_path, args, message):
    r = td2048("train", "--board", "2x3", "--teacher", solution_files["2048"], *args, "--out", tmp_path / "run")
    assert_one_line_error(r, message)
    assert not (tmp_path / "run").exists()


def test_a_teacher_of_another_board_or_game_is_refused_before_anything_is_written(solution_files, tmp_path):
    r = td2048("train", "--board", "2x3", "--game", "2584", "--teacher", solution_files["2048"],
               "--out", tmp_path / "run")
    assert_one_line_error(r, "solves 2048 on 2x3, but the run trains 2584 on 2x3")
    assert not (tmp_path / "run").exists()
    r = td2048("train", "--board", "2x3", "--teacher", tmp_path / "missing.solution", "--out", tmp_path / "run")
    assert_one_line_error(r, "cannot read")


def test_a_teacher_loss_without_a_teacher_is_refused(tmp_path):
    r = td2048("train", "--board", "2x3", "--teacher-loss", "regret", "--out", tmp_path / "run")
    assert_one_line_error(r, "--teacher-loss needs --teacher")
    assert not (tmp_path / "run").exists()
