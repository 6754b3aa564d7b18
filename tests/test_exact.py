"""td2048.solve.exact_policy_value and td2048 eval --exact: a policy's exact value on a solved board."""

from __future__ import annotations

import json

import naive
import numpy as np
import pytest
from commands import assert_one_line_error, td2048

from td2048.errors import TD2048Error
from td2048.games.game2048 import MOVE_NAMES, py_move
from td2048.games.shape import as_shape
from td2048.games.wide import py_wide_move
from td2048.io.model import load_model, save_model
from td2048.network import Network, parse_network
from td2048.play import Agent
from td2048.solve import agent_policy, exact_policy_value, load_solution, solve

PREFERENCE = (3, 2, 1, 0)  # left, down, right, up: the first legal one


@pytest.fixture(scope="module")
def solved():
    return {(b, g): solve(b, g, keep_values=True) for b, g in (("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584"))}


def preferring(board, game):
    """The policy that plays the first legal move of PREFERENCE, on packed boards."""
    shape = as_shape(board)

    def choose(boards):
        out = []
        for b in boards:
            packed = (int(b[0]), int(b[1])) if game == "2584" else int(b)
            for d in PREFERENCE:
                after = py_wide_move(game, packed, d, shape)[0] if game == "2584" else py_move(packed, d, shape)[0]
                if (tuple(int(x) for x in after) if game == "2584" else after) != packed:
                    out.append(d)
                    break
        return np.array(out)

    return choose


@pytest.mark.parametrize("board, game", [("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584")])
def test_a_fixed_preference_matches_the_plain_recursion(solved, board, game):
    solution = solved[(board, game)]
    result = exact_policy_value(solution, preferring(board, game))
    shape = as_shape(board)

    def choose(grid):
        return next(d for d in PREFERENCE if naive.move(grid, d, game=game)[0] != grid)

    start, share, moves = naive.policy_value(shape.rows, shape.cols, choose, game)
    assert result.expected_score == pytest.approx(start[0], rel=0, abs=1e-9)
    np.testing.assert_allclose(list(result.reach.values()), start[1:solution.aims], rtol=0, atol=1e-9)
    assert not any(start[solution.aims:])
    assert result.optimal_move_share == pytest.approx(share, abs=1e-9) and 0 < share < 1
    assert result.moves == pytest.approx(moves, abs=1e-9)
    assert result.optimal_expected_score == solution.expected_score and result.optimal_reach == solution.reach
    assert sum(loss for _, loss in result.loss_by_layer) == pytest.approx(result.loss, abs=1e-9)
    assert sum(s["loss"] for s in result.loss_by_stage) == pytest.approx(result.loss, abs=1e-9)
    assert len(result.loss_by_stage) == 8 and result.loss_by_stage[0]["from"] == solution.sums[0]
    assert result.loss_by_stage[-1]["to"] == solution.sums[-1] + 1


def optimal(solution):
    """The policy that plays the first move of the largest Q* (the solution's values), on 4-bit packed boards."""
    shape, rules = solution.board, solution.rules
    frame = shape.frame_cells

    def choose(boards):
        rows = []  # (board index, move, reward, child codes, probability)
        for j, b in enumerate(int(x) for x in boards):
            for d in range(4):
                after, reward = py_move(b, d, shape)
                if after == b:
                    continue
                empty = [i for i, f in enumerate(frame) if (after >> (4 * f)) & 15 == 0]
                for i in empty:
                    for code, p in ((1, 0.9), (2, 0.1)):
                        codes = [(after >> (4 * f)) & 15 for f in frame]
                        codes[i] = code
                        rows.append((j, d, reward, codes, p / len(empty)))
        keys = rules.keys_of([r[3] for r in rows])
        q = np.full((len(boards), 4), -np.inf)
        seen = np.zeros((len(boards), 4), bool)
        for (j, d, reward, codes, p), key in zip(rows, keys, strict=True):
            i = solution.sums.index(rules.tile_sum(codes))
            value = solution.values[i][int(np.searchsorted(solution.keys[i], key)), 0]
            if not seen[j, d]:
                q[j, d], seen[j, d] = reward, True
            q[j, d] += p * value
        return np.argmax(q, axis=1)

    return choose


