"""Expected targets (``--target expected``): the kernels' target against a plain-Python expectation, the exact
step where symmetric boards share weights, perfect play learned on whole-board networks, and the learning
options the target combines with (threads, TC, state values, multistage, 2584, resume) in real runs."""

import json

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from naive import expected_target, network_value, symmetries, to_grid

from td2048 import TrainSettings, train
from td2048.games.shape import BoardShape
from td2048.network import Network
from td2048.run import exact_figures
from td2048.solve import load_solution
from td2048.spec import parse_network


def work_arrays(n_features):
    """What ``scratch()`` gives a kernel of expected targets: index rows, afterstates, rewards."""
    return np.empty((17, n_features), np.uint64), np.empty((8, 2), np.uint64), np.empty(8, np.int64)


def random_afterstate(rng, rows, cols, top=8):
    """A board of the shape with at least one empty cell (a position a move can leave)."""
    codes = rng.integers(0, top + 1, rows * cols)
    codes[rng.integers(rows * cols)] = 0
    return sum(int(code) << (4 * (4 * (i // cols) + i % cols)) for i, code in enumerate(codes))


@pytest.mark.parametrize("board, network", [("2x3", "2x3"), ("3x3", "2x6")])
def test_the_kernels_expected_target_is_the_mean_over_new_tiles_of_the_best_move(board, network):
    rng = np.random.default_rng(5)
    spec = parse_network(network, board=BoardShape.parse(board))
    net = Network(spec)
    net.weights[:] = rng.normal(0, 20, net.weights.size).astype(np.float32)
    kernels = net.kernels_for(expected=True)
    shape = spec.board
    tables = [net.weights[o:o + 16 ** len(t)] for o, t in zip(spec.table_offsets, spec.tuples, strict=True)]
    cells = [list(t) for t in spec.tuples]

    def value(grid):
        return network_value(tables, cells, grid, symmetries(grid))

    for _ in range(25):
        after = random_afterstate(rng, shape.rows, shape.cols)
        got = kernels.expected_target(net.row_table(), net.weights, np.uint64(after), work_arrays(spec.n_features))
        assert got == pytest.approx(expected_target(to_grid(after, shape), value), rel=1e-12, abs=1e-9)


def test_the_exact_step_moves_v_by_alpha_times_the_error_where_symmetric_boards_share_weights():
    spec = parse_network("1x4", board=BoardShape.parse("2x2"))
    net = Network(spec)
    kernels = net.kernels_for(expected=True)
    xs = np.empty((1, spec.n_features), np.uint64)
    alpha_split = 1.0 / spec.n_features
    for board in (0x11, 0x21, 0x120021, 0x210012):  # symmetric (shared weights) and not
        kernels.index_row(np.uint64(board), xs, np.int64(0))
        share = kernels.exact_share(xs, np.int64(0), alpha_split)
        for target in (100.0, -3.5, 7.25):
            kernels.update_row(net.weights, np.zeros(1, np.uint8), xs, np.int64(0), target, share)
            assert kernels.value(net.weights, np.uint64(board)) == pytest.approx(target, abs=1e-4)
    kernels.index_row(np.uint64(0x30021), xs, np.int64(0))  # 1 2 / 3 _: its 8 symmetric boards all differ
    assert kernels.exact_share(xs, np.int64(0), alpha_split) == alpha_split  # no shared weight: the plain share


def test_the_regret_loss_step_lowers_the_hinge_of_a_position_whose_moves_are_ranked_wrong():
    rng = np.random.default_rng(7)
    spec = parse_network("2x6", board=BoardShape.parse("3x3"))
    net = Network(spec)
    net.weights[:] = rng.normal(0, 20, net.weights.size).astype(np.float32)
    kernels = net.kernels_for(expected=True)
    table, w, dirty = net.row_table(), net.weights, np.zeros(1, np.uint8)
    alpha_split = 0.01 / spec.n_features

    def hinge(board, work, targets):
        """max over legal m of r + V + c(m), less the best move's r + V; the legal moves; whether the best move's
        afterstate and the one that violates the most are symmetric images (one value: no step parts them)."""
        _, afters, rewards = work
        legal = [m for m in range(4) if afters[m, 0] != np.uint64(board)]
        q_star = {m: rewards[m] + targets[m] for m in legal}
        best = max(legal, key=q_star.get)
        q = {m: rewards[m] + kernels.value(w, afters[m, 0]) for m in legal}
        worst = max(legal, key=lambda m: q[m] + q_star[best] - q_star[m])
        twins = kernels.canonical(afters[best, 0]) == kernels.canonical(afters[worst, 0])
        return q[worst] + q_star[best] - q_star[worst] - q[best], legal, twins

    lowered = 0
    for _ in range(200):
        board = np.uint64(random_afterstate(rng, 3, 3, top=6))
        work = work_arrays(spec.n_features)
        kernels.ask_for_candidates(table, w, board, work, 0)
        targets = rng.normal(0, 200, 4)
        before, legal, twins = hinge(board, work, targets)
        if len(legal) < 2:
            continue
        weights = w.copy()
        kernels.regret_update(w, dirty, work, 0, board, targets, alpha_split)
        after, _, _ = hinge(board, work, targets)
        if before <= 1e-9:  # ranked as the margins ask: nothing moves
            assert np.array_equal(w, weights)
        elif twins:  # symmetric afterstates share every weight: what one step gives, the other takes back
            assert after == pytest.approx(before, abs=1e-3)
        else:  # the best move does not lead by the margins: the step lowers the hinge
            assert after < before
            lowered += 1
    assert lowered > 50


@pytest.fixture(scope="module")
def solutions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("solutions")
    out = {}
    for board in ("2x2", "2x3"):
        path = folder / f"{board}.solution"
        r = td2048("solve", "--board", board, "--out", path)
        assert r.returncode == 0, r.stderr
        out[board] = load_solution(path)
    return out


@pytest.mark.parametrize("update", ["forward", "backward"])
def test_a_whole_board_network_learns_perfect_play_on_2x2(solutions, update):
    settings = TrainSettings(board="2x2", network="1x4", target="expected", alpha=1.0, optimistic=200,
                             update=update, episodes=20000, block=20000, seed=3)
    network, _ = train(settings)
    figures = exact_figures(network, solutions["2x2"])
    assert figures["loss"] == pytest.approx(0.0, abs=1e-6)
    assert figures["optimal_move_share"] == pytest.approx(1.0)


def test_on_2x3_expected_targets_close_in_on_perfect_play_where_sampled_ones_stall(solutions):
    common = dict(board="2x3", network="1x6", episodes=100000, block=100000, seed=1, optimistic=1000)
    expected, _ = train(TrainSettings(target="expected", alpha=1.0, update="forward", **common))
    sampled, _ = train(TrainSettings(**common))
    gap_expected = exact_figures(expected, solutions["2x3"])["loss_share"]
    gap_sampled = exact_figures(sampled, solutions["2x3"])["loss_share"]
    assert gap_expected < 0.01
    assert gap_expected < gap_sampled / 2
    every = dict(common, episodes=30000, block=30000)  # every move's afterstate backed up: more learned an episode
    one, _ = train(TrainSettings(target="expected", alpha=1.0, update="forward", **every))
    all_, _ = train(TrainSettings(target="expected-all", alpha=1.0, update="forward", **every))
    assert exact_figures(all_, solutions["2x3"])["loss_share"] < exact_figures(one, solutions["2x3"])["loss_share"]


@pytest.mark.parametrize("options", [
    ("--game", "2584", "--network", "2x3", "--threads", "2", "--tc-from", "400", "--update", "forward"),
    ("--network", "2x3", "--method", "state", "--stages", "64", "--update", "backward"),
], ids=["2584-threads-tc", "state-values-multistage"])
def test_expected_targets_combine_with_the_other_learning_options(tmp_path, options):
    run = tmp_path / "run"
    r = td2048("train", "--board", "2x3", "--target", "expected", "--episodes", 600, "--block", 200, "--seed", 2,
               "--snapshot-every", 200, *options, "--out", run)
    assert r.returncode == 0, r.stderr
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [b["episodes"] for b in log] == [200, 400, 600]
    assert json.loads((run / "settings.json").read_text())["target"] == "expected"
    r = td2048("train", "--resume", run, "--episodes", 800)
    assert r.returncode == 0, r.stderr
    assert json.loads((run / "settings.json").read_text())["target"] == "expected"


@pytest.mark.parametrize("args, message", [
    (("--target", "expected", "--lambda", "0.5"), "--target expected looks one move ahead"),
    (("--target", "expected", "--nstep", "3"), "--target expected looks one move ahead"),
    (("--target", "expected-all", "--update", "backward"), "--target expected-all backs up each position's moves"),
    (("--target", "ranked", "--update", "backward"), "--target ranked backs up each position's moves"),
])
def test_expected_targets_refuse_returns(tmp_path, args, message):
    r = td2048("train", "--board", "2x3", *args, "--episodes", 10, "--out", tmp_path / "run")
    assert_one_line_error(r, message)


def test_a_target_that_does_not_exist_is_refused(tmp_path):
    r = td2048("train", "--board", "2x3", "--target", "mean", "--out", tmp_path / "run")
    assert r.returncode == 2
    assert "--target" in r.stderr
