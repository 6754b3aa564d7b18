"""16-bit weights (``--weight-bits 16``): exact integer values, TD steps in whole steps rounded at random in
proportion, float32 models, and the options they refuse."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import from_grid, short_td_update

from td2048.errors import TD2048Error
from td2048.io.model import load_model
from td2048.kernels.features import ROUNDING_LCG, rounding_offset
from td2048.learn import Learner
from td2048.network import Network
from td2048.spec import WEIGHT_LIMIT, WEIGHT_STEP, parse_network

NETWORK = "2x4"  # 16 features, 8 isomorphisms: small tables, and boards whose symmetric images share features


@pytest.fixture(scope="module")
def short_net():
    net = Network(parse_network(NETWORK), weight_bits=16)
    net.weights[:] = np.random.default_rng(1).integers(-3000, 3000, net.weights.size, dtype=np.int16)
    return net


grids = st.lists(st.integers(0, 11), min_size=16, max_size=16).map(lambda c: from_grid([c[i:i + 4]
                                                                                        for i in range(0, 16, 4)]))


@given(board=grids)
def test_a_value_is_the_exact_sum_of_its_weights_steps(short_net, board):
    indices = short_net.feature_indices(board)
    assert short_net.value(board) == float(sum(int(short_net.weights[i]) for i in indices)) * WEIGHT_STEP
    assert short_net.with_weight_bits(32).value(board) == short_net.value(board)  # whole numbers: exact in float32


@given(board=grids, error=st.floats(-2e4, 2e4), alpha=st.floats(0.001, 1.0))
def test_a_td_step_moves_every_feature_by_the_same_whole_steps_as_the_reference(short_net, board, error, alpha):
    net = short_net.copy()
    v0 = net.value(board)
    indices = [int(i) for i in net.feature_indices(board)]
    expected = [int(w) for w in net.weights]
    word = 1 if net._rounding is None else int(net._rounding[0])
    v1 = net.td_update(board, v0 + error, alpha)
    offsets = [rounding_offset(f) for f in range(net.spec.n_features)]
    v, z = short_td_update(expected, indices, v0 + error, alpha / net.spec.n_features, WEIGHT_STEP, WEIGHT_LIMIT,
                           word, ROUNDING_LCG, offsets)
    assert v1 == v and int(net._rounding[0]) == z
    np.testing.assert_array_equal(net.weights, np.array(expected, np.int16))


@pytest.fixture(scope="module")
def gapped_net():
    """A 16-bit network with gaps between its tables (16 MiB of float32 or more): threads on one table get the
    kernels that write back only the weights an update changes."""
    net = Network(parse_network("4x5"), weight_bits=16)
    assert net.spec.stagger > 0
    return net


@settings(max_examples=40)
@given(board=grids, error=st.floats(-2e3, 2e3), alpha=st.floats(0.001, 0.1), word=st.integers(0, 2 ** 64 - 1))
def test_threads_on_one_table_step_as_the_reference_and_write_unchanged_weights_to_their_spare(
        gapped_net, board, error, alpha, word):
    net = gapped_net
    kernels = net.kernels_for(shared=True)
    assert kernels is not net.kernels_for()
    indices = [int(i) for i in net.feature_indices(board)]
    used = sorted(set(indices))  # the reference works on these weights alone
    net.weights[:] = 0
    net.weights[used] = np.arange(len(used)) * 7 - 50
    expected = [int(net.weights[i]) for i in used]
    spares = net.spec.spare_weights(3)
    assert len({s // 32 for s in spares}) == 3 and not set(spares) & set(indices)  # lines of their own, unread
    row = np.zeros(8, np.uint64)
    row[:2] = [word, spares[1]]
    v0 = net.value(board)
    v1 = kernels.td_update(net.weights, row, np.uint64(board), v0 + error, alpha / net.spec.n_features)
    v, z = short_td_update(expected, [used.index(i) for i in indices], v0 + error, alpha / net.spec.n_features,
                           WEIGHT_STEP, WEIGHT_LIMIT, word, ROUNDING_LCG,
                           [rounding_offset(f) for f in range(net.spec.n_features)])
    assert v1 == v and int(row[0]) == z
    assert net.weights[used].tolist() == expected
    assert np.count_nonzero(net.weights) == np.count_nonzero(expected)  # the spare weight holds 0, and no other


def test_two_threads_on_one_16_bit_table_learn_and_leave_the_gaps_empty(gapped_net):
    net = gapped_net.copy()
    net.weights[:] = 0
    block = Learner(net, seed=2, threads=2).run(400, 0.1)
    assert block.scores.mean() > 1000 and net.kernels_for(shared=True).run_block.signatures  # the threads' kernels
    ends = [o + n for o, n in zip(net.spec.table_offsets, net.spec.table_sizes, strict=True)]
    assert all(not net.weights[end:end + net.spec.stagger].any() for end in ends)


def test_steps_smaller_than_one_move_the_weights_by_as_much_on_average_and_nearly_exactly_in_sum():
    net = Network(parse_network(NETWORK), weight_bits=16)
    board = from_grid([[1, 2, 3, 0], [4, 5, 0, 0], [6, 0, 0, 1], [0, 0, 2, 0]])  # 16 distinct features
    indices = net.feature_indices(board)
    moves = []
    for _ in range(2000):  # the same update again and again: 0.3 steps
        net.td_update(board, 0.3 * net.spec.n_features / 0.1, 0.1)
        moves.append(net.weights[indices].astype(float))
        net.weights[indices] = 0
    moves = np.array(moves)
    assert set(moves.ravel()) == {0.0, 1.0}
    assert moves.mean() == pytest.approx(0.3, abs=0.01)  # 32,000 draws: sd 0.003
    assert moves.mean(axis=0) == pytest.approx(np.full(16, 0.3), abs=0.05)  # each weight: sd 0.01
    assert set(moves.sum(axis=1)) <= {4.0, 5.0, 6.0}  # spread draws: the update's 16 roundings nearly cancel


def test_weights_stay_within_the_limit_and_convert_both_ways():
    net = Network(parse_network(NETWORK), weight_bits=16)
    board = from_grid([[1, 2, 3, 0], [4, 5, 0, 0], [6, 0, 0, 1], [0, 0, 2, 0]])
    net.td_update(board, 1e9, 1.0)
    assert net.saturated_weights() == 16 and net.weights.max() == WEIGHT_LIMIT
    wide = net.with_weight_bits(32)
    assert wide.weights.dtype == np.float32 and wide.weights.max() == WEIGHT_LIMIT * WEIGHT_STEP
    wide.weights[:4] = [2.4, -2.6, 1e6, 0.5]
    assert wide.with_weight_bits(16).weights[:4].tolist() == [2, -3, WEIGHT_LIMIT, 0]


def test_16_bit_weights_learn():
    short, plain = (Network(parse_network(NETWORK), weight_bits=bits) for bits in (16, 32))
    averages = [Learner(net, seed=4).run(3000, 0.1).scores[-1000:].mean() for net in (short, plain)]
    assert averages[0] > 0.9 * averages[1]


@pytest.mark.parametrize("make", [
    lambda: Network(parse_network(NETWORK), game="2584", weight_bits=16),
    lambda: Network(parse_network(NETWORK), method="state", weight_bits=16),
    lambda: Network(parse_network(NETWORK), weight_bits=8),
    lambda: Network(parse_network(NETWORK), weight_bits=16).start_accumulators(),
    lambda: Learner(Network(parse_network(NETWORK), weight_bits=16), seed=1, threads=2, merge_seconds=1).run(2, 0.1),
])
def test_what_16_bit_weights_do_not_do_is_refused(make):
    with pytest.raises(TD2048Error):
        make()


def test_a_run_on_16_bit_weights_saves_float_models_resumes_and_refuses_tc(tmp_path, cli_env):
    run = tmp_path / "run"
    cli = [sys.executable, "-m", "td2048.cli"]
    subprocess.run([*cli, "train", "--network", NETWORK, "--weight-bits", "16", "--episodes", "400", "--block", "200",
                    "--seed", "3", "--out", str(run), "--quiet"], check=True, env=cli_env)
    model, _ = load_model(run / "model.td2048")
    assert model.weights.dtype == np.float32 and np.count_nonzero(model.weights)
    assert np.array_equal(model.weights, np.rint(model.weights))  # whole steps of one point
    assert json.loads((run / "settings.json").read_text())["weight_bits"] == 16
    subprocess.run([*cli, "train", "--resume", str(run), "--episodes", "600", "--quiet"], check=True, env=cli_env)
    resumed, header = load_model(run / "model.td2048")
    assert header["training"]["episodes"] == 600 and np.array_equal(resumed.weights, np.rint(resumed.weights))
    changed = subprocess.run([*cli, "train", "--resume", str(run), "--episodes", "800", "--weight-bits", "32"],
                             capture_output=True, text=True, env=cli_env)
    assert changed.returncode == 2 and "--weight-bits cannot change" in changed.stderr
    tc = subprocess.run([*cli, "train", "--network", NETWORK, "--weight-bits", "16", "--tc", "--episodes", "10",
                         "--out", str(tmp_path / "tc")], capture_output=True, text=True, env=cli_env)
    assert tc.returncode == 2 and tc.stderr.count("\n") == 1 and "--tc" in tc.stderr
    assert not (tmp_path / "tc").exists()
    bench = subprocess.run([*cli, "bench", "--network", NETWORK, "--weight-bits", "16", "--episodes", "50", "--json"],
                           capture_output=True, text=True, check=True, env=cli_env)
    assert json.loads(bench.stdout)["weight_bits"] == 16


def test_a_16_bit_model_is_written_a_piece_at_a_time_as_its_float32_values(short_net, tmp_path, monkeypatch):
    import td2048.io.model as model

    monkeypatch.setattr(model, "SAVE_PIECE", 10_000)  # several pieces, the last one short
    model.save_model(tmp_path / "short.td2048", short_net)
    model.save_model(tmp_path / "plain.td2048", short_net.with_weight_bits(32))
    short, _ = load_model(tmp_path / "short.td2048")
    plain, _ = load_model(tmp_path / "plain.td2048")
    assert short.weights.dtype == np.float32 and np.array_equal(short.weights, plain.weights)
    assert np.array_equal(short.weights, short_net.weights.astype(np.float32) * WEIGHT_STEP)