@pytest.mark.parametrize("board", ["2x2", "2x3"])
def test_the_optimal_policy_gets_the_optimum(solved, board):
    solution = solved[(board, "2048")]
    result = exact_policy_value(solution, optimal(solution))
    assert result.expected_score == pytest.approx(solution.expected_score, rel=1e-12)
    assert result.optimal_move_share == 1.0
    assert all(abs(loss) < 1e-9 for _, loss in result.loss_by_layer)


def test_a_bad_answer_is_refused(solved):
    solution = solved[("2x2", "2048")]
    with pytest.raises(TD2048Error, match="illegal move"):
        exact_policy_value(solution, lambda boards: np.zeros(len(boards), int))  # up from every board
    with pytest.raises(TD2048Error, match="moves for"):
        exact_policy_value(solution, lambda boards: [3])
    with pytest.raises(TD2048Error, match="0 \\(up\\)"):
        exact_policy_value(solution, lambda boards: np.full(len(boards), 7))


def test_a_trained_model_matches_its_sampled_games(model_2x3):
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(model_2x3 / "2x3.solution", "2x3", "2048")
    result = exact_policy_value(solution, agent_policy(Agent(network, seed=0)))
    games = 4000
    scores, codes, moves = (np.zeros(games, np.int64) for _ in range(3))
    Agent(network, seed=7).play_into(scores, codes, moves)
    error = scores.std(ddof=1) / np.sqrt(games)
    assert abs(scores.mean() - result.expected_score) < 4 * error, (scores.mean(), result.expected_score, error)
    reached = (codes >= 5).mean()  # the tile 32
    assert abs(reached - result.reach[32]) < 4 * np.sqrt(result.reach[32] * (1 - result.reach[32]) / games) + 1e-9
    assert abs(moves.mean() - result.moves) < 4 * moves.std(ddof=1) / np.sqrt(games)
    assert result.expected_score < result.optimal_expected_score and 0 < result.optimal_move_share < 1


def test_the_command_prints_one_json_line_and_refuses_another_board(model_2x3):
    model = model_2x3 / "run" / "model.td2048"
    result = td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    network, _ = load_model(model)
    want = exact_policy_value(load_solution(model_2x3 / "2x3.solution"), agent_policy(Agent(network, seed=0)))
    assert data["expected_score"] == pytest.approx(want.expected_score, rel=1e-12)
    assert data["optimal_expected_score"] == pytest.approx(480.258, abs=1e-3)
    assert data["reach"] == {str(t): p for t, p in want.reach.items()} and "128" in data["optimal_reach"]
    assert data["optimal_move_share"] == pytest.approx(want.optimal_move_share)
    # every probability within [0, 1]: a sure tile's reach is 1.0, not 1.0000000000000002
    shares = [*data["reach"].values(), *data["optimal_reach"].values(), data["optimal_move_share"]]
    assert all(0 <= p <= 1 for p in shares) and data["reach"]["2"] == data["optimal_reach"]["2"] == 1.0
    assert len(data["loss_by_stage"]) == 8 and data["search"]["depth"] == 1
    deeper = td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--json", "--depth", "2")
    assert deeper.returncode == 0, deeper.stderr
    assert json.loads(deeper.stdout.strip().splitlines()[-1])["search"]["depth"] == 2
    text = td2048("eval", model, "--exact", model_2x3 / "2x3.solution")
    assert text.returncode == 0 and "optimal moves" in text.stdout and "tile sum" in text.stdout
    assert_one_line_error(td2048("eval", model, "--exact", model_2x3 / "2x2.solution"), "2x2", "2x3")
    assert_one_line_error(td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--record", "x.txt"),
                          "--record")
    # the exact distribution of the model's score: the API's figures, in the JSON and in the table
    scored = td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--json", "--score-at-least", "256,512")
    assert scored.returncode == 0, scored.stderr
    data = json.loads(scored.stdout.strip().splitlines()[-1])
    dist = exact_policy_value(load_solution(model_2x3 / "2x3.solution"), agent_policy(Agent(network, seed=0)),
                              distribution=True).score
    assert data["score_median"] == dist.median and data["score_mode"] == dist.mode
    assert data["p_score_at_least"] == {"256": pytest.approx(dist.at_least(256)),
                                        "512": pytest.approx(dist.at_least(512))}
    table = td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--score-at-least", "256")
    assert table.returncode == 0 and "P(score >= 256)" in table.stdout
    assert_one_line_error(td2048("eval", model, "--score-at-least", "256"), "--exact")


