"""Training on Ray workers (``td2048 train --ray``): the sync's merge is the threads' merge (property tests), and
real runs of the command on a real two-node Ray cluster on this machine (one CPU a node, so the two workers run on
two nodes): a run, a worker killed from outside in the middle, the driver killed and the run resumed, TC."""

import json
import signal
import subprocess
import time

import naive
import numpy as np
import pytest
from commands import assert_one_line_error, start_td2048, td2048
from hypothesis import given
from hypothesis import strategies as st

from td2048.distributed.ray_worker import NO_ACCUMULATORS, TrainWorker, WorkerSpec, merge_parts
from td2048.io.model import load_model
from td2048.kernels.exchange import apply_changes, changed_indices, flagged_indices, gather_changes, merge_changes
from td2048.kernels.merge import CHUNK_SHIFT, dirty_size, merge_regions
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import TC_START_EVIDENCE, Network, fresh_accumulators
from td2048.rng import thread_rng_states
from td2048.spec import parse_network, parse_stages

EMPTY = np.zeros(0, np.float32)


def exchanged(base, copies, acc_base=None, accs=None):
    """What a sync makes of the workers' weights: each worker's changes, merged, applied to the base."""
    parts = []
    for k, weights in enumerate(copies):
        acc = EMPTY if accs is None else accs[k]
        indices = changed_indices(weights, base, acc, EMPTY if acc_base is None else acc_base)
        parts.append((indices, *gather_changes(indices, weights, acc)))
    indices = np.concatenate([p[0] for p in parts])
    merged = merge_changes(indices, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]),
                           base, EMPTY if acc_base is None else acc_base)
    weights, new_base = base.copy(), base.copy()
    acc_now = EMPTY if acc_base is None else acc_base.copy()
    apply_changes(*merged, weights, new_base, acc_now, EMPTY)
    assert np.array_equal(weights, new_base)
    return weights, acc_now


weights_values = st.sampled_from([0.0, 0.5, -0.5, 1.25, -2.0, 3.0])


