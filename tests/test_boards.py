"""Boards of other shapes (2x2 up to 4x4) in the corner of the 4x4 frame: moves and new tiles against the plain
rules of naive.py, shapes and their symmetries, networks on a 3x3 and a 2x4 board, and the command line on them."""

import json
import re

import numpy as np
import pytest
from commands import assert_one_line_error, td2048
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import LEFT, RIGHT, UP, frame_codes, from_grid, grid_of_frame, move, network_value, symmetries, to_grid
from naive import tuple_index as naive_tuple_index

from td2048.errors import TD2048Error
from td2048.games.bitboard import symmetric_boards
from td2048.games.game2048 import py_move, py_spawn_tile
from td2048.games.shape import FULL, SHAPES, BoardShape
from td2048.games.wide import py_wide_move, py_wide_spawn, wide_from_codes, wide_to_codes
from td2048.io.model import load_model
from td2048.kernels.features import symmetric_cells
from td2048.network import Network
from td2048.presets import BOARD_PRESETS, presets_of
from td2048.rng import make_rng_state
from td2048.spec import parse_network

SHAPE_IDS = [s.name for s in SHAPES]
THREE = BoardShape(3, 3)
TWO_BY_FOUR = BoardShape(2, 4)


def grids(shape, codes, few):
    """R x C grids of the shape: any codes, or few distinct ones (rich in merges)."""
    n = shape.n_cells
    cells = st.one_of(st.lists(codes, min_size=n, max_size=n), st.lists(st.sampled_from(few), min_size=n, max_size=n))
    return cells.map(lambda cs: [cs[r * shape.cols:(r + 1) * shape.cols] for r in range(shape.rows)])


def outside(shape) -> int:
    """The frame's nibbles off the board."""
    return ((1 << 64) - 1) & ~(shape.cells_mask * 0xF)


# --- naive.py's own shapes: the 4x4 calls are unchanged, the others mean what they say -------------------------

def test_naive_on_other_shapes_by_hand():
    grid = [[1, 1, 2], [0, 2, 2], [3, 0, 3]]
    assert move(grid, LEFT) == ([[2, 2, 0], [3, 0, 0], [4, 0, 0]], 4 + 8 + 16)
    assert move(grid, RIGHT) == ([[0, 2, 2], [0, 0, 3], [0, 0, 4]], 4 + 8 + 16)
    assert move(grid, UP) == ([[1, 1, 3], [3, 2, 3], [0, 0, 0]], 8)  # columns of 3
    two = [[1, 0, 1, 2], [1, 2, 2, 2]]  # columns of 2
    assert move(two, UP) == ([[2, 2, 1, 3], [0, 0, 2, 0]], 4 + 8)
    assert move(two, LEFT) == ([[2, 2, 0, 0], [1, 3, 2, 0]], 4 + 8)
    assert move([[1, 2], [3, 4]], LEFT) == ([[1, 2], [3, 4]], 0)  # illegal: unchanged
    assert move([[1, 2, 3], [2, 4, 4]], LEFT, game="2584", max_code=31) == ([[3, 3, 0], [2, 4, 4]], 3)  # 1 + 2
    board = from_grid(grid)
    assert board == 0x303_0220_0211 and to_grid(board, THREE) == grid and to_grid(board, (3, 3)) == grid
    assert to_grid(board) == [[1, 1, 2, 0], [0, 2, 2, 0], [3, 0, 3, 0], [0] * 4]  # the 4x4 frame
    assert grid_of_frame(frame_codes(grid), THREE) == grid
    assert len(symmetries(grid)) == 8 and len(symmetries(two)) == 4
    assert symmetries(grid)[1] == [[3, 0, 1], [0, 2, 1], [3, 2, 2]]  # a quarter turn clockwise
    assert symmetries(two)[1:] == [[[2, 2, 2, 1], [2, 1, 0, 1]], [[2, 1, 0, 1], [2, 2, 2, 1]], two[::-1]]