def test_a_models_exact_value_is_the_same_on_any_thread_count_and_at_depth_2(model_2x3):
    """Each board is searched with an empty table: the moves, hence the figures, do not depend on the threads."""
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    solution = load_solution(model_2x3 / "2x3.solution")
    one = exact_policy_value(solution, agent_policy(Agent(network, seed=0)))
    three = exact_policy_value(solution, agent_policy(Agent(network, seed=0, threads=3)))
    assert one.to_json() == three.to_json()
    deep = [exact_policy_value(solution, agent_policy(Agent(network, seed=0, threads=t, depth=2))) for t in (1, 2)]
    assert deep[0].to_json() == deep[1].to_json()
    assert deep[0].expected_score != one.expected_score


def test_agent_choose_is_the_agents_move_on_each_board(model_2x3):
    """A batch on two threads gets the move best_move gives each board alone, -1 where the game is over."""
    network, _ = load_model(model_2x3 / "run" / "model.td2048")
    player = Agent(network, seed=5)
    boards, board, values = [], player.spawn(player.spawn(0)), np.empty(4)
    while len(boards) < 80:
        boards.append(board)
        move, _, _, board = player.step(board, values)
        if move < 0:
            board = player.spawn(player.spawn(0))
    agent = Agent(network, seed=0, threads=2)
    want = [MOVE_NAMES.index(m) if (m := agent.best_move(b)) else -1 for b in boards]
    assert -1 in want and agent.choose(np.array(boards, np.uint64)).tolist() == want


def least_orientation(choose, shape):
    """The policy that asks ``choose`` about each board's least symmetric image (as the solver keys it) and
    plays the move it gives there, mapped back onto the board: what a valuation up to symmetry values."""
    from td2048.games.bitboard import flip, mirror, transpose

    col_shift, row_shift = 4 * (4 - shape.cols), 16 * (4 - shape.rows)
    # each image as (board -> image, a move on the image -> the move on the board); 0 up, 1 right, 2 down, 3 left
    m = (lambda b: int(mirror(b)) >> col_shift, (0, 3, 2, 1))
    f = (lambda b: int(flip(b)) >> row_shift, (2, 1, 0, 3))
    t = (lambda b: int(transpose(b)), (3, 2, 1, 0))
    ident = (lambda b: b, (0, 1, 2, 3))

    def then(g, h):  # h after g
        return lambda b: h[0](g[0](b)), tuple(g[1][h[1][d]] for d in range(4))

    images = [ident, m, f, then(f, m)]
    if shape.square:
        images += [then(g, t) for g in images]

    def ask(boards):
        best = [min((g[0](int(b)), g[1]) for g in images) for b in boards]
        moves = choose(np.array([k for k, _ in best], np.uint64))
        return np.array([back[int(d)] for (_, back), d in zip(best, moves, strict=True)])

    return ask


@pytest.mark.parametrize("board", ["2x2", "2x3"])
def test_valued_up_to_symmetry_a_policy_is_its_play_in_the_least_orientation(solved, board):
    """Up to symmetry, any policy is valued as the one that plays each board in its least orientation, on
    fewer positions; the optimal policy still gets the optimum."""
    solution = solved[(board, "2048")]
    up_to = exact_policy_value(solution, preferring(board, "2048"), symmetric=True)
    played = exact_policy_value(solution, least_orientation(preferring(board, "2048"), solution.board))
    assert_same_figures(up_to, played)
    assert up_to.positions < played.positions / 2
    optimum = exact_policy_value(solution, optimal(solution), symmetric=True)
    assert optimum.expected_score == pytest.approx(solution.expected_score, rel=1e-12)
    assert optimum.optimal_move_share == 1.0


