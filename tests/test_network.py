"""Tuple specs, validation, index encoding, isomorphic values and the TD update."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import all_symmetries, from_grid, network_value, repeated_tuples, to_grid, tuple_index

from td2048.errors import TD2048Error
from td2048.games.bitboard import symmetric_boards
from td2048.games.shape import BoardShape
from td2048.intrinsics import fast_gather, fast_pext, fast_vector_indices, has_avx2, has_pext
from td2048.kernels import load_generated
from td2048.kernels.codegen import generate_source
from td2048.network import Network, parse_network
from td2048.presets import BOARD_PRESETS, PRESETS
from td2048.spec import TABLE_STAGGER, NetworkSpec, parse_size, parse_stages, tuple_runs

boards = st.integers(min_value=0, max_value=2**64 - 1)
SMALL = "0123,4567,012,0145,37b,c8"  # small tables, unusual shapes (runs, gaps, descending)


def random_network(text, iso=None, seed=0):
    net = Network(parse_network(text, iso))
    net.weights[:] = np.random.default_rng(seed).standard_normal(net.weights.size).astype(np.float32)
    return net


def test_presets():
    spec = parse_network("4x6")
    assert spec.tuples == ((0, 1, 2, 3, 4, 5), (4, 5, 6, 7, 8, 9), (0, 1, 2, 4, 5, 6), (4, 5, 6, 8, 9, 10))
    assert spec.isomorphisms == 8 and spec.n_features == 32 and spec.table_sizes == [16**6] * 4
    # 256 MiB of tables, each followed by a gap that keeps the tables' hot weights apart in the caches
    assert spec.nbytes == 4 * 4 * (16**6 + TABLE_STAGGER) and spec.table_offsets[1] == 16**6 + TABLE_STAGGER
    eight = parse_network("8x4")
    assert eight.isomorphisms == 1 and eight.n_features == 8
    assert eight.tuples[4] == (0, 4, 8, 12)
    assert parse_network("8x6").tuples[-1] == (0, 1, 4, 8, 9, 10)
    assert parse_network("7x6").tuples[:6] == parse_network("6x6").tuples
    assert parse_network("4x6", 4).isomorphisms == 4
    assert set(PRESETS) == {"8x4", "2x4", "4x5", "4x6", "5x6", "6x6", "7x6", "8x6"}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["2x2", "2x3", "3x2", "2x4", "3x3", "3x4", "4x3", "4x4"]), st.sampled_from([1, 4, 8]),
       st.lists(st.lists(st.integers(0, 15), min_size=1, max_size=4, unique=True), min_size=1, max_size=5))
def test_a_tuple_that_reads_an_earlier_ones_cells_on_a_symmetric_board_is_found(board, iso, cells):
    shape = BoardShape.parse(board)
    tuples = tuple(tuple(c for c in t if c < shape.n_cells) or (0,) for t in cells)
    iso = min(iso, shape.n_symmetries)
    spec = NetworkSpec(tuples, iso, board=shape)
    assert spec.repeated_tuples == repeated_tuples(tuples, shape.rows, shape.cols, iso)
    assert bool(spec.repeats_note()) == bool(spec.repeated_tuples)


def test_which_networks_repeat_a_tuple():
    assert all(not parse_network(name).repeated_tuples for name in PRESETS)  # 4x4's rows and columns differ
    four_by_three = parse_network("036914,147a25,036147,147258,0369147,147a036", board=BoardShape.parse("4x3"))
    assert four_by_three.repeated_tuples == [(3, 2)]  # two columns, three rows: the one such block up to symmetry
    assert "147258 reads the cells of 036147" in four_by_three.repeats_note()
    assert parse_network("0123,37bf", 4).repeated_tuples == [(1, 0)]  # a row turned a quarter is a column
    assert parse_network("0123,37bf", 1).repeated_tuples == []
    assert parse_network("0123,0123", 1).repeated_tuples == [(1, 0)]
    boards_presets = {(board, name): parse_network(name, board=board).repeated_tuples
                      for board, presets in BOARD_PRESETS.items() for name in presets}
    assert boards_presets[("3x4", "4x6")] == boards_presets[("4x3", "4x6")] == []


def test_custom_network_from_hex():
    spec = parse_network("012345,45689A")
    assert spec.tuples == ((0, 1, 2, 3, 4, 5), (4, 5, 6, 8, 9, 10)) and spec.isomorphisms == 8


@pytest.mark.parametrize("text, message", [
    ("01g3", "not a tuple of hex cells"),
    ("0123,", "empty tuple"),
    ("", "empty tuple"),
    ("0113", "repeats a cell"),
    ("7x7", "not a tuple of hex cells"),
])
def test_bad_networks(text, message):
    with pytest.raises(TD2048Error, match=message):
        parse_network(text)


def test_a_whole_board_tuple():
    """A tuple may hold every cell of its board: the memory limit, not the cell count, bounds a table."""
    spec = parse_network("012345678", clamp=9, board=BoardShape.parse("3x3"))
    assert list(spec.table_sizes) == [10 ** 9] and spec.tuples == (tuple(range(9)),)


def test_cells_outside_the_board():
    with pytest.raises(TD2048Error, match="outside 0..f"):
        NetworkSpec(((0, 16),))


def test_memory_limit():
    spec = parse_network("8x6")  # 8 x 16^6 x 4 bytes = 512 MiB
    spec.check_memory(parse_size("2GiB"))
    with pytest.raises(TD2048Error, match="over the memory limit"):
        spec.check_memory(parse_size("512MB"))
    with pytest.raises(TD2048Error, match="over the memory limit"):
        Network(parse_network("01234567"), memory_limit=parse_size("1GiB"))  # 16^8 * 4 B = 16 GiB
    assert parse_size("4GiB") == 4 * 2**30 and parse_size("512MB") == 512 * 10**6 and parse_size("100") == 100
    for bad in ("12XB", "-1GB", "0", "lots"):
        with pytest.raises(TD2048Error):
            parse_size(bad)


def test_runs():
    assert tuple_runs((0, 1, 2, 4, 5, 6)) == [(0, 0xFFF, 0), (16, 0xFFF, 12)]
    assert tuple_runs((3, 2)) == [(12, 0xF, 0), (8, 0xF, 4)]


def test_index_encoding_hand_worked():
    # codes 1..6 in cells 0..5, 7 in cell 6
    grid = [[1, 2, 3, 4], [5, 6, 7, 0], [0] * 4, [0] * 4]
    board = from_grid(grid)
    net = Network(NetworkSpec(((0, 1, 2, 3, 4, 5), (0, 1, 2, 4, 5, 6), (6, 1)), isomorphisms=1))
    idx = net.feature_indices(board)
    table = 16**6 + TABLE_STAGGER  # a table and the gap after it (128 MiB of weights: staggered)
    assert idx[0] == 0x654321
    assert idx[1] == table + 0x765321
    assert idx[2] == 2 * table + 0x27  # cell 6 (code 7) first, then cell 1 (code 2)


@settings(max_examples=200)
@given(boards)
def test_indices_match_reference(board):
    spec = parse_network(SMALL)
    net = Network(spec)
    syms = [to_grid(s) for s in symmetric_boards(board)]
    expected = [off + tuple_index(g, cells) for g in syms for cells, off in zip(spec.tuples, spec.table_offsets)]
    assert net.feature_indices(board).tolist() == expected


@pytest.fixture(scope="module")
def index_kernels():
    """Kernels of a network of tuples in several runs (ascending, gapped, descending), generated both ways: tuples
    read by shifts and masks, and by pext."""
    spec = parse_network("012456,45689a,01259a,0145,37b,c8")
    return spec, {pext: load_generated(f"td2048_test_indices_{int(pext)}", generate_source(spec, pext=pext))
                  for pext in (False, True)}


@pytest.mark.skipif(not has_pext(), reason="the CPU compiled for has no pext")
@settings(max_examples=300)
@given(boards)
def test_pext_reads_the_same_indices_as_shifts_and_masks(index_kernels, board):
    spec, kernels = index_kernels
    syms = [to_grid(s) for s in symmetric_boards(board)]
    # the kernels' rows: tuple-major, each tuple's indices on the 8 symmetric boards side by side
    expected = [off + tuple_index(g, cells) for cells, off in zip(spec.tuples, spec.table_offsets) for g in syms]
    for module in kernels.values():
        rows = np.zeros((1, spec.n_features), np.uint64)
        module.index_row(np.uint64(board), rows, np.int64(0))
        assert rows[0].tolist() == expected


@pytest.fixture(scope="module")
def gather_kernels():
    """Kernels of 8- and 4-isomorphism networks, their weights read by scalar loads and by vector gathers, with
    random weights."""
    specs = (parse_network("0123,4567,0145"), parse_network("0123,4567", isomorphisms=4))
    return [(spec, np.random.default_rng(5).standard_normal(spec.n_weights).astype(np.float32) * 1000,
             [load_generated(f"td2048_test_gather_{spec.isomorphisms}_{int(gather)}",
                             generate_source(spec, gather=gather)) for gather in (False, True)])
            for spec in specs]


@pytest.mark.skipif(not has_avx2(), reason="the CPU compiled for has no AVX2")
@settings(max_examples=100)
@given(boards)
def test_gathered_values_and_updates_are_the_plain_ones_bit_for_bit(gather_kernels, board):
    for spec, start, (plain, gathered) in gather_kernels:
        assert "weights gathered" in gathered.__doc__ and "weights gathered" not in plain.__doc__
        rows = np.zeros((1, spec.n_features), np.uint64)
        plain.index_row(np.uint64(board), rows, np.int64(0))
        assert plain.value_of(start, rows, 0) == gathered.value_of(start, rows, 0)
        weights, copy = start.copy(), start.copy()
        after = [plain.update_of(weights, plain.NO_TRACKING, rows, 0, 5000.0, 0.01),
                 gathered.update_of(copy, gathered.NO_TRACKING, rows, 0, 5000.0, 0.01)]
        assert after[0] == after[1] and np.array_equal(weights, copy)


@pytest.fixture(scope="module")
def vector_index_kernels():
    """Kernels whose feature indices are computed by the scalar code and in vectors: tuples of several runs on 8 and
    4 symmetric boards, two stages on TC's records, and boards smaller than the frame, square and not."""
    cases = [(parse_network("012456,45689a,01259a,0145,37b,c8"), {}),
             (parse_network("0123,4567,0145", isomorphisms=4, stages=parse_stages("1024")),
              {"tc": True, "records": True}),
             (parse_network("2x6", board="3x3"), {}), (parse_network("2x3", board="2x3"), {}),
             (parse_network("2x4", board="4x3"), {}), (parse_network("2x4", board="3x4"), {})]
    return [(spec, [load_generated(f"td2048_test_vector_{number}_{int(vector)}",
                                   generate_source(spec, vector=vector, **options)) for vector in (False, True)])
            for number, (spec, options) in enumerate(cases)]