@given(st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_naive_symmetries_of_4x4_are_the_bitboards(codes):
    board = from_grid([codes[4 * r:4 * r + 4] for r in range(4)])
    assert [to_grid(s) for s in symmetric_boards(board)] == symmetries(to_grid(board))


# --- moves: every shape, both games, 4-bit and 5-bit cells ----------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@settings(max_examples=150)
@given(data=st.data(), direction=st.integers(0, 3))
def test_moves_on_4_bit_cells_match_naive(shape, data, direction):
    grid = data.draw(grids(shape, st.integers(0, 15), [0, 1, 1, 2, 14, 15, 15]))
    board = from_grid(grid)
    after, reward = py_move(board, direction, shape)
    ref, ref_reward = move(grid, direction)
    assert (to_grid(after, shape), reward) == (ref, ref_reward)
    assert after & outside(shape) == 0  # nothing slides off the board into the frame's other cells
    if ref == grid:  # an illegal move changes nothing and pays nothing
        assert (after, reward) == (board, 0)


@pytest.mark.parametrize("game, high", [("2048", 20), ("2584", 25)])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@settings(max_examples=75)
@given(data=st.data(), direction=st.integers(0, 3))
def test_moves_on_5_bit_cells_match_naive(shape, game, high, data, direction):
    grid = data.draw(grids(shape, st.integers(0, high), [0, 0, 1, 1, 2, 3, 15, 16, high - 1, high]))
    board = wide_from_codes(frame_codes(grid))
    after, reward = py_wide_move(game, board, direction, shape)
    ref, ref_reward = move(grid, direction, max_code=31, game=game)
    codes = wide_to_codes(after)
    assert (grid_of_frame(codes, shape), reward) == (ref, ref_reward)
    assert codes == frame_codes(ref)  # the frame's other cells stay empty
    if ref == grid:
        assert (after, reward) == (board, 0)


def test_full_4x4_default_is_the_4x4_shape():
    rng = np.random.default_rng(4)
    for _ in range(100):
        codes = [int(c) for c in rng.integers(0, 16, 16)]
        board = from_grid([codes[4 * r:4 * r + 4] for r in range(4)])
        for d in range(4):
            assert py_move(board, d) == py_move(board, d, FULL)
            assert py_wide_move("2584", wide_from_codes(codes), d) == py_wide_move("2584", wide_from_codes(codes), d,
                                                                                  FULL)


# --- new tiles ------------------------------------------------------------------------------------------------

def _spawned_cell(before: list[int], after: list[int], shape) -> int:
    diff = [i for i in range(16) if before[i] != after[i]]
    assert len(diff) == 1, (before, after)
    cell = diff[0]
    assert cell in shape.frame_cells and before[cell] == 0 and after[cell] in (1, 2)
    return cell


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_new_tiles_land_on_the_shapes_empty_cells(shape):
    rng = np.random.default_rng(7)
    state = make_rng_state(shape.n_cells)
    codes = [0] * 16
    for i in shape.frame_cells[:-1]:  # the last cell stays empty
        codes[i] = int(rng.integers(1, 12)) if rng.random() < 0.6 else 0
    empty = {i for i in shape.frame_cells if codes[i] == 0}
    board = from_grid([codes[4 * r:4 * r + 4] for r in range(4)])
    wide = wide_from_codes([c + 16 if c > 8 else c for c in codes])  # some tiles past 4 bits
    wide_codes = wide_to_codes(wide)
    seen, wide_seen, fours = set(), set(), 0
    for _ in range(300):
        after = py_spawn_tile(board, state, shape)
        cell = _spawned_cell(codes, sum(to_grid(after), []), shape)
        seen.add(cell)
        fours += (after >> (4 * cell)) & 0xF == 2
        wide_seen.add(_spawned_cell(wide_codes, wide_to_codes(py_wide_spawn(wide, state, shape)), shape))
    assert seen == empty and wide_seen == empty  # every empty cell of the shape, none off it
    assert 10 <= fours <= 60  # a 4 with p = 0.1


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_a_full_shape_gets_no_new_tile(shape):
    state = make_rng_state(1)
    codes = [0] * 16
    for k, i in enumerate(shape.frame_cells):
        codes[i] = 1 + k % 5
    board = from_grid([codes[4 * r:4 * r + 4] for r in range(4)])
    wide = wide_from_codes([c + 17 if c == 3 else c for c in codes])
    for _ in range(20):
        assert py_spawn_tile(board, state, shape) == board
        assert py_wide_spawn(wide, state, shape) == wide


# --- shapes ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["5x5", "1x4", "abc", "4x5", "2x", "0", "3x3x3"])
def test_bad_shapes_are_one_line_errors(text):
    with pytest.raises(TD2048Error) as err:
        BoardShape.parse(text)
    assert "\n" not in str(err.value) and str(err.value)


def test_shapes():
    assert [s.name for s in SHAPES] == ["2x2", "2x3", "2x4", "3x2", "3x3", "3x4", "4x2", "4x3", "4x4"]
    assert BoardShape.parse("3x3") == THREE and BoardShape.parse(" 2X4 ") == TWO_BY_FOUR
    assert BoardShape.parse("4x4") == FULL and FULL.full and not THREE.full
    assert THREE.frame_cells == (0, 1, 2, 4, 5, 6, 8, 9, 10) and THREE.n_cells == 9 and THREE.square
    assert TWO_BY_FOUR.frame_cells == tuple(range(8)) and not TWO_BY_FOUR.square
    assert BoardShape(4, 2).frame_cells == (0, 1, 4, 5, 8, 9, 12, 13)
    for shape in SHAPES:
        assert shape.cells_mask == sum(1 << (4 * i) for i in shape.frame_cells)
        assert shape.frame_cells == tuple(4 * r + c for r in range(shape.rows) for c in range(shape.cols))
    with pytest.raises(TD2048Error):
        BoardShape(5, 5)


def _compose(p, q):
    """Cell i moved by p, then by q."""
    return tuple(q[p[i]] for i in range(len(p)))


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_symmetries_are_the_shapes_group(shape):
    syms = shape.symmetries
    n = shape.n_cells
    assert len(syms) == (8 if shape.square else 4) == shape.n_symmetries
    assert syms[0] == tuple(range(n))
    assert all(sorted(p) == list(range(n)) for p in syms)  # permutations
    assert len(set(syms)) == len(syms)
    assert all(_compose(p, q) in syms for p in syms for q in syms)  # a group
    # each one moves a grid as naive.symmetries does, in the same order
    grid = [[r * shape.cols + c + 1 for c in range(shape.cols)] for r in range(shape.rows)]
    flat = sum(grid, [])
    for perm, expected in zip(syms, symmetries(grid), strict=True):
        moved = [0] * n
        for i, j in enumerate(perm):
            moved[j] = flat[i]
        assert moved == sum(expected, [])


def test_4x4_symmetries_are_the_kernels():
    assert [list(p) for p in FULL.symmetries] == symmetric_cells()
    assert symmetric_cells(FULL) == symmetric_cells()
    grid = [[4 * r + c for c in range(4)] for r in range(4)]
    board = from_grid(grid)
    for perm, sym in zip(FULL.symmetries, symmetric_boards(board), strict=True):
        moved = [0] * 16
        for i, j in enumerate(perm):
            moved[j] = i
        assert sum(to_grid(sym), []) == moved


@pytest.mark.parametrize("shape", [s for s in SHAPES if not s.full], ids=[s.name for s in SHAPES if not s.full])
def test_frame_symmetries_keep_the_board_in_the_corner(shape):
    for frame in symmetric_cells(shape):
        assert sorted(frame) == list(range(16))
        assert {frame[i] for i in shape.frame_cells} == set(shape.frame_cells)
        assert all(frame[i] == i for i in range(16) if i not in shape.frame_cells)


# --- networks on a 3x3 and a 2x4 board ------------------------------------------------------------------------

def test_presets_name_the_boards_cells():
    for name, presets in BOARD_PRESETS.items():
        shape = BoardShape.parse(name)
        assert presets_of(shape) is presets
        for text in presets:
            spec = parse_network(text, board=shape)
            assert all(0 <= c < shape.n_cells for t in spec.tuples for c in t)
            assert spec.isomorphisms <= shape.n_symmetries
    spec = parse_network("3x3", board=THREE)
    assert spec.tuples == ((0, 1, 2), (3, 4, 5), (6, 7, 8)) and spec.isomorphisms == 8 and spec.nbytes == 48 * 1024
    assert parse_network("2x4", board=TWO_BY_FOUR).isomorphisms == 4


@pytest.mark.parametrize("text, board, fragments", [
    ("0129", THREE, ["cell 9", "3x3"]),
    ("012,3a", THREE, ["cell 10", "3x3"]),
    ("0128", TWO_BY_FOUR, ["cell 8", "2x4"]),
    ("4x6", THREE, ["4x6", "3x3"]),
])
def test_tuples_off_the_board_are_one_line_errors(text, board, fragments):
    with pytest.raises(TD2048Error) as err:
        parse_network(text, board=board)
    message = str(err.value)
    assert "\n" not in message and all(f in message for f in fragments), message


@pytest.mark.parametrize("text", ["2x4", "0123,4567"])
def test_eight_isomorphisms_on_a_rectangle_are_an_error(text):
    with pytest.raises(TD2048Error) as err:
        parse_network(text, isomorphisms=8, board=TWO_BY_FOUR)
    assert "\n" not in str(err.value) and "2x4" in str(err.value)


def _random_network(text, shape, seed=0):
    net = Network(parse_network(text, board=shape))
    net.weights[:] = np.random.default_rng(seed).standard_normal(net.weights.size).astype(np.float32)
    return net


NETWORKS = {}


def network_on(shape):
    """A 3x3 (preset 3x3) or 2x4 (preset 2x4) network with random weights, made once."""
    if shape not in NETWORKS:
        NETWORKS[shape] = _random_network({THREE: "3x3", TWO_BY_FOUR: "2x4"}[shape], shape)
    return NETWORKS[shape]


def _moved(grid, perm, shape):
    """The grid's cells moved by a permutation of the board's cells."""
    flat = sum(grid, [])
    out = [0] * shape.n_cells
    for i, j in enumerate(perm):
        out[j] = flat[i]
    return [out[r * shape.cols:(r + 1) * shape.cols] for r in range(shape.rows)]


@pytest.mark.parametrize("shape", [THREE, TWO_BY_FOUR], ids=["3x3", "2x4"])
@settings(max_examples=75)
@given(data=st.data())
def test_symmetric_boards_have_equal_values(shape, data):
    net = network_on(shape)
    grid = data.draw(grids(shape, st.integers(0, 15), [0, 0, 1, 2, 3, 11]))
    values = [net.value(from_grid(_moved(grid, perm, shape))) for perm in shape.symmetries]
    assert max(values) - min(values) <= 1e-5 * max(1.0, abs(values[0]))
    ref = network_value(net.tables(), net.spec.tuples, grid, symmetries(grid))
    assert values[0] == pytest.approx(ref, rel=1e-5, abs=1e-5)
    # the weights read: each tuple on each symmetric grid (naive cells: the board's own, row by row)
    expected = [off + naive_tuple_index(g, cells) for g in symmetries(grid)
                for cells, off in zip(net.spec.tuples, net.spec.table_offsets, strict=True)]
    assert sorted(net.feature_indices(from_grid(grid)).tolist()) == sorted(expected)


# --- the command line on other boards -------------------------------------------------------------------------

def _avgs(run) -> list[float]:
    return [json.loads(line)["avg"] for line in (run / "log.jsonl").read_text().splitlines()]


def _printed_avg(stdout: str) -> float:
    match = re.search(r"^\d+\tavg = ([0-9.]+)", stdout, re.MULTILINE)
    assert match, stdout
    return float(match.group(1))


def test_train_eval_and_resume_on_3x3(tmp_path, cli_env):
    run = tmp_path / "r33"
    r = td2048("train", "--board", "3x3", "--network", "3x3", "--episodes", 3000, "--block", 1000, "--seed", 1,
               "--out", run, "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    avgs = _avgs(run)
    assert len(avgs) == 3 and avgs[-1] > 1.3 * avgs[0], avgs  # it learns
    settings_json = json.loads((run / "settings.json").read_text())
    assert settings_json["board"] == "3x3" and settings_json["network"] == "3x3"
    net, header = load_model(run / "model.td2048")
    assert net.spec.board == THREE and net.spec.tuples == ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    assert header["training"]["episodes"] == 3000 and net.weights.any()

    e = td2048("eval", run / "model.td2048", "--games", 200, "--seed", 2, env=cli_env)
    assert e.returncode == 0, e.stderr
    assert "3x3" in e.stdout and _printed_avg(e.stdout) > avgs[0]
    deep = td2048("eval", run / "model.td2048", "--games", 20, "--seed", 2, "--depth", 2, env=cli_env)
    assert deep.returncode == 0, deep.stderr
    assert _printed_avg(deep.stdout) > 0

    again = td2048("train", "--resume", run, "--episodes", 4000, "--quiet", env=cli_env)
    assert again.returncode == 0, again.stderr
    assert len(_avgs(run)) == 4 and _avgs(run)[:3] == avgs
    net, header = load_model(run / "model.td2048")
    assert net.spec.board == THREE and header["training"]["episodes"] == 4000
    assert_one_line_error(td2048("train", "--resume", run, "--board", "2x4", "--episodes", 5000, env=cli_env),
                          "--board", "3x3")


def test_train_eval_and_resume_on_2x4(tmp_path, cli_env):
    run = tmp_path / "r24"
    r = td2048("train", "--board", "2x4", "--network", "2x4", "--episodes", 2000, "--block", 500, "--seed", 1,
               "--out", run, "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    avgs = _avgs(run)
    assert len(avgs) == 4 and avgs[-1] > 1.1 * avgs[0], avgs
    assert json.loads((run / "settings.json").read_text())["board"] == "2x4"
    net, _ = load_model(run / "model.td2048")
    assert net.spec.board == TWO_BY_FOUR and net.spec.isomorphisms == 4

    e = td2048("eval", run / "model.td2048", "--games", 100, "--seed", 2, "--json", env=cli_env)
    assert e.returncode == 0, e.stderr
    stats = json.loads(e.stdout)
    assert stats["games"] == 100 and stats["avg"] > avgs[0]

    again = td2048("train", "--resume", run, "--episodes", 2500, "--quiet", env=cli_env)
    assert again.returncode == 0, again.stderr
    assert len(_avgs(run)) == 5 and load_model(run / "model.td2048")[1]["training"]["episodes"] == 2500


@pytest.mark.parametrize("args, fragments", [
    (["--board", "5x5"], ["5x5", "not supported"]),
    (["--board", "3x3", "--network", "0129"], ["cell 9", "3x3"]),
])
def test_bad_boards_on_the_command_line(tmp_path, cli_env, args, fragments):
    result = td2048("train", *args, "--episodes", 5, "--out", tmp_path / "x", env=cli_env)
    assert_one_line_error(result, *fragments)
    assert not (tmp_path / "x").exists()