@given(st.integers(1, 4), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_a_sync_merges_as_the_threads_copies_are_merged(workers, seed, changed_share):
    """The same rule, weight by weight, as merge_regions on the threads' copies (all chunks marked)."""
    rng = np.random.default_rng(seed)
    n = 700
    base = rng.choice([0.0, 1.0, -1.0], n).astype(np.float32)
    copies = np.repeat(base[None], workers, axis=0)
    for k in range(workers):
        changed = rng.random(n) < changed_share
        copies[k, changed] += rng.choice([0.5, -0.5, 0.25, -1.5], changed.sum()).astype(np.float32)
    ours, _ = exchanged(base, list(copies))
    threads_base, threads_copies = base.copy(), copies.copy()
    dirty = np.full((workers, dirty_size(n)), 255, np.uint8)
    merge_regions(threads_base, threads_copies, dirty, 0, dirty.shape[1])
    assert np.array_equal(ours, threads_base)


@given(st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_the_threads_of_a_worker_merge_shares_of_its_range_to_the_same_result(threads, seed):
    rng = np.random.default_rng(seed)
    n = 300
    base = rng.choice([0.0, 1.0], n).astype(np.float32)
    acc_base = np.full(2 * n, 0.5, np.float32)
    parts = []
    for _ in range(3):
        indices = np.flatnonzero(rng.random(n) < 0.3).astype(np.uint32)
        acc = rng.random((len(indices), 2)).astype(np.float32)
        parts.append((indices, rng.random(len(indices)).astype(np.float32), acc))
    one = merge_parts(parts, base, acc_base, 1)
    assert all(np.array_equal(a, b) for a, b in zip(one, merge_parts(parts, base, acc_base, threads)))
    assert np.array_equal(one[0], np.unique(np.concatenate([p[0] for p in parts])))


@given(st.integers(2, 4), st.integers(0, 2**32 - 1), st.floats(0.1, 1.0))
def test_tc_weights_merge_by_the_coherence_of_the_workers_errors(workers, seed, changed_share):
    """TC: a weight several workers moved one way takes the largest move plus the others' share by TC's coherence
    (|sum of errors| / sum of |errors| added since the sync); the accumulators add up (naive.merged_weight)."""
    rng = np.random.default_rng(seed)
    n = 200
    base = rng.choice([0.0, 1.0, -1.0], n).astype(np.float32)
    acc_base = np.repeat(rng.choice([0.5, 2.0], n), 2).astype(np.float32)
    copies = np.repeat(base[None], workers, axis=0)
    accs = np.repeat(acc_base[None], workers, axis=0)
    for k in range(workers):
        changed = np.flatnonzero(rng.random(n) < changed_share)
        copies[k, changed] += rng.choice([0.5, -0.5, 0.25, 1.5], len(changed)).astype(np.float32)
        error = rng.choice([-1.0, 0.5, 2.0], len(changed)).astype(np.float32)
        accs[k, 2 * changed] += error
        accs[k, 2 * changed + 1] += np.abs(error) + rng.choice([0.0, 1.0], len(changed)).astype(np.float32)
    weights, acc = exchanged(base, list(copies), acc_base, list(accs))
    for i in range(n):
        errors = [float(accs[k, 2 * i] - acc_base[2 * i]) for k in range(workers)]
        absolutes = [float(accs[k, 2 * i + 1] - acc_base[2 * i + 1]) for k in range(workers)]
        expected = naive.merged_weight(float(base[i]), [float(c[i]) for c in copies], errors, absolutes, tc=True)
        assert weights[i] == pytest.approx(expected, rel=1e-6, abs=1e-6)
        assert acc[2 * i] == pytest.approx(acc_base[2 * i] + sum(errors), rel=1e-6, abs=1e-6)
        assert acc[2 * i + 1] == pytest.approx(acc_base[2 * i + 1] + sum(absolutes), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize(("network", "stages", "threads", "game"),
                         [("2x4", None, 3, "2048"), ("2x4", "55", 1, "2584")])
def test_tracked_tc_kernels_flag_every_weight_they_change(network, stages, threads, game):
    """A worker's sync reads only the chunks its TC kernels flagged: they cover every change (threads sharing the
    flags, a multistage network's promotion, 5-bit cells included), and each flag is cleared."""
    net = Network(parse_network(network, stages=parse_stages(stages, game) if stages else ()), game=game)
    learner = Learner(net, seed=1, threads=threads)
    flags = learner.track_changes()  # first, as a worker does (the flagged kernels from the first block)
    assert learner.unflagged  # made now: what came before is not flagged
    learner.run(300, 1.0, LearningOptions(update="forward"), tc=True)
    flags[:] = 0
    learner.unflagged = False
    base, acc_base = net.weights.copy(), net.accumulators.copy()
    learner.run(200, 1.0, LearningOptions(update="forward"), tc=True)
    assert not learner.unflagged
    everything = changed_indices(net.weights, base, net.accumulators, acc_base)
    assert len(everything) > 0
    assert np.array_equal(flagged_indices(net.weights, base, net.accumulators, acc_base, flags, CHUNK_SHIFT),
                          everything)
    assert not flags.any()
    copies = Learner(net, seed=2, threads=2, merge_seconds=0.25)
    copies.track_changes()
    copies.unflagged = False
    # TD on copies: unflagged changes, so the next sync reads everything
    copies.run(5, 0.1, LearningOptions(update="forward"))
    assert copies.unflagged


@pytest.mark.parametrize(("network", "stages", "threads", "game"),
                         [("2x4", None, 3, "2048"), ("2x4", "55", 1, "2584")])
def test_td_on_one_table_flags_every_weight_it_changes(network, stages, threads, game):
    """TD's threads on one table mark the regions they change, each in its own bytes, and the block sets the
    flags of their chunks as it ends: the flagged chunks hold every change (a promotion, 5-bit cells
    included), so a worker's sync after TD reads only those."""
    net = Network(parse_network(network, stages=parse_stages(stages, game) if stages else ()), game=game)
    net.fill_optimistic(20000)
    learner = Learner(net, seed=1, threads=threads)
    flags = learner.track_changes()  # first, as a worker does (the flagged kernels from the first block)
    learner.run(300, 0.1)
    flags[:] = 0
    learner.unflagged = False
    base = net.weights.copy()
    learner.run(200, 0.1)
    assert not learner.unflagged and flags.any() and not learner._regions.any()
    everything = changed_indices(net.weights, base, NO_ACCUMULATORS, NO_ACCUMULATORS)
    assert len(everything) > 0
    assert np.array_equal(flagged_indices(net.weights, base, NO_ACCUMULATORS, NO_ACCUMULATORS, flags, CHUNK_SHIFT),
                          everything)
    assert not flags.any()


@pytest.mark.parametrize("tc, start_rate", [(False, 1.0), (True, 1.0), (True, 0.1)])
def test_a_worker_that_learned_during_a_sync_keeps_what_it_learned(tc, start_rate):
    """Workers play on between a sync's steps: each merged weight becomes the merged value plus what the worker
    changed since it listed its changes; the base becomes the merged value, so the next sync lists only that.
    A TC start rate below 1: the workers start TC themselves, and their base starts as their accumulators do."""
    spec = parse_network("2x4")
    start = np.zeros(spec.n_weights, np.float32)
    acc = fresh_accumulators(spec.n_weights) if tc and start_rate == 1 else None
    worker_spec = WorkerSpec(spec, "2048", 4, "afterstate", 1, 0.25, 1 << 30, start_rate)
    workers = [TrainWorker(worker_spec, start, acc, thread_rng_states(k, 1)) for k in range(2)]
    bounds = np.array([0, spec.n_weights // 2, spec.n_weights])
    alpha, options = 1.0 if tc else 0.1, LearningOptions(update="forward", tc_start_rate=start_rate)
    for worker in workers:
        worker.learner.run(30, alpha, options, tc=tc)
    lists = [worker.list_changes(bounds) for worker in workers]
    if tc:
        assert np.array_equal(workers[0].accumulator_base, fresh_accumulators(spec.n_weights, start_rate))
    listed = workers[0].network.weights.copy()
    workers[0].learner.run(10, alpha, options, tc=tc)  # learning on during the sync
    since = workers[0].network.weights - listed
    acc_base = workers[0].accumulator_base if tc else np.zeros(0, np.float32)
    merged = [merge_parts([lists[k][j] for k in range(2)], workers[0].base, acc_base) for j in range(2)]
    workers[0].write(merged)
    indices = np.concatenate([m[0] for m in merged])
    values = np.concatenate([m[1] for m in merged])
    assert len(indices) > 0 and np.count_nonzero(since[indices]) > 0
    assert np.array_equal(workers[0].base[indices], values)
    kept = since[indices] == 0
    assert np.array_equal(workers[0].network.weights[indices][kept], values[kept])
    np.testing.assert_allclose(workers[0].network.weights[indices][~kept], (values + since[indices])[~kept],
                               rtol=1e-6, atol=1e-6)
    others = np.setdiff1d(np.arange(spec.n_weights), indices)  # not in any list: what it learned since, unsynced
    assert np.array_equal(workers[0].network.weights[others] - workers[0].base[others], since[others])


def test_one_workers_change_is_taken_exactly_and_accumulators_add_up():
    base = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    a = base.copy()
    a[0] = 1.1  # float rounding would show in base + (a - base)
    b = base.copy()
    b[2], b[3] = 3.5, 3.5
    a[3] = 4.25  # moved up by one, down by the other: base + sum of moves
    acc_base = np.full(8, 1.0, np.float32)
    acc_a, acc_b = acc_base.copy(), acc_base.copy()
    acc_a[0:2] = [3.0, 4.0]  # weight 0: error 2 and |error| 3 accumulated by a
    acc_b[0:2] = [0.0, 2.0]  # ... and -1, 1 by b (without changing the weight)
    weights, acc = exchanged(base, [a, b], acc_base, [acc_a, acc_b])
    assert weights[0] == np.float32(1.1) and weights[1] == 2.0 and weights[2] == 3.5
    assert weights[3] == np.float32(4.0 + 0.25 - 0.5)
    assert list(acc[:2]) == [2.0, 5.0] and list(acc[2:]) == [1.0] * 6


def test_workers_and_sync_every_need_ray_and_a_cluster_that_answers(tmp_path):
    assert_one_line_error(td2048("train", "--workers", 2, "--network", "2x4"), "--ray")
    assert_one_line_error(td2048("train", "--sync-every", 0, "--ray", "--network", "2x4"), "positive")
    pytest.importorskip("ray")
    nobody = td2048("train", "--network", "2x4", "--ray", "127.0.0.1:1", "--out", tmp_path / "run", timeout=60)
    assert_one_line_error(nobody, "cannot connect to Ray at 127.0.0.1:1")
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------------- on a two-node cluster

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes on this machine with one CPU each: two workers of one CPU land on two nodes. This process
    does not connect (the commands do)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def train_workers() -> list:
    """The Ray worker processes that hold a TrainWorker now (descendants of this process: the cluster's nodes
    are its children)."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.cmdline()[:1] and proc.cmdline()[0].startswith("ray::TrainWorker"):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def logged(run) -> list[dict]:
    path = run / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def start_train(cli_env, *args):
    return start_td2048("train", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env)


def wait_for(condition, proc, what):
    deadline = time.monotonic() + 300  # progress, not speed: only a hung run takes this long
    while not condition():
        assert proc.poll() is None, (what, proc.communicate())
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


RUN = ("--network", "2x4", "--block", 1000, "--sync-every", 0.3, "--seed", 5)


def test_a_run_on_two_nodes_whose_worker_is_killed_goes_on_and_learns(tmp_path, cli_env, cluster):
    """Two workers on two nodes; once a block is logged one is SIGKILLed from outside, as a crash or the OOM
    killer would: the run goes on with a new worker, logs every block once, syncs, and learns."""
    run = tmp_path / "run"
    proc = start_train(cli_env, *RUN, "--episodes", 24_000, "--ray", cluster.address, "--workers", 2, "--out", run)
    wait_for(lambda: len(logged(run)) >= 2 and len(train_workers()) == 2, proc, "two blocks and two workers")
    victim = train_workers()[0]
    victim.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    header = out.splitlines()[0]
    assert "2 Ray worker(s) of 1 thread(s) on 2 node(s), synced every 0.3 s" in header, header
    assert "died; started again from the weights of the last sync" in err and "Traceback" not in err
    blocks = logged(run)
    assert [b["episodes"] for b in blocks] == list(range(1000, 24_001, 1000))
    assert all(b["games"] == 1000 and b["workers"] == 2 for b in blocks)
    assert sum(b["syncs"] for b in blocks) >= 3 and all(b["sync_bytes"] >= 0 for b in blocks)
    assert sum(b["syncs_beside"] for b in blocks) > 0  # TD on one table too: the syncs ran beside the learning
    assert blocks[-1]["avg"] > 2 * blocks[0]["avg"]  # the merged weights learned
    network, header = load_model(run / "model.td2048")
    assert header["training"]["workers"] == 2 and np.count_nonzero(network.weights) > 1000


def test_a_killed_driver_resumes_with_tc_from_its_last_snapshot(tmp_path, cli_env, cluster):
    """TC on two workers (the accumulators travel and merge); the driver SIGKILLed after a snapshot; resumed
    with --ray: every block once in the log, the accumulators in the model, the workers of the killed driver gone."""
    run = tmp_path / "tc"
    args = (*RUN, "--tc", "--tc-start-rate", 0.5, "--update", "forward", "--episodes", 12_000,
            "--snapshot-every", 2000)
    proc = start_train(cli_env, *args, "--ray", cluster.address, "--workers", 2, "--out", run)
    wait_for(lambda: (run / "snapshot.td2048").exists() and len(logged(run)) >= 3, proc, "a snapshot")
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    snapshot, header = load_model(run / "snapshot.td2048")
    saved = header["state"]["episodes"]
    assert snapshot.accumulators is not None and header["state"]["workers"] == 2 and saved < 12_000
    assert len(header["state"]["rng_states"]) == 2
    r = td2048("train", "--resume", run, "--ray", cluster.address, "--workers", 2, env=cli_env)
    assert r.returncode == 0, r.stderr
    assert f"resuming at episode {saved}" in r.stdout.splitlines()[0]
    blocks = logged(run)
    assert [b["episodes"] for b in blocks] == list(range(1000, 12_001, 1000)) and all(b["tc"] for b in blocks)
    assert sum(b["syncs_beside"] for b in blocks) > 0  # TC: the syncs ran beside the learning
    network, _ = load_model(run / "model.td2048")
    absolutes = network.accumulators[1::2]  # every worker, the driver and the resumed run started them at 0.5
    assert np.all(absolutes >= 0.99999 * TC_START_EVIDENCE) and np.any(absolutes > TC_START_EVIDENCE)
    untouched = absolutes == TC_START_EVIDENCE
    assert np.any(untouched) and np.all(network.accumulators[0::2][untouched] == np.float32(150))
    assert len(train_workers()) == 0  # the killed driver's workers went with it; the new ones ended with the run


def test_a_node_whose_disk_is_too_full_to_spill_to_is_a_one_line_error(tmp_path, cli_env, monkeypatch):
    """Ray spills objects that do not fit its store to disk, unless the disk is fuller than its threshold: a
    node whose threshold is 0 and whose store holds less than the weights, as one on a full disk would."""
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("RAY_local_fs_capacity_threshold", "0")
    small = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                          "object_store_memory": 80 << 20})
    try:
        small.wait_for_nodes()
        r = td2048("train", "--network", "4x6", "--episodes", 1000, "--ray", small.address, "--workers", 1,
                   "--out", tmp_path / "run", env=cli_env, timeout=300)
    finally:
        small.shutdown()
    assert_one_line_error(r, "object store is full and its disk too full to spill to")
