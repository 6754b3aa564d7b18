"""Merging the weight copies of multi-thread training."""

import numpy as np

from td2048.kernels.merge import BATCH, CHUNK, CHUNK_SHIFT, DIRTY_SHIFT, dirty_size, merge_regions
from td2048.kernels.params import learning_params
from td2048.learn import Learner
from td2048.network import Network, parse_network
from td2048.settings import TrainSettings
from td2048.training import train

REGION = 1 << DIRTY_SHIFT


def test_merge_rule():
    n = 4 * REGION
    shared = np.zeros(n, np.float32)
    copies = np.zeros((2, n), np.float32)
    dirty = np.zeros((2, dirty_size(n)), np.uint8)
    copies[0, 1] = 0.3  # one thread changed it: its value exactly
    copies[0, REGION + 2] = 1.0  # both moved it up: the larger move
    copies[1, REGION + 2] = 3.0
    copies[0, REGION + 5] = -1.0  # both moved it down: the larger move
    copies[1, REGION + 5] = -0.5
    copies[0, REGION + 7] = 2.0  # one up, one down: the sum of the changes
    copies[1, REGION + 7] = -0.5
    copies[1, 3 * REGION] = 7.0  # changed but not flagged: not merged
    dirty[0, 0] = dirty[0, 1] = dirty[1, 1] = 1
    assert merge_regions(shared, copies, dirty, 0, dirty.shape[1]) == 2
    assert shared[1] == np.float32(0.3) and shared[3 * REGION] == 0
    assert (shared[REGION + 2], shared[REGION + 5], shared[REGION + 7]) == (3.0, -1.0, 1.5)
    assert (copies[:, :3 * REGION] == shared[:3 * REGION]).all() and not dirty.any()


def test_threads_on_copies_learn_and_weights_are_merged():
    settings = TrainSettings(network="2x4", episodes=3000, block=500, seed=1, threads=2, merge_every=0.25)
    net, stats = train(settings)
    assert stats[-1].avg > 1.5 * stats[0].avg
    learner = Learner(net, seed=2, threads=2, merge_seconds=0.25)
    before = net.weights.copy()
    learner.run(200, 0.1)
    learner.merge()
    assert not np.array_equal(before, net.weights)
    assert np.array_equal(learner._copies[0], net.weights) and np.array_equal(learner._copies[1], net.weights)


def test_tracked_kernels_learn_like_plain_ones():
    """One thread on the tracked kernels gives the same weights as the plain kernels."""
    plain = Network(parse_network("2x4"))
    Learner(plain, seed=5).run(50, 0.1)
    tracked_net = Network(parse_network("2x4"))
    learner = Learner(tracked_net, seed=5, threads=1)
    from td2048.games.game2048 import row_table
    from td2048.kernels import kernels_for

    k = kernels_for(tracked_net.spec, tracked=True)
    dirty = np.zeros(dirty_size(tracked_net.weights.size), np.uint8)
    out = (*(np.zeros(50, np.int64) for _ in range(3)), np.zeros(50, np.uint8))
    k.run_block(row_table(), tracked_net.weights, dirty, learner.rng_state, k.BACKWARD, learning_params(0.1 / 16),
                (np.zeros((300_000, 1), np.uint64), np.zeros((300_000, 2))),
                (np.zeros((2, 1), np.uint64), np.zeros(2, np.int64)),
                (np.zeros((1, 1), np.uint64), np.zeros(2, np.int64)), np.zeros(1, np.uint8), out,
                None)
    assert np.array_equal(plain.weights, tracked_net.weights)
    changed = np.nonzero(tracked_net.weights)[0]
    chunk_bits = (1 << ((changed >> CHUNK_SHIFT) & 7)).astype(np.uint8)
    assert (dirty[changed >> DIRTY_SHIFT] & chunk_bits == chunk_bits).all()  # every changed chunk is flagged


def test_merge_rule_with_three_threads():
    n = 2 * REGION
    shared = np.ones(n, np.float32)
    copies = np.ones((3, n), np.float32)
    dirty = np.zeros((3, dirty_size(n)), np.uint8)
    copies[0, 4], copies[1, 4] = 2.0, 1.5  # up, up, unchanged: the largest move
    copies[0, 9], copies[1, 9], copies[2, 9] = 0.5, 0.0, 0.75  # all down: the largest move
    copies[0, 11], copies[2, 11] = 3.0, 0.5  # mixed: the sum of the moves
    copies[2, REGION + 1] = 4.0  # a region one thread alone changed: its copy
    dirty[:, 0] = 1
    dirty[2, 1] = 1
    assert merge_regions(shared, copies, dirty, 0, dirty.shape[1]) == 2
    assert (shared[4], shared[9], shared[11], shared[REGION + 1]) == (2.0, 0.0, 2.5, 4.0)
    assert (copies == shared).all() and not dirty.any()


def test_threads_merge_within_a_block():
    """With merges due all the time, the threads stop together to merge many times in one block."""
    net = Network(parse_network("2x4"))
    learner = Learner(net, seed=3, threads=2, merge_seconds=0.0)
    learner.run(300, 0.1)
    assert net.weights.any()  # merged during the block: nothing was merged after it
    block = learner.run(300, 0.1)
    assert (block.moves > 0).all() and (block.scores > 0).all()