def assert_same_figures(up_to, played):
    assert up_to.symmetric and not played.symmetric
    assert up_to.expected_score == pytest.approx(played.expected_score, rel=1e-12)
    assert up_to.optimal_move_share == pytest.approx(played.optimal_move_share, rel=1e-12)
    assert up_to.moves == pytest.approx(played.moves, rel=1e-12)
    assert up_to.reach == pytest.approx(played.reach, rel=1e-12, abs=1e-15)
    assert [s["loss"] for s in up_to.loss_by_stage] == \
        pytest.approx([s["loss"] for s in played.loss_by_stage], rel=1e-9, abs=1e-12)


def test_a_symmetric_network_valued_up_to_symmetry(model_2x3, tmp_path):
    """A network with all the board's isomorphisms: valued up to symmetry from the command line (eval
    --symmetric) as its least-orientation play; a network with fewer is refused, and so is --symmetric alone."""
    model = model_2x3 / "run" / "model.td2048"
    network, _ = load_model(model)
    solution = load_solution(model_2x3 / "2x3.solution")
    assert network.spec.symmetric
    agent = Agent(network, seed=0)
    r = td2048("eval", model, "--exact", model_2x3 / "2x3.solution", "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    played = exact_policy_value(solution, least_orientation(agent.choose, solution.board))
    assert data["symmetric"] is True and data["positions"] < played.positions / 2
    assert data["expected_score"] == pytest.approx(played.expected_score, rel=1e-12)
    assert data["optimal_move_share"] == pytest.approx(played.optimal_move_share, rel=1e-12)
    assert_one_line_error(td2048("eval", model, "--symmetric", "--games", 10), "--exact")
    lopsided = tmp_path / "iso1.td2048"
    save_model(lopsided, Network(parse_network("2x3", isomorphisms=1, board=as_shape("2x3"))), game="2048")
    assert not load_model(lopsided)[0].spec.symmetric
    assert_one_line_error(td2048("eval", lopsided, "--exact", model_2x3 / "2x3.solution", "--symmetric"),
                          "symmetries")


@pytest.mark.parametrize("board, game", [("2x3", "2048"), ("3x3", "2048"), ("2x4", "2584"), ("4x4", "2048")])
def test_packed_boards_give_their_grids_and_legal_moves(board, game):
    """td2048.envs.policy's view of a packed board (what exact_policy_value asks a policy about): its cells
    and its legal moves, as the plain-Python game has them."""
    from td2048.envs.policy import board_grids, legal_masks

    shape = as_shape(board)
    rng = np.random.default_rng(3)
    grids = rng.integers(0, 6, (300, shape.rows, shape.cols))
    grids[rng.random(grids.shape) < 0.3] = 0
    top = 31 if game == "2584" else 15  # the largest code, which does not merge
    grids[(grids > 0) & (rng.random(grids.shape) < 0.3)] += top - 5  # tiles past code 15 in 2584 (in hi)
    frame = shape.frame_cells
    codes = grids.reshape(300, -1)
    lo = np.array([sum(int(c & 15) << (4 * f) for c, f in zip(row, frame)) for row in codes], np.uint64)
    packed = lo
    if game == "2584":
        hi = np.array([sum(int(c >> 4) << f for c, f in zip(row, frame)) for row in codes], np.uint64)
        packed = np.stack([lo, hi], axis=1)
    got = board_grids(packed, game, board)
    assert got.dtype == np.int8 and np.array_equal(got, grids)
    want = [[naive.move(g.tolist(), d, top, game)[0] != g.tolist() for d in range(4)] for g in grids]
    assert np.array_equal(legal_masks(got, game), np.array(want))