@pytest.mark.skipif(not has_avx2(), reason="the CPU compiled for has no AVX2")
@settings(max_examples=150)
@given(boards)
def test_indices_in_vectors_are_the_scalar_code_s(vector_index_kernels, board):
    for spec, (scalar, vector) in vector_index_kernels:
        assert "indices in vectors" in vector.__doc__ and "indices in vectors" not in scalar.__doc__
        on_board = np.uint64(board & sum(0xF << (4 * c) for c in spec.board.frame_cells))
        weights = np.zeros(spec.n_weights, np.float32)
        rows = np.zeros((4, spec.n_features), np.uint64)
        scalar.index_row(on_board, rows, np.int64(0))
        vector.index_row(on_board, rows, np.int64(1))
        scalar.asked_indices(weights, on_board, rows, np.int64(2))
        vector.asked_indices(weights, on_board, rows, np.int64(3))
        assert all(rows[k].tolist() == rows[0].tolist() for k in (1, 2, 3)), spec.board


def test_pext_is_written_only_for_ascending_tuples_of_several_runs():
    source = generate_source(parse_network("012456,012345,6510"), pext=True)
    assert "pext(lo, U64_fff0fff)" in source  # 012456: two runs, ascending
    assert "pext(lo, U64_ffffff)" not in source and "lo & U64_ffffff" in source  # one run: a mask
    assert "pext(lo, U64_ff000f0)" not in source  # 6510 descends: shifts and masks
    assert "pext(" not in generate_source(parse_network("012456"), pext=False).split("U8 = np.uint8")[1]