def test_a_failing_thread_is_reported_and_breaks_the_barrier():
    import threading

    import pytest

    from td2048.threads import run_threads

    barrier = threading.Barrier(2)
    told = []

    def worker(thread):
        if thread == 1:
            raise ValueError("thread 1 failed")
        barrier.wait()  # would wait forever for thread 1

    with pytest.raises(ValueError, match="thread 1 failed"):
        run_threads(2, worker, barrier=barrier, on_error=lambda: told.append(True))
    assert told == [True]  # the learner's way to ask the other threads' kernels to return
    with pytest.raises(ValueError, match="one thread"):  # one thread: on the caller's, its error as it is
        run_threads(1, lambda thread: (_ for _ in ()).throw(ValueError("one thread")))


def _merged_reference(shared, copies, flagged):
    """The rule, weight by weight, in NumPy (float32 as the kernel): for the weights of flagged chunks."""
    up, down = (copies > shared).any(axis=0), (copies < shared).any(axis=0)
    total = (copies[0] - shared) + (copies[1] - shared)
    value = np.where(up & down, shared + total,
                     np.where(up, copies.max(axis=0), np.where(down, copies.min(axis=0), shared)))
    return np.where(flagged, value, shared)


def test_merge_moves_flagged_chunks_only_in_batches():
    """Chunks are flagged by a bit each; more chunks than a listing batch holds are all merged."""
    rng = np.random.default_rng(0)
    n = 3 * BATCH * CHUNK + 100  # not a whole number of regions
    shared = rng.normal(size=n).astype(np.float32)
    copies = np.tile(shared, (2, 1))
    dirty = np.zeros((2, dirty_size(n)), np.uint8)
    chunks = (n + CHUNK - 1) // CHUNK
    flagged_chunks = rng.random((2, chunks)) < 0.6
    flagged_chunks[:, 0] = False
    for t in range(2):
        for c in np.nonzero(flagged_chunks[t])[0]:
            dirty[t, c >> (DIRTY_SHIFT - CHUNK_SHIFT)] |= 1 << (c & 7)
        moved = np.repeat(flagged_chunks[t], CHUNK)[:n] & (rng.random(n) < 0.3)
        copies[t, moved] += rng.normal(size=moved.sum()).astype(np.float32)
    copies[0, 5] += 1.0  # changed in a chunk no thread flagged: not merged
    flagged = np.repeat(flagged_chunks.any(axis=0), CHUNK)[:n]
    expected = _merged_reference(shared, copies, flagged)
    unflagged_copies = copies[:, ~flagged].copy()
    assert merge_regions(shared, copies, dirty, 0, dirty.shape[1]) == flagged_chunks.any(axis=0).sum()
    assert np.array_equal(shared, expected)
    assert np.array_equal(copies[:, flagged], np.tile(expected[flagged], (2, 1)))
    assert np.array_equal(copies[:, ~flagged], unflagged_copies) and not dirty.any()


def test_a_kernel_returns_when_asked_to_stop():
    """run_block reads the stop flag before every episode, also one set by another thread meanwhile."""
    import threading

    from td2048.games.game2048 import row_table
    from td2048.kernels.merge import NO_TRACKING

    net = Network(parse_network("2x4"))
    learner = Learner(net, seed=1)
    k = net.kernels
    episodes = 10_000_000  # hours of play, unless it stops
    out = (*(np.zeros(episodes, np.int64) for _ in range(3)), np.zeros(episodes, np.uint8))
    stop = np.ones(1, np.uint8)

    def run():
        return k.run_block(row_table(), net.weights, NO_TRACKING, learner.rng_state, k.BACKWARD,
                           learning_params(0.1 / 16), (np.zeros((300_000, 1), np.uint64), np.zeros((300_000, 2))),
                           (np.zeros((2, 1), np.uint64), np.zeros(2, np.int64)),
                           (np.zeros((1, 1), np.uint64), np.zeros(2, np.int64)), stop, out,
                           None)

    assert run() == (0, False)  # stopped before the first episode
    stop[0] = 0
    result = []
    thread = threading.Thread(target=lambda: result.append(run()), daemon=True)
    thread.start()
    thread.join(0.3)
    stop[0] = 1
    thread.join(60)
    assert not thread.is_alive() and 0 < result[0][0] < episodes and not result[0][1]
    assert (out[2][:result[0][0]] > 0).all() and not out[2][result[0][0]:].any()


def test_weights_start_on_a_cache_line(tmp_path):
    from td2048.io.model import load_model, save_model

    net = Network(parse_network("2x4"))
    learner = Learner(net, seed=1, threads=2, merge_seconds=0.25)
    learner.run(20, 0.1)
    assert net.weights.ctypes.data % 64 == 0
    assert learner._copies.ctypes.data % 64 == 0
    save_model(tmp_path / "m.td2048", net)
    assert load_model(tmp_path / "m.td2048")[0].weights.ctypes.data % 64 == 0
