"""Expectimax search against a written-out plain-Python expectimax; the table, limits, downgrading."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import all_symmetries, from_grid, move, to_grid
from test_learn import SMALL
from test_state_values import naive_expectation, random_weights
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.errors import TD2048Error
from td2048.games.wide import wide_from_codes
from td2048.network import Network, parse_network
from td2048.play import Agent, Search, parse_board, parse_limits, parse_search
from td2048.rng import game_rng_states

MOVES = ("up", "right", "down", "left")
P_SECOND = 0.1


def grid_of(codes):
    return [list(codes[4 * r:4 * r + 4]) for r in range(4)]


def board_of(net, codes):
    return wide_from_codes(codes) if net.wide else from_grid(grid_of(codes))


def naive_leaf(net, codes):
    return naive_expectation(net, codes) if net.state_values else net.value(board_of(net, codes))


def naive_afterstate(net, codes, depth, limits=None):
    """A(s', depth): the leaf at depth 1, else the mean over empty cells of 0.9 M(tile 1) + 0.1 M(tile 2)."""
    empty = [i for i in range(16) if codes[i] == 0]
    if limits is not None:
        depth = min(depth, limits[len(empty)])
    if depth <= 1 or not empty:
        return naive_leaf(net, codes)
    total = 0.0
    for i in empty:
        for code, p in ((1, 1 - P_SECOND), (2, P_SECOND)):
            placed = list(codes)
            placed[i] = code
            total += p * naive_best(net, placed, depth - 1, limits)
    return total / len(empty)


def naive_moves(net, codes, depth, limits=None):
    """Each move's r + A(afterstate, depth), None where illegal."""
    max_code = 31 if net.wide else 15
    values = []
    for d in range(4):
        grid, reward = move(grid_of(codes), d, max_code, net.game)
        after = [c for row in grid for c in row]
        values.append(None if after == list(codes) else reward + naive_afterstate(net, after, depth, limits))
    return values


def naive_best(net, codes, depth, limits=None):
    legal = [v for v in naive_moves(net, codes, depth, limits) if v is not None]
    return max(legal) if legal else 0.0


def searched(net, codes, depth, **options):
    values = Agent(net, Search(depth, **options)).analyze(board_of(net, codes))
    return [values[m] for m in MOVES]


def assert_same_values(got, expected):
    for g, e in zip(got, expected, strict=True):
        assert (g is None) == (e is None), (got, expected)
        if e is not None:
            assert g == pytest.approx(e, rel=1e-9, abs=1e-9), (got, expected)


NETWORKS = {  # (tuples, isomorphisms, clamp, game, method)
    "2048": (SMALL, 8, None, "2048", "afterstate"),
    "2048-state": (SMALL, 4, None, "2048", "state"),
    "2584": (FIB_NETWORK, 8, FIB_CLAMP, "2584", "afterstate"),
}


@pytest.fixture(scope="module", params=list(NETWORKS))
def network(request):
    tuples, iso, clamp, game, method = NETWORKS[request.param]
    return random_weights(Network(parse_network(tuples, iso, clamp), game=game, method=method), 5)


boards = st.lists(st.integers(0, 9), min_size=16, max_size=16)


@settings(max_examples=25)
@given(codes=boards, depth=st.integers(1, 2))
def test_search_equals_plain_expectimax(network, codes, depth):
    assert_same_values(searched(network, codes, depth), naive_moves(network, codes, depth))


@settings(max_examples=6)
@given(codes=boards.filter(lambda c: c.count(0) <= 5))
def test_depth_3_equals_plain_expectimax(network, codes):
    assert_same_values(searched(network, codes, 3, tt_size=1 << 16), naive_moves(network, codes, 3))


def test_hand_worked_values():
    """Zero weights: values are rewards. 2 2 on the top row: left and right merge (4); then a new 4
    in the top row or the column of the 4 (6 of 15 cells, p 0.1) merges again for 8: 4 + 0.32.
    Down keeps the pair, which any next move merges: 0 + 4."""
    net = Network(parse_network(SMALL))
    board = from_grid([[1, 1, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    assert searched(net, to_codes(board), 1) == [None, 4.0, 0.0, 4.0]
    assert_same_values(searched(net, to_codes(board), 2), [None, 4.32, 4.0, 4.32])


def to_codes(board):
    return [c for row in to_grid(board) for c in row]


@settings(max_examples=10)
@given(codes=boards.filter(lambda c: c.count(0) <= 6))
def test_transposition_table_changes_no_value(network, codes):
    without = searched(network, codes, 3, tt_size=0)
    assert_same_values(searched(network, codes, 3, tt_size=1 << 12), without)  # small: entries get replaced
    assert_same_values(searched(network, codes, 3, tt_size=1 << 20), without)


@settings(max_examples=10)
@given(codes=boards.filter(lambda c: c.count(0) <= 7))
def test_symmetric_boards_have_equal_values(codes):
    net = random_weights(Network(parse_network(SMALL, 8)), 5)
    expected = sorted(v for v in searched(net, codes, 2) if v is not None)
    for grid in all_symmetries(grid_of(codes)):
        values = sorted(v for v in searched(net, [c for row in grid for c in row], 2) if v is not None)
        assert values == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_games_with_and_without_the_table_are_the_same():
    """Bit for bit on a network without symmetries. (With them, the table gives a board its mirror
    image's value, which can differ in the last bit, so an exact tie may break the other way.)"""
    net = random_weights(Network(parse_network(SMALL, 1)), 6)
    a = Agent(net, Search(2, tt_size=0), seed=3).play(3)
    b = Agent(net, Search(2, tt_size=1 << 20), seed=3).play(3)
    assert (a.avg, a.moves) == (b.avg, b.moves)


def test_depth_1_plays_the_greedy_games():
    from td2048.learn import Learner
    from td2048.learning_options import LearningOptions

    net = random_weights(Network(parse_network(SMALL)), 6)
    greedy = Agent(net, seed=9).play(30)
    learner = Learner(net.copy(), seed=9)
    # the learning kernels' greedy choices, with alpha 0, each game from its own state: the same moves and draws
    scores, moves = [], []
    for state in game_rng_states(9, 0, 30):
        learner.rng_state[:] = state
        block = learner.run(1, 1e-300, LearningOptions(update="forward"))
        scores.append(int(block.scores[0]))
        moves.append(int(block.moves[0]))
    assert greedy.moves == sum(moves) and greedy.avg == np.mean(scores)


def greedy_blocks(net, table, starts, per_call):
    """Play the games of ``starts`` with the greedy kernel, ``per_call`` games a call at most, as Agent does: each
    game's (score, moves, largest code), or where the kernel handed it off ("handed", board, score, moves); the
    random state after the last game; and the games started."""
    kernels, games = net.kernels, []
    rng, counters = np.zeros(4, np.uint64), np.zeros(16, np.int64)
    handoff = (np.zeros((2, 2), np.uint64), np.zeros(2, np.int64))
    while len(games) < len(starts):
        block = starts[len(games):len(games) + per_call]
        out = tuple(np.zeros(len(block), np.int64) for _ in range(3))
        played, handed = kernels.greedy_block(table, net.weights, rng, block, counters, out, handoff)
        games += [(int(out[0][e]), int(out[2][e]), int(out[1][e])) for e in range(played)]
        if handed:
            games.append(("handed", int(handoff[0][0, 0]), int(handoff[1][0]), int(handoff[1][1])))
    return games, rng, counters[net.kernels.TT_GAME]


def test_games_in_flight_are_the_games_one_after_another(network):
    assert network.kernels.GAMES_IN_FLIGHT == 2  # 16 or 8 features a board
    the_same_games_together_and_one_by_one(network)


@settings(max_examples=5)
@given(st.lists(boards, min_size=1, max_size=9))
def test_a_batch_of_greedy_choices_is_each_board_s_own(network, batch):
    packed = [board_of(network, codes) for codes in batch]
    rows = np.array([list(b) if isinstance(b, tuple) else [b] for b in packed], np.uint64)
    agent = Agent(network)
    assert agent.choose(rows).tolist() == [int(agent.choose(rows[i:i + 1])[0]) for i in range(len(rows))]


def test_a_network_of_over_40_features_plays_one_game_at_a_time():
    net = random_weights(Network(parse_network("0123,4567,012,0145,37b,c8")), 4)  # 48 features
    assert net.kernels.GAMES_IN_FLIGHT == 1
    the_same_games_together_and_one_by_one(net)


def the_same_games_together_and_one_by_one(net):
    starts = game_rng_states(5, 0, 40)
    together, rng, _ = greedy_blocks(net, net.row_table(), starts, 40)
    one_by_one, last, _ = greedy_blocks(net, net.row_table(), starts, 1)
    assert together == one_by_one and rng.tolist() == last.tolist()
    assert len(set(together)) > 30


def test_games_in_flight_hand_off_in_order():
    """A row table rigged so that a slide of any row holding a 128 leaves two 32768 tiles: most games hand off, in
    flight beside earlier and later games; the kernel hands each off after every game before it (a later game in
    flight is played again), as one game after the other does."""
    net = random_weights(Network(parse_network(SMALL)), 4)
    table = net.row_table().copy()
    rows = np.arange(len(table), dtype=np.uint64)
    holds_a_128 = np.zeros(len(table), bool)
    for cell in range(4):
        holds_a_128 |= ((rows >> np.uint64(4 * cell)) & np.uint64(15)) == 7
    table[holds_a_128] = (table[holds_a_128] & np.uint64(0xFFFFFFFF00000000)) | np.uint64(0x00FF | (0xFF00 << 16))
    starts = game_rng_states(6, 0, 40)
    together, rng, started = greedy_blocks(net, table, starts, 40)
    one_by_one, last, _ = greedy_blocks(net, table, starts, 1)
    assert together == one_by_one and rng.tolist() == last.tolist()
    assert 10 < sum(game[0] == "handed" for game in together) < 40 and started > 40  # some played again


@settings(max_examples=8)
@given(codes=boards.filter(lambda c: c.count(0) <= 6), limit=st.lists(st.integers(1, 3), min_size=1, max_size=17))
def test_depth_limits_cap_the_depth_by_empty_cells(network, codes, limit):
    text = ",".join(map(str, limit))
    limits = list(parse_limits(text))
    assert_same_values(searched(network, codes, 3, limits=text), naive_moves(network, codes, 3, limits))


def naive_downgrade(codes, top):
    codes = list(codes)
    while max(codes) >= top:
        gaps = [g for g in range(1, max(codes)) if g not in codes]
        if not gaps:
            break
        codes = [c - 1 if c > gaps[-1] else c for c in codes]
    return codes


@settings(max_examples=20)
@given(codes=st.lists(st.sampled_from([0, 1, 2, 3, 5, 8, 11, 13, 14, 15]), min_size=16, max_size=16),
       top=st.integers(10, 15))
def test_downgrading_searches_the_downgraded_board(codes, top):
    net = random_weights(Network(parse_network(SMALL)), 8)
    assert_same_values(searched(net, codes, 2, downgrade=1 << top), searched(net, naive_downgrade(codes, top), 2))


def test_parse_board_and_bad_options():
    assert parse_board("2,4,0,0 0 0 0 0 0 0 0 0 0 0 0 8") == 1 | (2 << 4) | (3 << 60)
    assert parse_board(",".join(["1", "2"] + ["0"] * 14), "2584", wide=True) == (1 | (2 << 4), 0)
    for bad in ("2,4", "3" + ",0" * 15, "x" + ",0" * 15, "65536" + ",0" * 15):
        with pytest.raises(TD2048Error):
            parse_board(bad)
    for options in ({"depth": 0}, {"depth": 99}, {"limits": "0"}, {"limits": "a,b"}, {"downgrade": 100},
                    {"downgrade": 32768, "game": "2584"}):
        with pytest.raises(TD2048Error):
            parse_search(**options)


def test_a_model_over_the_default_memory_limit_plays_unless_a_limit_is_given():
    from td2048.games.shape import BoardShape
    from td2048.network import Network
    from td2048.play import Agent
    from td2048.spec import parse_network

    spec = parse_network("012345678", clamp=9, board=BoardShape.parse("3x3"))  # 3.73 GiB: the 3x3 recipe's
    network = Network(spec, np.zeros(spec.n_weights, np.float32), memory_limit=4 << 30)  # calloc: never touched
    assert Agent(network, depth=2, threads=2).threads == 2  # by default a model's own weights always fit
    with pytest.raises(TD2048Error, match="exceed the memory limit"):
        Agent(network, memory_limit=2 << 30)