@settings(max_examples=100)
@given(boards)
def test_value_equal_on_all_symmetric_boards(board):
    net = random_network(SMALL)
    values = [net.value(s) for s in symmetric_boards(board)]
    assert max(values) - min(values) < 1e-9 * max(1.0, abs(values[0]))
    ref = network_value(net.tables(), net.spec.tuples, to_grid(board), all_symmetries(to_grid(board)))
    assert values[0] == pytest.approx(ref, rel=1e-9, abs=1e-9)


@settings(max_examples=50)
@given(boards)
def test_four_isomorphisms_are_the_rotations(board):
    net = random_network(SMALL, iso=4)
    rotations = symmetric_boards(board)[:4]
    values = [net.value(s) for s in rotations]
    assert max(values) - min(values) < 1e-9 * max(1.0, abs(values[0]))
    one = random_network(SMALL, iso=1)
    grid = to_grid(board)
    assert one.value(board) == pytest.approx(network_value(one.tables(), one.spec.tuples, grid, [grid]), rel=1e-9)


def test_td_update_moves_each_feature_by_the_split_alpha():
    net = random_network("2x4", seed=3)
    board = from_grid([[1, 2, 3, 0], [4, 5, 0, 0], [6, 0, 0, 1], [0, 0, 2, 0]])  # no symmetry: 16 distinct features
    indices = net.feature_indices(board)
    assert len(set(indices.tolist())) == 16
    before = net.weights[indices].copy()
    v0 = net.value(board)
    target, alpha = v0 + 100.0, 0.1
    v1 = net.td_update(board, target, alpha)
    step = np.float32(alpha / 16 * (target - v0))
    np.testing.assert_array_equal(net.weights[indices], before + step)
    assert v1 == pytest.approx(net.value(board), abs=1e-4)
    assert v1 - v0 == pytest.approx(alpha * (target - v0), rel=1e-5)
    assert np.count_nonzero(net.weights != random_network("2x4", seed=3).weights) == 16


@pytest.mark.parametrize("variable, use, has", [("TD2048_PEXT", fast_pext, has_pext),
                                                ("TD2048_GATHER", fast_gather, has_avx2),
                                                ("TD2048_VECTOR_INDICES", fast_vector_indices, has_avx2)])
def test_instructions_are_turned_off_and_on_by_the_environment(monkeypatch, variable, use, has):
    monkeypatch.setenv(variable, "0")
    use.cache_clear()
    try:
        assert use() is False
        monkeypatch.setenv(variable, "1")
        use.cache_clear()
        assert use() is has()
    finally:
        monkeypatch.delenv(variable)
        use.cache_clear()

